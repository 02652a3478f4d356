import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

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
