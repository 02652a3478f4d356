import { createHash } from 'node:crypto';
import { rawRequest } from './rawHttp';
import { DEEP_JSON, INVALID_UTF8 } from './hostile';

/**
 * The scenario of the wire corpus (test/integration/wireCorpus.test.ts): a fixed sequence of raw
 * HTTP requests against one node, covering every RPC of src/operations/registry.ts with its success and
 * its characteristic errors, every verifyKey verdict, the transport errors and a sample of
 * hostile input. Nothing here is random: the same code sends the same bytes on every run, except
 * for what only the server knows (ids, generated keys, timestamps), which the test normalizes.
 */

/** A request exactly as it goes on the wire (node adds Host, Connection and Content-Length). */
export interface CorpusRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent as these chunks with Transfer-Encoding: chunked instead of one body with a length. */
  chunks?: Buffer[];
}

export interface CorpusAnswer {
  status: number;
  /** `res.rawHeaders`: names as sent, duplicates kept. */
  rawHeaders: string[];
  body: Buffer;
}

export interface Exchange {
  label: string;
  request: CorpusRequest;
  answer: CorpusAnswer;
}

/** Well-formed ids that no server ever generated: kept literally by the normalization. */
export const FIXED_IDS: readonly string[] = [
  'api_1111111111111111111111',
  'key_1111111111111111111111',
  'rlns_1111111111111111111111',
];

export interface ScenarioContext {
  baseUrl: string;
  /** The topology's root key: `*` in a fresh workspace. */
  rootKey: string;
  newRootKey(options: {
    workspaceId?: string;
    permissions?: string[];
  }): Promise<{ key: string; workspaceId: string }>;
  workspaceId: string;
}

/** The root keys of the scenario by the name the fixture shows in place of the secret. */
export type RootKeyName = 'root' | 'narrow' | 'scoped' | 'other_ws';

const REQUEST_DEADLINE_MS = 15_000;

/**
 * One request on a fresh connection, answered with the exact status, raw header list and body
 * bytes. An upload the server cut short after answering (413) still yields the answer.
 */
export async function exchange(baseUrl: string, request: CorpusRequest): Promise<CorpusAnswer> {
  const { status, rawHeaders, bytes } = await rawRequest(baseUrl, {
    method: request.method,
    path: request.path,
    headers: {
      ...request.headers,
      ...(request.body !== undefined ? { 'content-length': Buffer.byteLength(request.body) } : {}),
    },
    ...(request.body !== undefined ? { body: request.body } : {}),
    ...(request.chunks ? { chunks: request.chunks } : {}),
    timeoutMs: REQUEST_DEADLINE_MS,
  });
  return { status, rawHeaders, body: bytes };
}

interface Sent {
  status: number;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

interface SendOptions {
  auth?: RootKeyName | 'none' | { header: string };
  contentType?: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Recorder {
  readonly exchanges: Exchange[] = [];
  private readonly labels = new Set<string>();
  readonly rootKeys = new Map<RootKeyName, string>();

  constructor(private readonly baseUrl: string) {}

  private authorization(auth: SendOptions['auth']): Record<string, string> {
    if (auth === 'none') return {};
    if (typeof auth === 'object') return { authorization: auth.header };
    const key = this.rootKeys.get(auth ?? 'root');
    if (key === undefined) throw new Error(`scenario: root key ${auth} is not created yet`);
    return { authorization: `Bearer ${key}` };
  }

  async send(label: string, request: CorpusRequest): Promise<Sent> {
    if (this.labels.has(label)) throw new Error(`scenario: label "${label}" is used twice`);
    this.labels.add(label);
    // Ids lead with the millisecond of their creation and listings sort by id: two creations in
    // one millisecond would list in a random order. Sequential requests a few ms apart never do.
    await sleep(3);
    const answer = await exchange(this.baseUrl, request);
    this.exchanges.push({ label, request, answer });
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: answer.status, json };
  }

  post(label: string, operation: string, body: unknown, options: SendOptions = {}) {
    return this.postRaw(label, operation, JSON.stringify(body), options);
  }

  postRaw(
    label: string,
    operation: string,
    body: string | Buffer | undefined,
    options: SendOptions = {},
  ) {
    const contentType =
      options.contentType === undefined ? 'application/json' : options.contentType;
    return this.send(label, {
      method: 'POST',
      path: operation.startsWith('/') ? operation : `/v1/${operation}`,
      headers: {
        ...this.authorization(options.auth),
        ...(contentType === null ? {} : { 'content-type': contentType }),
      },
      ...(body === undefined ? {} : { body }),
    });
  }

  /** `query` is sent as written (already percent-encoded where needed). */
  get(label: string, operation: string, query: string, options: SendOptions = {}) {
    return this.send(label, {
      method: 'GET',
      path: `/v1/${operation}${query === '' ? '' : `?${query}`}`,
      headers: this.authorization(options.auth),
    });
  }

