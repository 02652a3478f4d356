/**
 * The published Unkey v1 TypeScript SDK (`@unkey/api` 0.38.0), unmodified, pointed at a keyward
 * node: every call below goes through the SDK's own request building (path, query, JSON body,
 * `Authorization`, telemetry headers) and its own response handling (2xx → `result`, 4xx → the
 * `{ error }` envelope as it is).
 */
import { Unkey } from '@unkey/api';
import { startTopology, type Topology } from '../support/topology';
import { hour } from '../support/helpers';

/** The SDK's `Result<R>`, which the package does not export. */
type SdkResult<R> =
  | { result: R; error?: never }
  | { result?: never; error: { code: string; message: string; docs: string; requestId: string } };

/** The result of a call that must succeed; a failure names the code the server answered with. */
async function ok<R>(call: Promise<SdkResult<R>>): Promise<Exclude<R, undefined>> {
  const response = await call;
  if (response.error) {
    throw new Error(`SDK call failed: ${response.error.code}: ${response.error.message}`);
  }
  return response.result as Exclude<R, undefined>;
}

/** The error of a call that must fail, as the SDK hands it to its caller. */
async function failure<R>(call: Promise<SdkResult<R>>): Promise<SdkResult<R>['error']> {
  const response = await call;
  expect(response.result).toBeUndefined();
  expect(response.error).toBeDefined();
  return response.error;
}

/** A generated key without a prefix: base58, the marker 0kw10 and a 6-character checksum. */
const GENERATED = /^[1-9A-HJ-NP-Za-km-z]+0kw10[1-9A-HJ-NP-Za-km-z]{6}$/;
/** An hour per token: no test here runs long enough for a bucket to refill. */
const SLOW_REFILL = { refillRate: 1, refillInterval: hour } as const;

let topology: Topology;
let unkey: Unkey;

function client(rootKey: string): Unkey {
  return new Unkey({
    baseUrl: topology.nodes[0]!.url,
    rootKey,
    // One attempt only: a 5xx is a finding, not something to retry past.
    retry: { attempts: 0, backoff: () => 0 },
    // Telemetry stays on: the node must accept the Unkey-Telemetry-* headers real clients send.
  });
}

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  unkey = client(topology.rootKey);
});
afterAll(() => topology.stop());

describe('apis', () => {
  test('apis.create, then apis.get returns id, workspace and name', async () => {
    const created = await ok(unkey.apis.create({ name: 'sdk-apis' }));
    expect(created.apiId).toMatch(/^api_/);

    const api = await ok(unkey.apis.get({ apiId: created.apiId }));
    expect(api).toMatchObject({
      id: created.apiId,
      workspaceId: topology.workspaceId,
      name: 'sdk-apis',
    });
  });

  test('apis.delete removes the API and its keys', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'sdk-doomed' }));
    const { keyId, key } = await ok(unkey.keys.create({ apiId }));
    expect((await ok(unkey.keys.verify({ key }))).code).toBe('VALID');

    expect(await ok(unkey.apis.delete({ apiId }))).toEqual({});

    expect((await failure(unkey.apis.get({ apiId })))?.code).toBe('NOT_FOUND');
    expect((await failure(unkey.apis.listKeys({ apiId })))?.code).toBe('NOT_FOUND');
    expect((await failure(unkey.keys.get({ keyId })))?.code).toBe('NOT_FOUND');
    const verdict = await ok(unkey.keys.verify({ key }));
    expect(verdict).toMatchObject({ valid: false, code: 'NOT_FOUND' });
    expect((await failure(unkey.apis.delete({ apiId })))?.code).toBe('NOT_FOUND');
  });
});

