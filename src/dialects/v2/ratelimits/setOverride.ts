import { setOverride } from '../../../operations/ratelimits/setOverride';
import { identifier, LIMIT_MAX, namespaceName, object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { refuse } from '../shapes';
import { namespaceRef, v2Duration, type V2OverrideBody } from './shapes';

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
