import type { CachedNamespace } from '../../cache/directory';
import type { Namespace } from '../../domain/overrides';
import { invalidField, ServiceUnavailableError } from '../../errors';
import { newId } from '../../keys/ids';
import type { ChargeOutcome, LimitCharge } from '../../limiter/limiter';
import type { BucketStanding } from '../../limiter/tokenBucket';
import { isRedisUnavailable } from '../../redis/failures';
import { names } from '../../store/names';
import { defineOperation } from '../operation';
import type { Services } from '../services';
import { object } from '../schemas';
import { limitRequest, type LimitInput } from './limit';
import { requireNamespacePermission } from './namespaces';

const DEFAULT_NAMESPACE = 'default';

/** One check: what ratelimits.limit takes. */
export type LimitCheck = LimitInput;

/** Where one check stands after the call. */
export interface CheckOutcome {
  namespace: string;
  identifier: string;
  /** Its own bucket could pay its cost (whether or not the whole call was admitted). */
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  overrideId?: string;
  /** Its bucket could not be reached: `remaining` and `reset` say nothing. */
  evaluated?: false;
}

export interface MultiLimitOutcome {
  /** Every check passed, and every bucket paid; otherwise none did. */
  success: boolean;
  limits: CheckOutcome[];
  /** The limiter could not be reached and the open policy admitted. */
  evaluated?: false;
}

/** A check with its namespace resolved: its bucket, and the override that decided its shape. */
interface Planned {
  check: LimitCheck;
  charge: LimitCharge;
  overrideId?: string;
}

/**
 * Two checks of one bucket would each see its tokens as they stand and pay without the other:
 * a call names a bucket (namespace and identifier) once.
 */
function eachBucketOnce(checks: readonly LimitCheck[]): void {
  const seen = new Map<string, number>();
  checks.forEach((check, index) => {
    const bucket = `${check.namespace ?? DEFAULT_NAMESPACE}\u0000${check.identifier}`;
    const first = seen.get(bucket);
    if (first !== undefined) {
      throw invalidField(
        [index, 'identifier'],
        `the same namespace and identifier as [${first}]; name a bucket once`,
      );
    }
    seen.set(bucket, index);
  });
}

/**
 * Several standalone limits decided together, all or nothing (Limiter.charge): every bucket pays
 * its cost, or none does. Each check answers whether its own bucket could pay, as
 * ratelimits.limit would have, with the override that decided its limit.
 */