describe('keys', () => {
  let apiId: string;
  beforeAll(async () => {
    ({ apiId } = await ok(unkey.apis.create({ name: 'sdk-keys' })));
  });

  test('keys.create with every field and the original rate limit vocabulary; keys.get reads it back', async () => {
    const expires = Date.now() + 24 * hour;
    const created = await ok(
      unkey.keys.create({
        apiId,
        name: 'original vocabulary',
        prefix: 'kw',
        byteLength: 32,
        ownerId: 'user_1',
        meta: { plan: 'pro', seats: 3, nested: { ok: true } },
        expires,
        enabled: true,
        ratelimit: { type: 'consistent', limit: 3, ...SLOW_REFILL },
      }),
    );
    expect(created.keyId).toMatch(/^key_/);
    expect(created.key).toMatch(/^kw_/);
    expect(created.key.slice('kw_'.length)).toMatch(GENERATED);
    // 32 random bytes are 43 or 44 base58 digits (fewer only with leading zero bytes).
    expect(created.key.length - 'kw_'.length - '0kw10'.length - 6).toBeGreaterThanOrEqual(40);

    const key = await ok(unkey.keys.get({ keyId: created.keyId }));
    expect(key).toMatchObject({
      id: created.keyId,
      start: created.key.slice(0, 'kw_'.length + 4),
      workspaceId: topology.workspaceId,
      apiId,
      name: 'original vocabulary',
      ownerId: 'user_1',
      meta: { plan: 'pro', seats: 3, nested: { ok: true } },
      expires,
      enabled: true,
      ratelimit: {
        type: 'consistent',
        async: false,
        limit: 3,
        refillRate: 1,
        refillInterval: hour,
        duration: hour,
      },
    });
    expect(typeof key.createdAt).toBe('number');
    expect(JSON.stringify(key)).not.toContain(created.key);
  });

  test('keys.create with the newer rate limit vocabulary { async, limit, duration }', async () => {
    const created = await ok(
      unkey.keys.create({
        apiId,
        name: 'newer vocabulary',
        ratelimit: { async: true, limit: 2, duration: hour },
      }),
    );
    expect(created.key).toMatch(GENERATED);

    const key = await ok(unkey.keys.get({ keyId: created.keyId }));
    expect(key.ratelimit).toEqual({
      type: 'fast',
      async: true,
      limit: 2,
      refillRate: 2,
      refillInterval: hour,
      duration: hour,
    });
    expect(key.enabled).toBe(true);
  });

  test('keys.create refuses bad input with BAD_REQUEST, which the SDK passes through', async () => {
    const error = await failure(unkey.keys.create({ apiId, byteLength: 8 }));
    expect(error?.code).toBe('BAD_REQUEST');
    expect(error?.message).toContain('byteLength');
    expect(error?.requestId).toMatch(/^req_/);
    expect(typeof error?.docs).toBe('string');
  });

  test('keys.create in an unknown API is NOT_FOUND', async () => {
    expect((await failure(unkey.keys.create({ apiId: 'api_missing' })))?.code).toBe('NOT_FOUND');
  });

  test('keys.verify: VALID with the key details, then RATE_LIMITED once the bucket is empty', async () => {
    const expires = Date.now() + 24 * hour;
    const { keyId, key } = await ok(
      unkey.keys.create({
        apiId,
        name: 'limited',
        ownerId: 'user_2',
        meta: { tier: 'free' },
        expires,
        ratelimit: { type: 'fast', limit: 2, ...SLOW_REFILL },
      }),
    );

    const first = await ok(unkey.keys.verify({ key, apiId }));
    expect(first).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId,
      name: 'limited',
      ownerId: 'user_2',
      meta: { tier: 'free' },
      expires,
      enabled: true,
      ratelimit: { limit: 2, remaining: 1 },
    });
    expect(first.requestId).toMatch(/^req_/);
    expect(typeof first.ratelimit?.reset).toBe('number');

    const second = await ok(unkey.keys.verify({ key }));
    expect(second).toMatchObject({ valid: true, code: 'VALID', ratelimit: { remaining: 0 } });

    const third = await ok(unkey.keys.verify({ key }));
    expect(third).toMatchObject({
      valid: false,
      code: 'RATE_LIMITED',
      keyId,
      ratelimit: { limit: 2, remaining: 0 },
    });
  });

  test('keys.verify honours the deprecated ratelimit.cost the SDK still offers', async () => {
    const { key } = await ok(
      unkey.keys.create({ apiId, ratelimit: { async: true, limit: 5, duration: hour } }),
    );
    const spent = await ok(unkey.keys.verify({ key, ratelimit: { cost: 4 } }));
    expect(spent).toMatchObject({ code: 'VALID', ratelimit: { remaining: 1 } });
    const refused = await ok(unkey.keys.verify({ key, ratelimit: { cost: 2 } }));
    expect(refused).toMatchObject({
      valid: false,
      code: 'RATE_LIMITED',
      ratelimit: { remaining: 1 },
    });
  });

  test('keys.verify with another API id is FORBIDDEN; an unknown key is NOT_FOUND', async () => {
    const { key } = await ok(unkey.keys.create({ apiId }));
    const other = await ok(unkey.apis.create({ name: 'sdk-other' }));
    expect(await ok(unkey.keys.verify({ key, apiId: other.apiId }))).toMatchObject({
      valid: false,
      code: 'FORBIDDEN',
    });
    const unknown = await ok(unkey.keys.verify({ key: 'kw_doesNotExist' }));
    expect(unknown.valid).toBe(false);
    expect(unknown.code).toBe('NOT_FOUND');
    expect(unknown.keyId).toBeUndefined();
  });

  test('keys.update changes fields, clears with null, and enabled:false makes verify DISABLED', async () => {
    const { keyId, key } = await ok(
      unkey.keys.create({
        apiId,
        name: 'before',
        ownerId: 'user_3',
        meta: { a: 1 },
        expires: Date.now() + 24 * hour,
        ratelimit: { type: 'fast', limit: 10, ...SLOW_REFILL },
      }),
    );
    expect((await ok(unkey.keys.verify({ key }))).code).toBe('VALID');

    expect(
      await ok(
        unkey.keys.update({
          keyId,
          name: 'after',
          ownerId: 'user_4',
          meta: { b: 2 },
          expires: null,
          ratelimit: { async: false, limit: 7, duration: 60_000 },
        }),
      ),
    ).toEqual({});
    const updated = await ok(unkey.keys.get({ keyId }));
    expect(updated).toMatchObject({
      id: keyId,
      name: 'after',
      ownerId: 'user_4',
      meta: { b: 2 },
      enabled: true,
      ratelimit: {
        type: 'consistent',
        async: false,
        limit: 7,
        refillRate: 7,
        refillInterval: 60_000,
        duration: 60_000,
      },
    });
    expect(updated.expires).toBeUndefined();
    expect(typeof updated.updatedAt).toBe('number');

    // The original vocabulary works for updates too, and null removes the limit.
    await ok(unkey.keys.update({ keyId, ratelimit: { type: 'fast', limit: 4, ...SLOW_REFILL } }));
    expect((await ok(unkey.keys.get({ keyId }))).ratelimit).toMatchObject({
      type: 'fast',
      async: true,
      limit: 4,
      refillRate: 1,
      refillInterval: hour,
    });
    await ok(unkey.keys.update({ keyId, ratelimit: null }));
    expect((await ok(unkey.keys.get({ keyId }))).ratelimit).toBeUndefined();

    await ok(unkey.keys.update({ keyId, enabled: false }));
    expect((await ok(unkey.keys.get({ keyId }))).enabled).toBe(false);
    expect(await ok(unkey.keys.verify({ key }))).toMatchObject({
      valid: false,
      code: 'DISABLED',
      keyId,
      enabled: false,
    });

    await ok(unkey.keys.update({ keyId, enabled: true }));
    expect(await ok(unkey.keys.verify({ key }))).toMatchObject({ valid: true, code: 'VALID' });
  });

  test('keys.create with enabled:false makes a key that verifies DISABLED', async () => {
    const { key } = await ok(unkey.keys.create({ apiId, enabled: false }));
    expect(await ok(unkey.keys.verify({ key }))).toMatchObject({
      valid: false,
      code: 'DISABLED',
    });
  });

  test('keys.delete: the key verifies NOT_FOUND and is gone for get, update and delete', async () => {
    const { keyId, key } = await ok(unkey.keys.create({ apiId, name: 'short-lived' }));
    expect((await ok(unkey.keys.verify({ key }))).code).toBe('VALID');

    expect(await ok(unkey.keys.delete({ keyId }))).toEqual({});

    const verdict = await ok(unkey.keys.verify({ key }));
    expect(verdict.valid).toBe(false);
    expect(verdict.code).toBe('NOT_FOUND');
    expect((await failure(unkey.keys.get({ keyId })))?.code).toBe('NOT_FOUND');
    expect((await failure(unkey.keys.update({ keyId, name: 'x' })))?.code).toBe('NOT_FOUND');
    expect((await failure(unkey.keys.delete({ keyId })))?.code).toBe('NOT_FOUND');
  });

  test('keys.delete accepts the SDK-only `permanent` flag', async () => {
    const { keyId, key } = await ok(unkey.keys.create({ apiId }));
    expect(await ok(unkey.keys.delete({ keyId, permanent: true }))).toEqual({});
    expect((await ok(unkey.keys.verify({ key }))).code).toBe('NOT_FOUND');
  });
});

