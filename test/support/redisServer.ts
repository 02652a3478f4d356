import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One Redis the tests own: started on a free port, stopped (and restartable) by the test. */
export interface TestRedis {
  url: string;
  port: number;
  /** Stop the server; its data directory stays for `restart`. */
  stop(): Promise<void>;
  /** Send a signal (SIGKILL: a crash) and wait until the server is gone; data stays. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Start a stopped or killed server again, on the same port and data directory. */
  start(): Promise<void>;
  /** Start again on the same port with the same data directory (AOF survives). */
  restart(): Promise<void>;
  /** Stop for good and remove the data directory. */
  dispose(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function redisServerBinary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'redis-server is not on PATH: `make test` installs it (Debian package redis-server)',
    );
  }
}

/** One PING over a raw socket: an ioredis client would leave a 2 s close timer behind. */
function pingOnce(port: number): Promise<boolean> {
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
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function waitForPing(port: number, deadlineMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await pingOnce(port))) {
    if (Date.now() - started > deadlineMs) throw new Error(`redis-server on ${port} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const processes = new Set<ChildProcess>();
// A test that dies still must not leave redis-server behind.
process.on('exit', () => {
  for (const child of processes) child.kill('SIGKILL');
});

export interface StartRedisOptions {
  /** Keep an append-only file, to test restarts that must lose nothing. */
  appendOnly?: boolean;
}

async function startLocalRedis(options: StartRedisOptions): Promise<TestRedis> {
  const binary = redisServerBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      binary,
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
        options.appendOnly ? 'yes' : 'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    );
    processes.add(child);
    await waitForPing(port);
  };
  const kill = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(signal);
    });
    processes.delete(running);
  };
  const stop = () => kill('SIGTERM');
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    kill,
    start,
    restart: async () => {
      await stop();
      await start();
    },
    dispose: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Redis from a container, for machines with a Docker engine (KEYWARD_TEST_REDIS=containers). */
async function startContainerRedis(): Promise<TestRedis> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7-alpine').start();
  const port = container.getFirstMappedPort();
  return {
    url: `redis://${container.getHost()}:${port}`,
    port,
    stop: async () => {
      await container.stop();
    },
    kill: async () => {
      await container.stop();
    },
    start: async () => {
      await container.restart();
    },
    dispose: async () => {
      await container.stop();
    },
    // Docker may map a new host port on restart; fault-injection tests run on local processes.
    restart: async () => {
      await container.restart();
    },
  };
}

export function startRedis(options: StartRedisOptions = {}): Promise<TestRedis> {
  return process.env.KEYWARD_TEST_REDIS === 'containers'
    ? startContainerRedis()
    : startLocalRedis(options);
}
