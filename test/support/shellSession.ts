import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * One bash process that runs scripts one after the other, so that what a script exports is
 * there for the next one, as in a terminal.
 */
export interface ShellSession {
  /** Runs `script`; resolves with what it printed (trailing newlines dropped) and its status. */
  run(
    script: string,
    timeoutMs?: number,
  ): Promise<{ stdout: string; stderr: string; status: number }>;
  close(): Promise<void>;
}

export function shellSession(env: Record<string, string>): ShellSession {
  const bash: ChildProcessWithoutNullStreams = spawn('bash', ['--noprofile', '--norc'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  let waiting: (() => void) | undefined;
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    waiting?.();
  });
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => bash.once('exit', () => resolve()));
  let count = 0;
  return {
    async run(script, timeoutMs = 20_000) {
      const marker = `<<<walkthrough step ${++count} done`;
      stdout = '';
      stderr = '';
      bash.stdin.write(`${script}\nprintf '\\n${marker} %s>>>\\n' "$?"\n`);
      const ending = new RegExp(`\\n${marker} (\\d+)>>>\\n`);
      const match = await new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting = undefined;
          reject(new Error(`the step did not finish in ${timeoutMs} ms; printed: ${stdout}`));
        }, timeoutMs);
        const check = () => {
          const found = ending.exec(stdout);
          if (!found) return;
          clearTimeout(timer);
          waiting = undefined;
          resolve(found);
        };
        waiting = check;
        check();
      });
      return {
        stdout: stdout.slice(0, match.index).replace(/\n+$/, ''),
        stderr,
        status: Number(match[1]),
      };
    },
    async close() {
      bash.stdin.end();
      const timer = setTimeout(() => bash.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}
