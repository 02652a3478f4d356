import type { Granularity, Retention } from '../../domain/usage';
import { ClickHouseError, literal, type ClickHouseClient } from './client';

/**
 * The analytics schema in ClickHouse, one numbered migration after another. Every statement is
 * idempotent (IF NOT EXISTS), so a migration interrupted half way, or run by two nodes starting
 * at once, is finished by the next run. Everything here must be accepted by Debian's
 * ClickHouse 18.16 and by current releases alike (docs/decisions.md, "Analytics in ClickHouse"):
 * `ENGINE = X() PARTITION BY … ORDER BY …`, no TTL, no LowCardinality, no Bool, no DateTime64.
 */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

/** The table that records which migrations have run. */
export const MIGRATIONS_TABLE = 'keyward_schema_migrations';

/** How long the rows of each table are kept; raw tables' retention is the operator's. */
export interface RetainedTable {
  table: string;
  /** The unit of its partitions: a partition is dropped once all of it is past the retention. */
  partition: 'day' | 'month' | 'year';
  /** Days kept; undefined: kept until dropped by hand, or `raw` for the configured retention. */
  retentionDays: number | 'raw' | undefined;
}

/** Unix ms as a UTC DateTime, the expression every rollup buckets. */
const AT = "toDateTime(intDiv(time, 1000), 'UTC')";

interface Rollup {
  suffix: 'per_minute' | 'per_hour' | 'per_day' | 'per_month';
  /** The rollup's `time`: DateTime for minutes and hours, Date for days and months. */
  type: string;
  bucket: string;
  partitionBy: string;
  partition: RetainedTable['partition'];
  retentionDays: number | undefined;
}

/** Retention follows Unkey's analytics tables: minutes for a week, hours for 90 days… */
const ROLLUPS: readonly Rollup[] = [
  {
    suffix: 'per_minute',
    type: "DateTime('UTC')",
    bucket: `toStartOfMinute(${AT})`,
    partitionBy: 'toYYYYMMDD(time)',
    partition: 'day',
    retentionDays: 7,
  },
  {
    suffix: 'per_hour',
    type: "DateTime('UTC')",
    bucket: `toStartOfHour(${AT})`,
    partitionBy: 'toYYYYMMDD(time)',
    partition: 'day',
    retentionDays: 90,
  },
  {
    suffix: 'per_day',
    type: 'Date',
    bucket: `toDate(${AT})`,
    partitionBy: 'toYYYYMM(time)',
    partition: 'month',
    retentionDays: 730,
  },
  {
    suffix: 'per_month',
    type: 'Date',
    bucket: `toStartOfMonth(${AT})`,
    partitionBy: 'toYear(time)',
    partition: 'year',
    retentionDays: undefined,
  },
];

const DAY_MS = 86_400_000;

/** The rollup each reader's granularity reads, and how long it is kept (ROLLUPS above). */
export const ROLLUP_OF: Readonly<Record<Granularity, Rollup['suffix']>> = {
  minute: 'per_minute',
  hour: 'per_hour',
  day: 'per_day',
};

export const ROLLUP_RETENTION: Retention = {
  minute: retentionOf('per_minute'),
  hour: retentionOf('per_hour'),
  day: retentionOf('per_day'),
};

function retentionOf(suffix: Rollup['suffix']): number {
  return ROLLUPS.find((rollup) => rollup.suffix === suffix)!.retentionDays! * DAY_MS;
}

const RAW_PARTITION = `toYYYYMMDD(${AT})`;

/** The rows' columns, in the order the sink writes them. */
const VERIFICATION_COLUMNS = `
  request_id String,
  time Int64,
  workspace_id String,
  key_space_id String,
  identity_id String,
  external_id String,
  key_id String,
  outcome String,
  region String,
  tags Array(String),
  spent_credits Int64,
  batch_id String`;

/** A rollup is keyed by everything a reader filters or groups by; `count` and credits sum. */
const VERIFICATION_KEY =
  'workspace_id, time, key_space_id, key_id, identity_id, external_id, outcome, tags';

function verificationRollup(rollup: Rollup): string[] {
  const table = `key_verifications_${rollup.suffix}_v1`;
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  time ${rollup.type},
  workspace_id String,
  key_space_id String,
  identity_id String,
  external_id String,
  key_id String,
  outcome String,
  tags Array(String),
  count UInt64,
  spent_credits UInt64
) ENGINE = SummingMergeTree((count, spent_credits))
PARTITION BY ${rollup.partitionBy}
ORDER BY (${VERIFICATION_KEY})`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${table.replace(/_v1$/, '_mv_v1')} TO ${table} AS
SELECT ${rollup.bucket} AS time, workspace_id, key_space_id, identity_id, external_id, key_id,
  outcome, tags, count() AS count, toUInt64(sum(spent_credits)) AS spent_credits
FROM key_verifications_v1
GROUP BY ${VERIFICATION_KEY}`,
  ];
}

const RATELIMIT_KEY = 'workspace_id, time, namespace_id, identifier';

function ratelimitRollup(rollup: Rollup): string[] {
  const table = `ratelimits_${rollup.suffix}_v1`;
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  time ${rollup.type},
  workspace_id String,
  namespace_id String,
  identifier String,
  passed UInt64,
  total UInt64,
  passed_tokens UInt64,
  total_tokens UInt64
) ENGINE = SummingMergeTree((passed, total, passed_tokens, total_tokens))
PARTITION BY ${rollup.partitionBy}
ORDER BY (${RATELIMIT_KEY})`,
    // passed_tokens sums the raw row's MATERIALIZED column: written as sum(passed * tokens) it
    // would read the alias `passed` (sum(passed)) instead of the column, on 18.16 as today.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${table.replace(/_v1$/, '_mv_v1')} TO ${table} AS
SELECT ${rollup.bucket} AS time, workspace_id, namespace_id, identifier,
  toUInt64(sum(passed)) AS passed, count() AS total,
  toUInt64(sum(passed_tokens)) AS passed_tokens, toUInt64(sum(tokens)) AS total_tokens
FROM ratelimits_v1
GROUP BY ${RATELIMIT_KEY}`,
  ];
}

