import { startNodeProcess, startTopology, type Topology } from '../support/topology';
import { client, post, get, type ErrorBody } from '../support/rpc';

let topology: Topology;
let base: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  base = topology.nodes[0]!.url;
});
afterAll(() => topology.stop());

function expectEnvelope(body: ErrorBody, code: string, requestId: string | null) {
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.error.docs).toContain(`#${code.toLowerCase()}`);
  expect(body.error.requestId).toBe(requestId);
}

describe('addressing', () => {
  test('an unknown service or method is 404 in the envelope', async () => {
    for (const path of [
      '/v1/keys.nope',
      '/v1/nope.createKey',
      '/v3/keys.createKey',
      '/v1/keys.createkey',
    ]) {
      const response = await fetch(`${base}${path}`, { method: 'POST' });
      expect(response.status).toBe(404);
      expectEnvelope(
        (await response.json()) as ErrorBody,
        'NOT_FOUND',
        response.headers.get('x-request-id'),
      );
    }
  });

  test('a known method with the wrong verb is 405 with Allow', async () => {
    const getOnPost = await fetch(`${base}/v1/keys.createKey`);
    expect(getOnPost.status).toBe(405);
    expect(getOnPost.headers.get('allow')).toBe('POST');
    expectEnvelope(
      (await getOnPost.json()) as ErrorBody,
      'METHOD_NOT_ALLOWED',
      getOnPost.headers.get('x-request-id'),
    );
    const postOnGet = await fetch(`${base}/v1/keys.getKey`, { method: 'POST' });
    expect(postOnGet.status).toBe(405);
    expect(postOnGet.headers.get('allow')).toBe('GET, HEAD');
  });

  test('every response carries X-Request-Id and JSON security headers', async () => {
    const response = await fetch(`${base}/v1/liveness`);
    expect(response.headers.get('x-request-id')).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('bodies', () => {
  const headers = () => ({ authorization: `Bearer ${topology.rootKey}` });

  test('another content type is 415', async () => {
    const response = await fetch(`${base}/v1/apis.createApi`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'text/plain' },
      body: '{"name":"x"}',
    });
    expect(response.status).toBe(415);
    expectEnvelope(
      (await response.json()) as ErrorBody,
      'BAD_REQUEST',
      response.headers.get('x-request-id'),
    );
  });

  test('malformed JSON, empty bodies and invalid UTF-8 are 400', async () => {
    for (const body of ['{"name":', '', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])]) {
      const response = await fetch(`${base}/v1/apis.createApi`, {
        method: 'POST',
        headers: { ...headers(), 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expectEnvelope(
        (await response.json()) as ErrorBody,
        'BAD_REQUEST',
        response.headers.get('x-request-id'),
      );
    }
  });

  test('a body over 1 MiB is 413', async () => {
    const response = await fetch(`${base}/v1/apis.createApi`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', padding: 'y'.repeat(1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    expectEnvelope(
      (await response.json()) as ErrorBody,
      'BAD_REQUEST',
      response.headers.get('x-request-id'),
    );
  });

  test('a client still sending an oversized body gets the 413, not a broken connection', async () => {
    // The node answers at once and reads the rest of the body into nothing (up to 16 MiB), so a
    // client that reads its answer only after its upload (fetch) sees the 413 and not EPIPE. A
    // node in a process of its own: in this one, the client and the node share an event loop and
    // the race does not show (closing the connection instead failed most uploads of 20 MB).
    const node = await startNodeProcess({ primaryUrl: topology.primary.url });
    try {
      const body = Buffer.alloc(12 * 1024 * 1024, 0x61);
      const chunked = () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let at = 0; at < body.length; at += 65_536) {
              controller.enqueue(body.subarray(at, at + 65_536));
            }
            controller.close();
          },
        });
      const statuses: number[] = [];
      for (const stream of [false, false, false, true, true, true]) {
        const response = await fetch(`${node.url}/v1/keys.verifyKey`, {
          method: 'POST',
          headers: { ...headers(), 'content-type': 'application/json' },
          body: stream ? chunked() : body,
          duplex: 'half',
        } as RequestInit);
        statuses.push(response.status);
        expectEnvelope(
          (await response.json()) as ErrorBody,
          'BAD_REQUEST',
          response.headers.get('x-request-id'),
        );
      }
      expect(statuses).toEqual([413, 413, 413, 413, 413, 413]);
    } finally {
      await node.dispose();
    }
  }, 60_000);

  test('application/json with a charset is accepted', async () => {
    const response = await fetch(`${base}/v1/apis.createApi`, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ name: 'charset' }),
    });
    expect(response.status).toBe(200);
  });
});

