import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { eventually, hour } from '../support/helpers';

/**
 * Failure behaviour: a node answers within a bounded time whichever Redis is gone, follows its
 * limiter policy, never reports an unevaluated request as an ordinary success, and recovers by
 * itself when Redis is back.
 */
type Verdict = {
  valid: boolean;
  code: string;
  keyId?: string;
  remaining?: number;
  ratelimit?: { limit: number; remaining?: number; evaluated?: false };
};

const roomy = { limit: 1000, refillRate: 1, refillInterval: hour };
/** Not a speed target: the bound within which a node must answer at all while Redis is gone. */
const ANSWER_BOUND_MS = 2000;

async function timed<T>(action: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await action();
  return { value, ms: performance.now() - started };
}

/** How many key invalidations the node has received, from its metrics. */
async function keyInvalidationsSeen(nodeUrl: string): Promise<number> {
  const text = await (await fetch(`${nodeUrl}/metrics`)).text();
  const line = /^keyward_cache_events\{cache="keys",event="invalidation"\} (\d+)$/m.exec(text);
  if (!line) throw new Error('no key invalidation count in /metrics');
  return Number(line[1]);
}

describe('closed policy (the default)', () => {
  let topology: Topology;
  let api: Client;
  let keys: { fast: string; consistent: string; plain: string };

  beforeAll(async () => {
    topology = await startTopology({ nodes: 1, primaryAppendOnly: true });
    api = client(topology.nodes[0]!.url, topology.rootKey);
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'failures' })).body
      .apiId;
    const create = async (ratelimit?: object) =>
      (
        await api.post<{ key: string }>('keys.createKey', {
          apiId,
          ...(ratelimit ? { ratelimit } : {}),
        })
      ).body.key;
    keys = {
      fast: await create({ type: 'fast', ...roomy }),
      consistent: await create({ type: 'consistent', ...roomy }),
      plain: await create(),
    };
    for (const key of Object.values(keys)) {
      expect((await api.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('VALID');
    }
  });
  afterAll(() => topology.stop());

  test('losing the local Redis affects only fast keys, and the node recovers by itself', async () => {
    await topology.locals[0]!.stop();
    const fast = await timed(() => api.post<Verdict>('keys.verifyKey', { key: keys.fast }));
    expect(fast.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(fast.value.status).toBe(200);
    expect(fast.value.body).toMatchObject({
      valid: false,
      code: 'LIMITER_UNAVAILABLE',
      ratelimit: { limit: 1000, evaluated: false },
    });
    expect((await api.post<Verdict>('keys.verifyKey', { key: keys.consistent })).body.code).toBe(
      'VALID',
    );
    expect((await api.post<Verdict>('keys.verifyKey', { key: keys.plain })).body.code).toBe(
      'VALID',
    );
    const liveness = await fetch(`${topology.nodes[0]!.url}/v1/liveness`);
    expect(liveness.status).toBe(503);

    await topology.locals[0]!.restart();
    await eventually(
      async () => (await api.post<Verdict>('keys.verifyKey', { key: keys.fast })).body.valid,
    );
    // The restarted local Redis started empty: a fresh, full bucket, counted once from here on.
    const after = await api.post<Verdict>('keys.verifyKey', { key: keys.fast });
    expect(after.body.ratelimit?.remaining).toBe(998);
  });

  test('losing the primary: consistent keys follow the policy, cached fast keys keep working', async () => {
    await topology.primary.stop();
    const answers = await Promise.all([
      timed(() => api.post<Verdict>('keys.verifyKey', { key: keys.consistent })),
      timed(() => api.post<Verdict>('keys.verifyKey', { key: keys.fast })),
      timed(() => api.post<Verdict>('keys.verifyKey', { key: keys.plain })),
      timed(() => api.post('apis.createApi', { name: 'while down' })),
      timed(() => api.get('keys.getKey', { keyId: 'key_x' })),
    ]);
    for (const { ms } of answers) expect(ms).toBeLessThan(ANSWER_BOUND_MS);
    const [consistent, fast, plain, create, read] = answers.map((a) => a.value);
    expect(consistent!.body).toMatchObject({ valid: false, code: 'LIMITER_UNAVAILABLE' });
    expect(fast!.body).toMatchObject({ valid: true, code: 'VALID' });
    expect(plain!.body).toMatchObject({ valid: true, code: 'VALID' });
    expect(create!.status).toBe(503);
    expect((create!.body as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(read!.status).toBe(503);
    const liveness = await fetch(`${topology.nodes[0]!.url}/v1/liveness`);
    expect(liveness.status).toBe(503);
    const body = (await liveness.json()) as { services: Record<string, { status: string }> };
    expect(body.services.primary?.status).toBe('down');
    expect(body.services.invalidation?.status).toBe('unsubscribed');

    await topology.primary.restart();
    await eventually(
      async () => (await api.post<Verdict>('keys.verifyKey', { key: keys.consistent })).body.valid,
    );
    await eventually(
      async () => (await fetch(`${topology.nodes[0]!.url}/v1/liveness`)).status === 200,
    );
    // The primary kept its data (AOF): the consistent bucket continues where it was.
    const after = await api.post<Verdict>('keys.verifyKey', { key: keys.consistent });
    expect(after.body.code).toBe('VALID');
    expect(after.body.ratelimit?.remaining).toBeLessThanOrEqual(997);
    expect((await api.post('apis.createApi', { name: 'after' })).status).toBe(200);
  });
});

describe('open policy', () => {
  let topology: Topology;
  let api: Client;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 1, env: { KEYWARD_LIMITER_FAILURE: 'open' } });
    api = client(topology.nodes[0]!.url, topology.rootKey);
  });
  afterAll(() => topology.stop());

  test('admits when the bucket is unreachable, and says the limit was not evaluated', async () => {
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'open' })).body
      .apiId;
    const { key } = (
      await api.post<{ key: string }>('keys.createKey', {
        apiId,
        ratelimit: { type: 'fast', ...roomy },
      })
    ).body;
    expect((await api.post<Verdict>('keys.verifyKey', { key })).body.ratelimit?.remaining).toBe(
      999,
    );
    await topology.locals[0]!.stop();
    const verdict = await api.post<Verdict>('keys.verifyKey', { key });
    expect(verdict.body).toMatchObject({
      valid: true,
      code: 'VALID',
      ratelimit: { limit: 1000, evaluated: false },
    });
    expect(verdict.body.ratelimit?.remaining).toBeUndefined();
  });
  test('a key with credits and no rate limit says it was not evaluated when the primary is away', async () => {
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'open credits' }))
      .body.apiId;
    const before = await keyInvalidationsSeen(topology.nodes[0]!.url);
    const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId, remaining: 5 }))
      .body;
    // createKey announces the new key (to clear "not found" entries). Arriving while the
    // verification below is still reading the key, that message keeps the read out of the
    // cache, and the node would have no fallback once the primary is gone (guarantees.md). The
    // node counts two: its own createKey applies the change at once, then the message arrives.
    await eventually(
      async () => (await keyInvalidationsSeen(topology.nodes[0]!.url)) >= before + 2,
    );
    expect((await api.post<Verdict>('keys.verifyKey', { key })).body.remaining).toBe(4);
    await topology.primary.stop();
    const verdict = await api.post<Verdict & { evaluated?: boolean }>('keys.verifyKey', { key });
    expect(verdict.body).toMatchObject({ valid: true, code: 'VALID', evaluated: false });
    expect(verdict.body.remaining).toBeUndefined();
  });
});