describe('apis.listKeys', () => {
  let apiId: string;
  const all: string[] = [];
  const alice: string[] = [];
  beforeAll(async () => {
    ({ apiId } = await ok(unkey.apis.create({ name: 'sdk-list' })));
    const owners = ['alice', 'bob', 'alice', 'bob', 'alice'];
    for (const [i, ownerId] of owners.entries()) {
      const { keyId } = await ok(unkey.keys.create({ apiId, ownerId, name: `key ${i}` }));
      all.push(keyId);
      if (ownerId === 'alice') alice.push(keyId);
    }
  });

  /** Every page of a listing, following the cursor the SDK hands back. */
  async function pages(query: { limit: number; ownerId?: string }) {
    const seen: { ids: string[]; total: number; cursor?: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await ok(
        unkey.apis.listKeys({ apiId, ...query, ...(cursor !== undefined ? { cursor } : {}) }),
      );
      seen.push({
        ids: result.keys.map((key) => key.id),
        total: result.total,
        ...(result.cursor !== undefined ? { cursor: result.cursor } : {}),
      });
      if (result.cursor === undefined) break;
      cursor = result.cursor;
    }
    return seen;
  }

  test('without a limit: every key in creation order, no cursor, exact total', async () => {
    const result = await ok(unkey.apis.listKeys({ apiId }));
    expect(result.keys.map((key) => key.id)).toEqual(all);
    expect(result.total).toBe(5);
    expect(result.cursor).toBeUndefined();
    expect(result.keys[0]).toMatchObject({
      id: all[0],
      apiId,
      workspaceId: topology.workspaceId,
      ownerId: 'alice',
      name: 'key 0',
      enabled: true,
    });
    expect(typeof result.keys[0]?.start).toBe('string');
    expect(typeof result.keys[0]?.createdAt).toBe('number');
  });

  test('limit and cursor page through every key exactly once', async () => {
    const seen = await pages({ limit: 2 });
    expect(seen.flatMap((page) => page.ids)).toEqual(all);
    expect(seen[0]?.ids).toHaveLength(2);
    expect(seen[0]?.cursor).toEqual(expect.any(String));
    expect(seen.at(-1)?.cursor).toBeUndefined();
    for (const page of seen) expect(page.total).toBe(5);
  });

  test('ownerId filters the keys and the total, also across pages', async () => {
    const filtered = await ok(unkey.apis.listKeys({ apiId, ownerId: 'alice' }));
    expect(filtered.keys.map((key) => key.id)).toEqual(alice);
    expect(filtered.total).toBe(3);
    for (const key of filtered.keys) expect(key.ownerId).toBe('alice');

    const seen = await pages({ limit: 1, ownerId: 'alice' });
    expect(seen.flatMap((page) => page.ids)).toEqual(alice);
    for (const page of seen) expect(page.total).toBe(3);

    const nobody = await ok(unkey.apis.listKeys({ apiId, ownerId: 'carol' }));
    expect(nobody).toMatchObject({ keys: [], total: 0 });
    expect(nobody.cursor).toBeUndefined();
  });

  test('a deleted key leaves the listing and the total', async () => {
    const { keyId } = await ok(unkey.keys.create({ apiId, ownerId: 'dave' }));
    expect((await ok(unkey.apis.listKeys({ apiId, ownerId: 'dave' }))).total).toBe(1);
    await ok(unkey.keys.delete({ keyId }));
    const after = await ok(unkey.apis.listKeys({ apiId, ownerId: 'dave' }));
    expect(after).toMatchObject({ keys: [], total: 0 });
    expect((await ok(unkey.apis.listKeys({ apiId }))).total).toBe(5);
  });
});

