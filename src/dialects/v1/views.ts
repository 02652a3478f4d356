import type { KeysPage } from '../../operations/apis/listKeys';
import type { IdentitiesPage } from '../../operations/identities/listIdentities';
import type { IdentityView } from '../../operations/keys/identityLink';
import type { RoleView } from '../../operations/permissions/views';
import type { Verification } from '../../operations/keys/verification';
import type { KeyView } from '../../operations/views';

/*
 * What the operations answer holds more than Unkey v1 did (a key view's effective permissions,
 * an identity's limits, which v2 shows): v1 writes these shapes, so its answers stay as they were.
 */

/** The identity as Unkey v1 answered it: without its limits. */
export function v1Identity(identity: IdentityView): IdentityView {
  const v1: IdentityView = {
    id: identity.id,
    externalId: identity.externalId,
    meta: identity.meta,
  };
  // Its pool's count after a verification spent from it: keyward's own, in both dialects.
  if (identity.remaining !== undefined) v1.remaining = identity.remaining;
  return v1;
}

/**
 * A key view as Unkey v1 answered it: without what only v2 shows (the effective permissions
 * beside the key's own, its identity's limits). Copies only when there is something to leave out.
 */
export function v1KeyView(view: KeyView): KeyView {
  if (view.effectivePermissions === undefined && view.identity?.ratelimits === undefined) {
    return view;
  }
  const v1: KeyView = { ...view };
  delete v1.effectivePermissions;
  if (view.identity) v1.identity = v1Identity(view.identity);
  return v1;
}

/** A verdict as Unkey v1 answered it: the identity without its limits. */
export function v1Verification(verification: Verification): object {
  const { identity, ratelimits } = verification;
  // The verification path: no copy unless something must be left out.
  if (identity?.ratelimits === undefined && ratelimits === undefined) return verification;
  const v1: Record<string, unknown> = { ...verification };
  if (identity) v1.identity = v1Identity(identity);
  // Whose limit each is, which v2 derives a limit's id from: v1 had no ids for them.
  if (ratelimits) v1.ratelimits = ratelimits.map(({ owner: _owner, ...standing }) => standing);
  return v1;
}

/** A page of keys, each as v1 answered it. */
export function v1KeysPage(page: KeysPage): KeysPage {
  return { ...page, keys: page.keys.map(v1KeyView) };
}

/** Unkey v1 listed identities without their meta. */
export function v1IdentitiesPage(page: IdentitiesPage): object {
  return { ...page, identities: page.identities.map(({ meta: _meta, ...listed }) => listed) };
}

/** Unkey v1 answered a role's permissions by name only. */
export function v1Role(role: RoleView): object {
  const { permissionRecords, ...v1 } = role;
  return v1;
}
