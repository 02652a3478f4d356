import { createIdentity } from '../../operations/identities/createIdentity';
import { deleteIdentity } from '../../operations/identities/deleteIdentity';
import { getIdentity } from '../../operations/identities/getIdentity';
import { listIdentities, type IdentitiesPage } from '../../operations/identities/listIdentities';
import type { IdentityHandle } from '../../operations/identities/loadIdentity';
import { updateIdentity } from '../../operations/identities/updateIdentity';
import { type IdentityView } from '../../operations/identities/views';
import type { NamedLimitInput } from '../../operations/namedLimits';
import { empty, id, meta, namedLimits, object, pageLimit, text } from '../../operations/schemas';
import { isKeywardId, v2Pagination } from './lists';
import { defineV2Route, open, widen } from './route';
import { v2Limits, type V2Identity } from './shapes';

/**
 * identities.* in v2's shapes. An identity is named by one field, `identity`: its id or its
 * externalId. v2's limits are keyward's named limits (with keyward's `type` beside them), answered
 * with their v2 ids.
 */

/** v2's `identity`: an identity's id when it has the form of one, else its externalId. */
export function identityHandle(identity: string): IdentityHandle {
  return isKeywardId('id', identity) ? { identityId: identity } : { externalId: identity };
}

function v2IdentityOf(
  view: Pick<IdentityView, 'id' | 'externalId' | 'ratelimits'>,
  meta: Record<string, unknown>,
): V2Identity {
  return {
    id: view.id,
    externalId: view.externalId,
    meta,
    ratelimits: v2Limits(view.id, view.ratelimits),
  };
}

const identityOutput = object(
  {
    id: { type: 'string' },
    externalId: { type: 'string' },
    meta,
    ratelimits: { type: 'array', items: { type: 'object' } },
  },
  ['id', 'externalId', 'meta', 'ratelimits'],
);

/**
 * v2's RatelimitRequest list: each limit open, as Unkey's spec leaves it, with its bounds where
 * they are narrower than keyward's: a name of at least 3 characters, a `duration` from 1,000 ms.
 */
const v2NamedLimits = {
  ...namedLimits,
  items: open({
    ...namedLimits.items,
    properties: {
      ...namedLimits.items.properties,
      name: { ...namedLimits.items.properties.name, minLength: 3 },
      duration: { ...namedLimits.items.properties.duration, minimum: 1000 },
    },
  }),
} as const;

interface V2IdentityFields {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimitInput[];
}

function fields(body: V2IdentityFields): V2IdentityFields {
  return {
    ...(body.meta !== undefined ? { meta: body.meta } : {}),
    ...(body.ratelimits !== undefined ? { ratelimits: body.ratelimits } : {}),
  };
}

/**
 * v2's externalId: 1–255 of `[a-zA-Z0-9_.-]` (Unkey's spec, for identities and keys alike). v1's
 * createIdentity takes 3–256 characters of any kind; a v2 call is held to v2's bound instead.
 */
export const v2ExternalId = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_.-]+$',
} as const;

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
    ...fields(body),
  }),
  toBody: (created) => ({ data: { identityId: created.identityId } }),
});

export const v2GetIdentity = defineV2Route({
  name: 'identities.getIdentity',
  operation: getIdentity,
  input: object({ identity: text }, ['identity']),
  output: identityOutput,
  toInput: (body: { identity: string }) => identityHandle(body.identity),
  toBody: (view) => ({ data: v2IdentityOf(view, view.meta) }),
});

export const v2ListIdentities = defineV2Route({
  name: 'identities.listIdentities',
  operation: listIdentities,
  input: object({ limit: pageLimit, cursor: id, search: { type: 'string', maxLength: 256 } }),
  output: { type: 'array', items: identityOutput },
  toInput(body: { limit?: number; cursor?: string; search?: string }) {
    return {
      ...(body.limit !== undefined ? { limit: body.limit } : {}),
      ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
      ...(body.search !== undefined ? { search: body.search } : {}),
    };
  },
  toBody: (page: IdentitiesPage) => ({
    data: page.identities.map((listed) => v2IdentityOf(listed, listed.meta)),
    pagination: v2Pagination(page.cursor),
  }),
});

export const v2UpdateIdentity = defineV2Route({
  name: 'identities.updateIdentity',
  operation: updateIdentity,
  input: object({ identity: text, meta, ratelimits: v2NamedLimits }, ['identity']),
  output: identityOutput,
  toInput: (body: V2IdentityFields & { identity: string }) => ({
    ...identityHandle(body.identity),
    ...fields(body),
  }),
  toBody: (view) => ({ data: v2IdentityOf(view, view.meta) }),
});

export const v2DeleteIdentity = defineV2Route({
  name: 'identities.deleteIdentity',
  operation: deleteIdentity,
  input: object({ identity: text }, ['identity']),
  output: empty,
  toInput: (body: { identity: string }) => identityHandle(body.identity),
  toBody: () => ({ data: {} }),
});
