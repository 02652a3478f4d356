import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { sleep, hour } from '../support/helpers';

/**
 * One conformance suite, run through both modes: a fast bucket (node-local Redis) and a
 * consistent one (the primary) must obey exactly the same rules.
 */
type Verdict = {
  valid: boolean;
  code: string;
  ratelimit: { limit: number; remaining: number; reset: number };
};

let topology: Topology;
let api: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'conformance' })).body.apiId;
});
afterAll(() => topology.stop());

describe.each(['fast', 'consistent'] as const)('%s buckets', (type) => {
  async function keyWith(limit: number, refillRate = 1, refillInterval = hour) {
    const response = await api.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      ratelimit: { type, limit, refillRate, refillInterval },
    });
    return response.body;
  }
  const verify = async (key: string, cost?: number) =>
    (
      await api.post<Verdict>(
        'keys.verifyKey',
        cost === undefined ? { key } : { key, ratelimit: { cost } },
      )
    ).body;

  test('a new bucket starts full and admits exactly its limit', async () => {
    const { key } = await keyWith(4);
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push(await verify(key));
    expect(verdicts.map((v) => [v.code, v.ratelimit.remaining])).toEqual([
      ['VALID', 3],
      ['VALID', 2],
      ['VALID', 1],
      ['VALID', 0],
      ['RATE_LIMITED', 0],
      ['RATE_LIMITED', 0],
    ]);
    expect(verdicts.every((v) => v.ratelimit.limit === 4)).toBe(true);
  });

  test('a refusal spends nothing: a smaller cost still fits afterwards', async () => {
    const { key } = await keyWith(5);
    expect((await verify(key, 3)).ratelimit.remaining).toBe(2);
    const refused = await verify(key, 3);
    expect(refused).toMatchObject({
      valid: false,
      code: 'RATE_LIMITED',
      ratelimit: { remaining: 2 },
    });
    expect(await verify(key, 2)).toMatchObject({ valid: true, ratelimit: { remaining: 0 } });
  });

  test('cost 0 reads without spending, even from an empty bucket', async () => {
    const { key } = await keyWith(2);
    expect((await verify(key, 0)).ratelimit.remaining).toBe(2);
    await verify(key, 2);
    expect(await verify(key, 0)).toMatchObject({
      valid: true,
      code: 'VALID',
      ratelimit: { remaining: 0 },
    });
  });

  test('a cost above the limit is always refused', async () => {
    const { key } = await keyWith(3);
    expect(await verify(key, 4)).toMatchObject({
      code: 'RATE_LIMITED',
      ratelimit: { remaining: 3 },
    });
  });

  test('reset is the next refill, one interval after the last refill point', async () => {
    const { key } = await keyWith(2, 1, 60_000);
    const before = Date.now();
    const first = await verify(key);
    expect(first.ratelimit.reset).toBeGreaterThanOrEqual(before + 60_000 - 5_000);
    expect(first.ratelimit.reset).toBeLessThanOrEqual(Date.now() + 60_000 + 5_000);
    // The refill point does not move while the bucket drains.
    expect((await verify(key)).ratelimit.reset).toBe(first.ratelimit.reset);
    expect((await verify(key)).ratelimit.reset).toBe(first.ratelimit.reset);
  });

  test('tokens come back in whole intervals, refillRate at a time, never above the limit', async () => {
    const { key } = await keyWith(3, 2, 400);
    await verify(key, 3);
    expect((await verify(key)).code).toBe('RATE_LIMITED');
    await sleep(450); // one whole interval: 2 tokens
    expect((await verify(key, 0)).ratelimit.remaining).toBe(2);
    await sleep(850); // two more: capped at 3
    expect((await verify(key, 0)).ratelimit.remaining).toBe(3);
  });

  test('changing the limit does not reset the bucket', async () => {
    const { keyId, key } = await keyWith(10);
    await verify(key, 7);
    await api.post('keys.updateKey', {
      keyId,
      ratelimit: { type, limit: 20, refillRate: 1, refillInterval: hour },
    });
    await sleep(100);
    const after = await verify(key, 0);
    expect(after.ratelimit).toMatchObject({ limit: 20, remaining: 3 });
    await api.post('keys.updateKey', {
      keyId,
      ratelimit: { type, limit: 2, refillRate: 1, refillInterval: hour },
    });
    await sleep(100);
    expect((await verify(key, 0)).ratelimit).toMatchObject({ limit: 2, remaining: 2 });
  });
});
