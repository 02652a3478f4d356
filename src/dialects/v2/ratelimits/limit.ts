import { limit, type LimitOutcome } from '../../../operations/ratelimits/limit';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { coreLimit, limitBody, limitInput } from './shapes';

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
