import type { Override } from '../../domain/overrides';
import { deleteOverride } from '../../operations/ratelimits/deleteOverride';
import { getOverride } from '../../operations/ratelimits/getOverride';
import {
  limit,
  limitRequest,
  type LimitInput,
  type LimitOutcome,
} from '../../operations/ratelimits/limit';
import { listOverrides } from '../../operations/ratelimits/listOverrides';
import {
  multiLimit,
  type LimitCheck,
  type MultiLimitOutcome,
} from '../../operations/ratelimits/multiLimit';
import type { NamespaceRef } from '../../operations/ratelimits/namespaces';
import { setOverride } from '../../operations/ratelimits/setOverride';
import {
  empty,
  identifier,
  INTERVAL_MAX,
  LIMIT_MAX,
  namespaceName,
  object,
  pageLimit,
} from '../../operations/schemas';
import { isKeywardId, v2Pagination } from './lists';
import { defineV2Route, widen } from './route';
import { refuse } from './shapes';

interface V2LimitBody {
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
const coreLimit = widen(limitRequest, { identifier: v2Identifier });

/** A window of v2's ratelimit calls: 1 s to 30 days (keyward's own start at 1 ms). */
const v2Duration = { type: 'integer', minimum: 1000, maximum: INTERVAL_MAX } as const;

/** v2's limit request: one check, as ratelimit.limit and each item of multiLimit take it. */
const limitBody = object(
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

function limitInput(body: V2LimitBody): LimitInput {
  const input: LimitInput = {
    namespace: body.namespace,
    identifier: body.identifier,
    limit: body.limit,
    duration: body.duration,
  };
  if (body.cost !== undefined) input.cost = body.cost;
  return input;
}

export const v2Limit = defineV2Route({
  name: 'ratelimit.limit',
  operation: limit,
  input: limitBody,
  coreInput: coreLimit,
  output: object(
    {
      limit: { type: 'integer' },
      remaining: { type: 'integer' },
      reset: { type: 'integer' },
      success: { type: 'boolean' },
      overrideId: { type: 'string' },
    },
    ['limit', 'remaining', 'reset', 'success'],
  ),
  toInput: limitInput,
  toBody(outcome: LimitOutcome) {
    const data: Record<string, unknown> = {
      limit: outcome.limit,
      remaining: outcome.remaining,
      reset: outcome.reset,
      success: outcome.success,
    };
    if (outcome.overrideId !== undefined) data.overrideId = outcome.overrideId;
    return { data };
  },
});

/**
 * The override calls. v2 names a namespace by its id or its name in one field, `namespace`; an
 * override answers as `{overrideId, identifier, limit, duration}` (its `async`, which only v1
 * sets, is not shown).
 */
function namespaceRef(namespace: string): NamespaceRef {
  return isKeywardId('rlns', namespace) ? { namespaceId: namespace } : { namespaceName: namespace };
}

function v2Override(override: Override) {
  return {
    overrideId: override.id,
    identifier: override.identifier,
    limit: override.limit,
    duration: override.duration,
  };
}

const overrideOutput = object(
  {
    overrideId: { type: 'string' },
    identifier: { type: 'string' },
    limit: { type: 'integer' },
    duration: { type: 'integer' },
  },
  ['overrideId', 'identifier', 'limit', 'duration'],
);

interface V2OverrideBody {
  namespace: string;
  identifier: string;
}

const oneOverride = object({ namespace: namespaceName, identifier }, ['namespace', 'identifier']);

interface V2SetOverrideBody extends V2OverrideBody {
  limit: number;
  duration: number;
}

export const v2SetOverride = defineV2Route({
  name: 'ratelimit.setOverride',
  operation: setOverride,
  input: object(
    {
      namespace: namespaceName,
      identifier,
      limit: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
      duration: v2Duration,
    },
    ['namespace', 'identifier', 'limit', 'duration'],
  ),
  output: object({ overrideId: { type: 'string' } }, ['overrideId']),
  toInput(body: V2SetOverrideBody) {
    const star = body.identifier.indexOf('*');
    if (star >= 0 && star < body.identifier.length - 1) {
      refuse(
        'identifier',
        'keyward matches an override to one identifier, or to every identifier of a prefix with ' +
          'a single * at its end; a * elsewhere would be taken literally',
      );
    }
    if (body.limit === 0) {
      refuse('limit', 'keyward has no blocking override: a limit is at least 1');
    }
    return {
      ...namespaceRef(body.namespace),
      identifier: body.identifier,
      limit: body.limit,
      duration: body.duration,
    };
  },
  toBody: (set) => ({ data: { overrideId: set.overrideId } }),
});

export const v2GetOverride = defineV2Route({
  name: 'ratelimit.getOverride',
  operation: getOverride,
  input: oneOverride,
  output: overrideOutput,
  toInput: (body: V2OverrideBody) => ({
    ...namespaceRef(body.namespace),
    identifier: body.identifier,
  }),
  toBody: (override) => ({ data: v2Override(override) }),
});

export const v2ListOverrides = defineV2Route({
  name: 'ratelimit.listOverrides',
  operation: listOverrides,
  input: object({ namespace: namespaceName, cursor: identifier, limit: pageLimit }, ['namespace']),
  output: { type: 'array', items: overrideOutput },
  toInput: (body: { namespace: string; cursor?: string; limit?: number }) => ({
    ...namespaceRef(body.namespace),
    ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    ...(body.limit !== undefined ? { limit: body.limit } : {}),
  }),
  toBody: (page: { overrides: Override[]; cursor?: string }) => ({
    data: page.overrides.map(v2Override),
    pagination: v2Pagination(page.cursor),
  }),
});

export const v2DeleteOverride = defineV2Route({
  name: 'ratelimit.deleteOverride',
  operation: deleteOverride,
  input: oneOverride,
  output: empty,
  toInput: (body: V2OverrideBody) => ({
    ...namespaceRef(body.namespace),
    identifier: body.identifier,
  }),
  toBody: () => ({ data: {} }),
});

/**
 * Several limits in one call, all or nothing (ratelimits.multiLimit): `passed` is the whole
 * call's verdict, each limit's `passed` whether its own bucket could pay.
 */
export const v2MultiLimit = defineV2Route({
  name: 'ratelimit.multiLimit',
  operation: multiLimit,
  input: { type: 'array', minItems: 1, maxItems: 100, items: limitBody },
  coreInput: { ...multiLimit.input, items: coreLimit },
  output: object(
    {
      passed: { type: 'boolean' },
      limits: {
        type: 'array',
        items: object(
          {
            namespace: { type: 'string' },
            identifier: { type: 'string' },
            limit: { type: 'integer' },
            remaining: { type: 'integer' },
            reset: { type: 'integer' },
            passed: { type: 'boolean' },
            overrideId: { type: 'string' },
          },
          ['namespace', 'identifier', 'limit', 'remaining', 'reset', 'passed'],
        ),
      },
    },
    ['passed', 'limits'],
  ),
  toInput: (body: V2LimitBody[]): LimitCheck[] => body.map(limitInput),
  toBody: (outcome: MultiLimitOutcome) => ({
    data: {
      passed: outcome.success,
      limits: outcome.limits.map((check) => ({
        namespace: check.namespace,
        identifier: check.identifier,
        limit: check.limit,
        remaining: check.remaining,
        reset: check.reset,
        passed: check.success,
        ...(check.overrideId !== undefined ? { overrideId: check.overrideId } : {}),
      })),
    },
  }),
});
