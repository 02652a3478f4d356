import { Ratelimit } from '@unkey/ratelimit';
import { Unkey } from 'unkey-api-v2';
import { startTopology, type Topology } from '../support/topology';
import { hour } from '../support/helpers';

/**
 * Unkey's v2 wire format, spoken to by the clients its users install today, unchanged but for
 * their server URL: `@unkey/api` 2.5.1 and `@unkey/ratelimit` 2.1.4 (package.json pins both).
 */
let topology: Topology;
let unkey: Unkey;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  unkey = new Unkey({ rootKey: topology.rootKey, serverURL: topology.nodes[0]!.url });
});
afterAll(() => topology.stop());

test('@unkey/ratelimit limits an identifier through POST /v2/ratelimit.limit', async () => {
  const limiter = new Ratelimit({
    rootKey: topology.rootKey,
    baseUrl: topology.nodes[0]!.url,
    namespace: 'v2.client',
    limit: 2,
    duration: '60s',
  });
  const outcomes = [];
  for (let i = 0; i < 3; i++) outcomes.push(await limiter.limit('user_1'));
  expect(outcomes.map(({ success, remaining }) => [success, remaining])).toEqual([
    [true, 1],
    [true, 0],
    [false, 0],
  ]);
  expect(outcomes[0]).toMatchObject({ limit: 2, reset: expect.any(Number) });
});

test('@unkey/api 2.x: an API, a key with credits, limits and an identity, verified', async () => {
  const { data: api } = await unkey.apis.createApi({ name: 'v2 api' });
  const { data: created } = await unkey.keys.createKey({
    apiId: api.apiId,
    prefix: 'v2',
    name: 'v2 key',
    externalId: 'v2_customer',
    meta: { plan: 'pro' },
    credits: { remaining: 5, refill: { interval: 'daily', amount: 5 } },
    ratelimits: [{ name: 'requests', limit: 3, duration: hour, autoApply: true }],
  });
  expect(created.key).toMatch(/^v2_/);

  const { data: verified } = await unkey.keys.verifyKey({ key: created.key, credits: { cost: 2 } });
  expect(verified).toMatchObject({
    valid: true,
    code: 'VALID',
    keyId: created.keyId,
    name: 'v2 key',
    meta: { plan: 'pro' },
    credits: 3,
    enabled: true,
    identity: { externalId: 'v2_customer', meta: {} },
  });
  expect(verified.ratelimits).toEqual([
    {
      id: expect.stringMatching(/^rl_/),
      name: 'requests',
      limit: 3,
      duration: hour,
      autoApply: true,
      remaining: 2,
      reset: expect.any(Number),
      exceeded: false,
    },
  ]);

  const { data: key } = await unkey.keys.getKey({ keyId: created.keyId });
  expect(key).toMatchObject({
    keyId: created.keyId,
    start: expect.stringMatching(/^v2_/),
    enabled: true,
    name: 'v2 key',
    credits: { remaining: 3, refill: { interval: 'daily', amount: 5 } },
    identity: { externalId: 'v2_customer' },
  });
  expect(key.ratelimits).toEqual([
    {
      id: verified.ratelimits![0]!.id,
      name: 'requests',
      limit: 3,
      duration: hour,
      autoApply: true,
    },
  ]);

  const { data: read } = await unkey.apis.getApi({ apiId: api.apiId });
  expect(read).toEqual({ id: api.apiId, name: 'v2 api' });
});

