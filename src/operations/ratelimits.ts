import { isGranted, mayHaveAction, permissionFor } from '../auth/permissions';
import type { CachedNamespace } from '../cache/directory';
import {
  BadRequestError,
  InsufficientPermissionsError,
  NotFoundError,
  ServiceUnavailableError,
} from '../errors';
import { newId } from '../keys/ids';
import { DECIDED_AT, type BucketDecision } from '../limiter/tokenBucket';
import { isRedisUnavailable } from '../redis/failures';
import type { Namespace, Override } from '../store/ratelimitStore';
import type { Caller, Services } from './services';

const DEFAULT_NAMESPACE = 'default';

/** Either permission form names the namespace: by its name or by its id. */
function requireNamespacePermission(caller: Caller, namespace: Namespace, action: string): void {
  const granted = caller.rootKey.permissions;
  if (
    !isGranted(granted, permissionFor('ratelimit', namespace.name, action)) &&
    !isGranted(granted, permissionFor('ratelimit', namespace.id, action))
  ) {
    throw new InsufficientPermissionsError(permissionFor('ratelimit', namespace.name, action));
  }
}

function requireRatelimitAction(caller: Caller, action: string): void {
  if (!mayHaveAction(caller.rootKey.permissions, 'ratelimit', action)) {
    throw new InsufficientPermissionsError(`ratelimit.*.${action}`);
  }
}

export interface LimitInput {
  namespace?: string;
  identifier: string;
  limit: number;
  duration: number;
  cost?: number;
  async?: boolean;
}

export interface LimitOutcome {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  /** Present (false) only when the bucket could not be reached and the open policy admitted. */
  evaluated?: false;
  overrideId?: string;
  [DECIDED_AT]?: number;
}

/**
 * Standalone rate limiting with the same bucket engine: `limit` per `duration` for an identifier
 * in a namespace, unless an override says otherwise. `async: true` runs on the node-local Redis.
 */
export async function limit(
  services: Services,
  caller: Caller,
  input: LimitInput,
): Promise<LimitOutcome> {
  requireRatelimitAction(caller, 'limit');
  const ws = caller.rootKey.workspaceId;
  const name = input.namespace ?? DEFAULT_NAMESPACE;
  let namespace: Namespace | CachedNamespace | undefined = await services.directory.namespace(
    ws,
    name,
  );
  if (!namespace) {
    // A namespace that does not exist yet has no id a permission could name: only by name.
    requireNamespacePermission(caller, { id: name, name }, 'limit');
    namespace = await services.ratelimits.ensureNamespace(ws, name, newId('rlns'), services.now());
    services.directory.apply({ kind: 'ns', workspaceId: ws, name });
  }
  requireNamespacePermission(caller, namespace, 'limit');
  const override = 'matcher' in namespace ? namespace.matcher.match(input.identifier) : undefined;
  const tokens = override?.limit ?? input.limit;
  const duration = override?.duration ?? input.duration;
  const async = override?.async ?? input.async ?? false;
  let decision: BucketDecision;
  try {
    decision = await services.limiter.take(
      `rl:${ws}:${namespace.id}:${input.identifier}`,
      {
        type: async ? 'fast' : 'consistent',
        limit: tokens,
        refillRate: tokens,
        refillInterval: duration,
      },
      input.cost ?? 1,
    );
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    if (services.limiterFailure === 'closed') {
      throw new ServiceUnavailableError('the rate limiter is unavailable; retry later');
    }
    return { success: true, limit: tokens, remaining: 0, reset: services.now(), evaluated: false };
  }
  return {
    success: decision.allowed,
    limit: tokens,
    remaining: decision.remaining,
    reset: decision.reset,
    ...(override ? { overrideId: override.id } : {}),
    [DECIDED_AT]: decision.now,
  };
}

interface NamespaceRef {
  namespaceId?: string;
  namespaceName?: string;
}

