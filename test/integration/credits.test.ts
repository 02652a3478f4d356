import Redis from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { decide } from '../../src/limiter/tokenBucket';
import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';
import { createKey, hour } from '../support/helpers';

type Verdict = {
  valid: boolean;
  code: string;
  remaining?: number;
  ratelimit?: { limit: number; remaining: number; reset: number };
};
type KeyBody = { remaining?: number; refill?: Record<string, unknown> };

let topology: Topology;
let nodes: Client[];
let api: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
  api = nodes[0]!;
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'credits' })).body.apiId;
});
afterAll(() => topology.stop());

const verify = async (key: string, extra: Record<string, unknown> = {}, node = api) =>
  (await node.post<Verdict>('keys.verifyKey', { key, ...extra })).body;

test('credits are spent one per verification, then USAGE_EXCEEDED', async () => {
  const { keyId, key } = await createKey(api, apiId, { remaining: 3 });
  const verdicts = [];
  for (let i = 0; i < 4; i++) verdicts.push(await verify(key));
  expect(verdicts.map((v) => [v.code, v.remaining])).toEqual([
    ['VALID', 2],
    ['VALID', 1],
    ['VALID', 0],
    ['USAGE_EXCEEDED', 0],
  ]);
  expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.remaining).toBe(0);
});

test('remaining.cost spends that many; 0 only reads; too many refuses and spends nothing', async () => {
  const { key } = await createKey(api, apiId, { remaining: 5 });
  expect((await verify(key, { remaining: { cost: 2 } })).remaining).toBe(3);
  expect(await verify(key, { remaining: { cost: 0 } })).toMatchObject({
    code: 'VALID',
    remaining: 3,
  });
  expect(await verify(key, { remaining: { cost: 4 } })).toMatchObject({
    code: 'USAGE_EXCEEDED',
    remaining: 3,
  });
  expect(await verify(key, { remaining: { cost: 3 } })).toMatchObject({
    code: 'VALID',
    remaining: 0,
  });
});

describe.each(['fast', 'consistent'])('with a %s rate limit', (type) => {
  test('a refused credit check spends no token, and a rate-limited request spends no credit', async () => {
    const { key } = await createKey(api, apiId, {
      remaining: 2,
      ratelimit: { type, limit: 3, refillRate: 1, refillInterval: hour },
    });
    expect(await verify(key, { remaining: { cost: 2 } })).toMatchObject({
      code: 'VALID',
      remaining: 0,
      ratelimit: { remaining: 2 },
    });
    // Credits refuse: the token taken (fast) is given back, or never taken (consistent).
    const refused = await verify(key);
    expect(refused).toMatchObject({ code: 'USAGE_EXCEEDED', remaining: 0 });
    expect(
      (await verify(key, { ratelimit: { cost: 0 }, remaining: { cost: 0 } })).ratelimit?.remaining,
    ).toBe(2);

    await api.post('keys.updateRemaining', {
      keyId: (await findKeyId(key))!,
      op: 'set',
      value: 10,
    });
    await verify(key, { ratelimit: { cost: 2 } });
    const limited = await verify(key);
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.remaining).toBeUndefined();
    expect((await verify(key, { ratelimit: { cost: 0 }, remaining: { cost: 0 } })).remaining).toBe(
      9,
    );
  });
});

async function findKeyId(key: string): Promise<string | undefined> {
  return (
    await api.post<{ keyId?: string }>('keys.verifyKey', {
      key,
      ratelimit: { cost: 0 },
      remaining: { cost: 0 },
    })
  ).body.keyId;
}

test('credits are global: two nodes together never spend more than were granted', async () => {
  const { key } = await createKey(api, apiId, {
    remaining: 10,
    ratelimit: { type: 'fast', limit: 100, refillRate: 1, refillInterval: hour },
  });
  const verdicts = await Promise.all(
    Array.from({ length: 40 }, (_, i) => verify(key, {}, nodes[i % 2])),
  );
  expect(verdicts.filter((v) => v.valid)).toHaveLength(10);
  expect(verdicts.filter((v) => v.code === 'USAGE_EXCEEDED')).toHaveLength(30);
});

