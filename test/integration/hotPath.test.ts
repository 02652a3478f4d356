import Redis from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { eventually, sleep } from '../support/helpers';
import { invalidation, names } from '../../src/store/names';

/**
 * The verification hot path: with the key's record cached, a fast check costs exactly one
 * EVALSHA on the node-local Redis, a consistent one exactly one on the primary, a key without a
 * rate limit (or an unknown key, remembered as missing) none at all.
 */
let topology: Topology;
let api: Client;
let apiId: string;
let primary: Redis;
let local: Redis;

beforeAll(async () => {
  // Usage analytics off: their flush, once a second, would land in the counted windows.
  topology = await startTopology({ nodes: 1, env: { KEYWARD_ANALYTICS: 'off' } });
  api = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'hot' })).body.apiId;
  primary = new Redis(topology.primary.url);
  local = new Redis(topology.locals[0]!.url);
});
afterAll(async () => {
  await Promise.all([primary.quit(), local.quit()]);
  await topology.stop();
});

/** Calls per command since the last reset, from INFO commandstats. */
async function commandCounts(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    // Our own INFO and CONFIG RESETSTAT are not the node's.
    // Nor are the sweeps it runs every 5 s on its own (audit outboxes, unfinished writes): no
    // verification sends these.
    if (!/^(info|config|zscan$|xrange$|zrangebyscore$)/.test(match[1]!)) {
      counts[match[1]!] = Number(match[2]);
    }
  }
  return counts;
}

/** Commands the token-bucket script runs itself; commandstats counts them too. */
const BUCKET_SCRIPT_COMMANDS = new Set(['time', 'hmget', 'hset', 'pexpire']);

/** Commands a client sent, with what the bucket script ran on its behalf taken out. */
function sentByClient(counts: Record<string, number>): Record<string, number> {
  const sent: Record<string, number> = {};
  for (const [command, calls] of Object.entries(counts)) {
    if (!BUCKET_SCRIPT_COMMANDS.has(command)) sent[command] = calls;
    else if (calls > (counts.evalsha ?? 0)) sent[command] = calls; // more than the script explains
  }
  return sent;
}

async function countDuring(action: () => Promise<void>) {
  await Promise.all([primary.config('RESETSTAT'), local.config('RESETSTAT')]);
  await action();
  return {
    primary: sentByClient(await commandCounts(primary)),
    local: sentByClient(await commandCounts(local)),
  };
}

/**
 * A new key, once its own creation has been announced back to this node: the pub/sub echo of the
 * createKey would otherwise evict the first cached copy and cost one more read mid-count.
 */
async function newKey(body: Record<string, unknown>): Promise<{ keyId: string; key: string }> {
  const created = (
    await api.post<{ keyId: string; key: string }>('keys.createKey', { apiId, ...body })
  ).body;
  await sleep(100);
  return created;
}

async function verifyTimes(key: string, times: number) {
  for (let i = 0; i < times; i++) {
    const response = await api.post<{ code: string }>('keys.verifyKey', { key });
    expect(response.status).toBe(200);
  }
}

const huge = { limit: 1_000_000, refillRate: 1_000_000, refillInterval: 1000 };

test('a fast verification is one EVALSHA on the local Redis and nothing on the primary', async () => {
  const { key } = await newKey({ ratelimit: { type: 'fast', ...huge } });
  await verifyTimes(key, 2); // warm the caches and the script
  const counts = await countDuring(() => verifyTimes(key, 25));
  expect(counts.local).toEqual({ evalsha: 25 });
  expect(counts.primary).toEqual({});
});

test('a consistent verification is one EVALSHA on the primary and nothing on the local Redis', async () => {
  const { key } = await newKey({ ratelimit: { type: 'consistent', ...huge } });
  await verifyTimes(key, 2);
  const counts = await countDuring(() => verifyTimes(key, 25));
  expect(counts.primary).toEqual({ evalsha: 25 });
  expect(counts.local).toEqual({});
});

test('roles, a permission query, an identity limit and fast named limits: one EVALSHA per Redis', async () => {
  for (const role of ['reader', 'writer']) {
    const permissions = [`${role}.docs`, `${role}.notes`];
    await api.post('permissions.createRole', { name: `hot.${role}`, permissions });
  }
  const limit = { limit: 1_000_000, duration: 1000, autoApply: true };
  await api.post('identities.createIdentity', {
    externalId: 'hot_identity',
    ratelimits: [{ name: 'shared', type: 'consistent', ...limit }],
  });
  const { key } = await newKey({
    externalId: 'hot_identity',
    roles: ['hot.reader', 'hot.writer'],
    ratelimits: [
      { name: 'a', type: 'fast', ...limit },
      { name: 'b', type: 'fast', ...limit },
    ],
  });
  const body = { key, authorization: { permissions: 'reader.docs AND writer.notes' } };
  const verify = async () => {
    const response = await api.post<{ code: string; ratelimits?: unknown[] }>(
      'keys.verifyKey',
      body,
    );
    expect([response.body.code, response.body.ratelimits?.length]).toEqual(['VALID', 3]);
  };
  await verify(); // warm the caches and the scripts
  await verify();
  const counts = await countDuring(async () => {
    for (let i = 0; i < 10; i++) await verify();
  });
  // The identity's consistent limit on the primary, the two fast ones together on the local
  // Redis: one script call each, that one reading and writing both of its buckets.
  expect(counts.primary).toEqual({ evalsha: 10 });
  expect(counts.local).toEqual({ evalsha: 10, hmget: 20, hset: 20, pexpire: 20 });
});