describe('transport', () => {
  test('the SDK request shape (telemetry headers, GET with a JSON content type) is accepted', async () => {
    const sent: { url: string; method: string; headers: Record<string, string> }[] = [];
    const realFetch = globalThis.fetch;
    const spy = jest
      .spyOn(globalThis, 'fetch')
      .mockImplementation((input: string | URL | Request, init?: RequestInit) => {
        sent.push({
          url: String(input),
          method: init?.method ?? 'GET',
          headers: { ...(init?.headers as Record<string, string>) },
        });
        return realFetch(input, init);
      });
    try {
      const { apiId } = await ok(unkey.apis.create({ name: 'sdk-transport' }));
      await ok(unkey.apis.get({ apiId }));
    } finally {
      spy.mockRestore();
    }
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({
      url: `${topology.nodes[0]!.url}/v1/apis.createApi`,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${topology.rootKey}` },
    });
    expect(sent[0]?.headers['Unkey-Telemetry-SDK']).toBe('@unkey/api@0.38.0');
    expect(sent[1]?.url).toMatch(/\/v1\/apis\.getApi\?apiId=api_/);
    expect(sent[1]).toMatchObject({
      method: 'GET',
      headers: { 'Content-Type': 'application/json' },
    });
  });

  test('a wrong root key is UNAUTHORIZED in the envelope the SDK returns', async () => {
    const stranger = client('not-a-root-key');
    const error = await failure(stranger.apis.get({ apiId: 'api_whatever' }));
    expect(error?.code).toBe('UNAUTHORIZED');
    expect(error?.requestId).toMatch(/^req_/);
  });

  test('a root key without the permission is INSUFFICIENT_PERMISSIONS', async () => {
    const { key } = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['api.*.read_api'],
    });
    const error = await failure(client(key).apis.create({ name: 'not allowed' }));
    expect(error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(error?.message).toContain('api.*.create_api');
  });
});

/**
 * KNOWN INCOMPATIBILITIES: these tests state what the SDK (0.38.0) documents and Unkey v1 did, and
 * fail against the server as it is. Each names the request the SDK sends and what it expects.
 */
describe('v1 semantics the SDK relies on', () => {
  let apiId: string;
  beforeAll(async () => {
    ({ apiId } = await ok(unkey.apis.create({ name: 'sdk-incompatibilities' })));
  });

  test('keys.create ratelimit { limit, duration } without async defaults to async:true (fast)', async () => {
    // The SDK documents createKey's `ratelimit.async` as `@default true`, as Unkey v1's schema did.
    const { keyId } = await ok(
      unkey.keys.create({ apiId, ratelimit: { limit: 5, duration: 60_000 } }),
    );
    expect((await ok(unkey.keys.get({ keyId }))).ratelimit).toMatchObject({
      type: 'fast',
      async: true,
      limit: 5,
      duration: 60_000,
    });
  });

  test('externalId (the SDK name that replaces ownerId) is honoured', async () => {
    // The SDK marks ownerId deprecated ("use externalId"); Unkey v1 read `externalId ?? ownerId`.
    const { keyId } = await ok(unkey.keys.create({ apiId, externalId: 'erin' }));
    await ok(unkey.keys.create({ apiId, ownerId: 'frank' }));
    expect((await ok(unkey.keys.get({ keyId }))).ownerId).toBe('erin');
    const listed = await ok(unkey.apis.listKeys({ apiId, externalId: 'erin' }));
    expect(listed.keys.map((key) => key.id)).toEqual([keyId]);
    expect(listed.total).toBe(1);
  });

  test('keys.verify with authorization.permissions refuses a key without them', async () => {
    // keyward keys hold no permissions yet, so a named permission is never satisfied (fail closed).
    const { key } = await ok(unkey.keys.create({ apiId }));
    const verdict = await ok(unkey.keys.verify({ key, authorization: { permissions: 'admin' } }));
    expect(verdict.valid).toBe(false);
    expect(verdict.code).toBe('INSUFFICIENT_PERMISSIONS');
  });
});