describe('authentication', () => {
  test.each([
    ['no header', undefined],
    ['wrong scheme', 'Basic abc'],
    ['unknown root key', 'Bearer kwroot_unknown'],
    ['empty bearer', 'Bearer '],
  ])('%s is 401 with WWW-Authenticate, before any lookup', async (_, authorization) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization !== undefined) headers.authorization = authorization;
    // Even a malformed body must not be looked at before the caller is known.
    const response = await fetch(`${base}/v1/keys.createKey`, {
      method: 'POST',
      headers,
      body: '{oops',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expectEnvelope(
      (await response.json()) as ErrorBody,
      'UNAUTHORIZED',
      response.headers.get('x-request-id'),
    );
  });

  test('an unauthenticated caller gets the same answer for existing and missing ids', async () => {
    const admin = client(base, topology.rootKey);
    const apiId = (await admin.post<{ apiId: string }>('apis.createApi', { name: 'x' })).body.apiId;
    const existing = await get<ErrorBody>(base, 'apis.getApi', { apiId }, 'kwroot_wrong');
    const missing = await get<ErrorBody>(
      base,
      'apis.getApi',
      { apiId: 'api_missing' },
      'kwroot_wrong',
    );
    expect(existing.status).toBe(401);
    expect(missing.status).toBe(401);
    expect(existing.body.error.message).toBe(missing.body.error.message);
  });
});

describe('authorization', () => {
  test('a missing permission is 403 naming it; api.<id> scopes to that API', async () => {
    const admin = client(base, topology.rootKey);
    const apiA = (await admin.post<{ apiId: string }>('apis.createApi', { name: 'a' })).body.apiId;
    const apiB = (await admin.post<{ apiId: string }>('apis.createApi', { name: 'b' })).body.apiId;
    const keyB = (
      await admin.post<{ keyId: string; key: string }>('keys.createKey', { apiId: apiB })
    ).body;
    const scoped = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: [`api.${apiA}.create_key`, `api.${apiA}.read_key`, `api.${apiA}.verify_key`],
    });
    const limited = client(base, scoped.key);

    expect((await limited.post('keys.createKey', { apiId: apiA })).status).toBe(200);
    const denied = await limited.post<ErrorBody>('keys.createKey', { apiId: apiB });
    expect(denied.status).toBe(403);
    expectEnvelope(denied.body, 'INSUFFICIENT_PERMISSIONS', denied.headers.get('x-request-id'));
    expect(denied.body.error.message).toContain(`api.${apiB}.create_key`);

    const createApi = await limited.post<ErrorBody>('apis.createApi', { name: 'nope' });
    expect(createApi.status).toBe(403);
    expect(createApi.body.error.message).toContain('api.*.create_api');

    expect((await limited.get('keys.getKey', { keyId: keyB.keyId })).status).toBe(403);
    expect((await limited.post('keys.verifyKey', { key: keyB.key })).status).toBe(403);
    expect((await limited.post('keys.deleteKey', { keyId: keyB.keyId })).status).toBe(403);
    expect((await limited.get('apis.listKeys', { apiId: apiA })).status).toBe(200);
    expect((await limited.get('apis.listKeys', { apiId: apiB })).status).toBe(403);

    // Naming its own API, it learns only FORBIDDEN about another API's key: no name, no state.
    await admin.post('keys.updateKey', { keyId: keyB.keyId, name: 'secret name', enabled: false });
    const probe = await limited.post('keys.verifyKey', { key: keyB.key, apiId: apiA });
    expect(probe.status).toBe(200);
    expect(probe.body).toEqual({ valid: false, code: 'FORBIDDEN', requestId: expect.any(String) });
    // A root key allowed on both APIs gets the contract's order: DISABLED comes first.
    expect((await admin.post('keys.verifyKey', { key: keyB.key, apiId: apiA })).body.code).toBe(
      'DISABLED',
    );
  });

  test('a root key never sees another workspace: its ids are simply not found', async () => {
    const mine = client(base, topology.rootKey);
    const apiId = (await mine.post<{ apiId: string }>('apis.createApi', { name: 'mine' })).body
      .apiId;
    const { keyId, key } = (
      await mine.post<{ keyId: string; key: string }>('keys.createKey', { apiId })
    ).body;
    const stranger = await topology.newRootKey();
    expect(stranger.workspaceId).not.toBe(topology.workspaceId);
    const theirs = client(base, stranger.key);

    const notFound = async (response: Promise<{ status: number; body: unknown }>) => {
      const { status, body } = await response;
      expect(status).toBe(404);
      expect((body as ErrorBody).error.code).toBe('NOT_FOUND');
    };
    await notFound(theirs.get('apis.getApi', { apiId }));
    await notFound(theirs.get('apis.listKeys', { apiId }));
    await notFound(theirs.get('keys.getKey', { keyId }));
    await notFound(theirs.post('keys.updateKey', { keyId, name: 'hijack' }));
    await notFound(theirs.post('keys.deleteKey', { keyId }));
    await notFound(theirs.post('apis.deleteApi', { apiId }));
    await notFound(theirs.post('keys.createKey', { apiId }));
    expect((await theirs.post('keys.verifyKey', { key })).body.code).toBe('NOT_FOUND');
    // And it all still works for the owner.
    expect((await mine.post('keys.verifyKey', { key })).body.code).toBe('VALID');
    expect((await post(base, 'keys.verifyKey', { key }, topology.rootKey)).body.code).toBe('VALID');
  });
});