describe('keys.updateRemaining', () => {
  test('increment, decrement and set are atomic and report what is left', async () => {
    const { keyId } = await createKey(api, apiId, { remaining: 5 });
    const update = (op: string, value: number) =>
      api.post<{ remaining: number }>('keys.updateRemaining', { keyId, op, value });
    expect((await update('increment', 3)).body).toEqual({ remaining: 8 });
    expect((await update('decrement', 6)).body).toEqual({ remaining: 2 });
    const negative = await api.post<ErrorBody>('keys.updateRemaining', {
      keyId,
      op: 'decrement',
      value: 3,
    });
    expect(negative.status).toBe(400);
    expect(negative.body.error.message).toMatch(/^value: /);
    expect((await update('set', 42)).body).toEqual({ remaining: 42 });
  });

  test('a key with unlimited usage gets credits by set, and refuses increment', async () => {
    const { keyId, key } = await createKey(api, apiId);
    const refused = await api.post<ErrorBody>('keys.updateRemaining', {
      keyId,
      op: 'increment',
      value: 1,
    });
    expect(refused.status).toBe(412);
    expect(refused.body.error.code).toBe('PRECONDITION_FAILED');
    expect((await api.post('keys.updateRemaining', { keyId, op: 'set', value: 1 })).body).toEqual({
      remaining: 1,
    });
    expect((await verify(key)).code).toBe('VALID');
    expect((await verify(key)).code).toBe('USAGE_EXCEEDED');
  });

  test('concurrent verifications and increments never lose an update', async () => {
    const { keyId, key } = await createKey(api, apiId, { remaining: 50 });
    await Promise.all([
      ...Array.from({ length: 20 }, () => verify(key)),
      ...Array.from({ length: 10 }, () =>
        api.post('keys.updateRemaining', { keyId, op: 'increment', value: 1 }),
      ),
    ]);
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.remaining).toBe(40);
  });

  test.each([
    [{ op: 'double', value: 1 }, 'op: must be one of increment, decrement, set'],
    [{ op: 'set', value: -1 }, 'value: must be >= 0'],
    [{ op: 'set' }, 'value: is required'],
  ])('refuses %j', async (body, message) => {
    const { keyId } = await createKey(api, apiId, { remaining: 1 });
    const response = await api.post<ErrorBody>('keys.updateRemaining', { keyId, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(message);
  });
});

describe('refill', () => {
  test('getKey reports the refill with lastRefillAt; a passed refill point resets remaining when read', async () => {
    const { keyId, key } = await createKey(api, apiId, {
      remaining: 2,
      refill: { interval: 'daily', amount: 7 },
    });
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.remaining).toBe(2);
    expect(got.body.refill).toEqual({
      interval: 'daily',
      amount: 7,
      lastRefillAt: expect.any(Number),
    });
    await verify(key, { remaining: { cost: 2 } });
    expect((await verify(key)).code).toBe('USAGE_EXCEEDED');

    // Pretend the last refill happened two days ago: the refill point of today has passed.
    const redis = new Redis(topology.primary.url);
    await redis.hset(
      `keyward:credits:{${keyId}}`,
      'lastRefillAt',
      String(Date.now() - 2 * 86_400_000),
    );
    await redis.quit();
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.remaining).toBe(7);
    expect(await verify(key)).toMatchObject({ code: 'VALID', remaining: 6 });
  });

  test('monthly refills take a refillDay; updateKey can change or drop the refill', async () => {
    const { keyId } = await createKey(api, apiId, {
      remaining: 5,
      refill: { interval: 'monthly', amount: 100, refillDay: 31 },
    });
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.refill).toMatchObject({
      interval: 'monthly',
      refillDay: 31,
    });
    await api.post('keys.updateKey', { keyId, refill: { interval: 'daily', amount: 9 } });
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.refill).toMatchObject({
      interval: 'daily',
      amount: 9,
    });
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.refill).not.toHaveProperty(
      'refillDay',
    );
    await api.post('keys.updateKey', { keyId, refill: null });
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.refill).toBeUndefined();
    expect(got.body.remaining).toBe(5);
  });

  test('updateKey remaining: null makes usage unlimited; a refill without credits is refused', async () => {
    const { keyId, key } = await createKey(api, apiId, { remaining: 1 });
    await api.post('keys.updateKey', { keyId, remaining: null });
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.remaining).toBeUndefined();
    for (let i = 0; i < 3; i++) expect((await verify(key)).code).toBe('VALID');
    const refused = await api.post<ErrorBody>('keys.updateKey', {
      keyId,
      refill: { interval: 'daily', amount: 1 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('refill: requires remaining');
    expect((await api.post('keys.updateKey', { keyId, remaining: 4 })).status).toBe(200);
    expect((await verify(key)).remaining).toBe(3);
  });
});

test('listKeys shows each key’s credits', async () => {
  const own = (await api.post<{ apiId: string }>('apis.createApi', { name: 'listed credits' })).body
    .apiId;
  await api.post('keys.createKey', { apiId: own, remaining: 11 });
  await api.post('keys.createKey', { apiId: own });
  const page = await api.get<{ keys: KeyBody[] }>('apis.listKeys', { apiId: own });
  expect(page.body.keys.map((k) => k.remaining)).toEqual([11, undefined]);
});

test('a node holding an older record cannot roll the credits back to an older "set remaining"', async () => {
  const redis = createRedis(topology.primary.url, {
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  await connectRedis(redis);
  try {
    const keys = { bucket: 'keyward:bucket:{stale}', credits: 'keyward:credits:{stale}' };
    const spend = (nonce: string, value: number) =>
      decide(redis, keys, undefined, 0, { cost: 1, reset: { nonce, value, at: Date.now() } });
    expect((await spend('1', 10)).creditsRemaining).toBe(9);
    expect((await spend('3', 50)).creditsRemaining).toBe(49); // a newer record: its reset applies
    expect((await spend('1', 10)).creditsRemaining).toBe(48); // a stale node: no roll-back
    expect((await spend('3', 50)).creditsRemaining).toBe(47); // applied once only
  } finally {
    await closeRedis(redis);
  }
});
