import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import type { Redis } from 'ioredis';
import type { TestRedis } from '../support/redisServer';
import { startDelayProxy, type DelayProxy } from '../support/delayProxy';
import type { KeywardProcess } from '../support/keywardProcess';
import { startProcessTopology, type ProcessTopology } from '../support/topology';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client } from '../support/rpc';
import { createRootKey } from '../../src/operations/rootKeys';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { sleep, eventually } from '../support/helpers';

/**
 * Graceful shutdown: SIGTERM to a node (its own process) while 50 requests are in flight. Every
 * one of them gets a complete answer, new connections are refused from the moment the signal
 * lands, and the process exits 0. The node's primary sits behind a proxy that delays each chunk
 * by 200 ms, so every request takes at least one 400 ms round trip and is surely in flight when
 * the signal arrives. The node starts, and the test sets up, with the proxy at no delay: a start
 * makes several round trips, seconds at 400 ms each, and proves nothing about shutdown.
 */
const DELAY_MS = 200;
/** Not a speed target: the time within which a stopping node must be gone at all. */
const EXIT_BOUND_MS = 3_000;

let topology: ProcessTopology;
let primary: TestRedis;
let proxy: DelayProxy;
let node: KeywardProcess;
let redis: Redis;

beforeAll(async () => {
  // Only the Redis: the one node starts behind the proxy.
  topology = await startProcessTopology({ nodes: 0, localRedis: false });
  primary = topology.primary;
  proxy = await startDelayProxy(primary.port, 0);
  node = await topology.addNode({
    primaryUrl: proxy.url,
    // Fast buckets and the management limit on a Redis without delay.
    localUrl: primary.url,
    env: {
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '10000',
      KEYWARD_REDIS_CONNECT_TIMEOUT_MS: '10000',
      KEYWARD_MANAGEMENT_RATE_LIMIT: '100000',
    },
  });
  redis = await adminRedis(primary.url);
}, 60_000);

afterAll(async () => {
  if (node) await node.dispose();
  if (redis) await closeRedis(redis);
  if (proxy) await proxy.close();
  if (topology) await topology.stop();
});

/** Whether a new TCP connection to the node's port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * Requests the node has read: those answered (`keyward_http_requests_total`) and those in flight,
 * less the scrape itself.
 */
async function requestsRead(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let read = -1;
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('keyward_http_requests_in_flight ')) read += value;
    else if (line.startsWith('keyward_http_requests_total{') && !line.includes('"metrics"'))
      read += value;
  }
  return read;
}

/**
 * The exit code, or 'still running' once EXIT_BOUND_MS have passed. The bound's timer is cleared
 * as soon as the node exits: left running, it held jest for 3 s after the file ("Jest did not
 * exit one second after the test run", or a worker force-exited when this file ran last).
 */
async function exitWithin(
  exited: Promise<number | null>,
): Promise<number | null | 'still running'> {
  let bound: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      exited,
      new Promise<'still running'>((resolve) => {
        bound = setTimeout(() => resolve('still running'), EXIT_BOUND_MS);
      }),
    ]);
  } finally {
    clearTimeout(bound);
  }
}

interface Answer {
  kind: string;
  status: number;
  body: Record<string, unknown>;
  at: number;
}

