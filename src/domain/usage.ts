/**
 * Usage analytics: what is counted, the time buckets it is counted in, and how a counter is named
 * inside a bucket. Pure: the in-memory counting is src/observability/usage.ts, the Redis layout
 * src/store/usageStore.ts (docs/redis.md, "Usage analytics").
 */

import { crc32 } from '../keys/crc32';

export type Granularity = 'minute' | 'hour' | 'day';

export const GRANULARITIES: readonly Granularity[] = ['minute', 'hour', 'day'];

export const BUCKET_MS: Readonly<Record<Granularity, number>> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** How long each granularity's buckets are kept after they end, in milliseconds. */
export type Retention = Readonly<Record<Granularity, number>>;

/** Buckets are UTC: a day starts at 00:00 UTC, as Unkey's daily tables do. */
export function bucketStart(granularity: Granularity, at: number): number {
  const size = BUCKET_MS[granularity];
  return Math.floor(at / size) * size;
}

/** The Unix second a bucket's hash expires at: the end of the bucket plus its retention. */
export function expiresAt(granularity: Granularity, start: number, retention: Retention): number {
  return Math.ceil((start + BUCKET_MS[granularity] + retention[granularity]) / 1000);
}

/**
 * The starts of the buckets from `start` to `end` (both inclusive, truncated to the bucket),
 * leaving out those already past their retention at `now` and those not begun by `now`: they can
 * hold nothing. So however far apart `start` and `end` are, no more than retention's buckets.
 */
export function bucketStarts(
  granularity: Granularity,
  start: number,
  end: number,
  now: number,
  retention: Retention,
): number[] {
  const size = BUCKET_MS[granularity];
  const oldest = bucketStart(granularity, now - retention[granularity]);
  const last = Math.min(end, now);
  const starts: number[] = [];
  for (let t = Math.max(bucketStart(granularity, start), oldest); t <= last; t += size) {
    starts.push(t);
  }
  return starts;
}

/**
 * Every verification outcome keyward answers, and `CREDITS`: not an outcome but the credits the
 * verifications spent, counted beside them under the same key, identity and tags.
 */
export const VERIFICATION_OUTCOMES = [
  'VALID',
  'RATE_LIMITED',
  'USAGE_EXCEEDED',
  'DISABLED',
  'EXPIRED',
  'INSUFFICIENT_PERMISSIONS',
  'NOT_FOUND',
  'LIMITER_UNAVAILABLE',
  'FORBIDDEN',
] as const;

export const CREDITS = 'CREDITS';

/** One counter of a verification bucket: whose verifications, with what tags, which outcome. */
export interface VerificationCounter {
  /** Empty for a key that was not found. */
  keyId: string;
  /** Empty for a key without an identity. */
  identityId: string;
  outcome: string;
  /** Sorted, without repeats: `[a, b]` and `[b, a]` are one set of tags. */
  tags: readonly string[];
}

/**
 * The API a verification is counted under when it has none: an unknown key verified without an
 * `apiId`. No API id can spell it (ids are `[A-Za-z0-9_]`).
 */
export const NO_API = '-';

/**
 * A counter's field in its bucket's hash: a JSON array `[keyId, identityId, outcome, ...tags]`,
 * readable with redis-cli and safe for any tag.
 */
export function verificationField(counter: VerificationCounter): string {
  return JSON.stringify([counter.keyId, counter.identityId, counter.outcome, ...counter.tags]);
}

export function parseVerificationField(field: string): VerificationCounter | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length < 3) return undefined;
  if (!parsed.every((part) => typeof part === 'string')) return undefined;
  const [keyId, identityId, outcome, ...tags] = parsed as string[];
  return { keyId: keyId!, identityId: identityId!, outcome: outcome!, tags };
}

/** A standalone limit's counter: an identifier of a namespace, passed or not. */
export function limitField(identifier: string, passed: boolean): string {
  return JSON.stringify([identifier, passed ? 'passed' : 'blocked']);
}

export function parseLimitField(
  field: string,
): { identifier: string; passed: boolean } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string')
    return undefined;
  if (parsed[1] !== 'passed' && parsed[1] !== 'blocked') return undefined;
  return { identifier: parsed[0], passed: parsed[1] === 'passed' };
}

/**
 * How many shards an API's (or a namespace's) counters are spread over, each in a cluster slot
 * of its own (docs/decisions.md, "Usage analytics": why 16).
 */
export const USAGE_SHARDS = 16;

/**
 * The shard of a key's counters (`subject` its key id, empty for a key not found) or of a
 * namespace identifier's. Part of the layout: another function would look for a key's counters
 * in a shard they were never written to.
 */
export function usageShard(subject: string): number {
  return crc32(subject) % USAGE_SHARDS;
}

/** The tags of a verification as they are counted: sorted, each once. */
export function normalTags(tags: readonly string[] | undefined): readonly string[] {
  if (!tags || tags.length === 0) return [];
  return tags.length === 1 ? tags : [...new Set(tags)].sort();
}

/** What a reader asks for: `start` to `end` (Unix ms, both inclusive), as of `now`. */
export interface ReadRange {
  start: number;
  end: number;
  now: number;
}

/** One counter of one bucket: what it counts, its bucket's start and its count. */
export type Counted<Counter> = Counter & {
  /** The bucket's start (Unix ms). */
  time: number;
  count: number;
};

/** One verification counter of one bucket, as the readers aggregate them. */
export type CountRow = Counted<VerificationCounter>;

/** One standalone limit counter of one bucket: an identifier's limits that passed, or not. */
export type LimitRow = Counted<{ identifier: string; passed: boolean }>;

/**
 * What of a counter a reader needs apart: a store may sum over what it leaves out and answer it
 * empty (ClickHouse sums in the query; Redis's buckets answer every counter whatever is asked).
 */
export interface CountDetail {
  key: boolean;
  identity: boolean;
  tags: boolean;
}

export const FULL_DETAIL: CountDetail = { key: true, identity: true, tags: true };

/**
 * Where the readers of usage (analytics.getVerifications, keys.getVerifications,
 * ratelimits.getUsage, the dashboard, `keyward usage`) find the counts: Redis's buckets, or
 * ClickHouse's rollups when KEYWARD_CLICKHOUSE_URL is set. Both answer the same rows for the same
 * traffic; each keeps each granularity for its own retention.
 */
export interface UsageCounts {
  readonly store: 'redis' | 'clickhouse';
  readonly retention: Retention;
  /**
   * Every verification counter of an API (or NO_API) from `start` to `end`, bucket by bucket,
   * within retention. With `keyIds`, rows of those keys (a store may answer others too: the
   * caller keeps its own).
   */
  verifications(
    ws: string,
    apiId: string,
    granularity: Granularity,
    range: ReadRange,
    keyIds?: ReadonlySet<string>,
    detail?: CountDetail,
  ): Promise<CountRow[]>;
  /** Every standalone limit counter of a namespace; with `identifier`, its rows (and maybe others). */
  limits(
    ws: string,
    namespaceId: string,
    granularity: Granularity,
    range: ReadRange,
    identifier?: string,
  ): Promise<LimitRow[]>;
}
