/**
 * One clickhouse-server for `make bench-clickhouse` (Debian's clickhouse-server package, 18.16),
 * started through procs.ts so that it is stopped with the run: its HTTP and native ports free
 * ones of 127.0.0.1, its config, users and data in `dir` (emptied first, removed by `dispose`),
 * its logs (clickhouse-server.log, clickhouse-error.log) beside `logFile`. The config and users
 * are test/support/clickhouseConfig.ts's, as the test suite's server (started outside procs.ts):
 * `keyward` (password `secret`, may write) and `readonly` (profile `readonly=2`, what
 * KEYWARD_CLICKHOUSE_READER_URL needs).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ClickHouseClient } from '../src/analytics/clickhouse/client';
import { parseClickHouseUrl } from '../src/analytics/clickhouse/url';
import { freePorts, isRunning, start, stop, type Child } from './procs';
import { HOST, sleep } from './setup';
import { CLICKHOUSE_PASSWORD, serverConfig, USERS_CONFIG } from '../test/support/clickhouseConfig';

export { CLICKHOUSE_PASSWORD };

export interface BenchClickHouse {
  child: Child;
  httpPort: number;
  /** A URL of `database` as `user` (keyward: writes; readonly: v2's SQL analytics). */
  url(database: string, user?: 'keyward' | 'readonly'): string;
  /** A client of `database` as user keyward (closed by `dispose`). */
  client(database: string, timeoutMs?: number): ClickHouseClient;
  /** Stops the server and removes its folder. */
  dispose(): Promise<void>;
}

async function ping(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://${HOST}:${port}/ping`, {
      signal: AbortSignal.timeout(1000),
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Moves every thread of a running server to the idle scheduling class (`idle`: it runs only on
 * CPU nobody else wants, as if it had a machine of its own) or back (`normal`). Threads it
 * creates afterwards inherit the class of the thread that creates them.
 */
export function scheduleClickHouse(pid: number | undefined, policy: 'idle' | 'normal'): void {
  if (pid === undefined) throw new Error('clickhouse-server has no pid');
  execFileSync('chrt', ['-a', policy === 'idle' ? '--idle' : '--other', '-p', '0', String(pid)]);
}

/** The server's version as it answers `SELECT version()`. */
export async function clickhouseVersion(client: ClickHouseClient): Promise<string> {
  return (await client.exec('SELECT version()')).trim();
}

export async function startClickHouse(dir: string, logFile: string): Promise<BenchClickHouse> {
  let binary: string;
  try {
    binary = execFileSync('sh', ['-c', 'command -v clickhouse-server'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    throw new Error('clickhouse-server is not on PATH (make clickhouse)');
  }
  rmSync(dir, { recursive: true, force: true });
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) {
    mkdirSync(join(dir, sub), { recursive: true });
  }
  const [httpPort, tcpPort] = (await freePorts(2)) as [number, number];
  // The server's own logs beside `logFile`, not in `dir`: they outlive the data.
  writeFileSync(
    join(dir, 'config.xml'),
    serverConfig({ dir, logDir: dirname(logFile), httpPort, tcpPort }),
  );
  writeFileSync(join(dir, 'users.xml'), USERS_CONFIG);
  const child = start('clickhouse-server', binary, [`--config-file=${join(dir, 'config.xml')}`], {
    cwd: dir,
    logFile,
  });
  const began = Date.now();
  while (!(await ping(httpPort))) {
    if (!isRunning(child)) throw new Error(`clickhouse-server exited at start; see ${logFile}`);
    if (Date.now() - began > 30_000) throw new Error('clickhouse-server did not start in 30 s');
    await sleep(50);
  }
  const clients: ClickHouseClient[] = [];
  const url = (database: string, user: 'keyward' | 'readonly' = 'keyward') =>
    `http://${user}:${CLICKHOUSE_PASSWORD}@${HOST}:${httpPort}/${database}`;
  return {
    child,
    httpPort,
    url,
    client(database, timeoutMs = 120_000) {
      const created = new ClickHouseClient(parseClickHouseUrl(url(database)), timeoutMs);
      clients.push(created);
      return created;
    },
    async dispose() {
      for (const c of clients) c.close();
      await stop(child, 10_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
