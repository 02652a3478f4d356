import { INTERVAL_MAX, LIMIT_MAX, limitName, object } from '../../../operations/schemas';
import { open } from '../route';
import { refuse } from '../shapes';

/** The most credits one v2 verification may spend (Unkey v2's `credits.cost` maximum). */
export const CREDIT_COST_MAX = 1_000_000_000_000;

export const keyId = {
  type: 'string',
  minLength: 3,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_]+$',
} as const;
export const meta = { type: 'object' } as const;
export const refill = object(
  {
    interval: { type: 'string', enum: ['daily', 'monthly'] },
    amount: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillDay: { type: 'integer', minimum: 1, maximum: 31 },
  },
  ['interval', 'amount'],
);
/** v2's KeyCreditsData: `remaining` null is unlimited usage. */
export const credits = object(
  { remaining: { type: ['integer', 'null'], minimum: 0, maximum: LIMIT_MAX }, refill },
  ['remaining'],
);
/** A limit's name as v2 takes it: keyward's (which names a bucket), from 3 characters as Unkey's. */
export const v2LimitName = { ...limitName, minLength: 3 } as const;

/**
 * v2's RatelimitRequest, with keyward's `type` beside it (v2 has no fast mode of its own). Open,
 * as Unkey's spec leaves it: other fields are accepted and not read.
 */
export const ratelimits = {
  type: 'array',
  maxItems: 50,
  items: open(
    object(
      {
        // Unkey's RatelimitRequest: a name of at least 3 characters, a window of at least 1 s.
        name: v2LimitName,
        limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
        duration: { type: 'integer', minimum: 1000, maximum: INTERVAL_MAX },
        autoApply: { type: 'boolean' },
        type: { type: 'string', enum: ['fast', 'consistent'] },
      },
      ['name', 'limit', 'duration'],
    ),
  ),
} as const;

/**
 * A refill as v2 takes it: a `monthly` one names its day, as Unkey's createKey and updateKey ask
 * (`refillDay` must be provided when the refill interval is `monthly`); v1 defaults it to 1.
 */
export function v2Refill<Refill extends { interval: string; refillDay?: number }>(
  refill: Refill,
): Refill {
  if (refill.interval === 'monthly' && refill.refillDay === undefined) {
    refuse('credits.refill.refillDay', 'is required with interval monthly');
  }
  return refill;
}

export interface V2Credits {
  remaining: number | null;
  refill?: { interval: 'daily' | 'monthly'; amount: number; refillDay?: number };
}
