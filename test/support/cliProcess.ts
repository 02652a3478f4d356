import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli';
import { Runtime } from '../../src/commands/runtime';

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
  return parseJsonLine<T>(args, await runCli([...args, '--json'], env));
}

function parseJsonLine<T>(args: readonly string[], result: CliResult): T {
  if (result.code !== 0) {
    throw new Error(`keyward ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  const lines = result.stdout.trimEnd().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line of JSON, got:\n${result.stdout}`);
  return JSON.parse(lines[0] as string) as T;
}

/** Where one in-process command's output goes; undefined outside such a command. */
const captured = new AsyncLocalStorage<{ stdout: string; stderr: string }>();
let inFlight = 0;
let restore: (() => void) | undefined;

type WriteCallback = (error?: Error | null) => void;

/**
 * Routes process.stdout and process.stderr into the output of the command whose async context
 * writes (commands run concurrently), and everything else to the real stream; undone once the
 * last command running has finished, so that no other file sees the streams patched.
 */
function routeOutput(): void {
  const streams = [
    [process.stdout, 'stdout'],
    [process.stderr, 'stderr'],
  ] as const;
  const originals = streams.map(([stream, name]) => {
    const original = stream.write;
    const write = (
      chunk: Uint8Array | string,
      encodingOrCallback?: BufferEncoding | WriteCallback,
      callback?: WriteCallback,
    ): boolean => {
      const output = captured.getStore();
      if (output === undefined) {
        const encoding = typeof encodingOrCallback === 'function' ? undefined : encodingOrCallback;
        const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
        return original.call(stream, chunk, encoding, done);
      }
      output[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      (typeof encodingOrCallback === 'function' ? encodingOrCallback : callback)?.();
      return true;
    };
    stream.write = write;
    return () => {
      stream.write = original;
    };
  });
  restore = () => originals.forEach((undo) => undo());
}

/**
 * A command run in this process through the same `main` as `dist/cli.js`, with only `env` as its
 * environment: its exit code and output, as runCli gives them, without a node process's start-up
 * (half a second each on a busy machine). For what a command does; runCli for what the process
 * boundary does (stdin, the exit code a shell sees, `serve`).
 */
export async function runCommand(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CliResult> {
  if (inFlight++ === 0) routeOutput();
  const output = { stdout: '', stderr: '' };
  try {
    const code = await captured.run(output, () => main(args, new Runtime({ ...env })));
    return { code, ...output };
  } finally {
    if (--inFlight === 0) {
      restore?.();
      restore = undefined;
    }
  }
}

/** runJson's parse of one JSON line, for a command run in this process (runCommand). */
export async function runCommandJson<T>(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<T> {
  return parseJsonLine<T>(args, await runCommand([...args, '--json'], env));
}