test('SIGTERM with 50 requests in flight: all answered, new connections refused, exit 0', async () => {
  const { key: rootKey } = await createRootKey(new RootKeyStore(redis), {});
  const api = client(node.url, rootKey);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'shutdown' })).body
    .apiId;
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ratelimit: { type: 'consistent', limit: 1000, refillRate: 1, refillInterval: 60_000 },
  });
  // Warm the caches: each request below spends its time on one slow round trip, not on lookups.
  expect((await api.post('keys.verifyKey', { key: created.body.key })).body.code).toBe('VALID');

  const send = async (i: number): Promise<Answer> => {
    const kind = ['createKey', 'verifyKey', 'getApi'][i % 3]!;
    const response =
      kind === 'createKey'
        ? await api.post('keys.createKey', { apiId, name: `in-flight-${i}` })
        : kind === 'verifyKey'
          ? await api.post('keys.verifyKey', { key: created.body.key })
          : await api.get('apis.getApi', { apiId });
    return { kind, status: response.status, body: response.body, at: Date.now() };
  };
  proxy.setDelay(DELAY_MS);
  const readBefore = await requestsRead(node.url);
  const inFlight = Array.from({ length: 50 }, (_, i) =>
    send(i).catch((error: unknown): Answer => {
      const cause = (error as { cause?: { code?: string } }).cause;
      const code = cause?.code ?? String(error);
      return { kind: 'failed', status: 0, body: { failure: code }, at: Date.now() };
    }),
  );
  // Every request has been read by the node and waits for the primary (400 ms away) when the
  // signal lands. A request the client had connected but not yet sent is not one the node owes an
  // answer: closing the listener resets it, as it would on any server.
  await eventually(async () => (await requestsRead(node.url)) - readBefore >= 50, {
    what: 'the node to read all 50 requests',
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  const exited = node.stop('SIGTERM');
  let refusedAt = 0;
  for (let i = 0; i < 200 && refusedAt === 0; i++) {
    if (await refused(node.port)) refusedAt = Date.now();
    else await sleep(5);
  }

  const answers = await Promise.all(inFlight);

  // Every request the node had read got a complete answer: a reset or a cut answer is a failure.
  const accepted = answers;
  expect(accepted.length).toBe(50);
  for (const answer of accepted) {
    expect([answer.kind, answer.status, answer.body.failure]).toEqual([
      answer.kind,
      200,
      undefined,
    ]);
    if (answer.kind === 'createKey') {
      expect(answer.body).toEqual({
        keyId: expect.stringMatching(/^key_/),
        key: expect.any(String),
      });
    } else if (answer.kind === 'verifyKey') {
      expect(answer.body).toMatchObject({ valid: true, code: 'VALID' });
    } else expect(answer.body).toMatchObject({ id: apiId, name: 'shutdown' });
  }
  // New connections were refused while the last of them were still being answered.
  expect(refusedAt).toBeGreaterThan(0);
  expect(refusedAt).toBeLessThan(Math.max(...accepted.map((answer) => answer.at)));
  expect(await refused(node.port)).toBe(true);

  // What was acknowledged was stored: each created key is in the primary.
  for (const answer of accepted.filter((a) => a.kind === 'createKey')) {
    const hash = createHash('sha256').update(String(answer.body.key)).digest('base64');
    const entries = await redis.keys(`keyward:keyhash:{${hash}}:*`);
    const found = await Promise.all(entries.map((name) => redis.get(name)));
    expect(found.filter(Boolean)).toEqual([answer.body.keyId]);
  }

  // Regression: connections busy at SIGTERM used to stay open (keep-alive) and hold the node
  // for the keep-alive timeout; every answer after the signal now closes its connection.
  const code = await exitWithin(exited);
  expect(code).toBe(0);
}, 60_000);

test('after SIGTERM, a keep-alive connection serves no new request', async () => {
  // Regression: a keep-alive connection busy at SIGTERM used to go on being served; now its
  // in-flight answer closes it, nothing new is served after the signal, and the node exits 0.
  if (node.running()) await node.dispose();
  proxy.setDelay(0);
  await node.start();
  proxy.setDelay(DELAY_MS);
  const { key: rootKey } = await createRootKey(new RootKeyStore(redis), {});
  const socket = connect({ port: node.port, host: '127.0.0.1' });
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  const request = (apiId: string) =>
    `GET /v1/apis.getApi?apiId=${apiId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${rootKey}\r\n\r\n`;
  const answers = () => received.split('HTTP/1.1 ').length - 1;
  const answersReach = (count: number) =>
    eventually(() => answers() >= count || closed, {
      timeoutMs: 4_000,
      intervalMs: 10,
      onTimeout: 'return',
    });
  socket.write(request('api_warm'));
  await answersReach(1);
  expect(answers()).toBe(1);
  socket.write(request('api_in_flight'));
  await sleep(50);
  const exited = node.stop('SIGTERM');
  await answersReach(2);
  expect(answers()).toBe(2);
  expect(received.split('HTTP/1.1 ')[2]).toMatch(/^404 /);
  // The next request on the same connection.
  await sleep(500);
  if (!closed) socket.write(request('api_after_sigterm'));
  await answersReach(3);
  socket.destroy();
  expect(answers()).toBe(2);
  const code = await exitWithin(exited);
  expect(code).toBe(0);
}, 60_000);
