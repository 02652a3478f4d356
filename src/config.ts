import { parseClickHouseUrl, ClickHouseUrlError } from './analytics/clickhouse/url';
import type { ClickHouseTarget } from './analytics/clickhouse/url';
import type { QueryLimits } from './analytics/clickhouse/reader';
import { CLIENT_IP_MODES, type ClientIpMode } from './http/clientAddress';
import { DEFAULT_AUDIT_MAX_ENTRIES } from './domain/audit';
import { parseVaultKeys, VaultConfigError, type VaultKey } from './vault/vault';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Everything a node reads from its environment, validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  /** The primary: keys, APIs, root keys, credits, rate-limit namespaces and consistent buckets. */
  redisUrl: string;
  /** When set, the primary is this Redis Cluster (seed nodes) instead of `redisUrl`. */
  redisClusterNodes?: { host: string; port: number }[];
  /**
   * When set, the primary is whichever Redis these Sentinels name as the master `name`, followed
   * when they promote another: it takes precedence over `redisUrl`.
   */
  redisSentinel?: { sentinels: { host: string; port: number }[]; name: string };
  /**
   * `replicated`: consistent verifications, credit spends and management writes are acknowledged
   * only once `minReplicas` replicas of the primary hold them (WAIT, within `waitMs`).
   */
  durability: { mode: 'local' } | { mode: 'replicated'; minReplicas: number; waitMs: number };
  /** The node-local Redis for fast buckets. */
  localRedisUrl: string;
  region: string;
  logLevel: LogLevel;
  /** Human-readable log lines instead of JSON (make run sets it when a terminal is attached). */
  logPretty: boolean;
  redisCommandTimeoutMs: number;
  /** What a verification answers when the Redis holding its bucket cannot be reached in time. */
  limiterFailure: 'closed' | 'open';
  /**
   * KEYWARD_CONSISTENT_LEASES=on: consistent buckets are spent through leases the node's region
   * takes from the primary (docs/guarantees.md, "Leases"). Off by default.
   */
  leases?: { ttlMs: number; maxShare: number };
  redisConnectTimeoutMs: number;
  cache: {
    maxEntries: number;
    ttlMs: number;
    negativeTtlMs: number;
  };
  /** Per-root-key bucket for management calls: `limit` requests, refilled each second. */
  managementLimit: number;
  /** On SIGTERM, how long to keep serving (liveness 503) before closing the listener. */
  shutdownDrainMs: number;
  /** Protects GET /metrics when set. */
  metricsToken?: string;
  /**
   * KEYWARD_VAULT_KEYS: the key-encryption keys of recoverable keys, the first sealing, all of
   * them opening. Without them, recoverable keys are refused (docs/security.md).
   */
  vaultKeys?: readonly VaultKey[];
  /** Where the `docs` link of an error envelope points; the code is appended as a fragment. */
  errorDocsUrl: string;
  maxBodyBytes: number;
  /** The most entries a workspace's audit log keeps; older ones are trimmed as new ones arrive. */
  auditMaxEntries: number;
  /**
   * KEYWARD_FAULT_HALT_AT, for tests only: the step of a write across slots at which the node
   * kills itself (src/store/faults.ts), to show that every prefix of such a write is safe.
   */
  faultHaltAt?: string;
  /** Usage analytics (docs/decisions.md, "Usage analytics"). */
  analytics: {
    enabled: boolean;
    /**
     * Whether usage counts are written to Redis (KEYWARD_ANALYTICS_COUNT_IN_REDIS): by default
     * only without ClickHouse, whose rollups the readers then read instead.
     */
    countInRedis: boolean;
    /** Where the counts go; the primary unless KEYWARD_ANALYTICS_REDIS_URL is set. */
    redisUrl?: string;
    flushMs: number;
    maxPending: number;
    /** Retention of each granularity after its bucket ends, in milliseconds. */
    retention: { minute: number; hour: number; day: number };
  };
  /**
   * KEYWARD_CLICKHOUSE_URL: when set, every verification and standalone limit is also sent as a
   * row to ClickHouse (docs/decisions.md, "Analytics in ClickHouse").
   */
  clickhouse?: ClickHouseConfig;
  /** KEYWARD_LOG_CLIENT_IP: which client address a verification's ClickHouse row keeps. */
  logClientIp: ClientIpMode;
  /** Usage webhooks (docs/webhooks.md). */
  webhooks: WebhookConfig;
}

