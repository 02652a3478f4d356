import type { RatelimitConfig } from './ratelimitConfig';
import { decide, type BucketDecision, type BucketRedis, type CreditSpend } from './tokenBucket';
import { names } from '../store/names';

/**
 * Chooses where a bucket lives: `fast` buckets in the node-local Redis (cheap, per edge),
 * `consistent` buckets in the primary (one bucket for the whole deployment). Usage credits are
 * global, so they always live in the primary.
 */
export class Limiter {
  constructor(private readonly redis: { local: BucketRedis; primary: BucketRedis }) {}

  private redisFor(config: RatelimitConfig): BucketRedis {
    return config.type === 'fast' ? this.redis.local : this.redis.primary;
  }

  /** A bucket alone (standalone rate limits, the management limit). */
  take(bucketId: string, config: RatelimitConfig, cost: number): Promise<BucketDecision> {
    const key = names.bucket(bucketId);
    return decide(this.redisFor(config), { bucket: key, credits: key }, config, cost);
  }

  /**
   * A key's verification: its bucket (if any) and its credits (if any), spent together or not at
   * all. On the primary that is one script. A fast bucket lives elsewhere, so there the tokens are
   * taken first and given back when the credits refuse or cannot be reached.
   */
  async check(
    keyId: string,
    ratelimit: RatelimitConfig | undefined,
    cost: number,
    credits: CreditSpend | undefined,
  ): Promise<BucketDecision> {
    const keys = { bucket: names.bucket(keyId), credits: names.credits(keyId) };
    if (!credits) return decide(this.redisFor(ratelimit!), keys, ratelimit, cost);
    if (!ratelimit || ratelimit.type === 'consistent') {
      return decide(this.redis.primary, keys, ratelimit, cost, credits);
    }
    const tokens = await decide(this.redis.local, keys, ratelimit, cost);
    if (!tokens.allowed) return tokens;
    const refund = async () => {
      if (cost > 0) await decide(this.redis.local, keys, ratelimit, -cost).catch(() => undefined);
    };
    let spent: BucketDecision;
    try {
      spent = await decide(this.redis.primary, keys, undefined, 0, credits);
    } catch (error) {
      await refund();
      throw error;
    }
    if (!spent.usageExceeded) return { ...tokens, creditsRemaining: spent.creditsRemaining! };
    await refund();
    return {
      ...tokens,
      allowed: false,
      usageExceeded: true,
      remaining: Math.min(ratelimit.limit, tokens.remaining + cost),
      creditsRemaining: spent.creditsRemaining!,
    };
  }
}
