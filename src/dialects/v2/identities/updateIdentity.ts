import { updateIdentity } from '../../../operations/identities/updateIdentity';
import { meta, object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import {
  identityFields,
  identityHandle,
  identityOutput,
  v2IdentityOf,
  v2NamedLimits,
  type V2IdentityFields,
} from './shapes';

export const v2UpdateIdentity = defineV2Route({
  name: 'identities.updateIdentity',
  operation: updateIdentity,
  input: object({ identity: text, meta, ratelimits: v2NamedLimits }, ['identity']),
  output: identityOutput,
  toInput: (body: V2IdentityFields & { identity: string }) => ({
    ...identityHandle(body.identity),
    ...identityFields(body),
  }),
  toBody: (view) => ({ data: v2IdentityOf(view, view.meta) }),
});
