import type { ClickHouseClient } from './client';
import { literal } from './client';
import { RETAINED_TABLES, type RetainedTable } from './schema';

const DAY_MS = 86_400_000;

/** When the last row a partition can hold is past: its value as toYYYYMMDD, toYYYYMM or toYear wrote it. */
export function partitionEnd(unit: RetainedTable['partition'], partition: string): number {
  const digits = partition.replace(/^'|'$/g, '');
  const year = Number(digits.slice(0, 4));
  if (unit === 'year') return Date.UTC(year + 1, 0, 1);
  const month = Number(digits.slice(4, 6));
  if (unit === 'month') return Date.UTC(year, month, 1);
  return Date.UTC(year, month - 1, Number(digits.slice(6, 8)) + 1);
}

/**
 * ClickHouse 18.16 has no TTL on tables: a node drops the partitions whose every row is past the
 * table's retention (docs/decisions.md). Idempotent; several nodes doing it at once drop each
 * partition once. Resolves with the `table partition` pairs dropped.
 */
export async function dropExpiredPartitions(
  client: ClickHouseClient,
  rawRetentionDays: number,
  now: number,
): Promise<string[]> {
  const retained = new Map(RETAINED_TABLES.map((table) => [table.table, table]));
  const parts = await client.rows<{ table: string; partition: string }>(
    `SELECT DISTINCT table, partition FROM system.parts
WHERE database = ${literal(client.target.database)} AND active
  AND table IN (${[...retained.keys()].map(literal).join(', ')})`,
  );
  const dropped: string[] = [];
  for (const { table, partition } of parts) {
    const spec = retained.get(table)!;
    const days = spec.retentionDays === 'raw' ? rawRetentionDays : spec.retentionDays;
    if (days === undefined || !/^'?\d+'?$/.test(partition)) continue;
    if (partitionEnd(spec.partition, partition) > now - days * DAY_MS) continue;
    await client.exec(`ALTER TABLE ${table} DROP PARTITION ${partition}`);
    dropped.push(`${table} ${partition}`);
  }
  return dropped;
}
