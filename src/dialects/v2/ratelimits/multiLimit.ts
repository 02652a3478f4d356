import {
  multiLimit,
  type LimitCheck,
  type MultiLimitOutcome,
} from '../../../operations/ratelimits/multiLimit';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { coreLimit, limitBody, limitInput, type V2LimitBody } from './shapes';

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