function exactlyOneNamespace(input: NamespaceRef): void {
  if ((input.namespaceId === undefined) === (input.namespaceName === undefined)) {
    throw new BadRequestError('namespaceId: give either namespaceId or namespaceName');
  }
}

/** The namespace an override call names; `create` makes a named one that was never used. */
async function resolveNamespace(
  services: Services,
  caller: Caller,
  input: NamespaceRef,
  action: string,
  create = false,
): Promise<Namespace> {
  exactlyOneNamespace(input);
  requireRatelimitAction(caller, action);
  const ws = caller.rootKey.workspaceId;
  let namespace =
    input.namespaceId !== undefined
      ? await services.ratelimits.namespaceById(ws, input.namespaceId)
      : await services.ratelimits.namespaceByName(ws, input.namespaceName!);
  if (!namespace && create && input.namespaceName !== undefined) {
    requireNamespacePermission(
      caller,
      { id: input.namespaceName, name: input.namespaceName },
      action,
    );
    namespace = await services.ratelimits.ensureNamespace(
      ws,
      input.namespaceName,
      newId('rlns'),
      services.now(),
    );
  }
  if (!namespace)
    throw new NotFoundError(`namespace ${input.namespaceId ?? input.namespaceName} not found`);
  requireNamespacePermission(caller, namespace, action);
  return namespace;
}

export async function setOverride(
  services: Services,
  caller: Caller,
  input: NamespaceRef & { identifier: string; limit: number; duration: number; async?: boolean },
): Promise<{ overrideId: string }> {
  const namespace = await resolveNamespace(services, caller, input, 'set_override', true);
  const ws = caller.rootKey.workspaceId;
  const overrideId = await services.ratelimits.setOverride(
    ws,
    namespace,
    {
      identifier: input.identifier,
      limit: input.limit,
      duration: input.duration,
      ...(input.async !== undefined ? { async: input.async } : {}),
    },
    newId('rlor'),
  );
  if (overrideId === undefined) throw new NotFoundError(`namespace ${namespace.name} not found`);
  services.directory.apply({ kind: 'ns', workspaceId: ws, name: namespace.name });
  return { overrideId };
}

export async function getOverride(
  services: Services,
  caller: Caller,
  input: NamespaceRef & { identifier: string },
): Promise<Override> {
  const namespace = await resolveNamespace(services, caller, input, 'read_override');
  const override = await services.ratelimits.getOverride(
    caller.rootKey.workspaceId,
    namespace,
    input.identifier,
  );
  if (!override)
    throw new NotFoundError(`no override for ${input.identifier} in namespace ${namespace.name}`);
  return override;
}

export async function listOverrides(
  services: Services,
  caller: Caller,
  input: NamespaceRef & { cursor?: string; limit?: number },
): Promise<{ overrides: Override[]; cursor?: string; total: number }> {
  const namespace = await resolveNamespace(services, caller, input, 'read_override');
  const page = await services.ratelimits.listOverrides(caller.rootKey.workspaceId, namespace, {
    limit: input.limit ?? 100,
    ...(input.cursor !== undefined ? { after: input.cursor } : {}),
  });
  const last = page.overrides[page.overrides.length - 1];
  return {
    overrides: page.overrides,
    total: page.total,
    ...(page.more && last ? { cursor: last.identifier } : {}),
  };
}

export async function deleteOverride(
  services: Services,
  caller: Caller,
  input: NamespaceRef & { identifier: string },
): Promise<Record<string, never>> {
  const namespace = await resolveNamespace(services, caller, input, 'delete_override');
  const ws = caller.rootKey.workspaceId;
  if (!(await services.ratelimits.deleteOverride(ws, namespace, input.identifier))) {
    throw new NotFoundError(`no override for ${input.identifier} in namespace ${namespace.name}`);
  }
  services.directory.apply({ kind: 'ns', workspaceId: ws, name: namespace.name });
  return {};
}
