import { getOverride } from '../../../operations/ratelimits/getOverride';
import { defineV2Route } from '../route';
import {
  namespaceRef,
  oneOverride,
  overrideOutput,
  v2Override,
  type V2OverrideBody,
} from './shapes';

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
