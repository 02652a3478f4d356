import type { RatelimitConfig } from '../domain/ratelimit';
import { decide, type BucketDecision, type BucketRedis, type CreditSpend } from './tokenBucket';
import { names } from '../store/names';

/**
 * Chooses where a bucket lives: `fast` buckets in the node-local Redis (cheap, per edge),
 * `consistent` buckets in the primary (one bucket for the whole deployment). Usage credits are
 * global, so they always live in the primary.
 */
/** Told about every script run: which Redis, how long, and whether it answered. */
export type LimiterObserver = (
  role: 'local' | 'primary',
  seconds: number,
  answered: boolean,
) => void;

export class Limiter {
  private readonly local: BucketRedis;
  private readonly primary: BucketRedis;

  constructor(redis: { local: BucketRedis; primary: BucketRedis }, observe?: LimiterObserver) {
    this.local = observe ? observed(redis.local, 'local', observe) : redis.local;
    this.primary = observe ? observed(redis.primary, 'primary', observe) : redis.primary;
  }

  private redisFor(config: RatelimitConfig): BucketRedis {
    return config.type === 'fast' ? this.local : this.primary;
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
      return decide(this.primary, keys, ratelimit, cost, credits);
    }
    const tokens = await decide(this.local, keys, ratelimit, cost);
    if (!tokens.allowed) return tokens;
    const refund = async () => {
      if (cost > 0) await decide(this.local, keys, ratelimit, -cost).catch(() => undefined);
    };
    let spent: BucketDecision;
    try {
      spent = await decide(this.primary, keys, undefined, 0, credits);
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

function observed(
  redis: BucketRedis,
  role: 'local' | 'primary',
  observe: LimiterObserver,
): BucketRedis {
  return {
    tokenBucketV1Buffer: async (bucketKey, ...args) => {
      const started = process.hrtime.bigint();
      let answered = false;
      try {
        const reply = await redis.tokenBucketV1Buffer(bucketKey, ...args);
        answered = true;
        return reply;
      } finally {
        observe(role, Number(process.hrtime.bigint() - started) / 1e9, answered);
      }
    },
  };
}
