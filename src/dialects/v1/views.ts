import type { KeysPage } from '../../operations/apis/listKeys';
import type { IdentityView } from '../../operations/keys/identityLink';
import type { Verification } from '../../operations/keys/verification';
import type { KeyView } from '../../operations/views';

/*
 * What the operations answer holds more than Unkey v1 did (a key view's effective permissions,
 * an identity's limits, which v2 shows): v1 writes these shapes, so its answers stay as they were.
 */

/** The identity as Unkey v1 answered it: without its limits. */
export function v1Identity(identity: IdentityView): IdentityView {
  return { id: identity.id, externalId: identity.externalId, meta: identity.meta };
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
export function v1Verification(verification: Verification): Verification {
  if (verification.identity?.ratelimits === undefined) return verification;
  return { ...verification, identity: v1Identity(verification.identity) };
}

/** A page of keys, each as v1 answered it. */
export function v1KeysPage(page: KeysPage): KeysPage {
  return { ...page, keys: page.keys.map(v1KeyView) };
}