export interface WebhookConfig {
  /** KEYWARD_WEBHOOK_ALLOW_PRIVATE=1: targets in private, loopback and link-local ranges too. */
  allowPrivate: boolean;
  /** How often a node looks for due deliveries. */
  pollMs: number;
  /** How long one delivery attempt may take. */
  timeoutMs: number;
  /** The first retry's delay; each next one doubles, up to an hour, for 24 h. */
  retryBaseMs: number;
  /** How often noticed events are queued in Redis. */
  flushMs: number;
  /** How long a node trusts its copy of a workspace's webhooks. */
  cacheMs: number;
  /** How often one node sweeps for keys within a day of expiring (key.expiring). */
  expiringSweepMs: number;
}

export interface ClickHouseConfig {
  target: ClickHouseTarget;
  /** A batch is sent once it holds this many rows, or `flushMs` after the last one. */
  batchRows: number;
  flushMs: number;
  /** Rows held in memory (waiting or unsure) before new ones are dropped and counted. */
  maxBufferedRows: number;
  /** How long one insert may take before it is abandoned (and settled later). */
  timeoutMs: number;
  /** Days the raw rows are kept; the rollups keep theirs (docs/decisions.md). */
  rawRetentionDays: number;
  /**
   * KEYWARD_CLICKHOUSE_READER_URL: the read-only user v2's SQL analytics run as (a profile with
   * readonly=2), on the same database; without it they answer 412.
   */
  reader?: ClickHouseTarget;
  /** What one analytics query may use (KEYWARD_CLICKHOUSE_QUERY_*). */
  query: QueryLimits;
}

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}: must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name}: must be between ${min} and ${max}`);
  return value;
}

function redisUrl(env: Env, name: string, fallback: string): string {
  const value = env[name] || fallback;
  if (/^rediss?:\/\//.test(value)) return value;
  // A node-local Redis is best reached over a unix socket: no TCP stack on the hot path.
  if (/^unix:\/\/\/[^?#]*[^/?#]$/.test(value)) return value;
  throw new ConfigError(
    `${name}: must be a redis:// or rediss:// URL, or unix:///absolute/path/to/redis.sock`,
  );
}

function hostPorts(env: Env, name: string): { host: string; port: number }[] | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  return raw.split(',').map((entry) => {
    const match = /^([^:\s]+):(\d{1,5})$/.exec(entry.trim());
    if (!match || Number(match[2]) > 65535) {
      throw new ConfigError(`${name}: "${entry}" is not host:port`);
    }
    return { host: match[1] as string, port: Number(match[2]) };
  });
}

function sentinel(env: Env): Config['redisSentinel'] {
  const sentinels = hostPorts(env, 'KEYWARD_REDIS_SENTINELS');
  const name = env.KEYWARD_REDIS_SENTINEL_MASTER;
  if (!sentinels && !name) return undefined;
  if (!sentinels || !name) {
    throw new ConfigError(
      'KEYWARD_REDIS_SENTINELS and KEYWARD_REDIS_SENTINEL_MASTER: set both, or neither',
    );
  }
  if (env.KEYWARD_REDIS_CLUSTER_NODES) {
    throw new ConfigError(
      'KEYWARD_REDIS_SENTINELS: a Redis Cluster (KEYWARD_REDIS_CLUSTER_NODES) fails over by itself; set one of the two',
    );
  }
  return { sentinels, name };
}

