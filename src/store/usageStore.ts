import {
  expiresAt,
  GRANULARITIES,
  bucketStart,
  type Granularity,
  type Retention,
} from '../domain/usage';
import type { RedisClient } from '../redis/clients';
import { names } from './names';

/** One counter to add: counted at minute `minute`, in an API's (`v`) or a namespace's (`rl`). */
export interface UsageIncrement {
  scope: 'v' | 'rl';
  /** The API id (or `NO_API`), or the namespace id. */
  owner: string;
  /** The start of the minute it was counted in (Unix ms). */
  minute: number;
  field: string;
  count: number;
}

/** How long a node's flush marker lives: far longer than any flush stays unsure. */
const MARKER_TTL_SECONDS = 86_400;

const keyOf = (ws: string, scope: 'v' | 'rl', owner: string, g: Granularity, start: number) =>
  scope === 'v'
    ? names.usageVerifications(ws, owner, g, start)
    : names.usageLimits(ws, owner, g, start);

/**
 * Usage counts in Redis: one hash per owner, granularity and bucket. A flush writes every
 * granularity at once (HINCRBY into the minute, the hour and the day), so no roll-up job runs and
 * each bucket expires on its own (EXPIREAT its end plus its retention).
 */
export class UsageStore {
  constructor(
    private readonly redis: RedisClient,
    readonly retention: Retention,
  ) {}

  /**
   * Adds a workspace's counts in one MULTI, with the node's marker set to `seq`: either all of it
   * landed, and the marker says so, or none of it did.
   */
  async write(
    ws: string,
    increments: readonly UsageIncrement[],
    nodeId: string,
    seq: number,
  ): Promise<void> {
    const multi = this.redis.multi();
    const expiries = new Map<string, number>();
    for (const increment of increments) {
      for (const g of GRANULARITIES) {
        const start = bucketStart(g, increment.minute);
        const key = keyOf(ws, increment.scope, increment.owner, g, start);
        multi.hincrby(key, increment.field, increment.count);
        if (!expiries.has(key)) expiries.set(key, expiresAt(g, start, this.retention));
      }
    }
    for (const [key, at] of expiries) multi.expireat(key, at);
    multi.set(names.usageFlushed(ws, nodeId), String(seq), 'EX', MARKER_TTL_SECONDS);
    const replies = await multi.exec();
    if (!replies) throw new Error('usage flush: transaction discarded');
    for (const [error] of replies) if (error) throw error;
  }

  /** Whether the node's flush `seq` landed in this workspace (its marker holds it). */
  async landed(ws: string, nodeId: string, seq: number): Promise<boolean> {
    return (await this.redis.get(names.usageFlushed(ws, nodeId))) === String(seq);
  }

  /** The counters of each bucket, in the order of `starts` (an empty object for none). */
  async read(
    ws: string,
    scope: 'v' | 'rl',
    owner: string,
    granularity: Granularity,
    starts: readonly number[],
  ): Promise<Record<string, string>[]> {
    if (starts.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const start of starts) pipeline.hgetall(keyOf(ws, scope, owner, granularity, start));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, value]) => {
      if (error) throw error;
      return value as Record<string, string>;
    });
  }
}