  method(label: string, method: string, path: string, options: SendOptions = {}) {
    return this.send(label, { method, path, headers: this.authorization(options.auth) });
  }
}

/** A string field of a JSON answer the scenario needs to go on; a clear failure otherwise. */
function field(sent: Sent, name: string, label: string): string {
  const value =
    sent.json !== null && typeof sent.json === 'object'
      ? (sent.json as Record<string, unknown>)[name]
      : undefined;
  if (typeof value !== 'string') {
    throw new Error(`scenario: "${label}" answered ${sent.status} without ${name}`);
  }
  return value;
}

/** Creates through `post` and returns the field, failing when the creation did not succeed. */
async function created(
  sent: Promise<Sent>,
  name: string,
  label: string,
): Promise<{ value: string; sent: Sent }> {
  const answer = await sent;
  if (answer.status !== 200) throw new Error(`scenario: "${label}" answered ${answer.status}`);
  return { value: field(answer, name, label), sent: answer };
}

const HOUR = 3_600_000;
const MiB = 1024 * 1024;
const enc = encodeURIComponent;
const sha256Base64 = (text: string) => createHash('sha256').update(text).digest('base64');

/** Runs the whole scenario and returns every exchange, in the order sent. */
export async function runScenario(context: ScenarioContext): Promise<{
  exchanges: Exchange[];
  rootKeys: ReadonlyMap<RootKeyName, string>;
}> {
  const c = new Recorder(context.baseUrl);
  c.rootKeys.set('root', context.rootKey);
  c.rootKeys.set(
    'narrow',
    (
      await context.newRootKey({
        workspaceId: context.workspaceId,
        permissions: ['api.*.read_api'],
      })
    ).key,
  );
  c.rootKeys.set('other_ws', (await context.newRootKey({})).key);

  // --- Transport: liveness, unknown operations, wrong verbs --------------------------------
  await c.get('liveness', 'liveness', '', { auth: 'none' });
  await c.method('liveness: POST is 405', 'POST', '/v1/liveness', { auth: 'none' });
  await c.postRaw('404: unknown method', 'keys.nope', '{}');
  await c.postRaw('404: unknown service', 'nope.createKey', '{}');
  await c.postRaw('404: v3 path', '/v3/keys.createKey', '{}');
  await c.postRaw('404: operation in the wrong case', 'keys.createkey', '{}');
  await c.postRaw('404: data-plane path with a trailing slash', '/v1/keys.verifyKey/', '{}');
  await c.method('404: a 300-character path', 'POST', `/v1/${'x'.repeat(300)}`);
  await c.method('404: dot segments are not resolved', 'GET', '/v1/../v1/liveness');
  await c.method('404: encoded NUL in the path', 'POST', '/v1/keys.createKey%00');
  await c.method('405: GET on a POST operation', 'GET', '/v1/keys.createKey');
  await c.method('405: POST on a GET operation', 'POST', '/v1/keys.getKey');
  await c.method('405: PUT on verifyKey (left to Koa)', 'PUT', '/v1/keys.verifyKey');
  await c.method('405: GET on ratelimits.limit', 'GET', '/v1/ratelimits.limit');
  await c.method('405: OPTIONS on createKey', 'OPTIONS', '/v1/keys.createKey');

  // --- Authentication: before anything else, on both HTTP doors ----------------------------
  await c.post(
    '401: createApi without Authorization',
    'apis.createApi',
    { name: 'x' },
    { auth: 'none' },
  );
  await c.post(
    '401: createApi with Basic',
    'apis.createApi',
    { name: 'x' },
    { auth: { header: 'Basic dXNlcjpwYXNz' } },
  );
  await c.post(
    '401: createApi with an unknown root key',
    'apis.createApi',
    { name: 'x' },
    { auth: { header: 'Bearer kwroot_unknownUnknownUnknown' } },
  );
  await c.post(
    '401: createApi with Bearer and no key',
    'apis.createApi',
    { name: 'x' },
    { auth: { header: 'Bearer ' } },
  );
  await c.post(
    '401: createApi with a 600-character bearer',
    'apis.createApi',
    { name: 'x' },
    { auth: { header: `Bearer ${'a'.repeat(600)}` } },
  );
  await c.postRaw('401: auth is checked before the body is read', 'apis.createApi', '{"name":', {
    auth: 'none',
  });
  await c.postRaw('401: auth is checked before the content type', 'apis.createApi', 'x', {
    auth: 'none',
    contentType: 'text/plain',
  });
  await c.post(
    '401: verifyKey without Authorization',
    'keys.verifyKey',
    { key: 'x' },
    { auth: 'none' },
  );
  await c.post(
    '401: ratelimits.limit with Basic',
    'ratelimits.limit',
    { identifier: 'x' },
    { auth: { header: 'Basic dXNlcjpwYXNz' } },
  );
  await c.get('401: getApi without Authorization', 'apis.getApi', 'apiId=api_missing', {
    auth: 'none',
  });

  // --- APIs -----------------------------------------------------------------------------------
  const apiA = (
    await created(c.post('createApi A', 'apis.createApi', { name: 'corpus-a' }), 'apiId', 'A')
  ).value;
  const apiB = (
    await created(c.post('createApi B', 'apis.createApi', { name: 'corpus-b' }), 'apiId', 'B')
  ).value;
  c.rootKeys.set(
    'scoped',
    (
      await context.newRootKey({
        workspaceId: context.workspaceId,
        permissions: [`api.${apiA}.read_key`, `api.${apiA}.verify_key`],
      })
    ).key,
  );
  await c.post(
    'createApi: lower-case bearer scheme',
    'apis.createApi',
    { name: 'scheme' },
    { auth: { header: `bearer ${context.rootKey}` } },
  );
  await c.post(
    'createApi: content type in capitals',
    'apis.createApi',
    { name: 'caps' },
    {
      contentType: 'APPLICATION/JSON; charset=UTF-8',
    },
  );
  await c.post('createApi: unknown fields are ignored', 'apis.createApi', {
    name: 'extra',
    workspaceId: 'ws_other',
    id: 'api_mine',
  });
  await c.post('createApi: missing name', 'apis.createApi', {});
  await c.post('createApi: empty name', 'apis.createApi', { name: '' });
  await c.post('createApi: 257-character name', 'apis.createApi', { name: 'n'.repeat(257) });
  await c.post('createApi: name is a number', 'apis.createApi', { name: 123 });
  await c.post('createApi: name is an array', 'apis.createApi', { name: ['x'] });
  await c.get('getApi A', 'apis.getApi', `apiId=${apiA}`);
  await c.get('getApi: unknown id', 'apis.getApi', 'apiId=api_missing');
  await c.get('getApi: well-formed unknown id', 'apis.getApi', `apiId=${FIXED_IDS[0]}`);
  await c.get('getApi: no apiId', 'apis.getApi', '');
  await c.get('getApi: apiId twice', 'apis.getApi', `apiId=${apiA}&apiId=${apiB}`);
  await c.get('getApi: 65-character apiId', 'apis.getApi', `apiId=${'a'.repeat(65)}`);
  await c.send('HEAD getApi: unknown id', {
    method: 'HEAD',
    path: '/v1/apis.getApi?apiId=api_missing',
    headers: { authorization: `Bearer ${context.rootKey}` },
  });
  await c.get('getApi: another workspace sees 404', 'apis.getApi', `apiId=${apiA}`, {
    auth: 'other_ws',
  });
  await c.get('listApis', 'apis.listApis', '');
  const page = await c.get('listApis: limit 2', 'apis.listApis', 'limit=2');
  await c.get(
    'listApis: limit 2, next page',
    'apis.listApis',
    `limit=2&cursor=${enc(field(page, 'cursor', 'listApis: limit 2'))}`,
  );
  await c.get('listApis: limit 0', 'apis.listApis', 'limit=0');
  await c.get('listApis: limit abc', 'apis.listApis', 'limit=abc');
  await c.get('listApis: limit 101', 'apis.listApis', 'limit=101');

  // --- Keys -----------------------------------------------------------------------------------
  const k1 = await created(
    c.post('createKey k1: minimal', 'keys.createKey', { apiId: apiA }),
    'keyId',
    'k1',
  );
  const k1Key = field(k1.sent, 'key', 'k1');
  const k2 = await created(
    c.post('createKey k2: consistent limit, credits, prefix', 'keys.createKey', {
      apiId: apiA,
      name: 'k2',
      prefix: 'sk_live',
      byteLength: 32,
      ownerId: 'owner-1',
      meta: { plan: 'pro', nested: { list: [1, 2, { deep: true }] } },
      ratelimit: { type: 'consistent', limit: 2, refillRate: 1, refillInterval: HOUR },
      remaining: 100,
    }),
    'keyId',
    'k2',
  );
  const k2Key = field(k2.sent, 'key', 'k2');
  const k3 = await created(
    c.post('createKey k3: fast limit, newer vocabulary', 'keys.createKey', {
      apiId: apiA,
      name: 'k3',
      externalId: 'owner-1',
      ratelimit: { async: true, limit: 2, duration: HOUR },
    }),
    'keyId',
    'k3',
  );
  const k3Key = field(k3.sent, 'key', 'k3');
  const k4 = await created(
    c.post('createKey k4: two credits', 'keys.createKey', { apiId: apiA, remaining: 2 }),
    'keyId',
    'k4',
  );
  const k4Key = field(k4.sent, 'key', 'k4');
  const k5 = await created(
    c.post('createKey k5: disabled', 'keys.createKey', { apiId: apiA, enabled: false }),
    'keyId',
    'k5',
  );
  const k5Key = field(k5.sent, 'key', 'k5');
  // Expires soon; verified near the end of the scenario, once the time has certainly passed.
  const k6Expires = Date.now() + 4_000;
  const k6 = await created(
    c.post('createKey k6: expires soon', 'keys.createKey', {
      apiId: apiA,
      expires: k6Expires,
      prefix: 'exp',
    }),
    'keyId',
    'k6',
  );
  const k6Key = field(k6.sent, 'key', 'k6');
  const k7 = await created(
    c.post('createKey k7: daily refill', 'keys.createKey', {
      apiId: apiA,
      remaining: 5,
      refill: { interval: 'daily', amount: 5 },
    }),
    'keyId',
    'k7',
  );
  const k8 = await created(
    c.post('createKey k8: monthly refill on the 15th', 'keys.createKey', {
      apiId: apiA,
      remaining: 3,
      refill: { interval: 'monthly', amount: 3, refillDay: 15 },
    }),
    'keyId',
    'k8',
  );
  const kB = await created(
    c.post('createKey kB: in API B', 'keys.createKey', { apiId: apiB, name: 'in-b' }),
    'keyId',
    'kB',
  );
  const kBKey = field(kB.sent, 'key', 'kB');

  const badKey = (label: string, body: Record<string, unknown>) =>
    c.post(`createKey: ${label}`, 'keys.createKey', { apiId: apiA, ...body });
  await c.post('createKey: missing apiId', 'keys.createKey', { name: 'x' });
  await c.post('createKey: unknown apiId', 'keys.createKey', { apiId: 'api_missing' });
  await c.post('createKey: well-formed unknown apiId', 'keys.createKey', { apiId: FIXED_IDS[0] });
  await badKey('prefix with a space', { prefix: 'sk live' });
  await badKey('prefix with a NUL', { prefix: 'sk\u0000' });
  await badKey('byteLength 15', { byteLength: 15 });
  await badKey('byteLength 256', { byteLength: 256 });
  await badKey('ratelimit.limit 0', {
    ratelimit: { limit: 0, refillRate: 1, refillInterval: 1000 },
  });
  await badKey('ratelimit without refill', { ratelimit: { limit: 5 } });
  await badKey('ratelimit.type slow', {
    ratelimit: { type: 'slow', limit: 5, refillRate: 1, refillInterval: 1000 },
  });
  await badKey('ratelimit.async contradicts type', {
    ratelimit: { type: 'fast', async: false, limit: 5, duration: 1000 },
  });
  await badKey('ratelimit.duration and refillInterval differ', {
    ratelimit: { limit: 5, duration: 1000, refillInterval: 2000 },
  });
  await badKey('ratelimit.refillRate with duration', {
    ratelimit: { limit: 5, refillRate: 3, duration: 1000 },
  });
  await badKey('ratelimit.refillInterval over 30 days', {
    ratelimit: { limit: 5, refillRate: 1, refillInterval: 2_592_000_001 },
  });
  await badKey('remaining 0', { remaining: 0 });
  await badKey('remaining null', { remaining: null });
  await badKey('refill without remaining', { refill: { interval: 'daily', amount: 5 } });
  await badKey('refillDay with daily', {
    remaining: 5,
    refill: { interval: 'daily', amount: 5, refillDay: 3 },
  });
  await badKey('refillDay 32', {
    remaining: 5,
    refill: { interval: 'monthly', amount: 5, refillDay: 32 },
  });
  await badKey('expires in the past', { expires: 1000 });
  await badKey('expires over the maximum', { expires: 8_640_000_000_000_001 });
  await badKey('meta is an array', { meta: ['x'] });
  await badKey('meta nested 9 levels', {
    meta: { a: { a: { a: { a: { a: { a: { a: { a: { a: 1 } } } } } } } } },
  });
  await badKey('meta over 16 KiB', { meta: { blob: 'x'.repeat(16 * 1024) } });
  await badKey('enabled is a string', { enabled: 'yes' });
  await badKey('externalId differs from ownerId', { ownerId: 'a', externalId: 'b' });

  await c.get('getKey k1', 'keys.getKey', `keyId=${k1.value}`);
  await c.get('getKey k2', 'keys.getKey', `keyId=${k2.value}`);
  await c.get('getKey k7: daily refill', 'keys.getKey', `keyId=${k7.value}`);
  await c.get('getKey k8: monthly refill', 'keys.getKey', `keyId=${k8.value}`);
  await c.get('getKey: unknown id', 'keys.getKey', 'keyId=key_missing');
  await c.get('getKey: well-formed unknown id', 'keys.getKey', `keyId=${FIXED_IDS[1]}`);
  await c.get('getKey: no keyId', 'keys.getKey', '');
  await c.get('getKey: keyId with a NUL', 'keys.getKey', 'keyId=key%00x');
  await c.get('getKey: another workspace sees 404', 'keys.getKey', `keyId=${k1.value}`, {
    auth: 'other_ws',
  });

  // --- verifyKey: every verdict -----------------------------------------------------------
  const verify = (label: string, body: Record<string, unknown>, options: SendOptions = {}) =>
    c.post(`verifyKey: ${label}`, 'keys.verifyKey', body, options);
  await verify('VALID, no limits', { key: k1Key });
  await verify('VALID with its apiId', { key: k1Key, apiId: apiA });
  await verify('VALID, unknown fields ignored', { key: k1Key, tags: ['a'], extra: { x: 1 } });
  await c.postRaw(
    'verifyKey: query string is ignored',
    '/v1/keys.verifyKey?debug=1',
    JSON.stringify({ key: k1Key }),
  );
  await verify('NOT_FOUND', { key: 'does-not-exist' });
  await verify('NOT_FOUND, key with a NUL', { key: 'abc\u0000def' });
  await verify('NOT_FOUND, unicode key', { key: 'ключ🔑' });
  await verify('NOT_FOUND, key of another workspace', { key: k1Key }, { auth: 'other_ws' });
  await verify('DISABLED', { key: k5Key });
  await verify('FORBIDDEN: apiId of another API', { key: kBKey, apiId: apiA });
  await verify(
    'FORBIDDEN: root key scoped to the other API',
    { key: kBKey, apiId: apiA },
    { auth: 'scoped' },
  );
  await verify('403: scoped root key, key of another API', { key: kBKey }, { auth: 'scoped' });
  await verify('VALID: scoped root key, its own API', { key: k1Key }, { auth: 'scoped' });
  await verify('consistent 1 of 2', { key: k2Key });
  await verify('consistent, cost 0 reads', { key: k2Key, ratelimit: { cost: 0 } });
  await verify('consistent 2 of 2', { key: k2Key });
  await verify('consistent RATE_LIMITED', { key: k2Key });
  await verify('consistent RATE_LIMITED, cost 5', { key: k2Key, ratelimit: { cost: 5 } });
  await verify('fast 1 of 2', { key: k3Key });
  await verify('fast, cost 2 refused', { key: k3Key, ratelimit: { cost: 2 } });
  await verify('fast 2 of 2', { key: k3Key });
  await verify('fast RATE_LIMITED', { key: k3Key });
  await verify('credits 1 of 2', { key: k4Key });
  await verify('credits, cost 0 reads', { key: k4Key, remaining: { cost: 0 } });
  await verify('credits 2 of 2', { key: k4Key });
  await verify('USAGE_EXCEEDED', { key: k4Key });
  await verify('USAGE_EXCEEDED, cost 3', { key: k4Key, remaining: { cost: 3 } });
  const permissions = (label: string, query: unknown) =>
    verify(`permissions ${label}`, { key: k1Key, authorization: { permissions: query } });
  await permissions('named: INSUFFICIENT_PERMISSIONS', 'documents.read');
  await permissions('{and: []}: 400', { and: [] });
  await permissions('{or: []}: 400', { or: [] });
  await permissions('{or: [x, {and: []}]}: 400', { or: ['x', { and: [] }] });
  await permissions('{not: [x]}: 400', { not: ['x'] });
  await permissions('101 items: 400', { and: Array.from({ length: 101 }, () => 'x') });
  await permissions(
    '17 levels: 400',
    JSON.parse(`${'{"and":['.repeat(17)}{"and":[]}${']}'.repeat(17)}`),
  );
  await permissions('inner item a number: 400', { and: [5] });
  await verify('permissions query on a disabled key: DISABLED decides first', {
    key: k5Key,
    authorization: { permissions: 'x' },
  });
  await verify('missing key', {});
  await verify('empty key', { key: '' });
  await verify('513-character key', { key: 'k'.repeat(513) });
  await verify('key is a number', { key: 5 });
  await verify('65-character apiId', { key: k1Key, apiId: 'a'.repeat(65) });
  await verify('unknown apiId', { key: k1Key, apiId: 'api_missing' });
  await verify('ratelimit.cost -1', { key: k1Key, ratelimit: { cost: -1 } });
  await verify('ratelimit.cost 1.5', { key: k1Key, ratelimit: { cost: 1.5 } });
  await verify('remaining.cost "1"', { key: k1Key, remaining: { cost: '1' } });
  await verify('named ratelimits', { key: k1Key, ratelimits: [{ name: 'x' }] });
  await verify('403: narrow root key', { key: k1Key }, { auth: 'narrow' });

  // --- updateKey, updateRemaining ---------------------------------------------------------
  const update = (label: string, body: Record<string, unknown>) =>
    c.post(`updateKey: ${label}`, 'keys.updateKey', body);
  await update('k1 name and meta', { keyId: k1.value, name: 'renamed', meta: { v: 2 } });
  await c.get('getKey k1 after update', 'keys.getKey', `keyId=${k1.value}`);
  await update('k1 disabled', { keyId: k1.value, enabled: false });
  await verify('DISABLED after update', { key: k1Key });
  await update('k1 enabled', { keyId: k1.value, enabled: true });
  await update('k1 consistent limit of 1', {
    keyId: k1.value,
    ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: HOUR },
  });
  await verify('k1 1 of 1', { key: k1Key });
  await verify('k1 RATE_LIMITED', { key: k1Key });
  await update('k1 ratelimit null, meta null, name null', {
    keyId: k1.value,
    ratelimit: null,
    meta: null,
    name: null,
  });
  await verify('k1 VALID again', { key: k1Key });
  await update('k1 expires in an hour', { keyId: k1.value, expires: Date.now() + HOUR });
  await update('expires in the past', { keyId: k1.value, expires: 1000 });
  await update('k1 expires null', { keyId: k1.value, expires: null });
  await update('unknown keyId', { keyId: 'key_missing', name: 'x' });
  await update('enabled null', { keyId: k1.value, enabled: null });
  await update('refill without credits', {
    keyId: k1.value,
    refill: { interval: 'daily', amount: 5 },
  });
  await update('k2 remaining null', { keyId: k2.value, remaining: null });
  await c.get('getKey k1 after updates', 'keys.getKey', `keyId=${k1.value}`);