/** Which batches landed, one row per inserted block: what a retried insert is checked against. */
export const BATCHES_TABLE = 'keyward_batches_v1';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'key verifications: raw rows and per-minute, hour, day and month rollups',
    statements: [
      `CREATE TABLE IF NOT EXISTS key_verifications_v1 (${VERIFICATION_COLUMNS}
) ENGINE = MergeTree()
PARTITION BY ${RAW_PARTITION}
ORDER BY (workspace_id, time, key_space_id, key_id)`,
      ...ROLLUPS.flatMap(verificationRollup),
    ],
  },
  {
    version: 2,
    name: 'standalone rate limits: raw rows and per-minute, hour, day and month rollups',
    statements: [
      `CREATE TABLE IF NOT EXISTS ratelimits_v1 (
  request_id String,
  time Int64,
  workspace_id String,
  namespace_id String,
  identifier String,
  passed UInt8,
  latency Float64,
  override_id String,
  \`limit\` UInt64,
  remaining UInt64,
  reset_at Int64,
  tokens UInt64,
  region String,
  batch_id String,
  passed_tokens UInt64 MATERIALIZED passed * tokens
) ENGINE = MergeTree()
PARTITION BY ${RAW_PARTITION}
ORDER BY (workspace_id, time, namespace_id, identifier)`,
      ...ROLLUPS.flatMap(ratelimitRollup),
    ],
  },
  {
    version: 3,
    name: 'ledger of landed batches, for exact retries',
    statements: [
      `CREATE TABLE IF NOT EXISTS ${BATCHES_TABLE} (
  batch_id String,
  source String,
  rows UInt64,
  inserted DateTime('UTC')
) ENGINE = MergeTree()
PARTITION BY toYYYYMMDD(inserted)
ORDER BY batch_id`,
      ...['key_verifications_v1', 'ratelimits_v1'].map(
        (
          source,
        ) => `CREATE MATERIALIZED VIEW IF NOT EXISTS ${source.replace(/_v1$/, '_batches_mv_v1')} TO ${BATCHES_TABLE} AS
SELECT batch_id, ${literal(source)} AS source, count() AS rows, now() AS inserted
FROM ${source}
GROUP BY batch_id`,
      ),
    ],
  },
  {
    version: 4,
    name: "raw verifications keep the client's address (KEYWARD_LOG_CLIENT_IP)",
    // 18.16 has no ADD COLUMN IF NOT EXISTS: a column added by a run cut short is code 44.
    statements: ['ALTER TABLE key_verifications_v1 ADD COLUMN client_ip String'],
  },
];

export const RETAINED_TABLES: readonly RetainedTable[] = [
  { table: 'key_verifications_v1', partition: 'day', retentionDays: 'raw' },
  { table: 'ratelimits_v1', partition: 'day', retentionDays: 'raw' },
  ...ROLLUPS.flatMap((rollup) =>
    ['key_verifications', 'ratelimits'].map((prefix) => ({
      table: `${prefix}_${rollup.suffix}_v1`,
      partition: rollup.partition,
      retentionDays: rollup.retentionDays,
    })),
  ),
  // A batch is settled within minutes of its insert: two days leave room for a long outage.
  { table: BATCHES_TABLE, partition: 'day', retentionDays: 2 },
];

/**
 * Codes of a CREATE … IF NOT EXISTS that lost a race with another node's (57, 82), and of an
 * ADD COLUMN whose column a run cut short already added (44).
 */
const ALREADY_EXISTS = new Set([44, 57, 82]);

async function idempotent(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ClickHouseError && ALREADY_EXISTS.has(error.code)) return;
    throw error;
  }
}

export interface MigrationResult {
  /** The version the schema had before (0: none). */
  from: number;
  /** The version it has now. */
  to: number;
  applied: { version: number; name: string }[];
}

/** The highest migration recorded as applied, 0 when none is. */
export async function schemaVersion(client: ClickHouseClient): Promise<number> {
  const [row] = await client.rows<{ version: number }>(
    `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
  );
  return Number(row?.version ?? 0);
}

/**
 * Creates the database when missing, then applies every migration above the recorded version,
 * in order, recording each once all its statements have run. Idempotent; safe to run from
 * several nodes at once (a version recorded twice is still one version).
 */
export async function migrate(
  client: ClickHouseClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationResult> {
  await idempotent(() =>
    client.exec(`CREATE DATABASE IF NOT EXISTS ${client.target.database}`, { noDatabase: true }),
  );
  await idempotent(() =>
    client.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version UInt32,
  name String,
  applied_at DateTime('UTC')
) ENGINE = MergeTree()
ORDER BY version`),
  );
  const from = await schemaVersion(client);
  const applied: MigrationResult['applied'] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= from) continue;
    for (const statement of migration.statements) await idempotent(() => client.exec(statement));
    await client.exec(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (${migration.version}, ${literal(migration.name)}, now())`,
    );
    applied.push({ version: migration.version, name: migration.name });
  }
  return { from, to: applied.at(-1)?.version ?? from, applied };
}

/** The newest version this build knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
