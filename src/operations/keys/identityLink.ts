import type { AuditEntry } from '../../domain/audit';
import type { IdentityRecord } from '../../domain/identity';
import type { KeyFields } from '../../domain/key';
import type { NamedLimit } from '../../domain/namedLimits';
import type { Services } from '../services';

/**
 * A key's identity as getKey and verifyKey answer it (Unkey v1's shape: meta is `{}` when unset),
 * with its named limits when it has any (Unkey v2's key views list them; v1's did not, see
 * `v1Identity`).
 */
export interface IdentityView {
  id: string;
  externalId: string;
  meta: Record<string, unknown>;
  ratelimits?: readonly NamedLimit[];
  /** Its credit pool's count after a verification that spent from it (keyward's own). */
  remaining?: number;
}

/** The identity with `ratelimits` (all of them, unless a verification says which are shown). */
export function identityView(
  identity: IdentityRecord,
  ratelimits: readonly NamedLimit[] | undefined = identity.ratelimits,
): IdentityView {
  const view: IdentityView = {
    id: identity.id,
    externalId: identity.externalId,
    meta: identity.meta ?? {},
  };
  if (ratelimits !== undefined && ratelimits.length > 0) view.ratelimits = ratelimits;
  return view;
}

/**
 * Links the key whose fields these are to the identity of its `ownerId` (set from `externalId`
 * or its alias `ownerId`), or unlinks it when that is cleared. `create`: the identity is made
 * when missing (createKey, updateKey, as Unkey's upsert); `existing`: only an identity that exists
 * is linked (an import, which must leave nothing behind when refused). Call after every check.
 * An identity made here is audited as the key write's `create` entry, with the identity as target.
 */
export async function linkIdentity(
  deps: Pick<Services, 'identities'>,
  ws: string,
  fields: KeyFields,
  now: number,
  missing: { create: AuditEntry } | 'existing',
): Promise<void> {
  const externalId = fields.ownerId;
  if (externalId === undefined) return;
  if (externalId === null) {
    fields.identityId = null;
    return;
  }
  const identity =
    missing !== 'existing'
      ? await deps.identities.upsertByExternalId(ws, externalId, now, missing.create)
      : await deps.identities.byExternalId(ws, externalId);
  fields.identityId = identity ? identity.id : null;
}
