import type { RatelimitConfig } from './ratelimitConfig';

/** The one command the limiter needs from a Redis: the token-bucket script. */
export interface BucketRedis {
  tokenBucketV1(key: string, ...args: (string | number)[]): Promise<number[]>;
}

export interface BucketDecision {
  allowed: boolean;
  limit: number;
  /** Tokens left after this call. */
  remaining: number;
  /** Unix ms at which the bucket next gains a token. */
  reset: number;
  /** The clock reading of the Redis that holds the bucket. */
  now: number;
}

/** Runs the token-bucket script on one Redis; `nowOverride` exists for tests only. */
export async function takeTokens(
  redis: BucketRedis,
  bucketKey: string,
  config: Pick<RatelimitConfig, 'limit' | 'refillRate' | 'refillInterval'>,
  cost: number,
  nowOverride?: number,
): Promise<BucketDecision> {
  const [allowed, remaining, reset, now] = await redis.tokenBucketV1(
    bucketKey,
    config.limit,
    config.refillRate,
    config.refillInterval,
    cost,
    nowOverride ?? '',
  );
  return {
    allowed: allowed === 1,
    limit: config.limit,
    remaining: remaining as number,
    reset: reset as number,
    now: now as number,
  };
}
