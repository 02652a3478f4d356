import { createIdentity } from '../../../operations/identities/createIdentity';
import { meta, object } from '../../../operations/schemas';
import { defineV2Route, open, widen } from '../route';
import {
  identityFields,
  newPoolCredits,
  poolFieldNames,
  v2ExternalId,
  v2NamedLimits,
  type V2IdentityFields,
} from './shapes';

export const v2CreateIdentity = defineV2Route({
  name: 'identities.createIdentity',
  operation: createIdentity,
  fieldNames: poolFieldNames,
  coreInput: widen(createIdentity.input, { externalId: { minLength: 1 } }),
  // Unkey's spec leaves this body open (no `additionalProperties: false`, unlike updateIdentity's):
  // other fields are accepted and not read.
  input: open(
    object({ externalId: v2ExternalId, meta, ratelimits: v2NamedLimits, credits: newPoolCredits }, [
      'externalId',
    ]),
  ),
  output: object({ identityId: { type: 'string' } }, ['identityId']),
  // `remaining` null is no pool, which a new identity has unless it says otherwise (as a key's
  // unlimited usage); a refill without one is the operation's to refuse.
  toInput: (body: V2IdentityFields & { externalId: string }) => {
    const { remaining, ...fields } = identityFields(body);
    return {
      externalId: body.externalId,
      ...fields,
      ...(remaining !== null && remaining !== undefined ? { remaining } : {}),
    };
  },
  toBody: (created) => ({ data: { identityId: created.identityId } }),
});
