import { createIdentity } from '../../../operations/identities/createIdentity';
import { meta, object } from '../../../operations/schemas';
import { defineV2Route, open, widen } from '../route';
import { identityFields, v2ExternalId, v2NamedLimits, type V2IdentityFields } from './shapes';

export const v2CreateIdentity = defineV2Route({
  name: 'identities.createIdentity',
  operation: createIdentity,
  coreInput: widen(createIdentity.input, { externalId: { minLength: 1 } }),
  // Unkey's spec leaves this body open (no `additionalProperties: false`, unlike updateIdentity's):
  // other fields are accepted and not read.
  input: open(
    object({ externalId: v2ExternalId, meta, ratelimits: v2NamedLimits }, ['externalId']),
  ),
  output: object({ identityId: { type: 'string' } }, ['identityId']),
  toInput: (body: V2IdentityFields & { externalId: string }) => ({
    externalId: body.externalId,
    ...identityFields(body),
  }),
  toBody: (created) => ({ data: { identityId: created.identityId } }),
});
