/**
 * Child processes of the benchmark: every one is registered here so that a normal end, an error,
 * SIGINT/SIGTERM and even a plain `process.exit` stop all of them. Their pids are also written to
 * a file, which scripts/bench.sh reads as a last resort if this process itself is killed hard.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
  /** Where its stdout and stderr go (a file), for error messages. */
  logFile: string;
}

const children = new Set<Child>();
let pidFile: string | undefined;

function writePidFile(): void {
  if (!pidFile) return;
  writeFileSync(pidFile, [...children].map((c) => `${c.pid}\n`).join(''));
}

export function setPidFile(path: string): void {
  pidFile = path;
  writePidFile();
}

/** Starts `command` with stdout and stderr appended to `logFile`. */
export function start(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; logFile: string; pipeStdout?: boolean },
): Child {
  const fd = openSync(options.logFile, 'a');
  const spawnOptions: SpawnOptions = {
    env: options.env ?? process.env,
    stdio: ['ignore', options.pipeStdout ? 'pipe' : fd, fd],
  };
  if (options.cwd !== undefined) spawnOptions.cwd = options.cwd;
  const proc = spawn(command, args, spawnOptions);
  closeSync(fd);
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const child: Child = {
    name,
    proc,
    pid: proc.pid,
    logFile: options.logFile,
    exited: new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        children.delete(child);
        writePidFile();
        resolve(code ?? (signal ? -1 : null));
      });
      proc.once('error', () => {
        children.delete(child);
        writePidFile();
        resolve(-1);
      });
    }),
  };
  children.add(child);
  writePidFile();
  return child;
}

/** Every child still running, in the order they were started. */
export function running(): Child[] {
  return [...children];
}

export function isRunning(child: Child): boolean {
  return children.has(child);
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(child: Child, graceMs = 3000): Promise<void> {
  if (!children.has(child)) return;
  try {
    child.proc.kill('SIGTERM');
  } catch {
    /* already gone */
  }
  const timer = setTimeout(() => {
    try {
      child.proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }, graceMs);
  await child.exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].reverse().map((c) => stop(c)));
}

/** Synchronous last resort (process 'exit'): SIGKILL whatever is still running. */
function killAllNow(): void {
  for (const child of children) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.clear();
  writePidFile();
}

let installed = false;
export function installCleanup(onSignal: () => Promise<void>): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping every process it started\n`);
      onSignal()
        .catch(() => undefined)
        .finally(() => process.exit(130));
    });
  }
}

/** `count` distinct free TCP ports on 127.0.0.1 (all held open at once, then released). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Waits for `READY <port>` on a child's piped stdout. */
export function readyPort(child: Child, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = child.proc.stdout;
    if (!out) return reject(new Error(`${child.name}: stdout is not piped`));
    let seen = '';
    const timer = setTimeout(
      () =>
        reject(new Error(`${child.name}: not ready after ${timeoutMs} ms; see ${child.logFile}`)),
      timeoutMs,
    );
    out.setEncoding('utf8');
    out.on('data', (data: string) => {
      seen += data;
      const match = /READY (\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        out.removeAllListeners('data');
        out.resume();
        resolve(Number(match[1]));
      }
    });
    void child.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${child.name} exited (${code}) before it was ready; see ${child.logFile}`));
    });
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const { user, system } = userSystemSeconds(pid);
  return user + system;
}

/**
 * CPU seconds a process has used so far, user and kernel apart (all its threads, from /proc):
 * where a server's time goes, its own code or the system calls it makes.
 */
export function userSystemSeconds(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12] are utime and stime (the 14th and 15th fields of the full line).
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/** Resident set size of a process in bytes, from /proc. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds the whole machine has spent busy (all cores, steal included), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (
      ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100
    );
  } catch {
    return NaN;
  }
}

/**
 * Runs a driver to its end: exit 0 when `main` returns; when it throws, its error logged, every
 * child it started stopped, and exit 1.
 */
export function runDriver(main: () => Promise<void>, log: (message: string) => void): void {
  main().then(
    () => process.exit(0),
    async (error: unknown) => {
      log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      await stopAll().catch(() => undefined);
      process.exit(1);
    },
  );
}

/**
 * Writes a driver's report as `<name>.json` and `<name>.md` in `dir`, prints the markdown, and
 * says where both are.
 */
export function publishReport(
  dir: string,
  name: string,
  report: { totalSeconds: number },
  markdown: string,
  log: (message: string) => void,
): void {
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, `${name}.md`), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`done in ${report.totalSeconds.toFixed(0)} s: .run/bench/${name}.md, ${name}.json`);
}

/**
 * CPU seconds spent while slices were measured: by the measured server process, by the Redis
 * servers, by this process (the load generator) and by the whole machine, summed over every
 * slice `measure` ran.
 */
export class CpuMeter {
  server = 0;
  redis = 0;
  driver = 0;
  machine = 0;

  constructor(
    private readonly measured: Child,
    private readonly redises: readonly Child[],
  ) {}

  /** Runs one measured slice; answers what it returned and the server's CPU seconds in it. */
  async measure<T>(slice: () => Promise<T>): Promise<{ result: T; serverSeconds: number }> {
    const redisCpu = () => this.redises.reduce((sum, r) => sum + cpuSeconds(r.pid), 0);
    const redis0 = redisCpu();
    const machine0 = machineBusySeconds();
    const server0 = cpuSeconds(this.measured.pid);
    const driver0 = process.cpuUsage();
    const result = await slice();
    const driver = process.cpuUsage(driver0);
    const serverSeconds = cpuSeconds(this.measured.pid) - server0;
    this.server += serverSeconds;
    this.machine += machineBusySeconds() - machine0;
    this.redis += redisCpu() - redis0;
    this.driver += (driver.user + driver.system) / 1e6;
    return { result, serverSeconds };
  }

  /** Each share as a percentage of one core over `seconds`; `other` is the rest of the machine. */
  shares(seconds: number): {
    serverPercent: number;
    redisPercent: number;
    loadGeneratorPercent: number;
    otherPercent: number;
  } {
    const share = (s: number) => (s / Math.max(1e-9, seconds)) * 100;
    return {
      serverPercent: share(this.server),
      redisPercent: share(this.redis),
      loadGeneratorPercent: share(this.driver),
      otherPercent: Math.max(0, share(this.machine - this.server - this.driver - this.redis)),
    };
  }
}