function durability(env: Env, commandTimeoutMs: number): Config['durability'] {
  const mode = env.KEYWARD_CONSISTENT_DURABILITY || 'local';
  if (mode !== 'local' && mode !== 'replicated') {
    throw new ConfigError('KEYWARD_CONSISTENT_DURABILITY: must be local or replicated');
  }
  if (mode === 'local') return { mode };
  const waitMs = integer(
    env,
    'KEYWARD_REPLICA_WAIT_MS',
    Math.floor(commandTimeoutMs / 2),
    1,
    60000,
  );
  // The write's own deadline runs while its WAIT does: a WAIT as long would time out as a lost
  // connection instead of answering how many replicas confirmed.
  if (waitMs >= commandTimeoutMs) {
    throw new ConfigError(
      `KEYWARD_REPLICA_WAIT_MS: must be below KEYWARD_REDIS_COMMAND_TIMEOUT_MS (${commandTimeoutMs})`,
    );
  }
  return {
    mode,
    minReplicas: integer(env, 'KEYWARD_MIN_REPLICAS', 1, 1, 100),
    waitMs,
  };
}

function limiterFailure(env: Env): 'closed' | 'open' {
  const value = env.KEYWARD_LIMITER_FAILURE || 'closed';
  if (value !== 'closed' && value !== 'open') {
    throw new ConfigError('KEYWARD_LIMITER_FAILURE: must be closed or open');
  }
  return value;
}

function leases(env: Env): Config['leases'] {
  const mode = env.KEYWARD_CONSISTENT_LEASES || 'off';
  if (mode !== 'on' && mode !== 'off') {
    throw new ConfigError('KEYWARD_CONSISTENT_LEASES: must be on or off');
  }
  if (mode === 'off') return undefined;
  if (!env.KEYWARD_LOCAL_REDIS_URL || env.KEYWARD_LOCAL_REDIS_URL === env.KEYWARD_REDIS_URL) {
    // Leases are spent on the region's own Redis; on the primary they would save nothing.
    throw new ConfigError(
      'KEYWARD_CONSISTENT_LEASES=on: needs KEYWARD_LOCAL_REDIS_URL, the Redis the region spends leases on',
    );
  }
  return {
    ttlMs: integer(env, 'KEYWARD_LEASE_TTL_MS', 5000, 1000, 10_000),
    maxShare: integer(env, 'KEYWARD_LEASE_MAX_PERCENT', 25, 1, 50) / 100,
  };
}

function clientIpMode(env: Env): ClientIpMode {
  const mode = (env.KEYWARD_LOG_CLIENT_IP || 'off') as ClientIpMode;
  if (!CLIENT_IP_MODES.includes(mode)) {
    throw new ConfigError(`KEYWARD_LOG_CLIENT_IP: must be one of ${CLIENT_IP_MODES.join(', ')}`);
  }
  return mode;
}

