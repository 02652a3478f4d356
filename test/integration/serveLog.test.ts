import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keywardProcess, type KeywardProcess } from '../support/keywardProcess';
import { startRedis, type TestRedis } from '../support/redisServer';

/**
 * `keyward serve` writes its log in buffered chunks (src/logger.ts): a line still reaches stdout
 * on its own at low traffic, without waiting for the buffer to fill, and whatever is buffered when
 * the node stops is written before it exits.
 */
let redis: TestRedis;
let node: KeywardProcess;
let dir: string;
let logFile: string;

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'keyward-serve-log-'));
  logFile = join(dir, 'node.log');
  node = await keywardProcess({
    env: { KEYWARD_REDIS_URL: redis.url, LOG_LEVEL: 'info' },
    logFile,
  });
  await node.start();
}, 30_000);

afterAll(async () => {
  await node?.dispose();
  await redis?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const lines = () =>
  readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('one request at low traffic shows up in the log without more traffic behind it', async () => {
  const response = await fetch(`${node.url}/v1/liveness`);
  const requestId = response.headers.get('x-request-id');
  let seen = false;
  for (let attempt = 0; attempt < 100 && !seen; attempt++) {
    seen = lines().some((line) => line.requestId === requestId && line.msg === 'request');
    if (!seen) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(seen).toBe(true);
});

test('a burst of several chunks arrives whole: every line once, none torn, in answer order', async () => {
  const ids: (string | null)[] = [];
  // About 170 characters a line: 200 lines make two full 16 KiB chunks and a remainder.
  for (let i = 0; i < 200; i++) {
    ids.push((await fetch(`${node.url}/v1/liveness`)).headers.get('x-request-id'));
  }
  let logged: unknown[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    // lines() parses every line: a torn one would throw here.
    logged = lines()
      .map((entry) => entry.requestId)
      .filter((id) => ids.includes(id as string));
    if (logged.length >= ids.length) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(logged).toEqual(ids);
});

test('what is buffered when the node stops is written before it exits', async () => {
  const ids: (string | null)[] = [];
  for (let i = 0; i < 20; i++) {
    ids.push((await fetch(`${node.url}/v1/liveness`)).headers.get('x-request-id'));
  }
  expect(await node.stop('SIGTERM')).toBe(0);
  const logged = new Set(lines().map((line) => line.requestId));
  expect(ids.filter((id) => !logged.has(id))).toEqual([]);
  expect(lines().at(-1)?.msg).toMatch(/stopping/);
});
