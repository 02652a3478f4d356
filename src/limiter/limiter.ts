import type { RatelimitConfig } from './ratelimitConfig';
import { takeTokens, type BucketDecision, type BucketRedis } from './tokenBucket';
import { names } from '../store/names';

/**
 * Chooses where a bucket lives: `fast` buckets in the node-local Redis (cheap, per edge),
 * `consistent` buckets in the primary (one bucket for the whole deployment).
 */
export class Limiter {
  constructor(private readonly redis: { local: BucketRedis; primary: BucketRedis }) {}

  take(bucketId: string, config: RatelimitConfig, cost: number): Promise<BucketDecision> {
    const redis = config.type === 'fast' ? this.redis.local : this.redis.primary;
    return takeTokens(redis, names.bucket(bucketId), config, cost);
  }
}
