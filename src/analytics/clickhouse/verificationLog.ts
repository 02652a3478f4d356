import type { RecentVerification } from '../../observability/recentVerifications';
import { literal, type ClickHouseClient } from './client';
import { ownRows } from './ownReads';

interface LoggedRow {
  time: number | string;
  outcome: string;
  region: string;
  tags: string[];
  client_ip: string;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The latest verifications of a key from every node (issue 24, part 5), out of the raw rows of
 * key_verifications_v1. The table is ordered by (workspace, time, API, key): one key's rows are
 * spread over its workspace's time range, so the newest hour is read first, then the newest day,
 * then what the raw retention keeps, and the search stops at the first window that holds enough.
 */
export class ClickHouseVerificationLog {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly rawRetentionDays: number,
    private readonly now: () => number,
  ) {}

  async latest(
    ws: string,
    apiId: string,
    keyId: string,
    limit: number,
  ): Promise<RecentVerification[]> {
    const now = this.now();
    let rows: LoggedRow[] = [];
    for (const window of [HOUR_MS, DAY_MS, this.rawRetentionDays * DAY_MS]) {
      rows = await ownRows<LoggedRow>(
        this.client,
        `SELECT time, outcome, region, tags, client_ip FROM key_verifications_v1
WHERE workspace_id = ${literal(ws)} AND time >= ${Math.floor(now - window)}
  AND key_space_id = ${literal(apiId)} AND key_id = ${literal(keyId)}
ORDER BY time DESC LIMIT ${limit}`,
      );
      if (rows.length >= limit) break;
    }
    return rows.map((row) => ({
      at: Number(row.time),
      code: row.outcome,
      region: row.region,
      tags: row.tags,
      ...(row.client_ip === '' ? {} : { ip: row.client_ip }),
    }));
  }
}
