import {
  BUCKET_MS,
  bucketStart,
  bucketStarts,
  parseLimitField,
  parseVerificationField,
  usageShard,
  type Granularity,
  type VerificationCounter,
} from '../../domain/usage';
import { BadRequestError } from '../../errors';
import { ALL_SHARDS, type UsageStore } from '../../store/usageStore';

/** The most buckets one call reads: the default retention of minutes (48 h) or hours (90 days). */
export const MAX_BUCKETS = 3000;

/** What a reader asks for: `start` to `end` (Unix ms, both inclusive), as of `now`. */
export interface ReadRange {
  start: number;
  end: number;
  now: number;
}

/** A range given in the input: a 400 when it ends before it starts (judged before permissions). */
export function checkRange(input: { start?: number; end?: number }): void {
  if (input.start !== undefined && input.end !== undefined && input.start >= input.end) {
    throw new BadRequestError('start cannot be equal or greater than end');
  }
}

/**
 * The slots of a time series from `start` to `end`: the start of each bucket of the range that is
 * within retention (older ones hold nothing), refused with a 400 beyond MAX_BUCKETS. A reader that
 * answers every slot, zeros included, answers no more rows than this.
 */
export function timeSlots(
  store: Pick<UsageStore, 'retention'>,
  granularity: Granularity,
  range: ReadRange,
  advice: string,
): number[] {
  const size = BUCKET_MS[granularity];
  const from = Math.max(range.start, range.now - store.retention[granularity]);
  if ((range.end - from) / size > MAX_BUCKETS) {
    const why = `at most ${MAX_BUCKETS} ${granularity}s at a time; ${advice}`;
    throw new BadRequestError(
      [
        { path: ['start'], message: why },
        { path: ['end'], message: why },
      ],
      { message: `start, end: ${why}` },
    );
  }
  const slots: number[] = [];
  for (let t = bucketStart(granularity, from); t <= range.end; t += size) slots.push(t);
  return slots;
}

/** One counter of one bucket: what its field says, its bucket's start and its count. */
type Counted<Counter> = Counter & {
  /** The bucket's start (Unix ms). */
  time: number;
  count: number;
};

/**
 * Every counter of the buckets `starts`, parsed; fields that do not parse are skipped. `subjects`
 * (key ids, identifiers): only their shards are read, as no other holds their counters; the
 * caller keeps their rows.
 */
async function readCounters<Counter extends object>(
  store: UsageStore,
  ws: string,
  owner: { scope: 'v' | 'rl'; id: string },
  granularity: Granularity,
  starts: readonly number[],
  subjects: Iterable<string> | undefined,
  parse: (field: string) => Counter | undefined,
): Promise<Counted<Counter>[]> {
  const shards = subjects ? [...new Set([...subjects].map(usageShard))] : ALL_SHARDS;
  const buckets = await store.read(ws, owner.scope, owner.id, granularity, starts, shards);
  const rows: Counted<Counter>[] = [];
  buckets.forEach((hash, i) => {
    for (const [field, count] of hash) {
      const counter = parse(field);
      if (counter) rows.push({ ...counter, time: starts[i]!, count });
    }
  });
  return rows;
}

/** One verification counter of one bucket, as the readers aggregate them. */
export type CountRow = Counted<VerificationCounter>;

/**
 * Every verification counter of an API from `start` to `end`, bucket by bucket (buckets past
 * their retention are not read: they hold nothing): one HGETALL per bucket and shard, pipelined
 * per shard. With `keyIds`, the shards of those keys only, and rows of other keys may remain.
 */
export function readVerificationCounts(
  store: UsageStore,
  ws: string,
  apiId: string,
  granularity: Granularity,
  range: ReadRange,
  keyIds?: Iterable<string>,
): Promise<CountRow[]> {
  const starts = bucketStarts(granularity, range.start, range.end, range.now, store.retention);
  return readCounters(store, ws, { scope: 'v', id: apiId }, granularity, starts, keyIds, (field) =>
    parseVerificationField(field),
  );
}

/** One standalone limit counter of one bucket: an identifier's limits that passed, or not. */
export type LimitRow = Counted<{ identifier: string; passed: boolean }>;

/**
 * Every standalone limit counter of a namespace from `start` to `end`, bucket by bucket; with
 * `identifier`, its shard only (rows of other identifiers may remain).
 */
export function readLimitCounts(
  store: UsageStore,
  ws: string,
  namespaceId: string,
  granularity: Granularity,
  range: ReadRange,
  identifier?: string,
): Promise<LimitRow[]> {
  const starts = bucketStarts(granularity, range.start, range.end, range.now, store.retention);
  const subjects = identifier === undefined ? undefined : [identifier];
  return readCounters(
    store,
    ws,
    { scope: 'rl', id: namespaceId },
    granularity,
    starts,
    subjects,
    (field) => parseLimitField(field),
  );
}
