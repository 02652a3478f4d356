import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeywardProcess } from '../support/keywardProcess';
import { startProcessTopology, type ProcessTopology } from '../support/topology';
import { eventually } from '../support/helpers';

/**
 * `keyward serve` writes its log in buffered chunks (src/logger.ts): a line still reaches stdout
 * on its own at low traffic, without waiting for the buffer to fill, and whatever is buffered when
 * the node stops is written before it exits.
 */
let topology: ProcessTopology;
let node: KeywardProcess;
let dir: string;
let logFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyward-serve-log-'));
  logFile = join(dir, 'node.log');
  topology = await startProcessTopology({
    nodes: 1,
    localRedis: false,
    logFile: () => logFile,
    env: { LOG_LEVEL: 'info' },
  });
  node = topology.nodes[0]!;
}, 30_000);

afterAll(async () => {
  await topology?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const lines = () => parseLines(readFileSync(logFile, 'utf8'));

/** JSON lines; a torn line throws. */
const parseLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * `count` liveness requests, each answered 200; their request ids. One after another by default,
 * so the ids are in answer order; `streams` sends that many one-after-another sequences at once,
 * for the tests that only count what was answered and logged (the ids are then in no order).
 */
async function livenessIds(url: string, count: number, streams = 1): Promise<string[]> {
  const ids: string[] = [];
  let sent = 0;
  // node:http on kept-alive connections, one a stream: a third of fetch's CPU a request, and
  // these thousands of requests are all the test process does.
  const agent = new Agent({ keepAlive: true, maxSockets: streams });
  const liveness = () =>
    new Promise<{ status: number; requestId: string }>((resolve, reject) => {
      const req = request(`${url}/v1/liveness`, { agent, timeout: 2_000 }, (response) => {
        response.resume();
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            requestId: response.headers['x-request-id'] as string,
          }),
        );
      });
      req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
      req.on('error', reject);
      req.end();
    });
  const sequence = async () => {
    while (sent < count) {
      sent++;
      const { status, requestId } = await liveness();
      expect(status).toBe(200);
      ids.push(requestId);
    }
  };
  try {
    await Promise.all(Array.from({ length: streams }, sequence));
  } finally {
    agent.destroy();
  }
  return ids;
}

/** Four requests at a time: the node answers 3,000 in a fraction of the time it does one by one. */
const STREAMS = 4;

/**
 * The log reaches its file or pipe within 100 ms: waited for up to 5 s, then the test's own
 * `expect` shows what arrived.
 */
const logWait = { intervalMs: 50, timeoutMs: 5_000, onTimeout: 'return' } as const;

test('one request at low traffic shows up in the log without more traffic behind it', async () => {
  const [requestId] = await livenessIds(node.url, 1);
  const seen = () => lines().some((line) => line.requestId === requestId && line.msg === 'request');
  await eventually(seen, logWait);
  expect(seen()).toBe(true);
});

test('a burst of several chunks arrives whole: every line once, none torn, in answer order', async () => {
  // About 170 characters a line: 1,000 lines make two full 64 KiB chunks and a remainder.
  const ids = await livenessIds(node.url, 1000);
  const logged = () =>
    lines()
      .map((entry) => entry.requestId)
      .filter((id) => ids.includes(id as string));
  await eventually(() => logged().length >= ids.length, logWait);
  expect(logged()).toEqual(ids);
});

test('what is buffered when the node stops is written before it exits', async () => {
  const ids = await livenessIds(node.url, 20);
  expect(await node.stop('SIGTERM')).toBe(0);
  const logged = new Set(lines().map((line) => line.requestId));
  expect(ids.filter((id) => !logged.has(id))).toEqual([]);
  expect(lines().at(-1)?.msg).toMatch(/stopping/);
});

describe('a node whose stdout is not read', () => {
  let quiet: KeywardProcess;
  beforeAll(async () => {
    quiet = await topology.addNode({ stdout: 'pipe' });
  }, 30_000);
  afterAll(async () => {
    await quiet?.dispose();
  });

  test('keeps answering, and writes every line once its stdout is read again', async () => {
    // 3,000 access-log lines are about 500 KB: several times what a pipe and the reader's
    // buffer hold, so a node that waited on its log would stop answering part way.
    const ids = await livenessIds(quiet.url, 3000, STREAMS);
    expect(new Set(ids).size).toBe(3000);
    const stdout = quiet.stdout();
    if (!stdout) throw new Error('no stdout pipe');
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    stdout.resume();
    const missing = () => {
      const logged = new Set(parseLines(text).map((line) => line.requestId));
      return ids.filter((id) => !logged.has(id)).length;
    };
    await eventually(() => missing() === 0, logWait);
    expect(missing()).toBe(0);
  }, 60_000);

  test('stops on SIGTERM while its log cannot be written', async () => {
    quiet.stdout()?.pause();
    await livenessIds(quiet.url, 3000, STREAMS);
    // A node that waited for its log forever would hang here until jest gives up.
    expect(await quiet.stop('SIGTERM')).toBe(0);
  }, 60_000);
});
