import { ClickHouseClient } from '../analytics/clickhouse/client';
import { SCHEMA_VERSION, schemaVersion } from '../analytics/clickhouse/schema';
import type { ClickHouseConfig } from '../config';
import type { CheckResult } from './redisChecks';

/** A doctor's patience with ClickHouse: one slow answer is a finding, not a hang. */
const CHECK_TIMEOUT_MS = 5_000;

/** The oldest ClickHouse the schema is written for (Debian's package). */
const OLDEST = [18, 16];

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * `keyward doctor` with KEYWARD_CLICKHOUSE_URL: the writer answers and is recent enough, the
 * schema is the one this build writes (the nodes migrate at start; an older one means none has
 * yet), and the reader of KEYWARD_CLICKHOUSE_READER_URL, when set, answers and cannot write.
 */
export async function checkClickHouse(settings: ClickHouseConfig): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const writer = new ClickHouseClient(settings.target, CHECK_TIMEOUT_MS);
  try {
    const began = performance.now();
    let version: string;
    try {
      [{ version } = { version: '' }] = await writer.rows<{ version: string }>(
        'SELECT version() AS version',
        { noDatabase: true },
      );
    } catch (error) {
      return [
        {
          target: 'clickhouse',
          check: 'reachable',
          status: 'fail',
          detail: `${message(error)} (${settings.target.display})`,
        },
      ];
    }
    const ms = (performance.now() - began).toFixed(1);
    results.push({
      target: 'clickhouse',
      check: 'reachable',
      status: 'ok',
      detail: `SELECT ${ms} ms (${settings.target.display})`,
    });
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const old = major < OLDEST[0]! || (major === OLDEST[0] && minor < OLDEST[1]!);
    results.push({
      target: 'clickhouse',
      check: 'version',
      status: old ? 'warn' : 'ok',
      detail: old
        ? `ClickHouse ${version}: the schema is written for ${OLDEST.join('.')} and later`
        : `ClickHouse ${version}`,
    });
    results.push(await schemaCheck(writer));
  } finally {
    writer.close();
  }
  if (settings.reader) results.push(await readerCheck(settings.reader));
  return results;
}

async function schemaCheck(writer: ClickHouseClient): Promise<CheckResult> {
  let version = 0;
  try {
    version = await schemaVersion(writer);
  } catch {
    // No database or no migrations table yet: version 0.
  }
  if (version === SCHEMA_VERSION) {
    return {
      target: 'clickhouse',
      check: 'schema',
      status: 'ok',
      detail: `version ${version}`,
    };
  }
  return {
    target: 'clickhouse',
    check: 'schema',
    status: 'warn',
    detail:
      version > SCHEMA_VERSION
        ? `version ${version}, newer than this build's ${SCHEMA_VERSION}: a newer release wrote it`
        : `version ${version} of ${SCHEMA_VERSION}: nodes migrate at start, or run keyward clickhouse migrate`,
  };
}

/** The reader must answer, and must not be able to write: readonly 1 or 2 in its profile. */
async function readerCheck(target: NonNullable<ClickHouseConfig['reader']>): Promise<CheckResult> {
  const reader = new ClickHouseClient(target, CHECK_TIMEOUT_MS);
  try {
    const [row] = await reader.rows<{ value: string }>(
      "SELECT value FROM system.settings WHERE name = 'readonly'",
      { noDatabase: true },
    );
    const readonly = Number(row?.value ?? 0);
    if (readonly === 0) {
      return {
        target: 'clickhouse reader',
        check: 'read-only',
        status: 'fail',
        detail: `${target.display} can write: give it a profile with readonly=2`,
      };
    }
    return {
      target: 'clickhouse reader',
      check: 'read-only',
      status: readonly === 2 ? 'ok' : 'warn',
      detail:
        readonly === 2
          ? `readonly=2 (${target.display})`
          : `readonly=${readonly}: queries cannot set their limits, so SQL analytics answer 503; use readonly=2`,
    };
  } catch (error) {
    return {
      target: 'clickhouse reader',
      check: 'reachable',
      status: 'fail',
      detail: `${message(error)} (${target.display})`,
    };
  } finally {
    reader.close();
  }
}