test('a refusal is a verdict in the data, as in v2: RATE_LIMITED, USAGE_EXCEEDED, NOT_FOUND', async () => {
  const { data: api } = await unkey.apis.createApi({ name: 'v2 refusals' });
  const { data: created } = await unkey.keys.createKey({
    apiId: api.apiId,
    credits: { remaining: 1 },
    ratelimits: [{ name: 'burst', limit: 1, duration: hour, autoApply: false }],
  });
  const verify = async (body: Parameters<Unkey['keys']['verifyKey']>[0]) =>
    (await unkey.keys.verifyKey(body)).data;
  expect(
    await verify({ key: created.key, ratelimits: [{ name: 'burst', cost: 2 }] }),
  ).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
  expect(await verify({ key: created.key, credits: { cost: 2 } })).toMatchObject({
    valid: false,
    code: 'USAGE_EXCEEDED',
  });
  expect(await verify({ key: 'v2_no_such_key' })).toEqual({ valid: false, code: 'NOT_FOUND' });
});

test('errors come in v2’s shape, with Unkey’s type URIs and the invalid field named', async () => {
  const missing = await unkey.apis.getApi({ apiId: 'api_doesnotexist' }).catch((e: unknown) => e);
  // The client's own error class for a 404, holding the body it parsed.
  expect((missing as Error).constructor.name).toBe('NotFoundErrorResponse');
  const { meta, error } = missing as { meta: unknown; error: unknown };
  expect(meta).toEqual({ requestId: expect.stringMatching(/^req_/) });
  expect(error).toEqual({
    title: 'Not Found',
    detail: 'api api_doesnotexist not found',
    status: 404,
    type: 'https://unkey.com/docs/errors/unkey/data/api_not_found',
  });

  const response = await fetch(`${topology.nodes[0]!.url}/v2/keys.createKey`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ apiId: 'api_x', byteLength: 3 }),
  });
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    meta: { requestId: response.headers.get('x-request-id') },
    error: {
      title: 'Bad Request',
      detail: 'byteLength: must be >= 16',
      status: 400,
      type: 'https://unkey.com/docs/errors/unkey/application/invalid_input',
      errors: [{ location: 'body.byteLength', message: 'must be >= 16' }],
    },
  });

  const unauthorized = await new Unkey({ rootKey: 'nope', serverURL: topology.nodes[0]!.url }).apis
    .createApi({ name: 'never' })
    .catch((e: unknown) => e);
  expect((unauthorized as Error).constructor.name).toBe('UnauthorizedErrorResponse');
});

