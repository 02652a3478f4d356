import { bucketStarts, parseVerificationField, type Granularity } from '../../domain/usage';
import type { UsageStore } from '../../store/usageStore';

/** One counter of one bucket, as the readers aggregate them. */
export interface CountRow {
  /** The bucket's start (Unix ms). */
  time: number;
  keyId: string;
  identityId: string;
  outcome: string;
  tags: readonly string[];
  count: number;
}

/**
 * Every verification counter of an API from `start` to `end`, bucket by bucket (buckets past
 * their retention are not read: they hold nothing). One pipelined HGETALL per bucket.
 */
export async function readVerificationCounts(
  store: UsageStore,
  ws: string,
  apiId: string,
  granularity: Granularity,
  range: { start: number; end: number; now: number },
): Promise<CountRow[]> {
  const starts = bucketStarts(granularity, range.start, range.end, range.now, store.retention);
  const buckets = await store.read(ws, 'v', apiId, granularity, starts);
  const rows: CountRow[] = [];
  buckets.forEach((hash, i) => {
    for (const [field, value] of Object.entries(hash)) {
      const counter = parseVerificationField(field);
      if (counter) rows.push({ time: starts[i]!, ...counter, count: Number(value) });
    }
  });
  return rows;
}
