import type { Override } from '../../../domain/overrides';
import { limitRequest, type LimitInput } from '../../../operations/ratelimits/limit';
import type { NamespaceRef } from '../../../operations/ratelimits/namespaces';
import {
  identifier,
  INTERVAL_MAX,
  LIMIT_MAX,
  namespaceName,
  object,
} from '../../../operations/schemas';
import { isKeywardId } from '../lists';
import { widen } from '../route';

/** ratelimit.* in v2's shapes: v2 calls keyward's `ratelimits` service `ratelimit`. */

export interface V2LimitBody {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost?: number;
}

/**
 * v2's identifier: up to 512 characters (Unkey's column is varchar(512)); keyward's v1 keeps 256.
 * The operation's rules are widened to match (`coreInput`).
 */
const v2Identifier = { type: 'string', minLength: 1, maxLength: 512 } as const;
export const coreLimit = widen(limitRequest, { identifier: v2Identifier });

/** A window of v2's ratelimit calls: 1 s to 30 days (keyward's own start at 1 ms). */
export const v2Duration = { type: 'integer', minimum: 1000, maximum: INTERVAL_MAX } as const;

/** v2's limit request: one check, as ratelimit.limit and each item of multiLimit take it. */
export const limitBody = object(
  {
    // keyward's namespace names are narrower than v2's: a name is part of Redis key names and of
    // the invalidation messages, and root keys' permissions name it (docs/decisions.md).
    namespace: namespaceName,
    identifier: v2Identifier,
    limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    duration: v2Duration,
    cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
  },
  ['namespace', 'identifier', 'limit', 'duration'],
);

export function limitInput(body: V2LimitBody): LimitInput {
  const input: LimitInput = {
    namespace: body.namespace,
    identifier: body.identifier,
    limit: body.limit,
    duration: body.duration,
  };
  if (body.cost !== undefined) input.cost = body.cost;
  return input;
}

/**
 * The override calls. v2 names a namespace by its id or its name in one field, `namespace`; an
 * override answers as `{overrideId, identifier, limit, duration}` (its `async`, which only v1
 * sets, is not shown).
 */
export function namespaceRef(namespace: string): NamespaceRef {
  return isKeywardId('rlns', namespace) ? { namespaceId: namespace } : { namespaceName: namespace };
}

export function v2Override(override: Override) {
  return {
    overrideId: override.id,
    identifier: override.identifier,
    limit: override.limit,
    duration: override.duration,
  };
}

export const overrideOutput = object(
  {
    overrideId: { type: 'string' },
    identifier: { type: 'string' },
    limit: { type: 'integer' },
    duration: { type: 'integer' },
  },
  ['overrideId', 'identifier', 'limit', 'duration'],
);

export interface V2OverrideBody {
  namespace: string;
  identifier: string;
}

/** getOverride's and deleteOverride's body: one override, by its namespace and identifier. */
export const oneOverride = object({ namespace: namespaceName, identifier }, [
  'namespace',
  'identifier',
]);
