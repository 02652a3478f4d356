import type { IdentityChanges } from '../../domain/identity';
import { checkMeta } from '../limits';
import { normalizeNamedLimits, type NamedLimitInput } from '../namedLimits';

/** What createIdentity and updateIdentity take besides the identity's handle. */
export interface IdentityFieldsInput {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimitInput[];
}

/**
 * The stored form of the fields given (an absent one stays absent), or a 400 for what the schema
 * cannot judge: meta's size and depth, a limit named twice. Run in the operations' `check` too,
 * so these are 400 before any permission or lookup.
 */
export function identityChanges(input: IdentityFieldsInput): IdentityChanges {
  if (input.meta !== undefined) checkMeta(input.meta);
  return {
    ...(input.meta !== undefined ? { meta: input.meta } : {}),
    ...(input.ratelimits !== undefined
      ? { ratelimits: normalizeNamedLimits(input.ratelimits) }
      : {}),
  };
}
