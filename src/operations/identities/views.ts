import type { RefillConfig } from '../../domain/credits';
import type { IdentityRecord } from '../../domain/identity';
import type { NamedLimit } from '../../domain/namedLimits';

/** An identity as Unkey v1 answers it, with every field of its limits. */
export interface IdentityView {
  id: string;
  externalId: string;
  /** `{}` when it has none, as Unkey answers it. */
  meta: Record<string, unknown>;
  ratelimits: NamedLimit[];
  /** Its credit pool's count now, when it has one (v1's name, as a key's). */
  remaining?: number;
  refill?: RefillConfig & { lastRefillAt: number };
}

/** An identity without its meta, as Unkey v1 listed identities. */
export type ListedIdentityView = Omit<IdentityView, 'meta'>;

/** `pool`: what its credit pool stands at now (poolStanding), when it has one. */
export function identityView(
  identity: IdentityRecord,
  pool?: { remaining: number; lastRefillAt: number },
): IdentityView {
  const view: IdentityView = { ...listedIdentityView(identity), meta: identity.meta ?? {} };
  if (pool) {
    view.remaining = pool.remaining;
    const refill = identity.credits?.refill;
    if (refill) view.refill = { ...refill, lastRefillAt: pool.lastRefillAt };
  }
  return view;
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