  const remaining = (label: string, body: Record<string, unknown>) =>
    c.post(`updateRemaining: ${label}`, 'keys.updateRemaining', body);
  await remaining('k4 set 5', { keyId: k4.value, op: 'set', value: 5 });
  await remaining('k4 increment 3', { keyId: k4.value, op: 'increment', value: 3 });
  await remaining('k4 decrement 2', { keyId: k4.value, op: 'decrement', value: 2 });
  await remaining('k4 decrement 100', { keyId: k4.value, op: 'decrement', value: 100 });
  await verify('k4 VALID after set', { key: k4Key });
  await remaining('op multiply', { keyId: k4.value, op: 'multiply', value: 2 });
  await remaining('value -1', { keyId: k4.value, op: 'set', value: -1 });
  await remaining('missing value', { keyId: k4.value, op: 'set' });
  await remaining('unknown keyId', { keyId: 'key_missing', op: 'set', value: 1 });
  await remaining('k1 increment: unlimited usage', { keyId: k1.value, op: 'increment', value: 1 });
  await remaining('k1 set 10', { keyId: k1.value, op: 'set', value: 10 });
  await verify('k1 spends a credit', { key: k1Key });

  // --- getBucket, getRecentVerifications ----------------------------------------------------------
  await c.get('getBucket k2: consistent, credits removed', 'keys.getBucket', `keyId=${k2.value}`);
  await c.get('getBucket k3: fast', 'keys.getBucket', `keyId=${k3.value}`);
  await c.get('getBucket k4: credits only', 'keys.getBucket', `keyId=${k4.value}`);
  await c.get('getBucket k5: no limits', 'keys.getBucket', `keyId=${k5.value}`);
  await c.get('getBucket: unknown id', 'keys.getBucket', 'keyId=key_missing');
  await c.get('getRecentVerifications k2', 'keys.getRecentVerifications', `keyId=${k2.value}`);
  await c.get(
    'getRecentVerifications k8: none',
    'keys.getRecentVerifications',
    `keyId=${k8.value}`,
  );
  await c.get(
    'getRecentVerifications: unknown id',
    'keys.getRecentVerifications',
    'keyId=key_missing',
  );

