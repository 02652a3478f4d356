import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './redisServer';

/**
 * A keyward node as the operator runs it: `node dist/cli.js serve` in a process of its own, on a
 * fixed port so that a load balancer can keep naming it across restarts. Its output goes to a log
 * file. `make test` builds dist/ first; while developing, run `npm run build`.
 */
export interface KeywardProcess {
  name: string;
  url: string;
  port: number;
  running(): boolean;
  /** Starts (again) and resolves once GET /v1/liveness answers 200. */
  start(): Promise<void>;
  /** Sends `signal` and resolves with the exit code (null when a signal ended the process). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL when still running. */
  dispose(): Promise<void>;
}

export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

const children = new Set<ChildProcess>();
// A test that dies must not leave nodes behind.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForLiveness(url: string, child: ChildProcess, deadlineMs: number) {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`keyward node at ${url} exited during start-up (${child.exitCode})`);
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
  name: string;
  env: Record<string, string>;
  logFile: string;
}): Promise<KeywardProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);

  return {
    name: options.name,
    url,
    port,
    running: () => child !== undefined,
    async start() {
      if (child) throw new Error(`${options.name} is already running`);
      const log = openSync(options.logFile, 'a');
      const started = spawn(process.execPath, [CLI, 'serve'], {
        env: {
          PATH: process.env.PATH ?? '',
          KEYWARD_PORT: String(port),
          KEYWARD_HOST: '127.0.0.1',
          ...options.env,
        },
        stdio: ['ignore', log, log],
      });
      closeSync(log);
      child = started;
      children.add(started);
      exited = new Promise((resolve) =>
        started.once('exit', (code) => {
          children.delete(started);
          if (child === started) child = undefined;
          resolve(code);
        }),
      );
      await waitForLiveness(url, started, 20_000);
    },
    async stop(signal = 'SIGTERM') {
      if (!child) throw new Error(`${options.name} is not running`);
      child.kill(signal);
      return exited;
    },
    async dispose() {
      if (child) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