describe('the clock', () => {
  let topology: Topology;

  beforeAll(async () => {
    const tenMinutes = 10 * 60_000;
    topology = await startTopology({
      nodes: 2,
      nodeOptions: [{}, { localClock: () => Date.now() + tenMinutes }],
    });
  });
  afterAll(() => topology.stop());

  test('a node whose own clock is ten minutes fast reaches the same decisions', async () => {
    const honest = client(topology.nodes[0]!.url, topology.rootKey);
    const skewed = client(topology.nodes[1]!.url, topology.rootKey);
    const apiId = (await honest.post<{ apiId: string }>('apis.createApi', { name: 'clock' })).body
      .apiId;
    // A key that expires in a minute: "already expired" to a node trusting its own clock.
    const expires = Date.now() + 60_000;
    const created = await skewed.post<{ key: string }>('keys.createKey', {
      apiId,
      expires,
      ratelimit: { type: 'consistent', limit: 2, refillRate: 1, refillInterval: hour },
    });
    expect(created.status).toBe(200);
    const verdicts = [
      await skewed.post<Verdict>('keys.verifyKey', { key: created.body.key }),
      await honest.post<Verdict>('keys.verifyKey', { key: created.body.key }),
      await skewed.post<Verdict>('keys.verifyKey', { key: created.body.key }),
    ];
    expect(verdicts.map((v) => v.body.code)).toEqual(['VALID', 'VALID', 'RATE_LIMITED']);
    const got = await skewed.get<{ createdAt: number }>('keys.getKey', {
      keyId: verdicts[0]!.body.keyId!,
    });
    expect(Math.abs(got.body.createdAt - Date.now())).toBeLessThan(60_000);
  });
});
