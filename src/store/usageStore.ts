import {
  BUCKET_MS,
  bucketOfSpan,
  bucketStart,
  expiresAt,
  GRANULARITIES,
  parseSpanField,
  parseSpanSubject,
  parseVerificationField,
  SPAN_OF,
  spanExpiresAt,
  spanField,
  spanStart,
  spanSubject,
  USAGE_SHARDS,
  usageShard,
  type CountRow,
  type Granularity,
  type Retention,
  type VerificationCounter,
} from '../domain/usage';
import type { RedisClient } from '../redis/clients';
import { names } from './names';

/**
 * Where counters are written together: one shard of an API's (`v`) or a namespace's (`rl`)
 * counts. A part is one slot, so one MULTI, with a flush marker of its own.
 */
export interface UsagePart {
  ws: string;
  scope: 'v' | 'rl';
  /** The API id (or `NO_API`), or the namespace id. */
  owner: string;
  shard: number;
}

/** One counter to add: counted at minute `minute`, in a part's buckets. */
export interface UsageIncrement {
  /** The start of the minute it was counted in (Unix ms). */
  minute: number;
  field: string;
  count: number;
}

/** The part of a counter of `owner` about `subject`: a key id (or ''), or an identifier. */
export function usagePart(
  ws: string,
  scope: 'v' | 'rl',
  owner: string,
  subject: string,
): UsagePart {
  return { ws, scope, owner, shard: usageShard(subject) };
}

/** The part's hash tag, which also tells parts apart. */
export function partTag(part: UsagePart): string {
  return names.usageTag(part.ws, part.scope, part.owner, part.shard);
}

/** Every shard: what a reader of a whole API or namespace reads. */
export const ALL_SHARDS: readonly number[] = Array.from({ length: USAGE_SHARDS }, (_, i) => i);

/** A name of one slot a reader reads: a shard's, or the previous release's hash. */
type NameOf = (granularity: Granularity, start: number) => string;

/** The bucket each minute (hour) is counted in beside it. */
const COARSER: Partial<Record<Granularity, Granularity>> = { minute: 'hour', hour: 'day' };

/**
 * Buckets read at once: a command's deadline runs from when it is sent, so one pipeline of a
 * whole range (48 h of minutes over 17 slots is 48,977 HGETALL) timed out behind itself.
 */
const READ_WINDOW = 120;

/** How long a node's flush marker lives: far longer than any flush stays unsure. */
const MARKER_TTL_SECONDS = 86_400;

const keyOf = (part: UsagePart, g: Granularity, start: number) =>
  part.scope === 'v'
    ? names.usageVerifications(part.ws, part.owner, part.shard, g, start)
    : names.usageLimits(part.ws, part.owner, part.shard, g, start);

const legacyKeyOf = (
  ws: string,
  scope: 'v' | 'rl',
  owner: string,
  g: Granularity,
  start: number,
) =>
  scope === 'v'
    ? names.legacyUsageVerifications(ws, owner, g, start)
    : names.legacyUsageLimits(ws, owner, g, start);

/** The name of a key's span hash (hours of a day, days of a month) in a shard. */
const keySpanOf = (
  ws: string,
  apiId: string,
  shard: number,
  g: 'hour' | 'day',
  start: number,
  subject: string,
) => names.usageKeySpan(ws, apiId, shard, g === 'hour' ? 'day' : 'month', start, subject);

const subjectsOf = (ws: string, apiId: string, shard: number, g: 'hour' | 'day', start: number) =>
  names.usageSubjects(ws, apiId, shard, g === 'hour' ? 'day' : 'month', start);

/**
 * Usage counts in Redis. Verifications (docs/redis.md, "Usage analytics"): a key's hours in a
 * small hash per day and its days in one per month, an API's minutes summed over its keys in one
 * per hour, each bucket's offset in its field (src/domain/usage.ts, spanField). A namespace's
 * limits, and the verifications the previous release counted: one hash per owner, shard,
 * granularity and bucket. A flush writes every granularity at once (HINCRBY into the minute, the
 * hour and the day), so no roll-up job runs and each hash expires on its own (EXPIREAT the end of
 * its last bucket plus its retention).
 */
export class UsageStore {
  constructor(
    private readonly redis: RedisClient,
    readonly retention: Retention,
  ) {}