test('v2 answers a missing or malformed Authorization header 400, an unknown key 401; v1 401 to all', async () => {
  const ERRORS = 'https://unkey.com/docs/errors/unkey';
  const call = async (path: string, authorization: string | undefined) => {
    const response = await fetch(`${topology.nodes[0]!.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === undefined ? {} : { authorization }),
      },
      body: JSON.stringify({ name: 'never', key: 'x' }),
    });
    const body = (await response.json()) as { error: { type?: string; code?: string } };
    return { status: response.status, type: body.error.type, code: body.error.code };
  };
  const headers: [string | undefined, number, string][] = [
    [undefined, 400, `${ERRORS}/application/invalid_input`],
    ['', 400, `${ERRORS}/application/invalid_input`],
    ['Basic dXNlcjpwYXNz', 400, `${ERRORS}/authentication/malformed`],
    ['Bearer', 400, `${ERRORS}/authentication/malformed`],
    ['Bearer unknown_root_key', 401, `${ERRORS}/authentication/key_not_found`],
    [`Bearer ${'x'.repeat(600)}`, 401, `${ERRORS}/authentication/key_not_found`],
  ];
  // apis.createApi goes through the Koa app, keys.verifyKey through the data plane.
  for (const route of ['apis.createApi', 'keys.verifyKey']) {
    for (const [header, status, type] of headers) {
      expect({ header, ...(await call(`/v2/${route}`, header)) }).toEqual({
        header,
        status,
        type,
        code: undefined,
      });
      expect({ header, ...(await call(`/v1/${route}`, header)) }).toEqual({
        header,
        status: 401,
        type: undefined,
        code: 'UNAUTHORIZED',
      });
    }
  }
  const missing = await fetch(`${topology.nodes[0]!.url}/v2/apis.createApi`, { method: 'POST' });
  expect(((await missing.json()) as { error: { errors: unknown } }).error.errors).toEqual([
    { location: 'header.Authorization', message: 'is required' },
  ]);
});

test('a v2 400 lists every invalid field, each at its own location, and v1 names the first', async () => {
  const url = topology.nodes[0]!.url;
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const body = {
    apiId: 'api_x',
    byteLength: 3,
    name: 7,
    credits: { remaining: -1 },
    ratelimits: [{ name: 'api', limit: 0, duration: 60_000 }],
    remainig: 5,
  };
  const v2 = await post('/v2/keys.createKey', body);
  expect(v2.status).toBe(400);
  const { error } = (await v2.json()) as { error: { detail: string; errors: unknown[] } };
  // In the order the schema is checked: unknown fields first, then each declared one in turn.
  expect(error.errors).toEqual([
    { location: 'body.remainig', message: 'is not a field of this request' },
    { location: 'body.name', message: 'must be string' },
    { location: 'body.byteLength', message: 'must be >= 16' },
    { location: 'body.credits.remaining', message: 'must be >= 0' },
    { location: 'body.ratelimits[0].limit', message: 'must be >= 1' },
  ]);
  expect(error.detail).toBe('remainig: is not a field of this request');

  // v1 answers one message, the first field's, as Unkey v1 did; and ignores the unknown field.
  const v1 = await post('/v1/keys.createKey', { apiId: 'api_x', byteLength: 3, name: 7 });
  expect(v1.status).toBe(400);
  expect(((await v1.json()) as { error: { message: string } }).error.message).toBe(
    'name: must be string',
  );
});

test('keys.rerollKey through the v2 client: a new secret for the same key, the old one refused at once', async () => {
  const { data: api } = await unkey.apis.createApi({ name: 'v2 reroll' });
  const { data: old } = await unkey.keys.createKey({
    apiId: api.apiId,
    prefix: 'rr',
    meta: { plan: 'pro' },
    credits: { remaining: 7 },
  });
  const { data: rerolled } = await unkey.keys.rerollKey({ keyId: old.keyId, expiration: 0 });
  expect(rerolled.key).toMatch(/^rr_/);
  expect(rerolled.keyId).not.toBe(old.keyId);
  const fresh = (await unkey.keys.verifyKey({ key: rerolled.key })).data;
  expect(fresh).toMatchObject({
    valid: true,
    keyId: rerolled.keyId,
    meta: { plan: 'pro' },
    credits: 6,
  });
  expect((await unkey.keys.verifyKey({ key: old.key })).data).toMatchObject({
    valid: false,
    code: 'EXPIRED',
  });
});

test('GET /v2/liveness answers in v2’s envelope, without a root key', async () => {
  // The 2.5 client has no method for it; load balancers call it as plain HTTP.
  const response = await fetch(`${topology.nodes[0]!.url}/v2/liveness`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({
    meta: { requestId: response.headers.get('x-request-id') },
    data: { message: 'OK' },
  });
});

test('an unknown v2 operation is a 404 in v2’s shape', async () => {
  const response = await fetch(`${topology.nodes[0]!.url}/v2/keys.nope`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.status).toBe(404);
  expect(await response.json()).toMatchObject({
    meta: { requestId: expect.any(String) },
    error: { status: 404, title: 'Not Found', detail: 'no such operation: POST /v2/keys.nope' },
  });
});

test('a wrong verb on a v2 operation is a 405 in v2’s shape, with an Unkey type URI', async () => {
  const response = await fetch(`${topology.nodes[0]!.url}/v2/keys.verifyKey`);
  expect(response.status).toBe(405);
  expect(response.headers.get('allow')).toBe('POST');
  expect(await response.json()).toEqual({
    meta: { requestId: response.headers.get('x-request-id') },
    error: {
      title: 'Method Not Allowed',
      detail: 'method GET is not allowed here; use POST',
      status: 405,
      type: 'https://unkey.com/docs/errors/unkey/application/invalid_input',
    },
  });
});
