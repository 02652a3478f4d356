import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './freePort';
import { sleep } from './helpers';

export { freePort };

/** One Redis the tests own: started on a free port, stopped (and restartable) by the test. */
export interface TestRedis {
  url: string;
  port: number;
  /** `unix:///…/redis.sock`: the same server over a unix socket (local processes only). */
  socketUrl?: string;
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

export async function waitForPing(port: number, deadlineMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await pingOnce(port))) {
    if (Date.now() - started > deadlineMs) throw new Error(`redis-server on ${port} did not start`);
    await sleep(25);
  }
}

/** Whether a process the test started has gone: exited, or killed by a signal. */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Signals a process the test started and waits until it has exited. */
export async function stopProcess(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (hasExited(child)) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

const run = promisify(execFile);

/** One redis-cli command against 127.0.0.1:`port`, its output trimmed. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  return stdout.trim();
}

const processes = new Set<ChildProcess>();
// A test that dies still must not leave redis-server behind.
process.on('exit', () => {
  for (const child of processes) child.kill('SIGKILL');
});

/**
 * A redis-server process on 127.0.0.1:`port` with its files in `dir` and no snapshots, plus the
 * `extra` arguments; killed if the test process exits while it still runs. Shared by the single
 * servers here and the cluster of redisCluster.ts.
 *
 * A master starts a replica's full sync at once: by default it waits 5 s
 * (repl-diskless-sync-delay) for more replicas to share the transfer, which every cluster and
 * Sentinel group with replicas paid on start-up, and again whenever a replica resynced.
 */
export function spawnRedisServer(
  port: number,
  dir: string,
  extra: readonly string[],
): ChildProcess {
  const child = spawn(
    redisServerBinary(),
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--repl-diskless-sync-delay',
      '0',
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  processes.add(child);
  child.once('exit', () => processes.delete(child));
  return child;
}

/**
 * A Redis Sentinel on 127.0.0.1:`port` watching `masterName` at `masterPort` (quorum 2), with its
 * config file in `dir` (a Sentinel rewrites its file as it learns). Killed with the test process.
 */
export function spawnSentinel(
  port: number,
  dir: string,
  masterName: string,
  masterPort: number,
  downAfterMs: number,
): ChildProcess {
  const conf = join(dir, `sentinel-${port}.conf`);
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      // Long enough that a promotion on a busy machine is not abandoned halfway, which leaves
      // a second master until the Sentinels notice it (seconds later).
      `sentinel failover-timeout ${masterName} ${Math.max(downAfterMs * 4, 10_000)}`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n'),
  );
  return spawnSentinelFromFile(conf);
}

/**
 * A Redis Sentinel from a configuration file the caller wrote (it rewrites that file as it
 * learns). Killed with the test process.
 */
export function spawnSentinelFromFile(conf: string): ChildProcess {
  const child = spawn(redisServerBinary(), [conf, '--sentinel'], { stdio: 'ignore' });
  processes.add(child);
  child.once('exit', () => processes.delete(child));
  return child;
}

export interface StartRedisOptions {
  /** Keep an append-only file, to test restarts that must lose nothing. */
  appendOnly?: boolean;
}

async function startLocalRedis(options: StartRedisOptions): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawnRedisServer(port, dir, [
      '--appendonly',
      options.appendOnly ? 'yes' : 'no',
      '--unixsocket',
      join(dir, 'redis.sock'),
      '--unixsocketperm',
      '700',
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
    ]);
    await waitForPing(port);
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (child) await stopProcess(child, signal);
  };
  const stop = () => kill('SIGTERM');
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    socketUrl: `unix://${join(dir, 'redis.sock')}`,
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

/** Data directory inside the container; the stock image and the locally built one both have it. */
const CONTAINER_DATA_DIR = '/data';

/**
 * Redis from a container, for machines with a Docker engine (KEYWARD_TEST_REDIS=containers).
 * KEYWARD_TEST_REDIS_IMAGE picks the image (default redis:7-alpine; it must have `redis-server`
 * on PATH and a /data directory). With KEYWARD_TEST_REDIS_NETWORK=host the container shares the
 * host's network and listens on a free port given as `--port`, since host networking maps no
 * ports; otherwise the container's 6379 is bound to a fixed free host port. Either way the port
 * stays the same across stop/start/restart, and the container (with its data) is only removed by
 * `dispose`.
 */
async function startContainerRedis(options: StartRedisOptions): Promise<TestRedis> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  const image = process.env.KEYWARD_TEST_REDIS_IMAGE || 'redis:7-alpine';
  const hostNetwork = process.env.KEYWARD_TEST_REDIS_NETWORK === 'host';
  const port = await freePort();
  const args = [
    'redis-server',
    ...(hostNetwork ? ['--port', String(port), '--bind', '127.0.0.1'] : []),
    '--dir',
    CONTAINER_DATA_DIR,
    '--save',
    '',
    '--appendonly',
    options.appendOnly ? 'yes' : 'no',
    '--loglevel',
    'notice',
  ];
  let request = new GenericContainer(image)
    .withCommand(args)
    .withStartupTimeout(60_000)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'));
  request = hostNetwork
    ? request.withNetworkMode('host')
    : request.withExposedPorts({ container: 6379, host: port });
  const container = await request.start();
  const host = hostNetwork ? '127.0.0.1' : container.getHost();
  const client = await getContainerRuntimeClient();
  const handle = client.container.getById(container.getId());
  const isRunning = async () => (await handle.inspect()).State.Running;
  const kill = async (signal: NodeJS.Signals) => {
    if (!(await isRunning())) return;
    await handle.kill({ signal });
    await handle.wait();
  };
  // docker stop: SIGTERM, then SIGKILL after 10 s, so an append-only file is flushed.
  const stop = async () => {
    if (await isRunning()) await handle.stop({ t: 10 });
  };
  // docker restart starts a stopped container too; testcontainers waits for the log line again.
  // The log line may match a line from before the restart (`since` has 1 s granularity): PING too.
  const start = async () => {
    await container.restart({ timeout: 10_000 });
    if (host === '127.0.0.1' || host === 'localhost') await waitForPing(port, 30_000);
  };
  return {
    url: `redis://${host}:${port}`,
    port,
    stop,
    kill,
    start,
    restart: start,
    dispose: async () => {
      await handle.remove({ force: true, v: true }).catch(() => undefined);
    },
  };
}

export function startRedis(options: StartRedisOptions = {}): Promise<TestRedis> {
  return process.env.KEYWARD_TEST_REDIS === 'containers'
    ? startContainerRedis(options)
    : startLocalRedis(options);
}