  // --- migrations.createKeys --------------------------------------------------------------
  const migrate = (label: string, body: unknown, options: SendOptions = {}) =>
    c.post(`createKeys: ${label}`, 'migrations.createKeys', body, options);
  await migrate('three keys by plaintext and hash', [
    { apiId: apiA, plaintext: 'corpus_migrated_0001', name: 'm1' },
    {
      apiId: apiA,
      hash: { value: sha256Base64('corpus_migrated_0002'), variant: 'sha256_base64' },
      start: 'corpus_migr',
    },
    { apiId: apiA, prefix: 'mig', plaintext: 'mig_abcdefgh12345', remaining: 7 },
  ]);
  await verify('migrated by plaintext', { key: 'corpus_migrated_0001' });
  await verify('migrated by hash', { key: 'corpus_migrated_0002' });
  await verify('migrated with a prefix and credits', { key: 'mig_abcdefgh12345' });
  await migrate('409: hash exists', [{ apiId: apiA, plaintext: 'corpus_migrated_0001' }]);
  await migrate('409: same key twice in the batch', [
    { apiId: apiA, plaintext: 'corpus_migrated_0009' },
    { apiId: apiA, plaintext: 'corpus_migrated_0009' },
  ]);
  await migrate('both plaintext and hash', [
    {
      apiId: apiA,
      plaintext: 'x',
      hash: { value: sha256Base64('x'), variant: 'sha256_base64' },
    },
  ]);
  await migrate('neither plaintext nor hash', [{ apiId: apiA }]);
  await migrate('hash value not base64', [
    { apiId: apiA, hash: { value: 'not-a-hash', variant: 'sha256_base64' } },
  ]);
  await migrate('empty array', []);
  await migrate('an object instead of an array', { apiId: apiA, plaintext: 'z' });
  await migrate(
    '101 keys',
    Array.from({ length: 101 }, (_, i) => ({ apiId: apiA, plaintext: `bulk_${i}` })),
  );
  await migrate('unknown apiId in the second item', [
    { apiId: apiA, plaintext: 'corpus_migrated_0010' },
    { apiId: 'api_missing', plaintext: 'corpus_migrated_0011' },
  ]);
  await migrate('ratelimit error in the first item', [
    { apiId: apiA, plaintext: 'corpus_migrated_0012', ratelimit: { limit: 5 } },
  ]);
  await migrate('403: narrow root key', [{ apiId: apiA, plaintext: 'corpus_migrated_0013' }], {
    auth: 'narrow',
  });

