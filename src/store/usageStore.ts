import {
  expiresAt,
  GRANULARITIES,
  bucketStart,
  USAGE_SHARDS,
  usageShard,
  type Granularity,
  type Retention,
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

/**
 * Usage counts in Redis: one hash per owner, shard, granularity and bucket. A flush writes every
 * granularity at once (HINCRBY into the minute, the hour and the day), so no roll-up job runs and
 * each bucket expires on its own (EXPIREAT its end plus its retention).
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
    for (const increment of increments) {
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

  /** Whether the node's flush `seq` landed in this part (its marker holds it). */
  async landed(part: UsagePart, nodeId: string, seq: number): Promise<boolean> {
    return (await this.redis.get(names.usageFlushed(partTag(part), nodeId))) === String(seq);
  }

  /**
   * The counters of each bucket, in the order of `starts`, summed over the shards `shards` and
   * the previous release's hash (until `keyward migrate` moves it). One pipeline per slot, all
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