export const multiLimit = defineOperation({
  name: 'ratelimits.multiLimit',
  method: 'POST',
  plane: 'data',
  summary:
    'Takes tokens from the buckets of several identifiers, all or none: 200 whether or not limited.',
  permission: { resource: 'ratelimit', action: 'limit', scope: 'resource' },
  input: { type: 'array', minItems: 1, maxItems: 100, items: limitRequest },
  check: eachBucketOnce,
  output: object(
    {
      success: { type: 'boolean' },
      limits: {
        type: 'array',
        items: object(
          {
            namespace: { type: 'string' },
            identifier: { type: 'string' },
            success: { type: 'boolean' },
            limit: { type: 'integer' },
            remaining: { type: 'integer' },
            reset: { type: 'integer' },
            overrideId: { type: 'string' },
            evaluated: { const: false },
          },
          ['namespace', 'identifier', 'success', 'limit', 'remaining', 'reset'],
        ),
      },
      evaluated: { const: false },
    },
    ['success', 'limits'],
  ),
  uses: ['directory', 'ratelimits', 'limiter', 'limiterFailure', 'now', 'usage'],
  async handle(deps, caller, checks: LimitCheck[]): Promise<MultiLimitOutcome> {
    const ws = caller.rootKey.workspaceId;
    // Every permission before anything is created or spent.
    const wanted = [...new Set(checks.map((check) => check.namespace ?? DEFAULT_NAMESPACE))];
    const found = await Promise.all(wanted.map((name) => deps.directory.namespace(ws, name)));
    wanted.forEach((name, i) =>
      requireNamespacePermission(caller, found[i] ?? { id: name, name }, 'limit'),
    );
    const namespaces = new Map<string, Namespace | CachedNamespace>();
    for (const [i, name] of wanted.entries()) {
      namespaces.set(
        name,
        found[i] ?? (await deps.ratelimits.ensureNamespace(ws, name, newId('rlns'), deps.now())),
      );
    }

    const planned = checks.map((check): Planned => {
      const namespace = namespaces.get(check.namespace ?? DEFAULT_NAMESPACE)!;
      const override =
        'matcher' in namespace ? namespace.matcher.match(check.identifier) : undefined;
      const limit = override?.limit ?? check.limit;
      const bucketId = `rl:${ws}:${namespace.id}:${check.identifier}`;
      return {
        check,
        charge: {
          bucketKey: names.bucket(bucketId),
          tag: bucketId,
          config: {
            type: (override?.async ?? check.async ?? false) ? 'fast' : 'consistent',
            limit,
            refillRate: limit,
            refillInterval: override?.duration ?? check.duration,
          },
          cost: check.cost ?? 1,
        },
        ...(override ? { overrideId: override.id } : {}),
      };
    });

    let outcome: ChargeOutcome;
    try {
      outcome = await deps.limiter.charge(planned.map((p) => p.charge));
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      if (deps.limiterFailure === 'closed') {
        throw new ServiceUnavailableError('the rate limiter is unavailable; retry later');
      }
      const now = deps.now();
      for (const p of planned) count(deps, ws, now, namespaces, p.check, true, caller.requestId);
      return {
        success: true,
        evaluated: false,
        limits: planned.map((p) => unevaluated(p, true, now)),
      };
    }
    const standings = await withUnreached(deps, planned, outcome);
    const now = deps.now();
    return {
      success: outcome.allowed,
      limits: planned.map((p, i) => {
        const standing = standings[i];
        const passed = standing ? !standing.exceeded : false;
        count(deps, ws, now, namespaces, p.check, passed, caller.requestId);
        if (!standing) return unevaluated(p, false, now);
        return {
          namespace: p.check.namespace ?? DEFAULT_NAMESPACE,
          identifier: p.check.identifier,
          success: !standing.exceeded,
          limit: p.charge.config.limit,
          remaining: standing.remaining,
          reset: standing.reset,
          ...(p.overrideId !== undefined ? { overrideId: p.overrideId } : {}),
        };
      }),
    };
  },
});

/**
 * A refused call stops at the first Redis that refused (Limiter.charge): the buckets it did not
 * reach are read (cost 0, nothing spent), so that every check says where it stands and whether it
 * could have paid. One that cannot be read then stays unevaluated.
 */
async function withUnreached(
  deps: { limiter: { charge(charges: readonly LimitCharge[]): Promise<ChargeOutcome> } },
  planned: readonly Planned[],
  outcome: ChargeOutcome,
): Promise<(BucketStanding | undefined)[]> {
  const standings = [...outcome.standings];
  const unreached = standings.flatMap((standing, i) => (standing ? [] : [i]));
  if (unreached.length === 0) return standings;
  let read: ChargeOutcome;
  try {
    read = await deps.limiter.charge(unreached.map((i) => ({ ...planned[i]!.charge, cost: 0 })));
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    return standings;
  }
  unreached.forEach((index, at) => {
    const standing = read.standings[at];
    if (standing) {
      standings[index] = {
        ...standing,
        exceeded: planned[index]!.charge.cost > standing.remaining,
      };
    }
  });
  return standings;
}

function unevaluated(p: Planned, success: boolean, now: number): CheckOutcome {
  return {
    namespace: p.check.namespace ?? DEFAULT_NAMESPACE,
    identifier: p.check.identifier,
    success,
    limit: p.charge.config.limit,
    remaining: 0,
    reset: now,
    ...(p.overrideId !== undefined ? { overrideId: p.overrideId } : {}),
    evaluated: false,
  };
}

/** Usage analytics count each limit of the call under its namespace and identifier. */
function count(
  deps: Pick<Services, 'usage'>,
  ws: string,
  now: number,
  namespaces: ReadonlyMap<string, Namespace | CachedNamespace>,
  check: LimitCheck,
  passed: boolean,
  requestId: string,
): void {
  const namespace = namespaces.get(check.namespace ?? DEFAULT_NAMESPACE)!;
  deps.usage.limit(ws, now, namespace.id, check.identifier, passed, requestId);
}