  // --- listKeys ---------------------------------------------------------------------------
  await c.get('listKeys A', 'apis.listKeys', `apiId=${apiA}`);
  const first = await c.get('listKeys A: limit 4', 'apis.listKeys', `apiId=${apiA}&limit=4`);
  const second = await c.get(
    'listKeys A: limit 4, page 2',
    'apis.listKeys',
    `apiId=${apiA}&limit=4&cursor=${enc(field(first, 'cursor', 'listKeys page 1'))}`,
  );
  await c.get(
    'listKeys A: limit 4, page 3',
    'apis.listKeys',
    `apiId=${apiA}&limit=4&cursor=${enc(field(second, 'cursor', 'listKeys page 2'))}`,
  );
  await c.get('listKeys A: ownerId', 'apis.listKeys', `apiId=${apiA}&ownerId=owner-1`);
  await c.get('listKeys A: externalId', 'apis.listKeys', `apiId=${apiA}&externalId=owner-1`);
  await c.get('listKeys A: limit 0001', 'apis.listKeys', `apiId=${apiA}&limit=0001`);
  await c.get('listKeys: cursor abc', 'apis.listKeys', `apiId=${apiA}&cursor=abc`);
  await c.get('listKeys: limit 101', 'apis.listKeys', `apiId=${apiA}&limit=101`);
  await c.get('listKeys: limit 1.5', 'apis.listKeys', `apiId=${apiA}&limit=1.5`);
  await c.get(
    'listKeys: limit of 17 digits',
    'apis.listKeys',
    `apiId=${apiA}&limit=${'9'.repeat(17)}`,
  );
  await c.get('listKeys: limit twice', 'apis.listKeys', `apiId=${apiA}&limit=1&limit=2`);
  await c.get('listKeys: bracketed name', 'apis.listKeys', `apiId%5B%5D=${apiA}`);
  await c.get('listKeys: unknown apiId', 'apis.listKeys', 'apiId=api_missing');
  await c.get('listKeys: no apiId', 'apis.listKeys', '');
  await c.get('listKeys: scoped root key, its API', 'apis.listKeys', `apiId=${apiA}&limit=1`, {
    auth: 'scoped',
  });