test("a cold verification of a key with an identity reads the identity's record once, by its id, and nothing else more", async () => {
  await api.post('identities.createIdentity', { externalId: 'cold_identity' });
  const plain = await newKey({});
  const owned = await newKey({ externalId: 'cold_identity' });
  const without = await countDuring(() => verifyTimes(plain.key, 1));
  const withIdentity = await countDuring(() => verifyTimes(owned.key, 1));
  // One HGETALL of keyward:identity:{<id>}: no externalId entry, listing or legacy name read.
  expect(withIdentity.primary).toEqual({
    ...without.primary,
    hgetall: (without.primary.hgetall ?? 0) + 1,
  });
  const warm = await countDuring(() => verifyTimes(owned.key, 5));
  expect(warm.primary).toEqual({});
  expect(warm.local).toEqual({});
});

test("a verification whose API left the node's cache reads the API's record once, by its id, and nothing else", async () => {
  const { key } = await newKey({});
  await verifyTimes(key, 1);
  // What a write to the API publishes: only the API's cached record goes, the key's stays.
  await primary.publish(names.invalidationChannel, invalidation.api(topology.workspaceId, apiId));
  let counts: Awaited<ReturnType<typeof countDuring>> | undefined;
  await eventually(
    async () => {
      counts = await countDuring(() => verifyTimes(key, 1));
      return Object.keys(counts.primary).length > 0;
    },
    { what: 'the node to drop the API it cached' },
  );
  // One HGETALL of keyward:api:{<apiId>}: no name of the previous layout, no marker read.
  expect(counts?.primary).toEqual({ hgetall: 1 });
  expect(await primary.exists(names.api(apiId))).toBe(1);
});

test('a key without a rate limit, and an unknown key, cost no Redis command once cached', async () => {
  const { key } = await newKey({});
  await verifyTimes(key, 1);
  await verifyTimes('no_such_key', 1);
  const counts = await countDuring(async () => {
    await verifyTimes(key, 10);
    await verifyTimes('no_such_key', 10);
  });
  expect(counts.primary).toEqual({});
  expect(counts.local).toEqual({});
});

test('a cold verification reads the primary and then caches', async () => {
  const { key } = await newKey({});
  const cold = await countDuring(() => verifyTimes(key, 1));
  expect(cold.primary.get).toBe(1);
  expect(cold.primary.hgetall).toBeGreaterThanOrEqual(1);
  const warm = await countDuring(() => verifyTimes(key, 5));
  expect(warm.primary).toEqual({});
});

test('after the invalidation subscription drops, the node forgets what it cached', async () => {
  const { keyId, key } = (
    await api.post<{ keyId: string; key: string }>('keys.createKey', { apiId })
  ).body;
  await verifyTimes(key, 1);
  const recordKey = `keyward:key:{${keyId}}`;
  // A change whose announcement the node can never hear: written without PUBLISH, while the
  // node's subscriber connection is being cut.
  await primary.client('KILL', 'TYPE', 'pubsub');
  await primary.hset(recordKey, 'enabled', '0');
  // Without the reset the cached record would answer VALID for the cache TTL (minutes).
  let code = '';
  await eventually(
    async () => {
      code = (await api.post<{ code: string }>('keys.verifyKey', { key })).body.code;
      return code === 'DISABLED';
    },
    { timeoutMs: 2_000, intervalMs: 20, onTimeout: 'return' },
  );
  expect(code).toBe('DISABLED');
  // The node resubscribes by itself, and then trusts (a fresh) cache again.
  let status = '';
  await eventually(
    async () => {
      const liveness = await fetch(`${topology.nodes[0]!.url}/v1/liveness`);
      status = ((await liveness.json()) as { services: { invalidation: { status: string } } })
        .services.invalidation.status;
      return status === 'subscribed';
    },
    { timeoutMs: 2_000, intervalMs: 20, onTimeout: 'return' },
  );
  expect(status).toBe('subscribed');
  expect((await api.post<{ code: string }>('keys.verifyKey', { key })).body.code).toBe('DISABLED');
});

// Redis in containers (KEYWARD_TEST_REDIS=containers) is reached over TCP only.
const unixSockets = process.env.KEYWARD_TEST_REDIS !== 'containers';
(unixSockets ? test : test.skip)(
  'over a unix socket to the node-local Redis, a fast verification is still one EVALSHA there',
  async () => {
    const overSocket = await startTopology({ nodes: 1, localOverUnixSocket: true });
    const viaSocket = new Redis(overSocket.locals[0]!.url);
    try {
      const socketApi = client(overSocket.nodes[0]!.url, overSocket.rootKey);
      const socketApiId = (
        await socketApi.post<{ apiId: string }>('apis.createApi', { name: 'socket' })
      ).body.apiId;
      const { keyId, key } = (
        await socketApi.post<{ keyId: string; key: string }>('keys.createKey', {
          apiId: socketApiId,
          ratelimit: { type: 'fast', limit: 3, refillRate: 1, refillInterval: 60_000 },
        })
      ).body;
      const codes: string[] = [];
      for (let i = 0; i < 4; i++) {
        codes.push((await socketApi.post<{ code: string }>('keys.verifyKey', { key })).body.code);
      }
      expect(codes).toEqual(['VALID', 'VALID', 'VALID', 'RATE_LIMITED']);
      // The bucket is in the local Redis (read here over TCP), with what the socket client spent.
      expect(await viaSocket.hget(`keyward:bucket:{${keyId}}`, 'tokens')).toBe('0');
      const clients = await viaSocket.client('LIST');
      expect(clients).toMatch(/addr=\/\S*redis\.sock/);
    } finally {
      await viaSocket.quit();
      await overSocket.stop();
    }
  },
);
