import { limit, type LimitInput, type LimitOutcome } from '../../operations/ratelimits/limit';
import { INTERVAL_MAX, LIMIT_MAX, object } from '../../operations/schemas';
import { defineV2Route } from './route';

interface V2LimitBody {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost?: number;
}

export const v2Limit = defineV2Route({
  name: 'ratelimit.limit',
  operation: limit,
  input: object(
    {
      // keyward's namespace names are narrower than v2's (they become part of Redis key names).
      namespace: { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,128}$' },
      identifier: { type: 'string', minLength: 1, maxLength: 256 },
      limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
      duration: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
      cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
    },
    ['namespace', 'identifier', 'limit', 'duration'],
  ),
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
  toInput(body: V2LimitBody): LimitInput {
    const input: LimitInput = {
      namespace: body.namespace,
      identifier: body.identifier,
      limit: body.limit,
      duration: body.duration,
    };
    if (body.cost !== undefined) input.cost = body.cost;
    return input;
  },
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
