import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './redisServer';
import { sleep } from './helpers';

/**
 * A keyward node as the operator runs it: `node dist/cli.js serve` in a process of its own, so
 * that tests can SIGKILL it in the middle of a write, SIGTERM it with requests in flight, or put
 * it behind a load balancer on a port that stays the same across restarts. Its output goes to
 * `logFile` when one is given; otherwise stderr is kept for `output()` (start-up errors) and the
 * node logs nothing unless `env` sets LOG_LEVEL. `make test` builds dist/ first; while
 * developing, run `npm run build`.
 */
export interface KeywardProcess {
  name: string;
  url: string;
  port: number;
  running(): boolean;
  /** Starts (again) on the same port and resolves once GET /v1/liveness answers 200. */
  start(): Promise<void>;
  /** Sends `signal` and resolves with the exit code (null when a signal ended the process). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL when still running. */
  dispose(): Promise<void>;
  /** What the process wrote on stderr, when it has no log file. */
  output(): string;
  /** The process's stdout, when started with `stdout: 'pipe'` (paused until the test reads it). */
  stdout(): Readable | null;
}

export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

/** Preloaded into every node: a schema compiled by one node is not compiled again by the next. */
const AJV_DISK_CACHE = join(__dirname, 'ajvDiskCache.js');

const children = new Set<ChildProcess>();
// A test that dies must not leave nodes behind.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

async function waitForLiveness(
  url: string,
  child: ChildProcess,
  deadlineMs: number,
  output: () => string,
) {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `keyward node at ${url} exited during start-up (${child.exitCode ?? child.signalCode}): ${output()}`,
      );
    }
    try {
      const response = await fetch(`${url}/v1/liveness`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > deadlineMs) throw new Error(`keyward node at ${url} did not start`);
    await sleep(25);
  }
}

export async function keywardProcess(options: {
  name?: string;
  env: Record<string, string>;
  logFile?: string;
  /** Keep stdout as a pipe for the test to read (or not read), instead of a log file. */
  stdout?: 'pipe';
  /** Another build's cli.js (a previous release, test/support/previousRelease.ts). */
  cli?: string;
}): Promise<KeywardProcess> {
  const cli = options.cli ?? CLI;
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const name = options.name ?? `node on ${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  let errors = '';

  return {
    name,
    url,
    port,
    running: () => child !== undefined,
    async start() {
      if (child) throw new Error(`${name} is already running`);
      const log = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
      const started = spawn(process.execPath, ['-r', AJV_DISK_CACHE, cli, 'serve'], {
        env: {
          PATH: process.env.PATH ?? '',
          KEYWARD_PORT: String(port),
          KEYWARD_HOST: '127.0.0.1',
          LOG_LEVEL: 'silent',
          ...options.env,
        },
        stdio:
          log !== undefined
            ? ['ignore', log, log]
            : ['ignore', options.stdout === 'pipe' ? 'pipe' : 'ignore', 'pipe'],
      });
      started.stdout?.pause();
      if (log !== undefined) closeSync(log);
      started.stderr?.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      child = started;
      children.add(started);
      exited = new Promise((resolve) =>
        started.once('exit', (code) => {
          children.delete(started);
          if (child === started) child = undefined;
          resolve(code);
        }),
      );
      await waitForLiveness(url, started, 20_000, () => errors);
    },
    async stop(signal = 'SIGTERM') {
      if (!child) throw new Error(`${name} is not running`);
      child.kill(signal);
      return exited;
    },
    async dispose() {
      if (child) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    output: () => errors,
    stdout: () => child?.stdout ?? null,
  };
}