  // --- ratelimits.limit and overrides -----------------------------------------------------
  const limit = (label: string, body: Record<string, unknown>, options: SendOptions = {}) =>
    c.post(`limit: ${label}`, 'ratelimits.limit', body, options);
  const perHour = { limit: 2, duration: HOUR };
  await limit('consistent 1 of 2', { identifier: 'user-1', ...perHour });
  await limit('consistent 2 of 2', { identifier: 'user-1', ...perHour });
  await limit('consistent refused', { identifier: 'user-1', ...perHour });
  await limit('fast 1 of 1', { identifier: 'user-2', limit: 1, duration: HOUR, async: true });
  await limit('fast refused', { identifier: 'user-2', limit: 1, duration: HOUR, async: true });
  await limit('named namespace, cost 0', {
    namespace: 'corpus.api',
    identifier: 'u',
    ...perHour,
    cost: 0,
  });
  await limit('cost above the limit', {
    namespace: 'corpus.api',
    identifier: 'u',
    ...perHour,
    cost: 3,
  });
  await limit('unicode identifier', { identifier: '用户🔑', ...perHour });
  await limit('identifier with a NUL', { identifier: 'a\u0000b', ...perHour });
  await limit('identifier __proto__', { identifier: '__proto__', ...perHour });
  await limit('namespace __proto__', { namespace: '__proto__', identifier: 'x', ...perHour });
  await limit('missing identifier', { ...perHour });
  await limit('limit 0', { identifier: 'x', limit: 0, duration: HOUR });
  await limit('duration 0', { identifier: 'x', limit: 1, duration: 0 });
  await limit('namespace with a space', { namespace: 'bad ns', identifier: 'x', ...perHour });
  await limit('cost -1', { identifier: 'x', ...perHour, cost: -1 });
  await limit('async "yes"', { identifier: 'x', ...perHour, async: 'yes' });
  await limit('257-character identifier', { identifier: 'i'.repeat(257), ...perHour });
  await c.postRaw(
    'limit: limit 1e400',
    'ratelimits.limit',
    '{"identifier":"x","limit":1e400,"duration":1000}',
  );
  await c.postRaw(
    'limit: limit 9007199254740993',
    'ratelimits.limit',
    '{"identifier":"x","limit":9007199254740993,"duration":1000}',
  );
  await limit('403: narrow root key', { identifier: 'x', ...perHour }, { auth: 'narrow' });

  const override = (
    label: string,
    operation: string,
    body: Record<string, unknown>,
    options: SendOptions = {},
  ) => c.post(`${operation}: ${label}`, `ratelimits.${operation}`, body, options);
  const ns = { namespaceName: 'corpus.ns' };
  await override('exact vip', 'setOverride', {
    ...ns,
    identifier: 'vip',
    limit: 5,
    duration: HOUR,
  });
  await override('wildcard vip*', 'setOverride', {
    ...ns,
    identifier: 'vip*',
    limit: 3,
    duration: HOUR,
    async: true,
  });
  await override('exact vip again', 'setOverride', {
    ...ns,
    identifier: 'vip',
    limit: 4,
    duration: HOUR,
  });
  await override('identifier __proto__', 'setOverride', {
    ...ns,
    identifier: '__proto__',
    limit: 1,
    duration: HOUR,
  });
  await override('both namespace refs', 'setOverride', {
    ...ns,
    namespaceId: 'rlns_missing',
    identifier: 'x',
    limit: 1,
    duration: HOUR,
  });
  await override('no namespace', 'setOverride', { identifier: 'x', limit: 1, duration: HOUR });
  await override('unknown namespaceId', 'setOverride', {
    namespaceId: FIXED_IDS[2],
    identifier: 'x',
    limit: 1,
    duration: HOUR,
  });
  await override('limit 0', 'setOverride', { ...ns, identifier: 'x', limit: 0, duration: HOUR });
  await override(
    '403: narrow root key',
    'setOverride',
    {
      ...ns,
      identifier: 'x',
      limit: 1,
      duration: HOUR,
    },
    { auth: 'narrow' },
  );
  await limit('exact override applies', {
    namespace: 'corpus.ns',
    identifier: 'vip',
    limit: 1,
    duration: 1000,
  });
  await limit('wildcard override applies', {
    namespace: 'corpus.ns',
    identifier: 'vip-42',
    limit: 1,
    duration: 1000,
  });
  await limit('no override matches', {
    namespace: 'corpus.ns',
    identifier: 'other',
    limit: 1,
    duration: HOUR,
  });
  const overrideGet = (label: string, query: string, options: SendOptions = {}) =>
    c.get(`getOverride: ${label}`, 'ratelimits.getOverride', query, options);
  await overrideGet('vip', 'namespaceName=corpus.ns&identifier=vip');
  await overrideGet('vip*', `namespaceName=corpus.ns&identifier=${enc('vip*')}`);
  await overrideGet('unknown identifier', 'namespaceName=corpus.ns&identifier=nobody');
  await overrideGet('unknown namespace', 'namespaceName=never.used&identifier=vip');
  await overrideGet('unknown namespaceId', `namespaceId=${FIXED_IDS[2]}&identifier=vip`);
  await overrideGet('no identifier', 'namespaceName=corpus.ns');
  await overrideGet('403: narrow root key', 'namespaceName=corpus.ns&identifier=vip', {
    auth: 'narrow',
  });
  const list = (label: string, query: string) =>
    c.get(`listOverrides: ${label}`, 'ratelimits.listOverrides', query);
  await list('all', 'namespaceName=corpus.ns');
  const overridesPage = await list('limit 1', 'namespaceName=corpus.ns&limit=1');
  await list(
    'limit 1, next page',
    `namespaceName=corpus.ns&limit=1&cursor=${enc(field(overridesPage, 'cursor', 'listOverrides'))}`,
  );
  await list('no namespace', '');
  await override('vip', 'deleteOverride', { ...ns, identifier: 'vip' });
  await override('vip again', 'deleteOverride', { ...ns, identifier: 'vip' });
  await override('no identifier', 'deleteOverride', { ...ns });
  await overrideGet('vip after delete', 'namespaceName=corpus.ns&identifier=vip');
  await limit('wildcard after the exact one is deleted', {
    namespace: 'corpus.ns',
    identifier: 'vip',
    limit: 1,
    duration: 1000,
  });

