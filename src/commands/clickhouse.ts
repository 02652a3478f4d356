import { ClickHouseClient } from '../analytics/clickhouse/client';
import { migrate, SCHEMA_VERSION } from '../analytics/clickhouse/schema';
import type { CommandSpec } from './framework';
import { emit } from './output';

/** Long enough for the CREATEs of a first run on a busy server. */
const MIGRATE_TIMEOUT_MS = 60_000;

/**
 * `keyward clickhouse migrate`: what a node does at start when KEYWARD_CLICKHOUSE_URL is set,
 * for an operator who wants the schema there (or upgraded) before the nodes start.
 */
const clickhouseMigrate: CommandSpec = {
  path: ['clickhouse', 'migrate'],
  brief: 'create or upgrade the analytics schema in ClickHouse (KEYWARD_CLICKHOUSE_URL)',
  summary: `Creates the database of KEYWARD_CLICKHOUSE_URL when missing, then applies every migration of the analytics schema it has not recorded yet (schema version ${SCHEMA_VERSION}): the raw tables key_verifications_v1 and ratelimits_v1, their per-minute, hour, day and month rollups and the materialized views that keep them, and the ledger of landed batches. Idempotent: a second run changes nothing; safe while nodes run, and nodes do the same at start.`,
  notes:
    'The user of the URL needs the rights to create databases and tables. Nodes drop the partitions past their retention themselves (docs/decisions.md, "Analytics in ClickHouse").',
  example:
    'KEYWARD_CLICKHOUSE_URL=http://keyward:secret@127.0.0.1:8123/keyward keyward clickhouse migrate',
  async run(invocation, runtime) {
    const settings = runtime.config.clickhouse;
    if (!settings)
      throw new Error('KEYWARD_CLICKHOUSE_URL is not set: there is no ClickHouse to migrate');
    const client = new ClickHouseClient(
      settings.target,
      Math.max(settings.timeoutMs, MIGRATE_TIMEOUT_MS),
    );
    try {
      const result = await migrate(client);
      emit(invocation, { clickhouse: settings.target.display, ...result }, () => [
        ...result.applied.map(({ version, name }) => `applied ${version}: ${name}`),
        result.applied.length === 0
          ? `${settings.target.display}: schema at version ${result.to}, nothing to do`
          : `${settings.target.display}: schema at version ${result.to} (was ${result.from})`,
      ]);
      return 0;
    } finally {
      client.close();
    }
  },
};

export const clickhouseCommands: readonly CommandSpec[] = [clickhouseMigrate];
