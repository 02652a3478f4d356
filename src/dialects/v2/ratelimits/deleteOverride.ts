import { deleteOverride } from '../../../operations/ratelimits/deleteOverride';
import { empty } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { namespaceRef, oneOverride, type V2OverrideBody } from './shapes';

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
