import {
  BUCKET_MS,
  bucketStart,
  CREDITS,
  FULL_DETAIL,
  NO_API,
  type CountDetail,
  type CountRow,
  type Granularity,
  type LimitRow,
  type ReadRange,
  type UsageCounts,
} from '../../domain/usage';
import { literal, type ClickHouseClient } from './client';
import { ownRows } from './ownReads';
import { ROLLUP_OF, ROLLUP_RETENTION } from './schema';

interface VerificationSums {
  t: number;
  key_id: string;
  identity_id: string;
  outcome: string;
  tags: string[];
  count: number | string;
  credits: number | string;
}

interface LimitSums {
  t: number;
  identifier: string;
  passed: number | string;
  total: number | string;
}

/**
 * The readers' counts out of ClickHouse's rollups (KEYWARD_CLICKHOUSE_URL): the same rows the
 * Redis buckets answer, summed by the same key (a SummingMergeTree sums its rows only when it
 * merges, so every read sums again), the credits as the CREDITS counter beside the outcomes.
 * Each granularity is kept as long as its rollup (ROLLUPS in schema.ts).
 */
export class ClickHouseUsageCounts implements UsageCounts {
  readonly store = 'clickhouse';
  readonly retention = ROLLUP_RETENTION;
  readonly minuteDetail = FULL_DETAIL;

  constructor(private readonly client: ClickHouseClient) {}

  async verifications(
    ws: string,
    apiId: string,
    granularity: Granularity,
    range: ReadRange,
    keyIds?: ReadonlySet<string>,
    detail: CountDetail = FULL_DETAIL,
  ): Promise<CountRow[]> {
    const window = this.window(granularity, range);
    if (!window) return [];
    const keys = keyIds ? ` AND key_id IN (${[...keyIds].map(literal).join(', ')})` : '';
    // What the reader does not tell apart is summed here: an API's chart of 30 days is then a
    // few hundred rows, not one per key, identity and set of tags.
    const kept = [
      detail.key || keyIds ? 'key_id' : "'' AS key_id",
      detail.identity ? 'identity_id' : "'' AS identity_id",
      detail.tags ? 'tags' : 'emptyArrayString() AS tags',
    ];
    const grouped = ['time', 'outcome'];
    if (detail.key || keyIds) grouped.push('key_id');
    if (detail.identity) grouped.push('identity_id');
    if (detail.tags) grouped.push('tags');
    const sums = await ownRows<VerificationSums>(
      this.client,
      `SELECT ${BUCKET_NUMBER} AS t, ${kept.join(', ')}, outcome,
  sum(count) AS count, sum(spent_credits) AS credits
FROM key_verifications_${ROLLUP_OF[granularity]}_v1
WHERE workspace_id = ${literal(ws)} AND key_space_id = ${literal(apiId === NO_API ? '' : apiId)}
  AND ${window}${keys}
GROUP BY ${grouped.join(', ')}`,
    );
    const rows: CountRow[] = [];
    for (const sum of sums) {
      const counter = {
        keyId: sum.key_id,
        identityId: sum.identity_id,
        tags: sum.tags,
        time: msOf(granularity, sum.t),
      };
      rows.push({ ...counter, outcome: sum.outcome, count: Number(sum.count) });
      const credits = Number(sum.credits);
      if (credits > 0) rows.push({ ...counter, outcome: CREDITS, count: credits });
    }
    return rows;
  }

  async limits(
    ws: string,
    namespaceId: string,
    granularity: Granularity,
    range: ReadRange,
    identifier?: string,
  ): Promise<LimitRow[]> {
    const window = this.window(granularity, range);
    if (!window) return [];
    const one = identifier === undefined ? '' : ` AND identifier = ${literal(identifier)}`;
    const sums = await ownRows<LimitSums>(
      this.client,
      `SELECT ${BUCKET_NUMBER} AS t, identifier, sum(passed) AS passed, sum(total) AS total
FROM ratelimits_${ROLLUP_OF[granularity]}_v1
WHERE workspace_id = ${literal(ws)} AND namespace_id = ${literal(namespaceId)}
  AND ${window}${one}
GROUP BY time, identifier`,
    );
    const rows: LimitRow[] = [];
    for (const sum of sums) {
      const time = msOf(granularity, sum.t);
      const passed = Number(sum.passed);
      const blocked = Number(sum.total) - passed;
      if (passed > 0) rows.push({ identifier: sum.identifier, passed: true, time, count: passed });
      if (blocked > 0) {
        rows.push({ identifier: sum.identifier, passed: false, time, count: blocked });
      }
    }
    return rows;
  }

  /**
   * The buckets Redis would read (bucketStarts): from the range's first bucket, or the oldest
   * retention keeps, to the last begun by `end` and by `now`. Undefined when there is none.
   */
  private window(granularity: Granularity, range: ReadRange): string | undefined {
    const first = Math.max(
      bucketStart(granularity, range.start),
      bucketStart(granularity, range.now - this.retention[granularity]),
    );
    const last = bucketStart(granularity, Math.min(range.end, range.now));
    if (last < first) return undefined;
    return `time >= ${timeLiteral(granularity, first)} AND time <= ${timeLiteral(granularity, last)}`;
  }
}

/**
 * A bucket's start as a number, `toUInt32(time)`: Unix seconds of a DateTime rollup (minutes,
 * hours), the day number of a Date one (days); neither depends on the server's timezone.
 */
const BUCKET_NUMBER = 'toUInt32(time)';

function msOf(granularity: Granularity, t: number): number {
  return granularity === 'day' ? Number(t) * BUCKET_MS.day : Number(t) * 1000;
}

/** A bucket's start as a literal of the rollup's own type, read in UTC whatever the server's zone. */
function timeLiteral(granularity: Granularity, ms: number): string {
  const iso = new Date(ms).toISOString();
  return granularity === 'day'
    ? `toDate('${iso.slice(0, 10)}')`
    : `'${iso.slice(0, 19).replace('T', ' ')}'`;
}
