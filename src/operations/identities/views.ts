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

/** An identity without its meta, as Unkey v1 listed identities. */
export type ListedIdentityView = Omit<IdentityView, 'meta'>;

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
