import { getIdentity } from '../../../operations/identities/getIdentity';
import { object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { identityHandle, identityOutput, v2IdentityOf } from './shapes';

export const v2GetIdentity = defineV2Route({
  name: 'identities.getIdentity',
  operation: getIdentity,
  input: object({ identity: text }, ['identity']),
  output: identityOutput,
  toInput: (body: { identity: string }) => identityHandle(body.identity),
  toBody: (view) => ({ data: v2IdentityOf(view, view.meta) }),
});
