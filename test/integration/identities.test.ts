import { Unkey } from '@unkey/api';
import type { Redis } from 'ioredis';
import { InvalidationListener } from '../../src/cache/invalidationListener';
import { loadConfig } from '../../src/config';
import type { Services } from '../../src/operations/services';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import {
  IdentityStore,
  identityListingIndex,
  identityListingIndexes,
} from '../../src/store/identityStore';
import { names } from '../../src/store/names';
import { searchIdentities } from '../../src/operations/identities/listIdentities';
import { assembleServices } from '../../src/wiring';
import { eventually, sleep, testAudit } from '../support/helpers';
import { adminRedis, allKeys, diffKeyspace, dumpKeyspace } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Identities (`identities.*`, issue 14): the store, the cached copy each node keeps, and the
 * operations, driven by the published v1 SDK (`@unkey/api` 0.38) and over plain HTTP for what the
 * SDK does not show.
 */
let topology: Topology;
let primary: Redis;
let ws: string;
let unkey: Unkey;
let api: Client;
let second: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  primary = await adminRedis(topology.primary.url);
  ws = topology.workspaceId;
  unkey = sdk(topology.rootKey);
  api = client(topology.nodes[0]!.url, topology.rootKey);
  second = client(topology.nodes[1]!.url, topology.rootKey);
});
afterAll(async () => {
  if (primary) await closeRedis(primary);
  if (topology) await topology.stop();
});

function sdk(rootKey: string): Unkey {
  return new Unkey({
    baseUrl: topology.nodes[0]!.url,
    rootKey,
    retry: { attempts: 0, backoff: () => 0 },
  });
}

/** The result of an SDK call that must succeed. */
async function ok<R>(call: Promise<{ result?: R; error?: { code: string; message: string } }>) {
  const response = await call;
  if (response.error) throw new Error(`${response.error.code}: ${response.error.message}`);
  return response.result as R;
}

/** A root key of a workspace of its own, with its SDK and HTTP clients. */
async function freshWorkspace(permissions?: string[]) {
  const root = await topology.newRootKey(permissions ? { permissions } : {});
  return {
    workspaceId: root.workspaceId,
    unkey: sdk(root.key),
    api: client(topology.nodes[0]!.url, root.key),
  };
}

/** A root key of the topology's workspace with just these permissions. */
async function scoped(permissions: string[]): Promise<Client> {
  const root = await topology.newRootKey({ workspaceId: ws, permissions });
  return client(topology.nodes[0]!.url, root.key);
}

