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
 * A key's counters are kept in small hashes that each hold a span of buckets, the bucket's offset
 * in the span written in the field ("time in the field"): hours in a hash per day, days in a hash
 * per month, and an API's minutes (summed over its keys) in a hash per hour. Redis keeps a hash of
 * at most 128 short fields as a listpack, a few bytes a counter, where a field per key in a hash
 * per bucket cost 88 (docs/redis.md, "Memory").
 */
export type Span = 'hour' | 'day' | 'month';

/** The span that holds each granularity's buckets. */
export const SPAN_OF: Readonly<Record<Granularity, Span>> = {
  minute: 'hour',
  hour: 'day',
  day: 'month',
};

/** The start of the span holding `at` (UTC; a month is a calendar month). */
export function spanStart(span: Span, at: number): number {
  if (span !== 'month') return bucketStart(span, at);
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The end of the span that starts at `start` (Unix ms, exclusive). */
export function spanEnd(span: Span, start: number): number {
  if (span !== 'month') return start + BUCKET_MS[span];
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/**
 * The Unix second a span's hash expires at: the end of its last bucket plus the retention of its
 * granularity. Its first buckets are so kept longer than retention asks; the readers never ask
 * for them (bucketStarts).
 */
export function spanExpiresAt(granularity: Granularity, start: number, retention: Retention) {
  return Math.ceil((spanEnd(SPAN_OF[granularity], start) + retention[granularity]) / 1000);
}

/**
 * A counter's field in its span's hash: the bucket's offset in the span (0 for its first
 * bucket), then, unless the outcome is VALID without tags, `:` and the outcome, then, with tags,
 * `:` and the tags as a JSON array. `7` is seven VALID in the span's eighth bucket; `7:CREDITS`,
 * `7:VALID:["path=/a"]`. The common field is a small integer, which a listpack stores in a byte.
 */
export function spanField(offset: number, outcome: string, tags: readonly string[]): string {
  if (tags.length > 0) return `${offset}:${outcome}:${JSON.stringify(tags)}`;
  return outcome === 'VALID' ? String(offset) : `${offset}:${outcome}`;
}

export function parseSpanField(
  field: string,
): { offset: number; outcome: string; tags: string[] } | undefined {
  const colon = field.indexOf(':');
  const digits = colon < 0 ? field : field.slice(0, colon);
  if (!/^\d{1,4}$/.test(digits)) return undefined;
  const offset = Number(digits);
  if (colon < 0) return { offset, outcome: 'VALID', tags: [] };
  const rest = field.slice(colon + 1);
  const second = rest.indexOf(':');
  if (second < 0) return rest ? { offset, outcome: rest, tags: [] } : undefined;
  let tags: unknown;
  try {
    tags = JSON.parse(rest.slice(second + 1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) return undefined;
  return { offset, outcome: rest.slice(0, second), tags: tags as string[] };
}

/** The bucket an offset of a span stands for. */
export function bucketOfSpan(granularity: Granularity, spanStartMs: number, offset: number) {
  return spanStartMs + offset * BUCKET_MS[granularity];
}

/**
 * Whose counters a key's span hash holds: its key id and identity id, joined by `:` (neither
 * can spell one: ids are `[A-Za-z0-9_]`), `:` for an unknown key without identity.
 */
export function spanSubject(keyId: string, identityId: string): string {
  return `${keyId}:${identityId}`;
}

export function parseSpanSubject(subject: string): { keyId: string; identityId: string } {
  const colon = subject.indexOf(':');
  return colon < 0
    ? { keyId: subject, identityId: '' }
    : { keyId: subject.slice(0, colon), identityId: subject.slice(colon + 1) };
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
   * What a minute's rows tell apart. Redis keeps an API's minutes summed over its keys and
   * identities (by outcome and tags), so a reader that needs a key's or an identity's minutes
   * asks for hours there, or ClickHouse (docs/decisions.md, "Per-key minutes").
   */
  readonly minuteDetail: CountDetail;
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
