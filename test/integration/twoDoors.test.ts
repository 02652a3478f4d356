import type { Exchange, LifecycleStep } from '../../src/http/lifecycle';
import { rawRequest } from '../support/rawHttp';
import { startTopology, type Topology } from '../support/topology';

/**
 * A node has two HTTP doors: the data plane (node:http, for POST keys.verifyKey and
 * ratelimits.limit) and the Koa app (everything else). Both run the one request lifecycle
 * (src/http/lifecycle.ts) over the one route table, so a client cannot tell which door answered,
 * and a step added to the lifecycle reaches every request through either.
 *
 * Node 0 has both doors; node 1 has its data plane shut, so the Koa app answers everything. Both
 * share one primary and carry one extra step that stamps a header and notes what it saw.
 */
let topology: Topology;
const seen: { node: number; method: string; path: string; operation?: string; status: number }[] =
  [];

function stampStep(node: number): LifecycleStep {
  return {
    enter(exchange: Exchange) {
      exchange.headers['X-Test-Step'] = `node-${node}`;
    },
    finish(exchange: Exchange) {
      seen.push({
        node,
        method: exchange.method,
        path: exchange.path,
        operation: exchange.state.operation,
        status: exchange.status,
      });
    },
  };
}

beforeAll(async () => {
  topology = await startTopology({
    nodes: 2,
    nodeOptions: [{ extraSteps: [stampStep(0)] }, { extraSteps: [stampStep(1)], dataPlane: false }],
  });
});

afterAll(async () => {
  await topology?.stop();
});

interface RawAnswer {
  status: number;
  /** Name/value pairs in the order they came on the wire. */
  headers: string[];
  body: string;
}

async function send(
  node: number,
  method: string,
  path: string,
  options: { body?: string; authorization?: string; contentType?: string } = {},
): Promise<RawAnswer> {
  const { status, rawHeaders, text } = await rawRequest(topology.nodes[node]!.url, {
    method,
    path,
    headers: {
      authorization: options.authorization ?? `Bearer ${topology.rootKey}`,
      ...(options.body !== undefined
        ? { 'content-type': options.contentType ?? 'application/json' }
        : {}),
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return { status, headers: rawHeaders, body: text };
}

/** What differs between any two answers: the request id, the date, the door's own stamp. */
function comparable(answer: RawAnswer): RawAnswer {
  const headers: string[] = [];
  for (let i = 0; i < answer.headers.length; i += 2) {
    const name = answer.headers[i]!;
    const lower = name.toLowerCase();
    if (lower === 'date' || lower === 'connection' || lower === 'x-test-step') continue;
    const value = answer.headers[i + 1]!;
    headers.push(name, lower === 'x-request-id' ? '<req>' : value);
  }
  return {
    status: answer.status,
    headers,
    // Request ids, and the clock readings of two calls a few milliseconds apart.
    body: answer.body.replace(/req_[1-9A-HJ-NP-Za-km-z]+/g, '<req>').replace(/\d{13}/g, '<ms>'),
  };
}

async function createKey(body: object): Promise<{ keyId: string; key: string }> {
  const answer = await send(0, 'POST', '/v1/keys.createKey', { body: JSON.stringify(body) });
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as { keyId: string; key: string };
}

test('a data-plane RPC answers byte for byte alike through either door', async () => {
  const created = await send(0, 'POST', '/v1/apis.createApi', {
    body: JSON.stringify({ name: 'two doors' }),
  });
  const { apiId } = JSON.parse(created.body) as { apiId: string };
  const plain = await createKey({ apiId, name: 'plain', meta: { plan: 'pro' } });
  const disabled = await createKey({ apiId, enabled: false });
  const limited = await createKey({
    apiId,
    ratelimit: { type: 'consistent', limit: 5, refillRate: 1, refillInterval: 3_600_000 },
  });

  const requests: { path: string; body?: string; authorization?: string; contentType?: string }[] =
    [
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: plain.key }) },
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: disabled.key }) },
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: 'no_such_key' }) },
      // The plain key with its checksum's last character changed: refused before any lookup.
      {
        path: '/v1/keys.verifyKey',
        body: JSON.stringify({
          key: `${plain.key.slice(0, -1)}${plain.key.endsWith('2') ? '3' : '2'}`,
        }),
      },
      // Cost 0 reads the shared bucket without changing it, so both doors see the same state.
      {
        path: '/v1/keys.verifyKey',
        body: JSON.stringify({ key: limited.key, ratelimit: { cost: 0 } }),
      },
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: plain.key, apiId: 'api_other' }) },
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: 42 }) },
      { path: '/v1/keys.verifyKey', body: '{"key": ' },
      { path: '/v1/keys.verifyKey', body: 'key=1', contentType: 'text/plain' },
      { path: '/v1/keys.verifyKey', body: JSON.stringify({ key: plain.key }), authorization: '' },
      {
        path: '/v1/keys.verifyKey',
        body: JSON.stringify({ key: plain.key }),
        authorization: 'Bearer kwroot_unknown',
      },
      { path: '/v1/ratelimits.limit', body: JSON.stringify({ identifier: 'u', limit: 0 }) },
      // The v2 dialect's data-plane routes: its envelope, its errors.
      { path: '/v2/keys.verifyKey', body: JSON.stringify({ key: plain.key }) },
      { path: '/v2/keys.verifyKey', body: JSON.stringify({ key: 'no_such_key' }) },
      { path: '/v2/keys.verifyKey', body: JSON.stringify({ key: 42 }) },
      { path: '/v2/keys.verifyKey', body: '{"key": ' },
      { path: '/v2/keys.verifyKey', body: JSON.stringify({ key: plain.key }), authorization: '' },
      {
        path: '/v2/ratelimit.limit',
        body: JSON.stringify({ namespace: 'doors', identifier: 'u', limit: 1, duration: 0 }),
      },
    ];
  for (const options of requests) {
    const throughDataPlane = comparable(await send(0, 'POST', options.path, options));
    const throughKoa = comparable(await send(1, 'POST', options.path, options));
    expect({ request: options, answer: throughKoa }).toEqual({
      request: options,
      answer: throughDataPlane,
    });
  }
  // Each door did serve its share: node 0's data plane, node 1's Koa app.
  const verifications = seen.filter((entry) => entry.operation === 'keys.verifyKey');
  expect(verifications.filter((entry) => entry.node === 0)).toHaveLength(11);
  expect(verifications.filter((entry) => entry.node === 1)).toHaveLength(11);
  const v2 = seen.filter((entry) => entry.operation === 'v2/keys.verifyKey');
  expect([0, 1].map((node) => v2.filter((entry) => entry.node === node).length)).toEqual([5, 5]);
});

