import pino from 'pino';
import { startTopology, type Topology } from '../support/topology';
import type { RunningNode } from '../../src/node';

/**
 * The data-plane RPCs (keys.verifyKey, ratelimits.limit) are answered straight from node:http,
 * every other request by the Koa app (src/http/dataPlane.ts). A client must not be able to tell:
 * the same transport fault sent to a data-plane RPC and to a Koa-served POST RPC gets the same
 * status, the same header names and the same envelope; requests the data plane does not own
 * (other methods, other spellings of the path) are answered by the Koa app; and data-plane
 * requests are counted in the metrics and written to the access log like any other.
 */
let topology: Topology;
let node: RunningNode;
let rootKey: string;
let apiId: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>),
    },
  );
  topology = await startTopology({ nodes: 1, logger, env: { LOG_LEVEL: 'info' } });
  node = topology.nodes[0]!;
  rootKey = topology.rootKey;
  const created = await rpc('POST', 'apis.createApi', { body: JSON.stringify({ name: 'dp' }) });
  apiId = (created.body as { apiId: string }).apiId;
});

afterAll(() => topology?.stop());

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function rpc(
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string>; auth?: boolean } = {},
): Promise<Answer> {
  const response = await fetch(`${node.url}/v1/${path}`, {
    method,
    headers: {
      ...(options.auth === false ? {} : { authorization: `Bearer ${rootKey}` }),
      'content-type': 'application/json',
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** Everything a client can compare: status, header names, and the envelope without its id. */
function shape(answer: Answer) {
  const body = answer.body as { error?: { requestId?: string } };
  const error = body.error ? { ...body.error, requestId: typeof body.error.requestId } : body;
  return {
    status: answer.status,
    headerNames: [...answer.headers.keys()].sort(),
    connection: answer.headers.get('connection'),
    wwwAuthenticate: answer.headers.get('www-authenticate'),
    body: error,
  };
}

const faults: [string, Parameters<typeof rpc>[2]][] = [
  ['no root key', { body: '{}', auth: false }],
  ['a wrong root key', { body: '{}', headers: { authorization: 'Bearer kwroot_nope' } }],
  ['another content type', { body: '{}', headers: { 'content-type': 'text/plain' } }],
  ['no content type', { body: '{}', headers: { 'content-type': '' } }],
  ['an empty body', { body: '' }],
  ['malformed JSON', { body: '{"key":' }],
  ['invalid UTF-8', { body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }],
  ['a body over 1 MiB', { body: JSON.stringify({ padding: 'y'.repeat(1024 * 1024) }) }],
];

describe.each(['keys.verifyKey', 'ratelimits.limit'])('%s', (dataPlaneRpc) => {
  test.each(faults)('%s: answered as a Koa-served RPC answers it', async (_label, options) => {
    const fromDataPlane = shape(await rpc('POST', dataPlaneRpc, options));
    const fromKoa = shape(await rpc('POST', 'keys.updateKey', options));
    expect(fromDataPlane.status).toBeGreaterThanOrEqual(400);
    expect(fromDataPlane.status).toBeLessThan(500);
    expect(fromDataPlane).toEqual(fromKoa);
  });

  test('another method or spelling of the path is the Koa app’s 405 or 404', async () => {
    const get = await rpc('GET', dataPlaneRpc);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    for (const path of [`${dataPlaneRpc}/`, dataPlaneRpc.toUpperCase()]) {
      const answer = await rpc('POST', path, { body: '{}' });
      expect(answer.status).toBe(404);
      expect((answer.body as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
  });
});

test('a verification is answered with the headers of every RPC, its query string ignored', async () => {
  const created = await rpc('POST', 'keys.createKey', {
    body: JSON.stringify({
      apiId,
      ratelimit: { type: 'fast', limit: 5, refillRate: 1, refillInterval: 60_000 },
    }),
  });
  const key = (created.body as { key: string }).key;
  const verified = await rpc('POST', 'keys.verifyKey?source=test', {
    body: JSON.stringify({ key }),
  });
  expect(verified.status).toBe(200);
  expect(verified.body).toMatchObject({ valid: true, code: 'VALID' });
  const koa = await rpc('GET', `keys.getKey?keyId=${(created.body as { keyId: string }).keyId}`);
  const common = (answer: Answer) =>
    [...answer.headers.keys()].filter((name) => !name.startsWith('ratelimit-')).sort();
  expect(common(verified)).toEqual(common(koa));
  expect(verified.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(verified.headers.get('ratelimit-remaining')).toBe('4');
});

test('data-plane requests are counted and logged like every other request', async () => {
  const before = logLines.length;
  const answer = await rpc('POST', 'keys.verifyKey', { body: JSON.stringify({ key: 'nope' }) });
  const requestId = answer.headers.get('x-request-id');
  const line = logLines.slice(before).find((entry) => entry.requestId === requestId);
  expect(line).toMatchObject({
    msg: 'request',
    method: 'POST',
    operation: 'keys.verifyKey',
    status: 200,
    durationMs: expect.any(Number),
    workspaceId: expect.stringMatching(/^ws_/),
  });
  const metrics = await (await fetch(`${node.url}/metrics`)).text();
  expect(metrics).toMatch(
    /keyward_http_requests_total\{operation="keys.verifyKey",status="200"\} \d+/,
  );
  expect(metrics).toMatch(
    /keyward_http_requests_total\{operation="keys.verifyKey",status="401"\} \d+/,
  );
});