function webhooks(env: Env): WebhookConfig {
  const allow = env.KEYWARD_WEBHOOK_ALLOW_PRIVATE || '0';
  if (allow !== '0' && allow !== '1') {
    throw new ConfigError('KEYWARD_WEBHOOK_ALLOW_PRIVATE: must be 0 or 1');
  }
  return {
    allowPrivate: allow === '1',
    pollMs: integer(env, 'KEYWARD_WEBHOOK_POLL_MS', 1_000, 10, 60_000),
    timeoutMs: integer(env, 'KEYWARD_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    // At most 30 s: the first retry comes within 30 s of a failure (docs/webhooks.md).
    retryBaseMs: integer(env, 'KEYWARD_WEBHOOK_RETRY_BASE_MS', 10_000, 10, 30_000),
    flushMs: integer(env, 'KEYWARD_WEBHOOK_FLUSH_MS', 1_000, 10, 60_000),
    cacheMs: integer(env, 'KEYWARD_WEBHOOK_CACHE_MS', 5_000, 0, 300_000),
    // At most 6 h: a key is announced at least 18 h before it expires.
    expiringSweepMs: integer(env, 'KEYWARD_WEBHOOK_EXPIRING_SWEEP_MS', 600_000, 100, 21_600_000),
  };
}

function analytics(env: Env, clickhouse: boolean): Config['analytics'] {
  const switched = env.KEYWARD_ANALYTICS || 'on';
  if (switched !== 'on' && switched !== 'off') {
    throw new ConfigError('KEYWARD_ANALYTICS: must be on or off');
  }
  const inRedis = env.KEYWARD_ANALYTICS_COUNT_IN_REDIS || (clickhouse ? 'off' : 'on');
  if (inRedis !== 'on' && inRedis !== 'off') {
    throw new ConfigError('KEYWARD_ANALYTICS_COUNT_IN_REDIS: must be on or off');
  }
  const url = env.KEYWARD_ANALYTICS_REDIS_URL;
  const HOUR = 3_600_000;
  return {
    enabled: switched === 'on',
    countInRedis: inRedis === 'on',
    ...(url ? { redisUrl: redisUrl(env, 'KEYWARD_ANALYTICS_REDIS_URL', url) } : {}),
    flushMs: integer(env, 'KEYWARD_ANALYTICS_FLUSH_MS', 1000, 10, 1000),
    maxPending: integer(env, 'KEYWARD_ANALYTICS_MAX_PENDING', 100_000, 1, 10_000_000),
    retention: {
      minute: integer(env, 'KEYWARD_ANALYTICS_MINUTE_RETENTION_HOURS', 48, 1, 168) * HOUR,
      hour: integer(env, 'KEYWARD_ANALYTICS_HOUR_RETENTION_DAYS', 90, 1, 400) * 24 * HOUR,
      day: integer(env, 'KEYWARD_ANALYTICS_DAY_RETENTION_DAYS', 730, 1, 3660) * 24 * HOUR,
    },
  };
}

function clickhouseTarget(name: string, raw: string): ClickHouseTarget {
  try {
    return parseClickHouseUrl(raw);
  } catch (error) {
    // The message quotes nothing of the URL that could be its password.
    if (error instanceof ClickHouseUrlError) {
      throw new ConfigError(`${name}: ${error.message}`);
    }
    throw error;
  }
}

function clickhouse(env: Env): ClickHouseConfig | undefined {
  const raw = env.KEYWARD_CLICKHOUSE_URL;
  const readerRaw = env.KEYWARD_CLICKHOUSE_READER_URL;
  if (raw === undefined || raw === '') {
    if (readerRaw) {
      throw new ConfigError(
        'KEYWARD_CLICKHOUSE_READER_URL: needs KEYWARD_CLICKHOUSE_URL, whose rows it reads',
      );
    }
    return undefined;
  }
  const target = clickhouseTarget('KEYWARD_CLICKHOUSE_URL', raw);
  const reader = readerRaw
    ? clickhouseTarget('KEYWARD_CLICKHOUSE_READER_URL', readerRaw)
    : undefined;
  if (reader && reader.database !== target.database) {
    throw new ConfigError(
      `KEYWARD_CLICKHOUSE_READER_URL: must name the database of KEYWARD_CLICKHOUSE_URL (${target.database})`,
    );
  }
  const batchRows = integer(env, 'KEYWARD_CLICKHOUSE_BATCH_ROWS', 10_000, 1, 1_000_000);
  const maxBufferedRows = integer(
    env,
    'KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS',
    Math.max(200_000, batchRows),
    1,
    100_000_000,
  );
  if (maxBufferedRows < batchRows) {
    throw new ConfigError(
      `KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS: must be at least KEYWARD_CLICKHOUSE_BATCH_ROWS (${batchRows})`,
    );
  }
  return {
    target,
    batchRows,
    flushMs: integer(env, 'KEYWARD_CLICKHOUSE_FLUSH_MS', 1000, 10, 1000),
    maxBufferedRows,
    timeoutMs: integer(env, 'KEYWARD_CLICKHOUSE_TIMEOUT_MS', 10_000, 10, 600_000),
    rawRetentionDays: integer(env, 'KEYWARD_CLICKHOUSE_RAW_RETENTION_DAYS', 30, 1, 3660),
    ...(reader ? { reader } : {}),
    query: {
      timeoutSeconds: integer(env, 'KEYWARD_CLICKHOUSE_QUERY_TIMEOUT_S', 30, 1, 600),
      maxRowsToRead: integer(
        env,
        'KEYWARD_CLICKHOUSE_QUERY_MAX_ROWS_TO_READ',
        100_000_000,
        1,
        100_000_000_000,
      ),
      maxResultRows: integer(
        env,
        'KEYWARD_CLICKHOUSE_QUERY_MAX_RESULT_ROWS',
        100_000,
        1,
        10_000_000,
      ),
      maxResultBytes: integer(
        env,
        'KEYWARD_CLICKHOUSE_QUERY_MAX_RESULT_BYTES',
        16 * 1024 * 1024,
        1024,
        1024 * 1024 * 1024,
      ),
      maxMemoryBytes: integer(
        env,
        'KEYWARD_CLICKHOUSE_QUERY_MAX_MEMORY_BYTES',
        1_000_000_000,
        10_000_000,
        100_000_000_000,
      ),
    },
  };
}

/** Parsed here so that a malformed list stops the node at start, naming the variable only. */
function vaultKeys(env: Env): readonly VaultKey[] | undefined {
  const raw = env.KEYWARD_VAULT_KEYS;
  if (raw === undefined || raw === '') return undefined;
  try {
    return parseVaultKeys(raw);
  } catch (error) {
    if (error instanceof VaultConfigError) {
      throw new ConfigError(`KEYWARD_VAULT_KEYS: ${error.message}`);
    }
    throw error;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const primary = redisUrl(env, 'KEYWARD_REDIS_URL', 'redis://127.0.0.1:6379');
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const clusterNodes = hostPorts(env, 'KEYWARD_REDIS_CLUSTER_NODES');
  const redisSentinel = sentinel(env);
  const redisCommandTimeoutMs = integer(env, 'KEYWARD_REDIS_COMMAND_TIMEOUT_MS', 100, 1, 60000);
  const vault = vaultKeys(env);
  const clickhouseConfig = clickhouse(env);
  const leaseConfig = leases(env);
  return {
    ...(leaseConfig ? { leases: leaseConfig } : {}),
    ...(clickhouseConfig ? { clickhouse: clickhouseConfig } : {}),
    ...(vault ? { vaultKeys: vault } : {}),
    ...(clusterNodes ? { redisClusterNodes: clusterNodes } : {}),
    ...(redisSentinel ? { redisSentinel } : {}),
    ...(env.KEYWARD_METRICS_TOKEN ? { metricsToken: env.KEYWARD_METRICS_TOKEN } : {}),
    port: integer(env, 'KEYWARD_PORT', 8080, 0, 65535),
    host: env.KEYWARD_HOST || '0.0.0.0',
    redisUrl: primary,
    localRedisUrl: redisUrl(env, 'KEYWARD_LOCAL_REDIS_URL', primary),
    region: env.KEYWARD_REGION || 'us-east-1',
    logLevel,
    logPretty: env.KEYWARD_LOG_PRETTY === '1' || env.KEYWARD_LOG_PRETTY === 'true',
    redisCommandTimeoutMs,
    durability: durability(env, redisCommandTimeoutMs),
    limiterFailure: limiterFailure(env),
    redisConnectTimeoutMs: integer(env, 'KEYWARD_REDIS_CONNECT_TIMEOUT_MS', 2000, 1, 60000),
    cache: {
      maxEntries: integer(env, 'KEYWARD_CACHE_MAX_ENTRIES', 1_000_000, 1, 100_000_000),
      ttlMs: integer(env, 'KEYWARD_CACHE_TTL_MS', 300_000, 1, 86_400_000),
      negativeTtlMs: integer(env, 'KEYWARD_CACHE_NEGATIVE_TTL_MS', 5_000, 1, 3_600_000),
    },
    shutdownDrainMs: integer(env, 'KEYWARD_SHUTDOWN_DRAIN_MS', 0, 0, 600_000),
    managementLimit: integer(env, 'KEYWARD_MANAGEMENT_RATE_LIMIT', 1000, 1, 1_000_000_000),
    errorDocsUrl: env.KEYWARD_ERROR_DOCS_URL || '/docs/errors',
    maxBodyBytes: 1024 * 1024,
    auditMaxEntries: integer(
      env,
      'KEYWARD_AUDIT_MAX_ENTRIES',
      DEFAULT_AUDIT_MAX_ENTRIES,
      1,
      100_000_000,
    ),
    analytics: analytics(env, clickhouseConfig !== undefined),
    logClientIp: clientIpMode(env),
    webhooks: webhooks(env),
    ...(env.KEYWARD_FAULT_HALT_AT ? { faultHaltAt: env.KEYWARD_FAULT_HALT_AT } : {}),
  };
}
