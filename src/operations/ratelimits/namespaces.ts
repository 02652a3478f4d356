import { isGranted, permissionFor } from '../../auth/permissions';
import type { Namespace } from '../../domain/overrides';
import { InsufficientPermissionsError, invalidField, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import type { Caller } from '../operation';
import { identifier, namespaceRef, object } from '../schemas';
import type { RatelimitStore } from '../../store/ratelimitStore';
import type { Services } from '../services';

/** Either permission form names the namespace: by its name or by its id. */
export function requireNamespacePermission(
  caller: Caller,
  namespace: Namespace,
  action: string,
): void {
  const granted = caller.rootKey.permissions;
  if (
    !isGranted(granted, permissionFor('ratelimit', namespace.name, action)) &&
    !isGranted(granted, permissionFor('ratelimit', namespace.id, action))
  ) {
    throw new InsufficientPermissionsError(permissionFor('ratelimit', namespace.name, action));
  }
}

/**
 * The input of a call on one override: its namespace (by id or by name) and its identifier, with
 * the rule the schema cannot state.
 */
export const oneOverride = {
  input: object({ ...namespaceRef, identifier }, ['identifier']),
  check: exactlyOneNamespace,
};

export function noOverride(identifier: string, namespace: Namespace): NotFoundError {
  return new NotFoundError(
    'ratelimit_override',
    `no override for ${identifier} in namespace ${namespace.name}`,
  );
}

export interface NamespaceRef {
  namespaceId?: string;
  namespaceName?: string;
}

/** An override call names its namespace one way: by id or by name. */
export function exactlyOneNamespace(input: NamespaceRef): void {
  if ((input.namespaceId === undefined) === (input.namespaceName === undefined)) {
    throw invalidField(['namespaceId'], 'give either namespaceId or namespaceName');
  }
}

/** The namespace an override call names; `create` makes a named one that was never used. */
export async function resolveNamespace(
  deps: {
    ratelimits: Pick<RatelimitStore, 'namespaceById' | 'namespaceByName' | 'ensureNamespace'>;
    now: Services['now'];
  },
  caller: Caller,
  input: NamespaceRef,
  action: string,
  create = false,
): Promise<Namespace> {
  const ws = caller.rootKey.workspaceId;
  let namespace =
    input.namespaceId !== undefined
      ? await deps.ratelimits.namespaceById(ws, input.namespaceId)
      : await deps.ratelimits.namespaceByName(ws, input.namespaceName!);
  if (!namespace && create && input.namespaceName !== undefined) {
    requireNamespacePermission(
      caller,
      { id: input.namespaceName, name: input.namespaceName },
      action,
    );
    namespace = await deps.ratelimits.ensureNamespace(
      ws,
      input.namespaceName,
      newId('rlns'),
      deps.now(),
    );
  }
  if (!namespace)
    throw new NotFoundError(
      'ratelimit_namespace',
      `namespace ${input.namespaceId ?? input.namespaceName} not found`,
    );
  requireNamespacePermission(caller, namespace, action);
  return namespace;
}