  /**
   * Adds a part's counts in one MULTI, with the node's marker of that part set to `seq`: either
   * all of it landed, and the marker says so, or none of it did.
   */
  async write(
    part: UsagePart,
    increments: readonly UsageIncrement[],
    nodeId: string,
    seq: number,
  ): Promise<void> {
    const multi = this.redis.multi();
    const expiries = new Map<string, number>();
    // Each subject once into each list it belongs to: a flush holds many counters of a key.
    const listed = new Set<string>();
    for (const increment of increments) {
      const counter = part.scope === 'v' ? parseVerificationField(increment.field) : undefined;
      if (counter) {
        this.addSpans(multi, expiries, listed, part, increment, counter);
        continue;
      }
      for (const g of GRANULARITIES) {
        const start = bucketStart(g, increment.minute);
        const key = keyOf(part, g, start);
        multi.hincrby(key, increment.field, increment.count);
        if (!expiries.has(key)) expiries.set(key, expiresAt(g, start, this.retention));
      }
    }
    for (const [key, at] of expiries) multi.expireat(key, at);
    multi.set(names.usageFlushed(partTag(part), nodeId), String(seq), 'EX', MARKER_TTL_SECONDS);
    const replies = await multi.exec();
    if (!replies) throw new Error('usage flush: transaction discarded');
    for (const [error] of replies) if (error) throw error;
  }

  /**
   * A verification counter into its spans: the API's minutes (no key, no identity), the key's
   * hours of the day and days of the month, and the key's subject into the shard's lists of the
   * day and the month. Every name has the part's tag: the same MULTI.
   */
  private addSpans(
    multi: ReturnType<RedisClient['multi']>,
    expiries: Map<string, number>,
    listedNow: Set<string>,
    part: UsagePart,
    increment: UsageIncrement,
    counter: VerificationCounter,
  ): void {
    const { ws, owner, shard } = part;
    const { outcome, tags } = counter;
    const subject = spanSubject(counter.keyId, counter.identityId);
    const expire = (key: string, g: Granularity, start: number) => {
      if (!expiries.has(key)) expiries.set(key, spanExpiresAt(g, start, this.retention));
    };
    const hour = spanStart('hour', increment.minute);
    const minutes = names.usageApiMinutes(ws, owner, shard, hour);
    const minuteOffset = (increment.minute - hour) / BUCKET_MS.minute;
    multi.hincrby(minutes, spanField(minuteOffset, outcome, tags), increment.count);
    expire(minutes, 'minute', hour);
    for (const g of ['hour', 'day'] as const) {
      const start = spanStart(SPAN_OF[g], increment.minute);
      const offset = Math.floor((bucketStart(g, increment.minute) - start) / BUCKET_MS[g]);
      const hash = keySpanOf(ws, owner, shard, g, start, subject);
      multi.hincrby(hash, spanField(offset, outcome, tags), increment.count);
      expire(hash, g, start);
      const listed = subjectsOf(ws, owner, shard, g, start);
      const entry = `${listed} ${subject}`;
      if (!listedNow.has(entry)) {
        listedNow.add(entry);
        multi.hset(listed, subject, '1');
      }
      expire(listed, g, start);
    }
  }

  /**
   * An API's verification counters of each of `starts` (bucket starts of `granularity`), from
   * the spans of the shards `shards` and the buckets of the previous layouts, summed by counter
   * and bucket. Minutes come without key and identity (the spans keep an API's minutes only);
   * with `keyIds`, only those keys' hashes are read (and other layouts' rows may come along).
   */
  async readVerifications(
    ws: string,
    apiId: string,
    granularity: Granularity,
    starts: readonly number[],
    shards: readonly number[] = ALL_SHARDS,
    keyIds?: ReadonlySet<string>,
  ): Promise<CountRow[]> {
    const wanted = new Set(starts);
    const sums = new Map<string, CountRow>();
    const add = (counter: VerificationCounter, time: number, count: number) => {
      if (!wanted.has(time)) return;
      const id = JSON.stringify([
        time,
        counter.keyId,
        counter.identityId,
        counter.outcome,
        ...counter.tags,
      ]);
      const sum = sums.get(id);
      if (sum) sum.count += count;
      else sums.set(id, { ...counter, time, count });
    };
    const spans = [...new Set(starts.map((start) => spanStart(SPAN_OF[granularity], start)))];
    // The previous layout's buckets are read meanwhile: one Promise.all, so that a failure of
    // either is the read's, never an unhandled rejection of the other.
    const [previous] = await Promise.all([
      this.read(ws, 'v', apiId, granularity, starts, shards),
      ...shards.map(async (shard) => {
        const hashes: { name: string; span: number; keyId: string; identityId: string }[] = [];
        if (granularity === 'minute') {
          for (const span of spans) {
            hashes.push({
              name: names.usageApiMinutes(ws, apiId, shard, span),
              span,
              keyId: '',
              identityId: '',
            });
          }
        } else {
          const listed = await this.hgetalls(
            spans.map((span) => subjectsOf(ws, apiId, shard, granularity, span)),
          );
          listed.forEach((subjects, i) => {
            for (const subject of Object.keys(subjects)) {
              const { keyId, identityId } = parseSpanSubject(subject);
              if (keyIds && !keyIds.has(keyId)) continue;
              const span = spans[i]!;
              hashes.push({
                name: keySpanOf(ws, apiId, shard, granularity, span, subject),
                span,
                keyId,
                identityId,
              });
            }
          });
        }
        const values = await this.hgetalls(hashes.map((hash) => hash.name));
        values.forEach((fields, i) => {
          const { span, keyId, identityId } = hashes[i]!;
          for (const [field, count] of Object.entries(fields)) {
            const parsed = parseSpanField(field);
            if (!parsed) continue;
            const { offset, outcome, tags } = parsed;
            add(
              { keyId, identityId, outcome, tags },
              bucketOfSpan(granularity, span, offset),
              Number(count),
            );
          }
        });
      }),
    ]);
    previous.forEach((bucket, i) => {
      for (const [field, count] of bucket) {
        const counter = parseVerificationField(field);
        if (counter) add(counter, starts[i]!, count);
      }
    });
    return [...sums.values()];
  }

