/**
 * One clickhouse-server for `make bench-clickhouse` (Debian's clickhouse-server package, 18.16),
 * started through procs.ts so that it is stopped with the run: its HTTP and native ports free
 * ones of 127.0.0.1, its config, users and data in `dir` (emptied first, removed by `dispose`),
 * its logs (clickhouse-server.log, clickhouse-error.log) beside `logFile`. The config and users
 * are those of test/support/clickhouseServer.ts (which starts its server outside procs.ts):
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

export const CLICKHOUSE_PASSWORD = 'secret';

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

function config(dir: string, logDir: string, httpPort: number, tcpPort: number): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${logDir}/clickhouse-server.log</log><errorlog>${logDir}/clickhouse-error.log</errorlog></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>${HOST}</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>5368709120</mark_cache_size>
  <mlock_executable>false</mlock_executable>
  <max_concurrent_queries>50</max_concurrent_queries>
</yandex>
`;
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>1000000000</max_memory_usage></default>
    <readonly><readonly>2</readonly></readonly>
  </profiles>
  <users>
    <keyward>
      <password>${CLICKHOUSE_PASSWORD}</password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </keyward>
    <readonly>
      <password>${CLICKHOUSE_PASSWORD}</password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>readonly</profile>
      <quota>default</quota>
    </readonly>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default></default></quotas>
</yandex>
`;

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
  writeFileSync(join(dir, 'config.xml'), config(dir, dirname(logFile), httpPort, tcpPort));
  writeFileSync(join(dir, 'users.xml'), USERS);
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
