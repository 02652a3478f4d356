import type { RatelimitConfig, RatelimitType } from './ratelimit';

/**
 * A named rate limit of a key or an identity (Unkey's `ratelimits`): a token bucket of `limit`
 * tokens that refills whole every `duration` ms. `autoApply` limits are spent by every
 * verification; the others only when the verification names them.
 */
export interface NamedLimit {
  name: string;
  type: RatelimitType;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** The name under which a key's seed `ratelimit` object is one of its named limits. */
export const DEFAULT_LIMIT_NAME = 'default';

/** At most this many named limits per key or identity: each costs a bucket read per verification. */
export const NAMED_LIMITS_MAX = 20;

/** A named limit as the bucket script sees it. */
export function namedBucket(
  limit: Pick<NamedLimit, 'type' | 'limit' | 'duration'>,
): RatelimitConfig {
  return {
    type: limit.type,
    limit: limit.limit,
    refillRate: limit.limit,
    refillInterval: limit.duration,
  };
}
