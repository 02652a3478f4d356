/**
 * The configuration of a throwaway clickhouse-server (Debian's 18.16): what the test suite's
 * server (clickhouseServer.ts) and `make bench-clickhouse`'s (bench/clickhouseServer.ts) both run.
 * Two users: `keyward` (may write) and `readonly` (profile `readonly=2`, what
 * KEYWARD_CLICKHOUSE_READER_URL needs), both with CLICKHOUSE_PASSWORD, on 127.0.0.1 only.
 */

export const CLICKHOUSE_PASSWORD = 'secret';

export interface ServerFiles {
  /** Its data, tmp, user_files and format_schemas folders. */
  dir: string;
  /** Where clickhouse-server.log and clickhouse-error.log go. */
  logDir: string;
  httpPort: number;
  tcpPort: number;
}

export function serverConfig({ dir, logDir, httpPort, tcpPort }: ServerFiles): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${logDir}/clickhouse-server.log</log><errorlog>${logDir}/clickhouse-error.log</errorlog></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
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

export const USERS_CONFIG = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>1000000000</max_memory_usage></default>
    <readonly><readonly>2</readonly></readonly>
  </profiles>
  <users>
    <keyward>
      <password>${CLICKHOUSE_PASSWORD}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </keyward>
    <readonly>
      <password>${CLICKHOUSE_PASSWORD}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
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