test('a step added to the lifecycle reaches every request, through either door', async () => {
  seen.length = 0;
  const cases: { node: number; method: string; path: string; body?: string; status: number }[] = [
    // Node 0, data plane.
    { node: 0, method: 'POST', path: '/v1/keys.verifyKey', body: '{"key":"nope"}', status: 200 },
    {
      node: 0,
      method: 'POST',
      path: '/v1/ratelimits.limit',
      body: '{"identifier":"a","limit":1,"duration":1000}',
      status: 200,
    },
    { node: 0, method: 'POST', path: '/v1/keys.verifyKey', body: '{', status: 400 },
    // Node 0, Koa app: another RPC, a page, liveness, an unknown path, a wrong method.
    { node: 0, method: 'GET', path: '/v1/apis.listApis', status: 200 },
    { node: 0, method: 'GET', path: '/v1/liveness', status: 200 },
    { node: 0, method: 'GET', path: '/openapi.json', status: 200 },
    { node: 0, method: 'GET', path: '/v1/no.such', status: 404 },
    { node: 0, method: 'GET', path: '/v1/keys.verifyKey', status: 405 },
    // Node 1, Koa app only.
    { node: 1, method: 'POST', path: '/v1/keys.verifyKey', body: '{"key":"nope"}', status: 200 },
  ];
  for (const { node, method, path, body, status } of cases) {
    const answer = await send(node, method, path, body === undefined ? {} : { body });
    expect([path, answer.status]).toEqual([path, status]);
    const stamp = answer.headers.findIndex((name) => name.toLowerCase() === 'x-test-step');
    expect([path, answer.headers[stamp + 1]]).toEqual([path, `node-${node}`]);
  }
  expect(seen.map(({ node, method, path, status }) => ({ node, method, path, status }))).toEqual(
    cases.map(({ node, method, path, status }) => ({ node, method, path, status })),
  );
});
