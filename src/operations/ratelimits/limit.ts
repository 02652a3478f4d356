import type { CachedNamespace } from '../../cache/directory';
import type { Namespace } from '../../domain/overrides';
import { ServiceUnavailableError } from '../../errors';
import { newId } from '../../keys/ids';
import { DECIDED_AT, type BucketDecision } from '../../limiter/tokenBucket';
import { isRedisUnavailable } from '../../redis/failures';
import { defineOperation } from '../operation';
import { rateLimitHeaders } from '../rateLimitHeaders';
import {
  duration,
  identifier,
  LIMIT_MAX,
  limitOutput,
  namespaceName,
  object,
  tokens,
} from '../schemas';
import { requireNamespacePermission } from './namespaces';

const DEFAULT_NAMESPACE = 'default';

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
/** One limit check: ratelimits.limit's input, and each item of ratelimits.multiLimit's. */
export const limitRequest = object(
  {
    namespace: namespaceName,
    identifier,
    limit: tokens,
    duration,
    cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
    async: { type: 'boolean' },
  },
  ['identifier', 'limit', 'duration'],
);

export const limit = defineOperation({
  name: 'ratelimits.limit',
  method: 'POST',
  plane: 'data',
  summary:
    'Takes tokens from the bucket of an identifier in a namespace: 200 whether or not limited.',
  permission: { resource: 'ratelimit', action: 'limit', scope: 'resource' },
  input: limitRequest,
  output: limitOutput,
  uses: ['directory', 'ratelimits', 'limiter', 'limiterFailure', 'now', 'usage'],
  async handle(deps, caller, input: LimitInput): Promise<LimitOutcome> {
    const ws = caller.rootKey.workspaceId;
    const name = input.namespace ?? DEFAULT_NAMESPACE;
    let namespace: Namespace | CachedNamespace | undefined = await deps.directory.namespace(
      ws,
      name,
    );
    if (!namespace) {
      // A namespace that does not exist yet has no id a permission could name: only by name.
      requireNamespacePermission(caller, { id: name, name }, 'limit');
      namespace = await deps.ratelimits.ensureNamespace(ws, name, newId('rlns'), deps.now());
    }
    requireNamespacePermission(caller, namespace, 'limit');
    const override = 'matcher' in namespace ? namespace.matcher.match(input.identifier) : undefined;
    const tokens = override?.limit ?? input.limit;
    const duration = override?.duration ?? input.duration;
    const async = override?.async ?? input.async ?? false;
    let decision: BucketDecision;
    try {
      decision = await deps.limiter.take(
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
      if (deps.limiterFailure === 'closed') {
        throw new ServiceUnavailableError('the rate limiter is unavailable; retry later');
      }
      deps.usage.limit(ws, deps.now(), namespace.id, input.identifier, true, caller.requestId);
      return { success: true, limit: tokens, remaining: 0, reset: deps.now(), evaluated: false };
    }
    deps.usage.limit(
      ws,
      decision.now,
      namespace.id,
      input.identifier,
      decision.allowed,
      caller.requestId,
    );
    return {
      success: decision.allowed,
      limit: tokens,
      remaining: decision.remaining,
      reset: decision.reset,
      ...(override ? { overrideId: override.id } : {}),
      [DECIDED_AT]: decision.now,
    };
  },
  headers: (outcome: LimitOutcome, now: number) =>
    outcome.evaluated === false
      ? {}
      : rateLimitHeaders(outcome, !outcome.success, outcome[DECIDED_AT] ?? now),
});
