import { deleteIdentity } from '../../../operations/identities/deleteIdentity';
import { empty, object, text } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { identityHandle } from './shapes';

export const v2DeleteIdentity = defineV2Route({
  name: 'identities.deleteIdentity',
  operation: deleteIdentity,
  input: object({ identity: text }, ['identity']),
  output: empty,
  toInput: (body: { identity: string }) => identityHandle(body.identity),
  toBody: () => ({ data: {} }),
});
