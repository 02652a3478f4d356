import type { RatelimitConfig, RatelimitType } from '../domain/ratelimit';
import type { RedisClient } from '../redis/clients';
import { redisTimeMs } from '../redis/clock';
import { execResults } from '../redis/results';
import { names } from '../store/names';
import { leaseRecords } from './leases';
import { decide } from './tokenBucket';

/** A Redis that can hold buckets: the primary, or a node-local Redis (for fast buckets). */
export type BucketRedisRole = 'primary' | 'local';

/** A Redis that can hold a key's bucket, and the modes whose buckets it holds. */
export interface BucketPlace {
  redis: BucketRedisRole;
  /** Both modes when the primary is the local Redis too. */
  holds: RatelimitType[];
}

/**
 * Where buckets live, as the Limiter places them (src/limiter/limiter.ts): consistent ones in the
 * primary, fast ones in the node-local Redis, or both in the primary when a node has no local
 * Redis of its own.
 */
export function bucketPlaces(localIsPrimary: boolean): BucketPlace[] {
  return localIsPrimary
    ? [{ redis: 'primary', holds: ['consistent', 'fast'] }]
    : [
        { redis: 'primary', holds: ['consistent'] },
        { redis: 'local', holds: ['fast'] },
      ];
}

/** A key's bucket in one Redis, read without spending a token. */
export interface BucketReading {
  /** False: no hash, which reads as a full bucket. */
  exists: boolean;
  /** The hash as stored: tokens at the refill point `last` (unix ms, this Redis's clock). */
  stored: { tokens: number; last: number } | null;
  /** PTTL of the hash: the time until the bucket is full again and vanishes; null without one. */
  pttlMs: number | null;
  /** This Redis's clock (TIME), unix ms. */
  now: number;
  /** Tokens now, whole refill intervals since `last` applied; null when the key has no limit. */
  tokens: number | null;
  /** When the bucket next gains tokens; null when it is full or the key has no limit. */
  nextRefillAt: number | null;
  /**
   * Leases of regions on this bucket that the primary still counts (docs/guarantees.md,
   * "Leases"): tokens moved out of it, spent or not, until each is returned or ends.
   */
  leases: { holder: string; granted: number; expiresAt: number }[];
  /** The lease this Redis holds for its region's nodes to spend, when it holds one. */
  regionLease: { tokens: number; expiresAt: number } | null;
}

/**
 * Reads one bucket. With the key's limit, the token-bucket script itself does the arithmetic at a
 * cost of 0, which reads and writes nothing (lua/token-bucket-2.lua), so the numbers are exactly
 * those a verification would see. The stored hash and its PTTL are read in a second round trip: a
 * verification landing in between can make the two disagree by that one verification.
 */
export async function probeBucket(
  redis: RedisClient,
  bucketKey: string,
  ratelimit: RatelimitConfig | undefined,
): Promise<BucketReading> {
  const decision = ratelimit
    ? await decide(redis, { bucket: bucketKey, credits: bucketKey }, ratelimit, 0)
    : undefined;
  const [fields, pttl, time, lease] = execResults(
    await redis
      .multi()
      .hgetall(bucketKey)
      .pttl(bucketKey)
      .time()
      .hmget(names.localLease(bucketKey), 'tokens', 'expiresAt')
      .exec(),
  ) as [Record<string, string>, number, [string, string], (string | null)[]];
  const { tokens, last } = fields;
  const exists = tokens !== undefined && last !== undefined;
  const now = decision?.now ?? redisTimeMs(time);
  const leases = leaseRecords(fields)
    .filter((held) => held.expiresAt > now)
    .map(({ holder, granted, expiresAt }) => ({ holder, granted, expiresAt }));
  const [leaseTokens, leaseEnd] = lease;
  const full =
    decision !== undefined && ratelimit !== undefined && decision.remaining >= ratelimit.limit;
  return {
    exists,
    stored: exists ? { tokens: Number(tokens), last: Number(last) } : null,
    pttlMs: pttl >= 0 ? pttl : null,
    now,
    tokens: decision ? decision.remaining : null,
    nextRefillAt: decision && !full ? decision.reset : null,
    leases,
    regionLease:
      leaseTokens && leaseEnd && Number(leaseEnd) > now
        ? { tokens: Number(leaseTokens), expiresAt: Number(leaseEnd) }
        : null,
  };
}
