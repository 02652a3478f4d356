import type { IdentityRecord } from '../../domain/identity';
import type { NamedLimit } from '../../domain/namedLimits';

/** An identity as Unkey v1 answers it, with every field of its limits. */
export interface IdentityView {
  id: string;
  externalId: string;
  /** `{}` when it has none, as Unkey answers it. */
  meta: Record<string, unknown>;
  ratelimits: NamedLimit[];
}

/**
 * A listed identity's meta, for a dialect that lists it (v2). A symbol: JSON never shows it, so
 * v1's listing stays without meta.
 */
export const LISTED_META: unique symbol = Symbol('meta');

/** As listIdentities answers it: Unkey v1 lists identities without their meta. */
export type ListedIdentityView = Omit<IdentityView, 'meta'> & {
  [LISTED_META]?: Record<string, unknown>;
};

export function identityView(identity: IdentityRecord): IdentityView {
  return { ...listedIdentityView(identity), meta: identity.meta ?? {} };
}

export function listedIdentityView(identity: IdentityRecord): ListedIdentityView {
  return {
    id: identity.id,
    externalId: identity.externalId,
    ratelimits: (identity.ratelimits ?? []).map(({ name, type, limit, duration, autoApply }) => ({
      name,
      type,
      limit,
      duration,
      autoApply,
    })),
  };
}
