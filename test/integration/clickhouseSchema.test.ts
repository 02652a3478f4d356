/**
 * The analytics schema on a real clickhouse-server (Debian's 18.16): created from nothing,
 * idempotent, upgraded from an older version; the materialized views keep every rollup; the
 * node's partition dropping stands in for the TTL 18.16 does not have.
 */
import type { ClickHouseClient } from '../../src/analytics/clickhouse/client';
import { dropExpiredPartitions, partitionEnd } from '../../src/analytics/clickhouse/retention';
import {
  MIGRATIONS,
  migrate,
  SCHEMA_VERSION,
  schemaVersion,
} from '../../src/analytics/clickhouse/schema';
import { startClickHouse, type TestClickHouse } from '../support/clickhouseServer';

const DAY = 86_400_000;
let clickhouse: TestClickHouse;

beforeAll(async () => {
  clickhouse = await startClickHouse();
});
afterAll(async () => {
  await clickhouse?.dispose();
});

async function tables(client: ClickHouseClient): Promise<string[]> {
  const rows = await client.rows<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = '${client.target.database}' ORDER BY name`,
  );
  return rows.map((row) => row.name);
}

function verification(time: number, fields: Record<string, unknown> = {}) {
  return {
    request_id: `req_${time}`,
    time,
    workspace_id: 'ws_1',
    key_space_id: 'api_1',
    identity_id: 'id_1',
    external_id: 'user_1',
    key_id: 'key_1',
    outcome: 'VALID',
    region: 'test',
    tags: ['a=1'],
    spent_credits: 2,
    batch_id: 'b1',
    ...fields,
  };
}

test('migrate creates every table once; a second run changes nothing', async () => {
  const client = clickhouse.client('fresh');
  const first = await migrate(client);
  expect(first).toEqual({
    from: 0,
    to: SCHEMA_VERSION,
    applied: MIGRATIONS.map(({ version, name }) => ({ version, name })),
  });
  const created = await tables(client);
  for (const name of [
    'key_verifications_v1',
    'key_verifications_per_minute_v1',
    'key_verifications_per_hour_v1',
    'key_verifications_per_day_v1',
    'key_verifications_per_month_v1',
    'ratelimits_v1',
    'ratelimits_per_minute_v1',
    'ratelimits_per_hour_v1',
    'ratelimits_per_day_v1',
    'ratelimits_per_month_v1',
    'keyward_batches_v1',
    'keyward_schema_migrations',
  ]) {
    expect(created).toContain(name);
  }
  const second = await migrate(client);
  expect(second).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, applied: [] });
  expect(await tables(client)).toEqual(created);
  // Two nodes starting at once: both finish, the version is still one.
  await Promise.all([migrate(clickhouse.client('raced')), migrate(clickhouse.client('raced'))]);
  expect(await schemaVersion(clickhouse.client('raced'))).toBe(SCHEMA_VERSION);
});

test('an older schema is upgraded in place, its rows kept', async () => {
  const client = clickhouse.client('upgraded');
  expect((await migrate(client, MIGRATIONS.slice(0, 1))).to).toBe(1);
  const now = Date.now();
  await client.insert('key_verifications_v1', [verification(now)]);
  expect(await tables(client)).not.toContain('ratelimits_v1');

  const upgrade = await migrate(client);
  expect(upgrade.from).toBe(1);
  expect(upgrade.applied.map((m) => m.version)).toEqual(MIGRATIONS.slice(1).map((m) => m.version));
  expect(await tables(client)).toContain('ratelimits_v1');
  const [kept] = await client.rows<{ n: string }>('SELECT count() AS n FROM key_verifications_v1');
  expect(kept?.n).toBe('1');
  // The ledger of migration 3 records what lands from now on.
  await client.insert('key_verifications_v1', [verification(now, { batch_id: 'b2' })]);
  const ledger = await client.rows<{ batch_id: string; rows: string }>(
    'SELECT batch_id, sum(rows) AS rows FROM keyward_batches_v1 GROUP BY batch_id',
  );
  expect(ledger).toEqual([{ batch_id: 'b2', rows: '1' }]);
});

test('the materialized views keep every rollup of verifications and limits', async () => {
  const client = clickhouse.client('rollups');
  await migrate(client);
  const at = Date.UTC(2026, 10, 27, 8, 30, 15);
  await client.insert('key_verifications_v1', [
    verification(at),
    verification(at + 10_000),
    verification(at + 60_000, { outcome: 'RATE_LIMITED', spent_credits: 0 }),
    verification(at + 2 * 3_600_000),
  ]);
  await client.insert('key_verifications_v1', [verification(at + 1_000)]);
  const per = async (table: string) =>
    client.rows<{ time: string; outcome: string; count: string; spent_credits: string }>(
      `SELECT toString(time) AS time, outcome, sum(count) AS count, sum(spent_credits) AS spent_credits
FROM ${table} WHERE workspace_id = 'ws_1' GROUP BY time, outcome ORDER BY time, outcome`,
    );
  expect(await per('key_verifications_per_minute_v1')).toEqual([
    { time: '2026-11-27 08:30:00', outcome: 'VALID', count: '3', spent_credits: '6' },
    { time: '2026-11-27 08:31:00', outcome: 'RATE_LIMITED', count: '1', spent_credits: '0' },
    { time: '2026-11-27 10:30:00', outcome: 'VALID', count: '1', spent_credits: '2' },
  ]);
  expect(await per('key_verifications_per_hour_v1')).toEqual([
    { time: '2026-11-27 08:00:00', outcome: 'RATE_LIMITED', count: '1', spent_credits: '0' },
    { time: '2026-11-27 08:00:00', outcome: 'VALID', count: '3', spent_credits: '6' },
    { time: '2026-11-27 10:00:00', outcome: 'VALID', count: '1', spent_credits: '2' },
  ]);
  expect(await per('key_verifications_per_day_v1')).toEqual([
    { time: '2026-11-27', outcome: 'RATE_LIMITED', count: '1', spent_credits: '0' },
    { time: '2026-11-27', outcome: 'VALID', count: '4', spent_credits: '8' },
  ]);
  expect(await per('key_verifications_per_month_v1')).toEqual([
    { time: '2026-11-01', outcome: 'RATE_LIMITED', count: '1', spent_credits: '0' },
    { time: '2026-11-01', outcome: 'VALID', count: '4', spent_credits: '8' },
  ]);
  const [columns] = await client.rows<Record<string, string>>(
    `SELECT toTypeName(time) AS time, toTypeName(tags) AS tags, toTypeName(count) AS count
FROM key_verifications_per_day_v1 LIMIT 1`,
  );
  expect(columns).toEqual({ time: 'Date', tags: 'Array(String)', count: 'UInt64' });

  const limit = (time: number, passed: 0 | 1, identifier = 'ursula') => ({
    request_id: `req_${time}`,
    time,
    workspace_id: 'ws_1',
    namespace_id: 'rlns_1',
    identifier,
    passed,
    region: 'test',
    batch_id: 'b1',
  });
  await client.insert('ratelimits_v1', [
    limit(at, 1),
    limit(at + 1, 1),
    limit(at + 2, 0),
    limit(at + 3, 1, 'victor'),
  ]);
  expect(
    await client.rows(
      `SELECT identifier, sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_day_v1
GROUP BY identifier ORDER BY identifier`,
    ),
  ).toEqual([
    { identifier: 'ursula', passed: '2', total: '3' },
    { identifier: 'victor', passed: '1', total: '1' },
  ]);
});

test('partitions past their retention are dropped (18.16 has no TTL); the rest stay', async () => {
  expect(partitionEnd('day', '20261127')).toBe(Date.UTC(2026, 10, 28));
  expect(partitionEnd('month', '202612')).toBe(Date.UTC(2027, 0, 1));
  expect(partitionEnd('year', '2026')).toBe(Date.UTC(2027, 0, 1));
  const client = clickhouse.client('retention');
  await migrate(client);
  const now = Date.UTC(2026, 10, 27, 12);
  await client.insert('key_verifications_v1', [
    verification(now - 40 * DAY),
    verification(now - 10 * DAY),
    verification(now),
  ]);
  const dropped = await dropExpiredPartitions(client, 30, now);
  expect(dropped).toEqual(
    expect.arrayContaining([
      'key_verifications_v1 20261018',
      // Minutes are kept a week.
      'key_verifications_per_minute_v1 20261018',
      'key_verifications_per_minute_v1 20261117',
    ]),
  );
  const count = async (table: string) =>
    Number((await client.rows<{ n: string }>(`SELECT sum(count) AS n FROM ${table}`))[0]?.n);
  expect(
    Number(
      (await client.rows<{ n: string }>('SELECT count() AS n FROM key_verifications_v1'))[0]?.n,
    ),
  ).toBe(2);
  expect(await count('key_verifications_per_minute_v1')).toBe(1);
  expect(await count('key_verifications_per_hour_v1')).toBe(3);
  expect(await count('key_verifications_per_month_v1')).toBe(3);
  // Again: nothing left to drop.
  expect(await dropExpiredPartitions(client, 30, now)).toEqual([]);
});

test("a query carries its settings: a bound on rows read is ClickHouse's own error", async () => {
  const client = clickhouse.client('fresh');
  await expect(
    client.rows('SELECT count() AS n FROM system.numbers LIMIT 1000000', {
      settings: { max_rows_to_read: 1000, readonly: 1 },
    }),
  ).rejects.toMatchObject({ code: 158 });
  expect(await client.rows('SELECT 1 AS one', { settings: { readonly: 1 } })).toEqual([{ one: 1 }]);
});
