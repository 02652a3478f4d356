import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './redisServer';

/**
 * A keyward node as its own process (`node dist/cli.js serve`), so that tests can SIGKILL it in
 * the middle of a write or SIGTERM it with requests in flight. `make test` builds dist/ first;
 * while developing, run `npm run build`.
 */
export interface ChildNode {
  url: string;
  port: number;
  /** The running process, or undefined after it exited. */
  readonly process: ChildProcess | undefined;
  /** Starts (again) on the same port, and waits until liveness answers 200. */
  start(): Promise<void>;
  /** Sends a signal; resolves with the exit code (null when killed by a signal). */
  signal(signal: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL if still running. */
  dispose(): Promise<void>;
  /** What the process wrote on stderr (start-up errors). */
  stderr(): string;
}

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

const children = new Set<ChildProcess>();
// A test that dies must not leave nodes behind.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

async function waitForLiveness(
  url: string,
  child: ChildProcess,
  deadlineMs: number,
  stderr: () => string,
) {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `keyward node exited during start-up (${child.exitCode ?? child.signalCode}): ${stderr()}`,
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
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startChildNode(env: Record<string, string>): Promise<ChildNode> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let errors = '';
  const exited = new Map<ChildProcess, Promise<number | null>>();

  const node: ChildNode = {
    url,
    port,
    get process() {
      return child;
    },
    async start() {
      if (child) throw new Error('already running');
      const started = spawn(process.execPath, [CLI, 'serve'], {
        env: {
          PATH: process.env.PATH ?? '',
          KEYWARD_PORT: String(port),
          KEYWARD_HOST: '127.0.0.1',
          LOG_LEVEL: 'silent',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child = started;
      children.add(started);
      started.stderr?.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      exited.set(
        started,
        new Promise((resolve) =>
          started.once('exit', (code) => {
            children.delete(started);
            if (child === started) child = undefined;
            resolve(code);
          }),
        ),
      );
      await waitForLiveness(url, started, 15_000, () => errors);
    },
    async signal(signal) {
      const running = child;
      if (!running) throw new Error('not running');
      running.kill(signal);
      return exited.get(running)!;
    },
    async dispose() {
      const running = child;
      if (running) {
        running.kill('SIGKILL');
        await exited.get(running);
      }
    },
    stderr: () => errors,
  };
  return node;
}
