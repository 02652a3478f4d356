import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseClient } from '../../src/analytics/clickhouse/client';
import { parseClickHouseUrl } from '../../src/analytics/clickhouse/url';
import { sleep } from './helpers';
import { freePort, hasExited, stopProcess } from './redisServer';
import { CLICKHOUSE_PASSWORD, serverConfig, USERS_CONFIG } from './clickhouseConfig';

/**
 * One clickhouse-server the tests own (Debian's clickhouse-server package, 18.16): its HTTP and
 * native ports free ones of 127.0.0.1, its config, users and data in a temporary directory.
 * Users: `keyward` (password `secret`, may write) and `readonly` (profile `readonly=2`: no writes
 * or DDL, per-query limits settable; what KEYWARD_CLICKHOUSE_READER_URL needs, docs/decisions.md).
 * Stopped and restartable like a TestRedis; `dispose` removes the directory.
 */
export interface TestClickHouse {
  httpPort: number;
  /** KEYWARD_CLICKHOUSE_URL of database `database` as user keyward. */
  url(database?: string): string;
  /** A client of `database` (default `keyward`) as user keyward; the test closes it. */
  client(database?: string): ClickHouseClient;
  /** Milliseconds from spawn to the first answered /ping. */
  startedInMs: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

export { CLICKHOUSE_PASSWORD };

function binary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v clickhouse-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'clickhouse-server is not on PATH: `make test` installs it (Debian package clickhouse-server)',
    );
  }
}

const processes = new Set<ChildProcess>();
// A test that dies still must not leave clickhouse-server behind.
process.on('exit', () => {
  for (const child of processes) child.kill('SIGKILL');
});

async function pingOnce(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/ping`, {
      signal: AbortSignal.timeout(1000),
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

export async function startClickHouse(): Promise<TestClickHouse> {
  const path = binary();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-clickhouse-'));
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(dir, sub));
  const httpPort = await freePort();
  const tcpPort = await freePort();
  writeFileSync(join(dir, 'config.xml'), serverConfig({ dir, logDir: dir, httpPort, tcpPort }));
  writeFileSync(join(dir, 'users.xml'), USERS_CONFIG);
  let child: ChildProcess | undefined;
  const clients: ClickHouseClient[] = [];

  const start = async (): Promise<number> => {
    const began = Date.now();
    const started = spawn(path, [`--config-file=${join(dir, 'config.xml')}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    started.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    processes.add(started);
    started.once('exit', () => processes.delete(started));
    child = started;
    while (!(await pingOnce(httpPort))) {
      if (hasExited(started)) {
        throw new Error(`clickhouse-server exited during start-up: ${errors.slice(-2000)}`);
      }
      if (Date.now() - began > 30_000) throw new Error('clickhouse-server did not start in 30 s');
      await sleep(25);
    }
    return Date.now() - began;
  };

  const stop = async () => {
    if (child) await stopProcess(child, 'SIGTERM');
    child = undefined;
  };

  const url = (database = 'keyward') =>
    `http://keyward:${CLICKHOUSE_PASSWORD}@127.0.0.1:${httpPort}/${database}`;
  const startedInMs = await start();
  return {
    httpPort,
    url,
    client(database) {
      const created = new ClickHouseClient(parseClickHouseUrl(url(database)), 10_000);
      clients.push(created);
      return created;
    },
    startedInMs,
    stop,
    async start() {
      if (child) throw new Error('clickhouse-server is already running');
      await start();
    },
    async dispose() {
      for (const created of clients) created.close();
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
