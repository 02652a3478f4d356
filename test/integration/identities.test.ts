import type { Redis } from 'ioredis';
import { InvalidationListener } from '../../src/cache/invalidationListener';
import { loadConfig } from '../../src/config';
import type { Services } from '../../src/operations/services';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { names } from '../../src/store/names';
import { assembleServices } from '../../src/wiring';
import { eventually } from '../support/helpers';
import { adminRedis } from '../support/keyspace';
import { startTopology, type Topology } from '../support/topology';

/**
 * Identities (`identities.*`, issue 14): the store, the cached copy each node keeps, and the
 * operations, driven by the published v1 SDK (`@unkey/api` 0.38) and over plain HTTP for what the
 * SDK does not show.
 */
let topology: Topology;
let primary: Redis;
let ws: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  primary = await adminRedis(topology.primary.url);
  ws = topology.workspaceId;
});
afterAll(async () => {
  if (primary) await closeRedis(primary);
  if (topology) await topology.stop();
});

/**
 * What a node serves from, assembled as src/node.ts assembles it (stores, caches, and the
 * invalidation listener on a subscriber connection of its own), without the HTTP server: the
 * identity cache is read by verifications, which reach it through these services.
 */
async function nodeServices(): Promise<{ services: Services; close(): Promise<void> }> {
  const url = topology.primary.url;
  const config = loadConfig({ KEYWARD_REDIS_URL: url, LOG_LEVEL: 'silent' });
  const options = { commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 };
  const redis = createRedis(url, options);
  const subscriber = createRedis(url, options, {
    enableOfflineQueue: true,
    commandTimeout: undefined,
    enableAutoPipelining: false,
  });
  await connectRedis(redis);
  const services = assembleServices({ config, primary: redis, local: redis, now: Date.now });
  await new InvalidationListener(subscriber, services.directory).start();
  return {
    services,
    close: async () => {
      await closeRedis(subscriber);
      await closeRedis(redis);
    },
  };
}

describe('the identity cache of each node', () => {
  test('read once, then from memory; another node sees an update and a deletion within 100 ms', async () => {
    const [a, b] = [await nodeServices(), await nodeServices()];
    try {
      const identity = await a.services.identities.upsertByExternalId(
        ws,
        'cached-user',
        Date.now(),
      );
      for (const node of [a, b]) {
        expect(await node.services.directory.identity(ws, identity.id)).toEqual(identity);
      }
      // Changed behind the nodes' backs, without a message: the nodes still answer from memory.
      await primary.hset(names.identity(ws, identity.id), 'meta', '{"by":"hand"}');
      const hits = b.services.directory.identities.hits;
      expect((await b.services.directory.identity(ws, identity.id))?.meta).toBeUndefined();
      expect(b.services.directory.identities.hits).toBe(hits + 1);

      await a.services.identities.update(ws, identity.id, { meta: { plan: 'pro' } }, Date.now());
      // The writing node applies its own write at once; the other hears of it.
      expect((await a.services.directory.identity(ws, identity.id))?.meta).toEqual({
        plan: 'pro',
      });
      await eventually(
        async () => (await b.services.directory.identity(ws, identity.id))?.meta?.plan === 'pro',
        { what: 'the update on the other node', timeoutMs: 100, intervalMs: 5 },
      );

      expect(await a.services.identities.delete(ws, identity.id)).toBe(true);
      expect(await a.services.directory.identity(ws, identity.id)).toBeUndefined();
      await eventually(
        async () => (await b.services.directory.identity(ws, identity.id)) === undefined,
        { what: 'the deletion on the other node', timeoutMs: 100, intervalMs: 5 },
      );
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('keyward_cache_events counts the identity cache, and the permission and role cache', async () => {
    const node = await nodeServices();
    try {
      await node.services.directory.identity(ws, 'id_missing');
      const text = await node.services.metrics.registry.metrics();
      for (const cache of ['identities', 'rbac']) {
        expect(text).toMatch(new RegExp(`keyward_cache_events\\{cache="${cache}",event="miss"\\}`));
      }
      expect(text).toMatch(/keyward_cache_events\{cache="identities",event="miss"\} 1$/m);
    } finally {
      await node.close();
    }
  });
});