  // --- Bodies: content type, malformed JSON, size -----------------------------------------
  await c.postRaw('415: text/plain', 'apis.createApi', '{"name":"x"}', {
    contentType: 'text/plain',
  });
  await c.postRaw('415: no content type', 'apis.createApi', '{"name":"x"}', { contentType: null });
  await c.postRaw('415: application/json-patch+json', 'apis.createApi', '{"name":"x"}', {
    contentType: 'application/json-patch+json',
  });
  await c.postRaw('415: verifyKey with text/plain', 'keys.verifyKey', '{"key":"x"}', {
    contentType: 'text/plain',
  });
  await c.postRaw('400: truncated JSON', 'apis.createApi', '{"name":');
  await c.postRaw('400: empty body', 'apis.createApi', '');
  await c.postRaw('400: no body at all', 'apis.createApi', undefined);
  await c.postRaw('400: trailing garbage', 'apis.createApi', '{"name":"x"} x');
  await c.postRaw('400: trailing comma', 'apis.createApi', '{"name":"x",}');
  await c.postRaw('400: an array body', 'apis.createApi', '["x"]');
  await c.postRaw('400: a null body', 'apis.createApi', 'null');
  await c.postRaw('400: a string body', 'apis.createApi', '"name"');
  await c.postRaw(
    '400: invalid UTF-8',
    'apis.createApi',
    Buffer.concat([Buffer.from('{"name":"'), INVALID_UTF8[0]!, Buffer.from('"}')]),
  );
  await c.postRaw(
    '400: overlong UTF-8',
    'apis.createApi',
    Buffer.concat([Buffer.from('{"name":"'), INVALID_UTF8[3]!, Buffer.from('"}')]),
  );
  await c.postRaw('400: verifyKey truncated JSON', 'keys.verifyKey', '{"key":');
  await c.postRaw('400: ratelimits.limit empty body', 'ratelimits.limit', '');
  await c.postRaw(
    'createApi: a byte-order mark before the JSON',
    'apis.createApi',
    '\ufeff{"name":"bom"}',
  );
  const padTo = (size: number, name: string) => {
    const head = `{"name":"${name}","pad":"`;
    return `${head}${'y'.repeat(size - head.length - 2)}"}`;
  };
  await c.postRaw('createApi: a body of exactly 1 MiB', 'apis.createApi', padTo(MiB, 'at-limit'));
  await c.postRaw('413: createApi, 1 MiB and 1 byte', 'apis.createApi', padTo(MiB + 1, 'over'));
  await c.postRaw('413: verifyKey, 1 MiB and 1 byte', 'keys.verifyKey', padTo(MiB + 1, 'over'));
  await c.send('413: createApi, chunked without a length', {
    method: 'POST',
    path: '/v1/apis.createApi',
    headers: {
      authorization: `Bearer ${context.rootKey}`,
      'content-type': 'application/json',
    },
    chunks: [Buffer.alloc(700 * 1024, 0x20), Buffer.alloc(700 * 1024, 0x20)],
  });