  /**
   * HGETALL of names of one slot, READ_WINDOW at a time: a command's deadline runs from when it
   * is sent, so thousands in one pipeline time out behind each other.
   */
  private async hgetalls(keys: readonly string[]): Promise<Record<string, string>[]> {
    const out: Record<string, string>[] = [];
    for (let from = 0; from < keys.length; from += READ_WINDOW) {
      const pipeline = this.redis.pipeline();
      for (const key of keys.slice(from, from + READ_WINDOW)) pipeline.hgetall(key);
      for (const [error, value] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        out.push(value as Record<string, string>);
      }
    }
    return out;
  }

  /** Whether the node's flush `seq` landed in this part (its marker holds it). */
  async landed(part: UsagePart, nodeId: string, seq: number): Promise<boolean> {
    return (await this.redis.get(names.usageFlushed(partTag(part), nodeId))) === String(seq);
  }

  /**
   * The counters of each bucket of the per-bucket layout (a namespace's limits; an API's
   * verifications as the previous release counted them, read until they expire), in the order of
   * `starts`, summed over the shards `shards` and the hash of the release before it (until
   * `keyward migrate` moves it). One pipeline per slot, all
   * at once (a cluster client cannot pipeline across slots), READ_WINDOW buckets at a time.
   */
  async read(
    ws: string,
    scope: 'v' | 'rl',
    owner: string,
    granularity: Granularity,
    starts: readonly number[],
    shards: readonly number[] = ALL_SHARDS,
  ): Promise<Map<string, number>[]> {
    const sums = starts.map(() => new Map<string, number>());
    const slots: NameOf[] = shards.map(
      (shard) => (g, start) => keyOf({ ws, scope, owner, shard }, g, start),
    );
    slots.push((g, start) => legacyKeyOf(ws, scope, owner, g, start));
    const read = await this.worthReading(slots, granularity, starts);
    for (let from = 0; from < read.length; from += READ_WINDOW) {
      const window = read.slice(from, from + READ_WINDOW);
      await Promise.all(
        slots.map(async (nameOf) => {
          const pipeline = this.redis.pipeline();
          for (const i of window) pipeline.hgetall(nameOf(granularity, starts[i]!));
          const replies = (await pipeline.exec()) ?? [];
          replies.forEach(([error, value], j) => {
            if (error) throw error;
            const sum = sums[window[j]!]!;
            for (const [field, count] of Object.entries(value as Record<string, string>)) {
              sum.set(field, (sum.get(field) ?? 0) + Number(count));
            }
          });
        }),
      );
    }
    return sums;
  }

  /**
   * The indexes of the `starts` that may hold counts: a minute is written in the MULTI that
   * writes its hour, and the hour is kept at least as long (when retention says so), so the
   * minutes of an hour that no slot holds are not read; the hours of a day likewise. Any slot,
   * not the bucket's own: `keyward migrate` moves an old minute and its hour one at a time.
   */
  private async worthReading(
    slots: readonly NameOf[],
    granularity: Granularity,
    starts: readonly number[],
  ): Promise<number[]> {
    const every = starts.map((_, i) => i);
    const coarser = COARSER[granularity];
    if (!coarser || this.retention[coarser] < this.retention[granularity]) return every;
    const outer = [...new Set(starts.map((start) => bucketStart(coarser, start)))];
    const held = new Set<number>();
    await Promise.all(
      slots.map(async (nameOf) => {
        const pipeline = this.redis.pipeline();
        for (const start of outer) pipeline.exists(nameOf(coarser, start));
        const replies = (await pipeline.exec()) ?? [];
        replies.forEach(([error, found], j) => {
          if (error) throw error;
          if (found === 1) held.add(outer[j]!);
        });
      }),
    );
    return every.filter((i) => held.has(bucketStart(coarser, starts[i]!)));
  }
}
