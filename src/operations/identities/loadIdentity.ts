import { isGranted, permissionFor } from '../../auth/permissions';
import type { IdentityRecord } from '../../domain/identity';
import { InsufficientPermissionsError, invalidField, NotFoundError } from '../../errors';
import type { IdentityStore } from '../../store/identityStore';
import type { Caller } from '../operation';

/** The two ways a call names an existing identity. */
export interface IdentityHandle {
  identityId?: string;
  externalId?: string;
}

/**
 * Exactly one of them. Unkey v1 lets identityId win when both are given; keyward refuses the pair
 * rather than ignore half of what the caller said (docs/decisions.md).
 */
export function exactlyOneIdentity(input: IdentityHandle): void {
  if ((input.identityId === undefined) === (input.externalId === undefined)) {
    throw invalidField(['identityId'], 'give either identityId or externalId');
  }
}

/**
 * The identity the call names, if the root key may do `action` on it
 * (`identity.<its id>.<action>`, or `identity.*.<action>`). Named by externalId, one it may not
 * touch is not found, as one that does not exist: a 403 would tell the id behind the externalId.
 */
export async function loadIdentity(
  deps: { identities: Pick<IdentityStore, 'byId' | 'byExternalId'> },
  caller: Caller,
  handle: IdentityHandle,
  action: string,
): Promise<IdentityRecord> {
  const ws = caller.rootKey.workspaceId;
  const identity =
    handle.identityId !== undefined
      ? await deps.identities.byId(ws, handle.identityId)
      : await deps.identities.byExternalId(ws, handle.externalId ?? '');
  const notFound = identityNotFound(handle);
  if (!identity) throw notFound;
  const permission = permissionFor('identity', identity.id, action);
  if (!isGranted(caller.rootKey.permissions, permission)) {
    if (handle.identityId === undefined) throw notFound;
    throw new InsufficientPermissionsError(permission);
  }
  return identity;
}

/** Unkey v1's words, with the handle the call gave. */
export function identityNotFound(handle: IdentityHandle): NotFoundError {
  return new NotFoundError(
    'identity',
    `identity ${handle.identityId ?? handle.externalId} not found`,
  );
}