  // --- Hostile input ----------------------------------------------------------------------
  await c.postRaw('hostile: 100 000 nested arrays', 'apis.createApi', DEEP_JSON[1]!);
  await c.postRaw('hostile: 100 000 unclosed arrays', 'apis.createApi', DEEP_JSON[0]!);
  await c.postRaw('hostile: 100 000 nested objects', 'apis.createApi', DEEP_JSON[2]!);
  await c.postRaw('hostile: 100 000 nested arrays on verifyKey', 'keys.verifyKey', DEEP_JSON[1]!);
  await c.postRaw(
    'hostile: meta nested 100 000 levels',
    'keys.createKey',
    `{"apiId":${JSON.stringify(apiA)},"meta":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
  );
  await c.postRaw(
    'hostile: permission query nested 100 000 levels',
    'keys.verifyKey',
    `{"key":${JSON.stringify(k1Key)},"authorization":{"permissions":${'{"or":['.repeat(100_000)}"x"${']}'.repeat(100_000)}}}`,
  );
  await c.postRaw(
    'hostile: byteLength 1e2',
    'keys.createKey',
    `{"apiId":${JSON.stringify(apiA)},"byteLength":1e2}`,
  );
  await c.postRaw(
    'hostile: byteLength 400 digits',
    'keys.createKey',
    `{"apiId":${JSON.stringify(apiA)},"byteLength":1${'0'.repeat(400)}}`,
  );
  await c.postRaw(
    'hostile: remaining -1e400',
    'keys.createKey',
    `{"apiId":${JSON.stringify(apiA)},"remaining":-1e400}`,
  );
  await c.postRaw(
    'hostile: duplicate names, the last wins',
    'apis.createApi',
    '{"name":"first","name":"second"}',
  );
  await c.postRaw(
    'hostile: __proto__ instead of name',
    'apis.createApi',
    '{"__proto__":{"name":"polluted"}}',
  );
  await c.postRaw(
    'hostile: __proto__ beside name',
    'apis.createApi',
    '{"name":"proto","__proto__":{"admin":true}}',
  );
  await c.postRaw(
    'hostile: constructor.prototype beside name',
    'apis.createApi',
    '{"name":"ctor","constructor":{"prototype":{"admin":true}}}',
  );
  const protoKey = await c.postRaw(
    'hostile: meta with __proto__ and constructor',
    'keys.createKey',
    `{"apiId":${JSON.stringify(apiA)},"meta":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}},"plain":1}}`,
  );
  if (protoKey.status === 200) {
    await c.get(
      'hostile: getKey of the meta with __proto__',
      'keys.getKey',
      `keyId=${field(protoKey, 'keyId', 'proto key')}`,
    );
    await verify('hostile: verify the meta with __proto__', {
      key: field(protoKey, 'key', 'proto key'),
    });
  }
  await c.post('hostile: apiId __proto__', 'keys.createKey', { apiId: '__proto__' });
  await c.get('hostile: getApi __proto__', 'apis.getApi', 'apiId=__proto__');
  await c.get('hostile: query __proto__[x]', 'apis.listApis', '__proto__%5Bx%5D=1');
  await c.post('hostile: unicode name', 'apis.createApi', { name: 'ключ 🔑 مفتاح' });
  await c.post('hostile: right-to-left override in a name', 'apis.createApi', {
    name: 'abc\u202edef',
  });
  await c.postRaw('hostile: lone surrogate name', 'apis.createApi', '{"name":"\\ud800"}');
  await c.post('hostile: 256 emoji name', 'apis.createApi', { name: '🔑'.repeat(256) });
  await c.post('hostile: 257 emoji name', 'apis.createApi', { name: '🔑'.repeat(257) });
  const nul = await c.post('hostile: name with a NUL', 'apis.createApi', { name: 'a\u0000b' });
  if (nul.status === 200) {
    await c.get(
      'hostile: getApi of the name with a NUL',
      'apis.getApi',
      `apiId=${field(nul, 'apiId', 'nul')}`,
    );
  }
  await c.post('hostile: 100 000-character name', 'apis.createApi', { name: 'x'.repeat(100_000) });
  await c.post('hostile: 100 000-character key', 'keys.verifyKey', { key: 'k'.repeat(100_000) });
  await c.get('hostile: apiId percent-encoded unicode', 'apis.getApi', `apiId=${enc('ключ🔑')}`);
  await c.get('hostile: apiId with an encoded NUL', 'apis.getApi', 'apiId=%00');
  await c.get('hostile: broken percent-encoding', 'apis.getApi', 'apiId=%E0%A4%A');
  await c.post('hostile: apiId is an object', 'apis.deleteApi', { apiId: {} });
  await c.post('hostile: keyId is an array', 'keys.updateKey', { keyId: ['x'] });
  await c.post('hostile: identifier is an object', 'ratelimits.limit', {
    identifier: {},
    ...perHour,
  });
  await c.post('hostile: op is null', 'keys.updateRemaining', {
    keyId: k4.value,
    op: null,
    value: 1,
  });
  await c.post('hostile: updateKey with every field null', 'keys.updateKey', {
    keyId: k3.value,
    name: null,
    ownerId: null,
    meta: null,
    expires: null,
    ratelimit: null,
    remaining: null,
    refill: null,
  });

  // --- deleteKey, EXPIRED, deleteApi ------------------------------------------------------
  await c.post('deleteKey kB', 'keys.deleteKey', { keyId: kB.value });
  await verify('NOT_FOUND after deleteKey', { key: kBKey });
  await c.get('getKey: deleted key', 'keys.getKey', `keyId=${kB.value}`);
  await c.post('deleteKey kB again', 'keys.deleteKey', { keyId: kB.value });
  await c.post('deleteKey: missing keyId', 'keys.deleteKey', {});
  await c.post(
    'deleteKey: 403 narrow root key',
    'keys.deleteKey',
    { keyId: k1.value },
    { auth: 'narrow' },
  );
  await sleep(Math.max(0, k6Expires + 50 - Date.now()));
  await verify('EXPIRED', { key: k6Key });
  await c.get('getKey k6: expired', 'keys.getKey', `keyId=${k6.value}`);
  await c.post(
    'deleteApi: 403 narrow root key',
    'apis.deleteApi',
    { apiId: apiB },
    { auth: 'narrow' },
  );
  await c.post('deleteApi B', 'apis.deleteApi', { apiId: apiB });
  await c.post('deleteApi B again', 'apis.deleteApi', { apiId: apiB });
  await c.get('getApi B after delete', 'apis.getApi', `apiId=${apiB}`);
  await c.get('listKeys B after delete', 'apis.listKeys', `apiId=${apiB}`);
  await c.post('createKey in the deleted API', 'keys.createKey', { apiId: apiB });
  await c.post('deleteApi: missing apiId', 'apis.deleteApi', {});
  await c.post('deleteApi: unknown apiId', 'apis.deleteApi', { apiId: 'api_missing' });
  await c.post('deleteApi A', 'apis.deleteApi', { apiId: apiA });
  await verify('NOT_FOUND after deleteApi', { key: k2Key });
  await c.get('getKey after deleteApi', 'keys.getKey', `keyId=${k2.value}`);
  await c.get('listApis at the end', 'apis.listApis', '');
  await c.get('liveness at the end', 'liveness', '', { auth: 'none' });
  await c.get('narrow root key: listApis is allowed', 'apis.listApis', 'limit=1', {
    auth: 'narrow',
  });
  await c.post('narrow root key: createApi', 'apis.createApi', { name: 'x' }, { auth: 'narrow' });
  await c.post(
    'narrow root key: createKey',
    'keys.createKey',
    { apiId: 'api_missing' },
    { auth: 'narrow' },
  );
  await c.get('narrow root key: getKey', 'keys.getKey', 'keyId=key_missing', { auth: 'narrow' });
  await c.get('narrow root key: listKeys', 'apis.listKeys', 'apiId=api_missing', {
    auth: 'narrow',
  });

  return { exchanges: c.exchanges, rootKeys: c.rootKeys };
}
