import { updateIdentity } from '../../../operations/identities/updateIdentity';
import { meta, object, text } from '../../../operations/schemas';
import { defineV2Route, widen } from '../route';
import {
  identityFields,
  identityHandle,
  identityOutput,
  poolCreditsUpdate,
  poolFieldNames,
  v2IdentityOf,
  v2ExternalId,
  v2NamedLimits,
  type V2IdentityFields,
} from './shapes';

interface V2UpdateIdentityBody extends V2IdentityFields {
  identity: string;
  /** The identity's new externalId (Unkey's asks, unkeyed/unkey#4432): its keys stay linked. */
  externalId?: string;
}

export const v2UpdateIdentity = defineV2Route({
  name: 'identities.updateIdentity',
  operation: updateIdentity,
  // v2's externalId bound (1–255 of [a-zA-Z0-9_.-]) where keyward's own asks 3–256 of any kind.
  coreInput: widen(updateIdentity.input, { newExternalId: { minLength: 1 } }),
  input: object(
    {
      identity: text,
      externalId: v2ExternalId,
      meta,
      ratelimits: v2NamedLimits,
      credits: poolCreditsUpdate,
    },
    ['identity'],
  ),
  fieldNames: { newExternalId: 'externalId', ...poolFieldNames },
  output: identityOutput,
  toInput: (body: V2UpdateIdentityBody) => ({
    ...identityHandle(body.identity),
    ...(body.externalId !== undefined ? { newExternalId: body.externalId } : {}),
    ...identityFields(body),
  }),
  toBody: (view) => ({ data: v2IdentityOf(view, view.meta) }),
});
