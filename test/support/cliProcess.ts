import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './helpers';

/**
 * The command line as an operator runs it: `node dist/cli.js …` in a process of its own, so exit
 * codes, stdout and stderr are the real ones. `make test` builds dist/ first; while developing,
 * run `npx tsc -p tsconfig.build.json`.
 */
export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
}

export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  stdin?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      // Only what the test gives: a KEYWARD_* variable of the machine must not leak in.
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code === null) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
    else child.stdin?.end();
  });
}

/** Runs and parses the one JSON line that `--json` prints, failing loudly on anything else. */
export async function runJson<T>(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<T> {
  const result = await runCli([...args, '--json'], env);
  if (result.code !== 0) {
    throw new Error(`keyward ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  const lines = result.stdout.trimEnd().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line of JSON, got:\n${result.stdout}`);
  return JSON.parse(lines[0] as string) as T;
}

export interface ServeProcess {
  url: string;
  /** SIGTERM, then the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

const served = new Set<ChildProcess>();
// A test that dies must not leave a node behind.
process.on('exit', () => {
  for (const child of served) child.kill('SIGKILL');
});

/** `keyward serve` on the given port, once its liveness answers 200. */
export async function startServe(
  env: Readonly<Record<string, string>>,
  port: number,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      KEYWARD_HOST: '127.0.0.1',
      KEYWARD_PORT: String(port),
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: 'ignore',
  });
  served.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      served.delete(child);
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  for (const started = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`keyward serve exited with ${child.exitCode}`);
    const status = await fetch(`${url}/v1/liveness`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return { url, stop };
    if (Date.now() - started > 15_000) {
      await stop();
      throw new Error('keyward serve did not start');
    }
    await sleep(50);
  }
}
