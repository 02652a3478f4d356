import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redisServer';

/**
 * A redis-server configured as the primary is in production (AOF on, `appendfsync everysec`,
 * no RDB snapshots) that a test can crash with SIGKILL and start again on the same port and data
 * directory: what survives is exactly what Redis had written to its append-only file.
 */
export interface CrashableRedis {
  url: string;
  port: number;
  /** Sends the signal and waits for the process to be gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts again on the same port and directory; resolves once it answers PING. */
  start(): Promise<void>;
  dispose(): Promise<void>;
}

const processes = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of processes) child.kill('SIGKILL');
});

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // -LOADING while the AOF is replayed: not ready yet.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

export async function startCrashableRedis(): Promise<CrashableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-crash-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child) throw new Error('already running');
    const started = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    );
    child = started;
    processes.add(started);
    started.once('exit', () => {
      processes.delete(started);
      if (child === started) child = undefined;
    });
    const begun = Date.now();
    while (!(await ping(port))) {
      if (Date.now() - begun > 15_000) throw new Error(`redis-server on ${port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const kill = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(signal);
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start,
    dispose: async () => {
      await kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
