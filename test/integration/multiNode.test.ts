import Redis from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { newId } from '../../src/keys/ids';
import { hashKey } from '../../src/keys/keyMaterial';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { KeyStore } from '../../src/store/keyStore';
import { sleep, createKey, hour, testAudit } from '../support/helpers';

let topology: Topology;
let nodeA: Client;
let nodeB: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodeA = client(topology.nodes[0]!.url, topology.rootKey);
  nodeB = client(topology.nodes[1]!.url, topology.rootKey);
  apiId = (await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'multi' })).body.apiId;
});
afterAll(() => topology.stop());

type Verdict = { valid: boolean; code: string; ratelimit?: { remaining: number } };

async function admitted(node: Client, key: string, attempts: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < attempts; i++) {
    if ((await node.post<Verdict>('keys.verifyKey', { key })).body.valid) count++;
  }
  return count;
}

test('fast buckets are per node: two nodes with a limit of 3 admit 3 each', async () => {
  const { key } = await createKey(nodeA, apiId, {
    ratelimit: { type: 'fast', limit: 3, refillRate: 1, refillInterval: hour },
  });
  expect(await admitted(nodeA, key, 5)).toBe(3);
  expect(await admitted(nodeB, key, 5)).toBe(3);
});

test('consistent buckets are shared: two nodes together admit exactly the limit', async () => {
  const { key } = await createKey(nodeA, apiId, {
    ratelimit: { type: 'consistent', limit: 5, refillRate: 1, refillInterval: hour },
  });
  const verdicts = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? nodeA : nodeB).post<Verdict>('keys.verifyKey', { key }),
    ),
  );
  expect(verdicts.filter((v) => v.body.valid)).toHaveLength(5);
  expect(verdicts.filter((v) => v.body.code === 'RATE_LIMITED')).toHaveLength(15);
});

test('fast buckets live in the node-local Redis, consistent ones in the primary', async () => {
  const fast = await createKey(nodeA, apiId, {
    ratelimit: { type: 'fast', limit: 3, refillRate: 1, refillInterval: hour },
  });
  const consistent = await createKey(nodeA, apiId, {
    ratelimit: { async: false, limit: 3, duration: hour },
  });
  await nodeA.post('keys.verifyKey', { key: fast.key });
  await nodeA.post('keys.verifyKey', { key: consistent.key });
  const primary = new Redis(topology.primary.url);
  const localA = new Redis(topology.locals[0]!.url);
  const localB = new Redis(topology.locals[1]!.url);
  try {
    const bucket = (keyId: string) => `keyward:bucket:{${keyId}}`;
    expect(await localA.hget(bucket(fast.keyId), 'tokens')).toBe('2');
    expect(await localB.exists(bucket(fast.keyId))).toBe(0);
    expect(await primary.exists(bucket(fast.keyId))).toBe(0);
    expect(await primary.hget(bucket(consistent.keyId), 'tokens')).toBe('2');
    expect(await localA.exists(bucket(consistent.keyId))).toBe(0);
    // The bucket expires once it would be full again: 1 token at 1 per hour.
    const ttl = await primary.pttl(bucket(consistent.keyId));
    expect(ttl).toBeGreaterThan(hour - 60_000);
    expect(ttl).toBeLessThanOrEqual(hour);
  } finally {
    await Promise.all([primary.quit(), localA.quit(), localB.quit()]);
  }
});

test('a refused verification leaves the bucket unchanged', async () => {
  const { keyId, key } = await createKey(nodeA, apiId, {
    ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: hour },
  });
  expect((await nodeA.post<Verdict>('keys.verifyKey', { key })).body.valid).toBe(true);
  const primary = new Redis(topology.primary.url);
  try {
    const before = await primary.hgetall(`keyward:bucket:{${keyId}}`);
    const refused = await nodeB.post<Verdict>('keys.verifyKey', { key, ratelimit: { cost: 1 } });
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(await primary.hgetall(`keyward:bucket:{${keyId}}`)).toEqual(before);
  } finally {
    await primary.quit();
  }
});

describe('changes reach every node within 100 ms', () => {
  test('a key deleted on one node is refused by the other', async () => {
    const { keyId, key } = await createKey(nodeA, apiId);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID'); // cached on B
    await nodeA.post('keys.deleteKey', { keyId });
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('NOT_FOUND');
  });

  test('a key disabled on one node is refused by the other, and re-enabled likewise', async () => {
    const { keyId, key } = await createKey(nodeA, apiId);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID');
    await nodeA.post('keys.updateKey', { keyId, enabled: false });
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('DISABLED');
    await nodeA.post('keys.updateKey', { keyId, enabled: true });
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID');
  });

  test('a new rate limit applies on the other node', async () => {
    const { keyId, key } = await createKey(nodeA, apiId);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.ratelimit).toBeUndefined();
    await nodeA.post('keys.updateKey', {
      keyId,
      ratelimit: { async: false, limit: 1, duration: hour },
    });
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID');
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('RATE_LIMITED');
  });

  test('an API deleted on one node takes its keys with it on the other', async () => {
    const other = (await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'doomed' })).body
      .apiId;
    const { key } = (await nodeA.post<{ key: string }>('keys.createKey', { apiId: other })).body;
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID');
    await nodeA.post('apis.deleteApi', { apiId: other });
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('NOT_FOUND');
  });

  test('an unknown key remembered as missing is found once a key with its hash is stored', async () => {
    // Until key import exists (migrations.createKeys), store a key with a chosen plaintext directly.
    const plaintext = `chosen_${Date.now()}`;
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key: plaintext })).body.code).toBe(
      'NOT_FOUND',
    );
    const redis = createRedis(topology.primary.url, {
      commandTimeoutMs: 2000,
      connectTimeoutMs: 2000,
    });
    try {
      await connectRedis(redis);
      const outcome = await new KeyStore(redis, () => undefined).create(
        {
          workspaceId: topology.workspaceId,
          apiId,
          keyId: newId('key'),
          hash: hashKey(plaintext),
          start: 'chos',
          createdAt: Date.now(),
          fields: { enabled: true },
        },
        testAudit(),
      );
      expect(outcome).toBe('created');
    } finally {
      await closeRedis(redis);
    }
    await sleep(100);
    expect((await nodeB.post<Verdict>('keys.verifyKey', { key: plaintext })).body.code).toBe(
      'VALID',
    );
  });
});

test('root keys resolve on every node', async () => {
  const extra = await topology.newRootKey({ workspaceId: topology.workspaceId });
  expect(
    (await client(topology.nodes[1]!.url, extra.key).post('keys.verifyKey', { key: 'x' })).status,
  ).toBe(200);
});
