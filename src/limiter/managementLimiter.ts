import { RateLimitedError } from '../errors';
import { isRedisUnavailable } from '../redis/failures';
import type { Limiter } from './limiter';
import type { RatelimitConfig } from '../domain/ratelimit';

/**
 * Protects keyward's own management API from a runaway or abusive caller: one fast bucket per
 * root key on the node-local Redis. Verifications are the data plane and are not limited here.
 */
export class ManagementLimiter {
  private readonly config: RatelimitConfig;

  constructor(
    private readonly limiter: Limiter,
    options: { limit: number; refillRate: number; refillInterval: number },
  ) {
    this.config = { type: 'fast', ...options };
  }

  async check(rootKeyId: string): Promise<void> {
    let decision;
    try {
      decision = await this.limiter.take(`mgmt:${rootKeyId}`, this.config, 1);
    } catch (error) {
      // The local Redis only guards against abuse; losing it must not stop management calls.
      if (isRedisUnavailable(error)) return;
      throw error;
    }
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil((decision.reset - decision.now) / 1000));
      throw new RateLimitedError(
        `this root key made more than ${this.config.limit} management requests in a short time; retry in ${seconds} s`,
        seconds,
        this.config.limit,
      );
    }
  }
}
