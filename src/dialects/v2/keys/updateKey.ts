import type { RefillConfig } from '../../../domain/credits';
import { DEFAULT_LIMIT_NAME } from '../../../domain/namedLimits';
import { updateKey } from '../../../operations/keys/updateKey';
import type { NamedLimitInput } from '../../../operations/namedLimits';
import { LIMIT_MAX, nullable, object } from '../../../operations/schemas';
import { v2ExternalId } from '../identities/shapes';
import { defineV2Route, widen } from '../route';
import { keyId, meta, ratelimits, refill, v2Refill } from './shapes';

/** The input of keyward's updateKey, as this route fills it (its module keeps the type to itself). */
interface UpdateKeyInput {
  keyId: string;
  name?: string | null;
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  enabled?: boolean;
  ratelimit?: null;
  ratelimits?: NamedLimitInput[] | null;
  remaining?: number | null;
  refill?: RefillConfig | null;
  permissions?: string[];
  roles?: string[];
}

export interface V2UpdateKeyBody {
  keyId: string;
  name?: string | null;
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  /** null, or `remaining: null`: unlimited usage. `refill: null` stops refilling. */
  credits?: { remaining?: number | null; refill?: RefillConfig | null } | null;
  /** Every limit the key has afterwards (the seed limit is the one named `default`). */
  ratelimits?: NamedLimitInput[] | null;
  enabled?: boolean;
  roles?: string[];
  permissions?: string[];
}

/**
 * keyward's updateKey input from v2's. v2 writes credits as one object and the key's limits as
 * one list; keyward keeps the seed limit (`ratelimit`, v2's limit named `default`) beside the
 * named ones, so a list without `default` clears the seed limit too, as v2's replacement does.
 */
export function updateKeyInput(body: V2UpdateKeyBody): UpdateKeyInput {
  const input: UpdateKeyInput = { keyId: body.keyId };
  if (body.name !== undefined) input.name = body.name;
  if (body.externalId !== undefined) input.externalId = body.externalId;
  if (body.meta !== undefined) input.meta = body.meta;
  if (body.expires !== undefined) input.expires = body.expires;
  if (body.enabled !== undefined) input.enabled = body.enabled;
  if (body.roles !== undefined) input.roles = body.roles;
  if (body.permissions !== undefined) input.permissions = body.permissions;
  if (body.ratelimits !== undefined) {
    input.ratelimits = body.ratelimits;
    if (!body.ratelimits?.some((limit) => limit.name === DEFAULT_LIMIT_NAME)) {
      input.ratelimit = null;
    }
  }
  const { credits } = body;
  // What credits and refills may be together is the operation's rule, for both dialects.
  if (credits === null) input.remaining = null;
  else if (credits) {
    if (credits.remaining !== undefined) input.remaining = credits.remaining;
    if (credits.refill !== undefined) {
      input.refill = credits.refill === null ? null : v2Refill(credits.refill);
    }
  }
  return input;
}

export const v2UpdateKey = defineV2Route({
  name: 'keys.updateKey',
  fieldNames: { remaining: 'credits.remaining', refill: 'credits.refill' },
  operation: updateKey,
  // Unkey v2 takes up to 1,000 permissions and 50 limits; keyward's v1, 100 and 20.
  coreInput: widen(updateKey.input, {
    permissions: { maxItems: 1000 },
    ratelimits: { maxItems: 50 },
  }),
  input: object(
    {
      keyId,
      name: { type: ['string', 'null'], minLength: 1, maxLength: 255 },
      externalId: { ...v2ExternalId, type: ['string', 'null'] },
      meta: nullable(meta),
      expires: { type: ['integer', 'null'], minimum: 0, maximum: 4_102_444_800_000 },
      credits: {
        type: ['object', 'null'],
        properties: {
          remaining: { type: ['integer', 'null'], minimum: 0, maximum: LIMIT_MAX },
          refill: nullable(refill),
        },
      },
      ratelimits: nullable(ratelimits),
      enabled: { type: 'boolean' },
      roles: { type: 'array', maxItems: 100, items: { type: 'string' } },
      permissions: { type: 'array', maxItems: 1000, items: { type: 'string' } },
    },
    ['keyId'],
  ),
  output: object({}),
  toInput: updateKeyInput,
  toBody: () => ({ data: {} }),
});
