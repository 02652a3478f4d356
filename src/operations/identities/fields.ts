import type { IdentityChanges } from '../../domain/identity';
import { invalidField } from '../../errors';
import { checkMeta } from '../limits';
import { normalizeNamedLimits, type NamedLimitInput } from '../namedLimits';
import { LIMIT_MAX, refill } from '../schemas';
import type { PoolInput } from './credits';

/** What createIdentity and updateIdentity take besides the identity's handle. */
export interface IdentityFieldsInput extends PoolInput {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimitInput[];
}

/** An identity's credit pool: its count (0 is a pool that is empty until it refills). */
export const poolRemaining = { type: 'integer', minimum: 0, maximum: LIMIT_MAX } as const;

/** The pool's fields of createIdentity (v1's names for a key's credits). */
export const newPoolFields = { remaining: poolRemaining, refill } as const;

/** The pool's fields of updateIdentity: null drops the pool (remaining) or its refill. */
export const poolUpdateFields = {
  remaining: { ...poolRemaining, type: ['integer', 'null'] },
  refill: { ...refill, type: ['object', 'null'] },
} as const;

/**
 * The stored form of the fields given (an absent one stays absent), or a 400 for what the schema
 * cannot judge: meta's size and depth, a limit named twice. Run in the operations' `check` too,
 * so these are 400 before any permission or lookup.
 */
export function identityChanges(
  input: IdentityFieldsInput,
): Pick<IdentityChanges, 'meta' | 'ratelimits'> {
  if (input.meta !== undefined) checkMeta(input.meta);
  // The pool's rules that need no record, judged here: before permissions, in both calls.
  if (input.remaining === null && input.refill) {
    throw invalidField(['refill'], 'requires remaining');
  }
  return {
    ...(input.meta !== undefined ? { meta: input.meta } : {}),
    ...(input.ratelimits !== undefined
      ? { ratelimits: normalizeNamedLimits(input.ratelimits) }
      : {}),
  };
}
