import type { RefillConfig } from '../../domain/credits';
import {
  IDENTITY_CREDITS_NONCE,
  type IdentityChanges,
  type IdentityRecord,
} from '../../domain/identity';
import { invalidField } from '../../errors';
import type { Services } from '../services';
import { standingAt } from '../keys/credits';
import { storedRefill } from '../keys/fields';

/** An identity's credit pool as the calls that write it take it, in v1's names. */
export interface PoolInput {
  /** null (updates only): the pool is dropped. */
  remaining?: number | null;
  /** null: the pool no longer refills. */
  refill?: RefillConfig | null;
}

/** What the pool is worth now; undefined when the identity has none. */
export async function poolStanding(
  deps: Pick<Services, 'identities' | 'now'>,
  identity: IdentityRecord,
): Promise<{ remaining: number; lastRefillAt: number } | undefined> {
  if (!identity.credits) return undefined;
  return standingAt(deps.now(), identity.credits, await deps.identities.readCredits(identity.id));
}

/**
 * The pool an input gives `current` (undefined: the identity being created), or a 400 for what
 * the schema cannot judge: a refill needs credits to refill, as a key's does. A new pool's count
 * is its record's creation value; a count given to an existing identity is written beside the
 * record in the same step.
 */
export function poolChanges(
  input: PoolInput,
  current: IdentityRecord | undefined,
  now: number,
): IdentityChanges['credits'] {
  const refill = storedRefill(input.refill);
  if (input.remaining === null) {
    if (refill) throw invalidField(['refill'], 'requires remaining');
    return current?.credits ? null : undefined;
  }
  if (input.remaining === undefined) {
    if (refill === undefined) return undefined;
    if (!current?.credits) throw invalidField(['refill'], 'requires remaining');
    const { reset } = current.credits;
    return { record: refill === null ? { reset } : { refill, reset } };
  }
  const kept = refill === undefined ? current?.credits?.refill : (refill ?? undefined);
  const reset = current?.credits?.reset ?? {
    nonce: IDENTITY_CREDITS_NONCE,
    value: input.remaining,
    at: now,
  };
  return {
    record: kept ? { refill: kept, reset } : { reset },
    ...(current ? { set: { remaining: input.remaining, from: now } } : {}),
  };
}