const requests = { name: 'requests', limit: 10, duration: 1000 };
const tokens = { name: 'tokens', limit: 1000, duration: 60_000 };
/** A limit as every answer shows it: Unkey v1's three fields and keyward's defaults. */
const shown = (limit: { name: string; limit: number; duration: number }) => ({
  ...limit,
  type: 'consistent',
  autoApply: false,
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
        testAudit(),
      );
      for (const node of [a, b]) {
        expect(await node.services.directory.identity(ws, identity.id)).toEqual(identity);
      }
      // Changed behind the nodes' backs, without a message: the nodes still answer from memory.
      await primary.hset(names.identity(identity.id), 'meta', '{"by":"hand"}');
      const hits = b.services.directory.identities.hits;
      expect((await b.services.directory.identity(ws, identity.id))?.meta).toBeUndefined();
      expect(b.services.directory.identities.hits).toBe(hits + 1);

      await a.services.identities.update(
        ws,
        identity.id,
        { meta: { plan: 'pro' } },
        Date.now(),
        testAudit(),
      );
      // The writing node applies its own write at once; the other hears of it.
      expect((await a.services.directory.identity(ws, identity.id))?.meta).toEqual({
        plan: 'pro',
      });
      await eventually(
        async () => (await b.services.directory.identity(ws, identity.id))?.meta?.plan === 'pro',
        { what: 'the update on the other node', timeoutMs: 100, intervalMs: 5 },
      );

      expect(await a.services.identities.delete(ws, identity.id, testAudit())).toBe(true);
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

describe('identities through the v1 SDK', () => {
  test('create, then get by id and by externalId', async () => {
    const { identityId } = await ok(
      unkey.identities.create({
        externalId: 'user_alice',
        meta: { plan: 'pro', seats: 3 },
        ratelimits: [requests, tokens],
      }),
    );
    expect(identityId).toMatch(/^id_[1-9A-HJ-NP-Za-km-z]{22}$/);
    const expected = {
      id: identityId,
      externalId: 'user_alice',
      meta: { plan: 'pro', seats: 3 },
      ratelimits: [shown(requests), shown(tokens)],
    };
    expect(await ok(unkey.identities.get({ identityId }))).toEqual(expected);
    expect(await ok(unkey.identities.get({ externalId: 'user_alice' }))).toEqual(expected);
    // The other node reads the same.
    expect((await second.get('identities.getIdentity', { identityId })).body).toEqual(expected);

    // Without meta or limits: an empty object and an empty list, as Unkey answers.
    const bare = await ok(unkey.identities.create({ externalId: 'user_bare' }));
    expect(await ok(unkey.identities.get({ identityId: bare.identityId }))).toEqual({
      id: bare.identityId,
      externalId: 'user_bare',
      meta: {},
      ratelimits: [],
    });
  });

  test('limits take keyward’s type and autoApply too, and answer all five fields', async () => {
    const created = await api.post<{ identityId: string }>('identities.createIdentity', {
      externalId: 'user_fast',
      ratelimits: [{ name: 'burst', limit: 5, duration: 1000, type: 'fast', autoApply: true }],
    });
    expect(created.status).toBe(200);
    const got = await api.get('identities.getIdentity', { externalId: 'user_fast' });
    expect(got.body.ratelimits).toEqual([
      { name: 'burst', type: 'fast', limit: 5, duration: 1000, autoApply: true },
    ]);
  });

  test('list pages in creation order with a cursor, to the end, with the exact total', async () => {
    const own = await freshWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const created = await ok(
        own.unkey.identities.create({ externalId: `member_${i}`, ratelimits: [requests] }),
      );
      ids.push(created.identityId);
      // Ids lead with their creation millisecond; within one, their order is random.
      await sleep(2);
    }
    const pages: { identities: { id: string }[]; cursor?: string; total: number }[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(own.unkey.identities.list({ limit: 3, ...(cursor ? { cursor } : {}) }));
      pages.push(page);
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(pages.map((page) => page.identities.length)).toEqual([3, 3, 1]);
    expect(pages.map((page) => page.total)).toEqual([7, 7, 7]);
    expect(pages.flatMap((page) => page.identities.map((identity) => identity.id))).toEqual(ids);
    // Listed without meta, with every limit's five fields.
    expect(pages[0]!.identities[0]).toEqual({
      id: ids[0],
      externalId: 'member_0',
      ratelimits: [shown(requests)],
    });
    // The default page is 100; an empty workspace lists nothing, without a cursor.
    const all = await ok(own.unkey.identities.list({}));
    expect(all.identities).toHaveLength(7);
    expect(all.cursor).toBeUndefined();
    const empty = await freshWorkspace();
    expect(await ok(empty.unkey.identities.list({}))).toEqual({ identities: [], total: 0 });
  });

  test('update replaces meta, and the whole list of limits when given', async () => {
    const { identityId } = await ok(
      unkey.identities.create({
        externalId: 'user_bob',
        meta: { plan: 'free', region: 'eu' },
        ratelimits: [requests, tokens],
      }),
    );
    // meta alone: replaced as a whole, the limits left as they are.
    expect(await ok(unkey.identities.update({ identityId, meta: { plan: 'pro' } }))).toEqual({
      id: identityId,
      externalId: 'user_bob',
      meta: { plan: 'pro' },
      ratelimits: [shown(requests), shown(tokens)],
    });
    // ratelimits: the new list is the list, by externalId.
    const replaced = await ok(
      unkey.identities.update({
        externalId: 'user_bob',
        ratelimits: [{ name: 'tokens', limit: 5, duration: 2000 }],
      }),
    );
    expect(replaced.ratelimits).toEqual([shown({ name: 'tokens', limit: 5, duration: 2000 })]);
    expect(replaced.meta).toEqual({ plan: 'pro' });
    expect(await ok(unkey.identities.get({ identityId }))).toEqual(replaced);
    // Empty clears both.
    expect(await ok(unkey.identities.update({ identityId, meta: {}, ratelimits: [] }))).toEqual({
      id: identityId,
      externalId: 'user_bob',
      meta: {},
      ratelimits: [],
    });
    const record = await primary.hgetall(names.identity(identityId));
    expect(Object.keys(record).sort()).toEqual([
      'createdAt',
      'externalId',
      'id',
      'updatedAt',
      'workspaceId',
    ]);
    // Naming nothing to change writes nothing.
    const before = await dumpKeyspace(primary);
    expect((await api.post('identities.updateIdentity', { identityId })).status).toBe(200);
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
  });

  test('delete: gone by id and by externalId, out of the listing, its externalId free again', async () => {
    const own = await freshWorkspace();
    const { identityId } = await ok(
      own.unkey.identities.create({ externalId: 'user_carol', ratelimits: [requests] }),
    );
    expect(await ok(own.unkey.identities.delete({ identityId }))).toEqual({});
    expect((await own.unkey.identities.get({ identityId })).error).toMatchObject({
      code: 'NOT_FOUND',
      message: `identity ${identityId} not found`,
    });
    expect((await own.unkey.identities.get({ externalId: 'user_carol' })).error?.code).toBe(
      'NOT_FOUND',
    );
    expect((await own.unkey.identities.update({ identityId, meta: { a: 1 } })).error?.code).toBe(
      'NOT_FOUND',
    );
    expect((await own.unkey.identities.delete({ identityId })).error?.code).toBe('NOT_FOUND');
    expect(await ok(own.unkey.identities.list({}))).toEqual({ identities: [], total: 0 });
    const ownWs = own.workspaceId;
    expect(
      await primary.exists(
        names.identityByExternalId(ownWs, 'user_carol'),
        ...identityListingIndexes(ownWs),
      ),
    ).toBe(0);
    // Its record is a tombstone for an hour: no late move or repair can bring it back.
    expect(await primary.hgetall(names.identity(identityId))).toEqual({
      id: identityId,
      workspaceId: ownWs,
      externalId: 'user_carol',
      deletedAt: expect.stringMatching(/^\d{13}$/),
    });
    expect(await primary.pttl(names.identity(identityId))).toBeGreaterThan(0);
    const again = await ok(own.unkey.identities.create({ externalId: 'user_carol' }));
    expect(again.identityId).not.toBe(identityId);
    // Named by its externalId, as getIdentity and updateIdentity take it.
    expect(
      (await own.api.post('identities.deleteIdentity', { externalId: 'user_carol' })).body,
    ).toEqual({});
    expect((await own.unkey.identities.get({ identityId: again.identityId })).error?.code).toBe(
      'NOT_FOUND',
    );
  });
});

describe('refusals', () => {
  test('an externalId is taken once per workspace: 409, and nothing written', async () => {
    await ok(unkey.identities.create({ externalId: 'user_dave' }));
    const before = await dumpKeyspace(primary);
    const taken = await api.post('identities.createIdentity', {
      externalId: 'user_dave',
      meta: { other: true },
      ratelimits: [requests],
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({
      error: {
        code: 'CONFLICT',
        message: 'Identity with externalId "user_dave" already exists in this workspace',
      },
    });
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
    // Another workspace has externalIds of its own.
    const other = await freshWorkspace();
    expect(
      (await other.api.post('identities.createIdentity', { externalId: 'user_dave' })).status,
    ).toBe(200);
  });

  test('bad input is 400 in the envelope and writes nothing', async () => {
    const { identityId } = await ok(unkey.identities.create({ externalId: 'user_erin' }));
    const before = await dumpKeyspace(primary);
    const cases: [string, 'GET' | 'POST', Record<string, unknown>, string][] = [
      [
        'identities.createIdentity',
        'POST',
        { externalId: 'ab' },
        'externalId: must NOT have fewer than 3 characters',
      ],
      [
        'identities.createIdentity',
        'POST',
        { externalId: 'x'.repeat(257) },
        'externalId: must NOT have more than 256 characters',
      ],
      ['identities.createIdentity', 'POST', {}, 'externalId: is required'],
      [
        'identities.createIdentity',
        'POST',
        { externalId: 'user_new', ratelimits: [requests, requests] },
        'ratelimits[1].name: "requests" is named twice',
      ],
      [
        'identities.createIdentity',
        'POST',
        { externalId: 'user_new', meta: { blob: 'x'.repeat(17_000) } },
        'meta: must be at most 16384 bytes as JSON',
      ],
      [
        'identities.createIdentity',
        'POST',
        {
          externalId: 'user_new',
          ratelimits: Array.from({ length: 21 }, (_, i) => ({ ...requests, name: `r${i}` })),
        },
        'ratelimits: must NOT have more than 20 items',
      ],
      ['identities.getIdentity', 'GET', {}, 'identityId: give either identityId or externalId'],
      [
        'identities.getIdentity',
        'GET',
        { identityId, externalId: 'user_erin' },
        'identityId: give either identityId or externalId',
      ],
      [
        'identities.updateIdentity',
        'POST',
        { meta: {} },
        'identityId: give either identityId or externalId',
      ],
      ['identities.updateIdentity', 'POST', { identityId, meta: null }, 'meta: must be object'],
      [
        'identities.updateIdentity',
        'POST',
        { identityId, ratelimits: [{ ...tokens, duration: 0 }] },
        'ratelimits[0].duration: must be >= 1',
      ],
      ['identities.deleteIdentity', 'POST', {}, 'identityId: is required'],
      [
        'identities.deleteIdentity',
        'POST',
        { identityId, externalId: 'user_erin' },
        'identityId: give either identityId or externalId',
      ],
      ['identities.listIdentities', 'GET', { limit: 0 }, 'limit: must be >= 1'],
    ];
    for (const [operation, method, input, message] of cases) {
      const response =
        method === 'GET'
          ? await api.get(operation, input as Record<string, string>)
          : await api.post(operation, input);
      expect([operation, response.status, response.body]).toEqual([
        operation,
        400,
        { error: expect.objectContaining({ code: 'BAD_REQUEST', message }) },
      ]);
    }
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
  });

  test('an unknown identity, or one of another workspace, is 404', async () => {
    const { identityId } = await ok(unkey.identities.create({ externalId: 'user_frank' }));
    const other = await freshWorkspace();
    const queries: Record<string, string>[] = [{ identityId }, { externalId: 'user_frank' }];
    for (const query of queries) {
      const response = await other.api.get('identities.getIdentity', query);
      expect(response.status).toBe(404);
    }
    expect((await other.api.post('identities.deleteIdentity', { identityId })).status).toBe(404);
    expect(
      (await other.api.post('identities.updateIdentity', { identityId, meta: {} })).status,
    ).toBe(404);
    const missing = await api.get('identities.getIdentity', {
      identityId: 'id_1111111111111111111111',
    });
    expect(missing.body).toMatchObject({
      error: { code: 'NOT_FOUND', message: 'identity id_1111111111111111111111 not found' },
    });
    // Still there for its own workspace.
    expect((await api.get('identities.getIdentity', { identityId })).status).toBe(200);
  });

  test('root-key permissions: identity.<id|*>.<action>; by externalId one not readable is not found', async () => {
    const mine = await ok(unkey.identities.create({ externalId: 'user_grace' }));
    const theirs = await ok(unkey.identities.create({ externalId: 'user_heidi' }));
    const reader = await scoped(['identity.*.read_identity']);
    expect(
      (await reader.get('identities.getIdentity', { identityId: mine.identityId })).status,
    ).toBe(200);
    expect((await reader.get('identities.listIdentities', {})).status).toBe(200);
    const refused = await reader.post('identities.createIdentity', { externalId: 'user_ivan' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: {
        code: 'INSUFFICIENT_PERMISSIONS',
        message: 'this root key lacks the permission identity.*.create_identity',
      },
    });

    const one = await scoped([
      `identity.${mine.identityId}.read_identity`,
      `identity.${mine.identityId}.update_identity`,
    ]);
    expect((await one.get('identities.getIdentity', { externalId: 'user_grace' })).status).toBe(
      200,
    );
    expect(
      (await one.post('identities.updateIdentity', { identityId: mine.identityId, meta: { a: 1 } }))
        .status,
    ).toBe(200);
    // Another one by id: 403 naming it; by externalId: 404, which tells nothing of its id.
    const byId = await one.get('identities.getIdentity', { identityId: theirs.identityId });
    expect(byId.status).toBe(403);
    expect(JSON.stringify(byId.body)).toContain(`identity.${theirs.identityId}.read_identity`);
    const byExternalId = await one.get('identities.getIdentity', { externalId: 'user_heidi' });
    expect(byExternalId.status).toBe(404);
    expect(JSON.stringify(byExternalId.body)).not.toContain(theirs.identityId);
    // Listing needs identity.*.read_identity.
    expect((await one.get('identities.listIdentities', {})).status).toBe(403);

    const apiOnly = await scoped(['api.*.create_key', 'api.*.read_key', 'rbac.*.read_role']);
    expect((await apiOnly.get('identities.listIdentities', {})).status).toBe(403);
    expect(
      (await apiOnly.get('identities.getIdentity', { identityId: mine.identityId })).status,
    ).toBe(403);
  });
});

describe('the store', () => {
  test('concurrent upserts of one externalId make one identity', async () => {
    const store = new IdentityStore(primary, () => undefined);
    const workspace = 'ws_upserts';
    const now = Date.now();
    const found = await Promise.all(
      Array.from({ length: 25 }, () =>
        store.upsertByExternalId(workspace, 'user_race', now, testAudit()),
      ),
    );
    const ids = new Set(found.map((identity) => identity.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(await primary.get(names.identityByExternalId(workspace, 'user_race'))).toBe(id);
    const listed = await Promise.all(
      identityListingIndexes(workspace).map((index) => primary.zrange(index, 0, -1)),
    );
    expect(listed.flat()).toEqual([id]);
    // The losers undid their pending records; nothing is left in the journal.
    const records = await allKeys(primary, 'keyward:identity:{*}');
    const ours = [];
    for (const name of records) {
      if ((await primary.hget(name, 'workspaceId')) === workspace) ours.push(name);
    }
    expect(ours).toEqual([names.identity(id!)]);
    expect(await primary.hgetall(names.identity(id!))).not.toHaveProperty('pending');
    expect(await store.byExternalId(workspace, 'user_race')).toEqual({
      id,
      workspaceId: workspace,
      externalId: 'user_race',
      createdAt: now,
    });
    // An existing identity is found as it is, meta and limits included.
    await store.update(workspace, id!, { meta: { plan: 'pro' } }, now + 1, testAudit());
    expect(
      (await store.upsertByExternalId(workspace, 'user_race', now + 2, testAudit())).meta,
    ).toEqual({
      plan: 'pro',
    });
  });

  test('a search reads at most its budget, and its cursor carries on where the reading stopped', async () => {
    const store = new IdentityStore(primary, () => undefined);
    const workspace = 'ws_search_budget';
    for (let i = 0; i < 12; i++) {
      await store.upsertByExternalId(workspace, `person-${i}-x`, Date.now(), testAudit());
    }
    // Ids made in one millisecond list in the order of their random part: ask the listing.
    const listed = (await store.list(workspace, { limit: 100 })).identities;
    // Only the last listed matches: a budget of 5 reads finds nothing, twice, then it.
    const last = listed[11]!;
    const term = `${last.externalId.slice(0, -1).toUpperCase()}`;
    const first = await searchIdentities(store, workspace, term, { limit: 10, readLimit: 5 });
    expect(first).toEqual({ identities: [], total: 12, next: listed[4]!.id });
    const second = await searchIdentities(store, workspace, term, {
      limit: 10,
      readLimit: 5,
      afterId: first.next!,
    });
    expect(second).toEqual({ identities: [], total: 12, next: listed[9]!.id });
    const third = await searchIdentities(store, workspace, term, {
      limit: 10,
      readLimit: 5,
      afterId: second.next!,
    });
    expect({ ...third, identities: third.identities.map((one) => one.id) }).toEqual({
      identities: [last.id],
      total: 12,
    });
    // A full page of matches stops at its last match, not at the end of what was read.
    const page = await searchIdentities(store, workspace, 'PERSON', { limit: 2 });
    expect(page.identities.map((one) => one.id)).toEqual([listed[0]!.id, listed[1]!.id]);
    expect(page.next).toBe(listed[1]!.id);
  });

  test("ids are not tagged by workspace: another workspace's calls neither read nor write one", async () => {
    const store = new IdentityStore(primary, () => undefined);
    const now = Date.now();
    const mine = await store.upsertByExternalId('ws_mine', 'user_same', now, testAudit());
    const record = await primary.hgetall(names.identity(mine.id));
    expect(await store.byId('ws_theirs', mine.id)).toBeUndefined();
    expect(
      await store.update('ws_theirs', mine.id, { meta: { a: 1 } }, now + 1, testAudit()),
    ).toBeUndefined();
    expect(await store.delete('ws_theirs', mine.id, testAudit())).toBe(false);
    expect(await primary.hgetall(names.identity(mine.id))).toEqual(record);
    // The same externalId is another identity there.
    const theirs = await store.upsertByExternalId('ws_theirs', 'user_same', now, testAudit());
    expect(theirs.id).not.toBe(mine.id);
    expect((await store.byExternalId('ws_mine', 'user_same'))?.id).toBe(mine.id);
  });

  test('the layout is readable with redis-cli: flat fields, JSON for meta and limits', async () => {
    const { identityId } = await ok(
      unkey.identities.create({
        externalId: 'user_judy',
        meta: { plan: 'pro' },
        ratelimits: [requests],
      }),
    );
    expect(await primary.hgetall(names.identity(identityId))).toEqual({
      id: identityId,
      workspaceId: ws,
      externalId: 'user_judy',
      createdAt: expect.stringMatching(/^\d{13}$/),
      meta: '{"plan":"pro"}',
      ratelimits:
        '[{"name":"requests","type":"consistent","limit":10,"duration":1000,"autoApply":false}]',
    });
    // Placed by its own id; its externalId entry by workspace and externalId; listed in a shard.
    expect(names.identity(identityId)).toBe(`keyward:identity:{${identityId}}`);
    expect(await primary.get(`keyward:identityext:{${ws}:user_judy}`)).toBe(identityId);
    const shard = identityListingIndex(ws, identityId);
    expect(shard).toMatch(new RegExp(`^keyward:identities:\\{${ws}\\.[0-9a-f][a-f]{2}\\}$`));
    expect(await primary.zscore(shard, identityId)).toBe('0');
  });
});

describe('across nodes, through the API', () => {
  test('an update on one node and a deletion on another reach a third node’s cache within 100 ms', async () => {
    const reader = await nodeServices();
    try {
      const { identityId } = await ok(unkey.identities.create({ externalId: 'user_ken' }));
      const cached = () => reader.services.directory.identity(ws, identityId);
      expect((await cached())?.externalId).toBe('user_ken');
      await ok(unkey.identities.update({ identityId, ratelimits: [tokens] }));
      await eventually(async () => (await cached())?.ratelimits?.[0]?.name === 'tokens', {
        what: 'the update in the other node’s cache',
        timeoutMs: 100,
        intervalMs: 5,
      });
      expect((await second.post('identities.deleteIdentity', { identityId })).status).toBe(200);
      await eventually(async () => (await cached()) === undefined, {
        what: 'the deletion in the other node’s cache',
        timeoutMs: 100,
        intervalMs: 5,
      });
    } finally {
      await reader.close();
    }
  });
});
