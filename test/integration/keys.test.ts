import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';
import { sleep, createKey } from '../support/helpers';

let topology: Topology;
let api: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'keys-test' })).body.apiId;
});
afterAll(() => topology.stop());

interface KeyBody {
  id: string;
  start: string;
  workspaceId: string;
  apiId: string;
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  createdAt: number;
  updatedAt?: number;
  expires?: number;
  ratelimit?: Record<string, unknown>;
  enabled: boolean;
}

describe('keys.createKey', () => {
  test('creates a key with every seed field and returns the plaintext once', async () => {
    const expires = Date.now() + 3_600_000;
    const { keyId, key } = await createKey(api, apiId, {
      name: 'seed',
      prefix: 'sk_live',
      byteLength: 32,
      ownerId: 'user_1',
      meta: { plan: 'pro', nested: { a: [1, 2] } },
      expires,
      enabled: true,
      ratelimit: { type: 'fast', limit: 10, refillRate: 2, refillInterval: 1000 },
    });
    expect(keyId).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    // 32 random bytes in base58, then the marker and the checksum (src/keys/keyFormat.ts).
    expect(key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{40,}0kw10[1-9A-HJ-NP-Za-km-z]{6}$/);

    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: keyId,
      start: key.slice(0, 'sk_live_'.length + 4),
      workspaceId: topology.workspaceId,
      apiId,
      name: 'seed',
      ownerId: 'user_1',
      meta: { plan: 'pro', nested: { a: [1, 2] } },
      createdAt: expect.any(Number),
      expires,
      enabled: true,
      ratelimit: {
        type: 'fast',
        async: true,
        limit: 10,
        refillRate: 2,
        refillInterval: 1000,
        duration: 1000,
      },
      // An ownerId is an identity's externalId: the identity is made with the key.
      identity: { id: expect.stringMatching(/^id_/), externalId: 'user_1', meta: {} },
    });
    expect(JSON.stringify(got.body)).not.toContain(key.slice('sk_live_'.length));
  });

  test('a key without prefix has no underscore and a 4-character start', async () => {
    const { keyId, key } = await createKey(api, apiId);
    expect(key).not.toContain('_');
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.start).toBe(key.slice(0, 4));
    expect(got.body.enabled).toBe(true);
    expect(got.body.ratelimit).toBeUndefined();
  });

  test('accepts the newer ratelimit vocabulary and echoes both', async () => {
    const { keyId } = await createKey(api, apiId, {
      ratelimit: { async: false, limit: 5, duration: 60000 },
    });
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.ratelimit).toEqual({
      type: 'consistent',
      async: false,
      limit: 5,
      refillRate: 5,
      refillInterval: 60000,
      duration: 60000,
    });
  });

  test.each([
    [
      { ratelimit: { limit: 0, refillRate: 1, refillInterval: 1 } },
      'ratelimit.limit: must be >= 1',
    ],
    [
      { ratelimit: { limit: 1, refillRate: 1 } },
      'ratelimit: needs either refillRate and refillInterval, or duration',
    ],
    [
      { ratelimit: { limit: 1, duration: 2_592_000_001 } },
      'ratelimit.duration: must be <= 2592000000',
    ],
    [
      { ratelimit: { type: 'slow', limit: 1, duration: 1 } },
      'ratelimit.type: must be one of fast, consistent',
    ],
    [{ prefix: 'has space' }, 'prefix: must match ^[A-Za-z0-9_-]{1,16}$'],
    [{ prefix: 'a'.repeat(17) }, 'prefix: must match ^[A-Za-z0-9_-]{1,16}$'],
    [{ byteLength: 15 }, 'byteLength: must be >= 16'],
    [{ byteLength: 256 }, 'byteLength: must be <= 255'],
    [{ byteLength: 16.5 }, 'byteLength: must be integer'],
    [{ name: 42 }, 'name: must be string'],
    [{ meta: [1] }, 'meta: must be object'],
    [{ expires: 1 }, 'expires: must be in the future'],
    [{ enabled: 'yes' }, 'enabled: must be boolean'],
    [{ remaining: 0 }, 'remaining: must be >= 1'],
    [{ refill: { interval: 'daily', amount: 5 } }, 'refill: requires remaining'],
    [
      { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } },
      'refill.refillDay: only allowed with interval monthly',
    ],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const response = await api.post<ErrorBody>('keys.createKey', { apiId, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toBe(message);
    expect(response.body.error.requestId).toBe(response.headers.get('x-request-id'));
  });

  test('refuses a missing apiId and an unknown API', async () => {
    const missing = await api.post<ErrorBody>('keys.createKey', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe('apiId: is required');
    const unknown = await api.post<ErrorBody>('keys.createKey', { apiId: 'api_doesnotexist' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  test('ignores unknown fields, as v1 clients send extras', async () => {
    const response = await api.post('keys.createKey', { apiId, environment: 'test', whatever: 1 });
    expect(response.status).toBe(200);
  });
});

describe('keys.getKey', () => {
  test('404 for an unknown key id, 400 without one', async () => {
    const unknown = await api.get<ErrorBody>('keys.getKey', { keyId: 'key_nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe('key key_nope not found');
    const missing = await api.get<ErrorBody>('keys.getKey', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe('keyId: is required');
  });
});

describe('keys.updateKey', () => {
  test('changes given fields, keeps absent ones, clears nulls', async () => {
    const { keyId } = await createKey(api, apiId, {
      name: 'before',
      ownerId: 'owner_a',
      meta: { a: 1 },
      ratelimit: { limit: 1, refillRate: 1, refillInterval: 1000 },
    });
    const updated = await api.post('keys.updateKey', {
      keyId,
      name: 'after',
      meta: null,
      ratelimit: { async: false, limit: 7, duration: 5000 },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({});
    const got = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(got.body.name).toBe('after');
    expect(got.body.ownerId).toBe('owner_a');
    expect(got.body.meta).toBeUndefined();
    expect(got.body.updatedAt).toEqual(expect.any(Number));
    expect(got.body.ratelimit).toMatchObject({
      type: 'consistent',
      limit: 7,
      refillInterval: 5000,
    });

    await api.post('keys.updateKey', { keyId, ratelimit: null, ownerId: null, name: null });
    const cleared = await api.get<KeyBody>('keys.getKey', { keyId });
    expect(cleared.body.ratelimit).toBeUndefined();
    expect(cleared.body.ownerId).toBeUndefined();
    expect(cleared.body.name).toBeUndefined();
  });

  test('moving a key to another owner moves it in the owner listing', async () => {
    const { keyId } = await createKey(api, apiId, { ownerId: 'mover_from' });
    await api.post('keys.updateKey', { keyId, ownerId: 'mover_to' });
    const from = await api.get<{ keys: KeyBody[]; total: number }>('apis.listKeys', {
      apiId,
      ownerId: 'mover_from',
    });
    const to = await api.get<{ keys: KeyBody[]; total: number }>('apis.listKeys', {
      apiId,
      ownerId: 'mover_to',
    });
    expect(from.body.total).toBe(0);
    expect(to.body.total).toBe(1);
    expect(to.body.keys.map((k) => k.id)).toEqual([keyId]);
  });

  test('404 for an unknown key, 400 for a bad field', async () => {
    expect((await api.post('keys.updateKey', { keyId: 'key_nope', name: 'x' })).status).toBe(404);
    const { keyId } = await createKey(api, apiId);
    const bad = await api.post<ErrorBody>('keys.updateKey', { keyId, enabled: null });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('enabled: must be boolean');
  });
});

describe('keys.deleteKey', () => {
  test('a deleted key is gone for getKey and verifyKey, and a second delete is 404', async () => {
    const { keyId, key } = await createKey(api, apiId);
    expect((await api.post('keys.deleteKey', { keyId })).status).toBe(200);
    expect((await api.get('keys.getKey', { keyId })).status).toBe(404);
    const verdict = await api.post('keys.verifyKey', { key });
    expect(verdict.body).toEqual({
      valid: false,
      code: 'NOT_FOUND',
      requestId: expect.stringMatching(/^req_/),
    });
    expect((await api.post('keys.deleteKey', { keyId })).status).toBe(404);
  });
});

describe('keys.verifyKey', () => {
  test('a valid key without a rate limit', async () => {
    const { keyId, key } = await createKey(api, apiId, {
      name: 'v',
      ownerId: 'o',
      meta: { m: true },
    });
    const response = await api.post('keys.verifyKey', { key, apiId });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      valid: true,
      code: 'VALID',
      keyId,
      name: 'v',
      ownerId: 'o',
      meta: { m: true },
      identity: { id: expect.stringMatching(/^id_/), externalId: 'o', meta: {} },
      enabled: true,
      requestId: response.headers.get('x-request-id'),
    });
  });

  test('an unknown key is NOT_FOUND with nothing but the verdict', async () => {
    const response = await api.post('keys.verifyKey', { key: 'sk_definitelynotakey' });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['code', 'requestId', 'valid']);
    expect(response.body.code).toBe('NOT_FOUND');
  });

  test('verdicts come in the contract order: disabled before forbidden before expired before rate limit', async () => {
    const { keyId, key } = await createKey(api, apiId, {
      enabled: false,
      expires: Date.now() + 1000,
      ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: 3_600_000 },
    });
    const other = (await api.post<{ apiId: string }>('apis.createApi', { name: 'other' })).body
      .apiId;
    expect((await api.post('keys.verifyKey', { key, apiId: other })).body.code).toBe('DISABLED');
    await api.post('keys.updateKey', { keyId, enabled: true });
    expect((await api.post('keys.verifyKey', { key, apiId: other })).body.code).toBe('FORBIDDEN');
    await sleep(1050);
    expect((await api.post('keys.verifyKey', { key, apiId })).body.code).toBe('EXPIRED');
    await api.post('keys.updateKey', { keyId, expires: null });
    // None of the refusals above spent the single token.
    const first = await api.post<{ code: string; ratelimit: { remaining: number } }>(
      'keys.verifyKey',
      { key },
    );
    expect(first.body.code).toBe('VALID');
    expect(first.body.ratelimit.remaining).toBe(0);
    expect((await api.post('keys.verifyKey', { key })).body.code).toBe('RATE_LIMITED');
  });

  test('a rate-limited key reports limit, remaining and reset', async () => {
    const { key } = await createKey(api, apiId, {
      ratelimit: { type: 'fast', limit: 2, refillRate: 1, refillInterval: 60_000 },
    });
    type Verdict = {
      valid: boolean;
      code: string;
      ratelimit: { limit: number; remaining: number; reset: number };
    };
    const before = Date.now();
    const results: Verdict[] = [];
    for (let i = 0; i < 3; i++)
      results.push((await api.post<Verdict>('keys.verifyKey', { key })).body);
    expect(results.map((r) => [r.code, r.ratelimit.remaining])).toEqual([
      ['VALID', 1],
      ['VALID', 0],
      ['RATE_LIMITED', 0],
    ]);
    for (const result of results) {
      expect(result.ratelimit.limit).toBe(2);
      expect(result.ratelimit.reset).toBeGreaterThan(before);
      expect(result.ratelimit.reset).toBeLessThanOrEqual(Date.now() + 60_000 + 5_000);
    }
  });

  test('ratelimit.cost spends that many tokens, and 0 only reads', async () => {
    const { key } = await createKey(api, apiId, {
      ratelimit: { type: 'consistent', limit: 10, refillRate: 1, refillInterval: 60_000 },
    });
    type Verdict = { code: string; ratelimit: { remaining: number } };
    expect(
      (await api.post<Verdict>('keys.verifyKey', { key, ratelimit: { cost: 4 } })).body.ratelimit
        .remaining,
    ).toBe(6);
    expect(
      (await api.post<Verdict>('keys.verifyKey', { key, ratelimit: { cost: 0 } })).body.ratelimit
        .remaining,
    ).toBe(6);
    const refused = await api.post<Verdict>('keys.verifyKey', { key, ratelimit: { cost: 7 } });
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(refused.body.ratelimit.remaining).toBe(6);
  });

  test('refill after an interval restores tokens in whole intervals', async () => {
    const { key } = await createKey(api, apiId, {
      ratelimit: { type: 'consistent', limit: 2, refillRate: 2, refillInterval: 500 },
    });
    type Verdict = { code: string };
    const codes = async (n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++)
        out.push((await api.post<Verdict>('keys.verifyKey', { key })).body.code);
      return out;
    };
    expect(await codes(3)).toEqual(['VALID', 'VALID', 'RATE_LIMITED']);
    await sleep(1100);
    expect(await codes(3)).toEqual(['VALID', 'VALID', 'RATE_LIMITED']);
  });

  test('authorization.permissions: keys hold no permissions, so a named one is refused', async () => {
    const { key } = await createKey(api, apiId);
    const verify = (permissions: unknown) =>
      api.post<{ valid: boolean; code: string }>('keys.verifyKey', {
        key,
        authorization: { permissions },
      });
    expect((await verify('admin')).body).toMatchObject({
      valid: false,
      code: 'INSUFFICIENT_PERMISSIONS',
    });
    expect((await verify({ or: ['a', 'b'] })).body.code).toBe('INSUFFICIENT_PERMISSIONS');
    // Unkey v2's string grammar is read too; an empty `and` is malformed, as in Unkey's schema.
    expect((await verify('a.read OR (b.write AND c)')).body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await verify({ and: [] })).status).toBe(400);
    expect((await verify('a XOR b')).status).toBe(400);
    expect((await verify(42)).status).toBe(400);
  });
});

describe('externalId, the newer name of ownerId', () => {
  test('is stored as ownerId and filters listKeys', async () => {
    const { keyId } = await createKey(api, apiId, { externalId: 'ext_1' });
    expect((await api.get<KeyBody>('keys.getKey', { keyId })).body.ownerId).toBe('ext_1');
    const listed = await api.get<{ total: number }>('apis.listKeys', {
      apiId,
      externalId: 'ext_1',
    });
    expect(listed.body.total).toBe(1);
  });

  test('must agree with ownerId when both are given', async () => {
    const response = await api.post<ErrorBody>('keys.createKey', {
      apiId,
      ownerId: 'a',
      externalId: 'b',
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('externalId: must equal ownerId when both are given');
  });
});

describe('limits on meta', () => {
  test('meta deeper than 8 levels or larger than 16 KiB is refused', async () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 8; i++) deep = { nested: deep };
    const tooDeep = await api.post<ErrorBody>('keys.createKey', { apiId, meta: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.message).toBe('meta: must not nest deeper than 8 levels');
    const big = await api.post<ErrorBody>('keys.createKey', {
      apiId,
      meta: { blob: 'x'.repeat(17_000) },
    });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('meta: must be at most 16384 bytes as JSON');
    const fits = await api.post('keys.createKey', { apiId, meta: { blob: 'x'.repeat(16_000) } });
    expect(fits.status).toBe(200);
  });
});

describe('RateLimit headers on verifications', () => {
  test('carry limit, remaining and seconds to reset; Retry-After when refused', async () => {
    const { key } = await createKey(api, apiId, {
      ratelimit: { type: 'fast', limit: 1, refillRate: 1, refillInterval: 30_000 },
    });
    const admitted = await api.post('keys.verifyKey', { key });
    expect(admitted.headers.get('ratelimit-limit')).toBe('1');
    expect(admitted.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(admitted.headers.get('ratelimit-reset'))).toBeGreaterThan(25);
    expect(Number(admitted.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(30);
    expect(admitted.headers.get('retry-after')).toBeNull();
    const refused = await api.post('keys.verifyKey', { key });
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(25);
    const plain = await api.post('keys.verifyKey', { key: (await createKey(api, apiId)).key });
    expect(plain.headers.get('ratelimit-limit')).toBeNull();
  });
});
