import { MAX_BYTE_LENGTH, MIN_BYTE_LENGTH, PREFIX_PATTERN } from '../../../keys/keyMaterial';
import { createKey, type CreateKeyInput } from '../../../operations/keys/createKey';
import type { NamedLimitInput } from '../../../operations/namedLimits';
import { object } from '../../../operations/schemas';
import { v2ExternalId } from '../identities/shapes';
import { defineV2Route, widen } from '../route';
import { credits, keyId, meta, ratelimits, v2Refill, type V2Credits } from './shapes';

interface V2CreateKeyBody {
  apiId: string;
  prefix?: string;
  name?: string;
  byteLength?: number;
  externalId?: string;
  meta?: Record<string, unknown>;
  roles?: string[];
  permissions?: string[];
  expires?: number;
  credits?: V2Credits;
  ratelimits?: NamedLimitInput[];
  enabled?: boolean;
  recoverable?: boolean;
}

export const v2CreateKey = defineV2Route({
  name: 'keys.createKey',
  fieldNames: { remaining: 'credits.remaining', refill: 'credits.refill' },
  operation: createKey,
  // Unkey v2 takes up to 1,000 permissions and 50 limits; keyward's v1, 100 and 20.
  coreInput: widen(createKey.input, {
    permissions: { maxItems: 1000 },
    ratelimits: { maxItems: 50 },
  }),
  input: object(
    {
      apiId: keyId,
      prefix: { type: 'string', pattern: PREFIX_PATTERN },
      name: { type: 'string', minLength: 1, maxLength: 255 },
      byteLength: { type: 'integer', minimum: MIN_BYTE_LENGTH, maximum: MAX_BYTE_LENGTH },
      externalId: v2ExternalId,
      meta,
      roles: { type: 'array', maxItems: 100, items: { type: 'string' } },
      permissions: { type: 'array', maxItems: 1000, items: { type: 'string' } },
      expires: { type: 'integer', minimum: 0, maximum: 4_102_444_800_000 },
      credits,
      ratelimits,
      enabled: { type: 'boolean' },
      recoverable: { type: 'boolean' },
    },
    ['apiId'],
  ),
  output: object({ keyId: { type: 'string' }, key: { type: 'string' } }, ['keyId', 'key']),
  toInput(body: V2CreateKeyBody): CreateKeyInput {
    const input: CreateKeyInput = { apiId: body.apiId };
    if (body.recoverable !== undefined) input.recoverable = body.recoverable;
    if (body.prefix !== undefined) input.prefix = body.prefix;
    if (body.name !== undefined) input.name = body.name;
    if (body.byteLength !== undefined) input.byteLength = body.byteLength;
    if (body.externalId !== undefined) input.externalId = body.externalId;
    if (body.meta !== undefined) input.meta = body.meta;
    if (body.roles !== undefined) input.roles = body.roles;
    if (body.permissions !== undefined) input.permissions = body.permissions;
    if (body.expires !== undefined) input.expires = body.expires;
    if (body.enabled !== undefined) input.enabled = body.enabled;
    // Unkey v2 always lists the limits a verification applied: ask for the list, even naming none.
    input.ratelimits = body.ratelimits ?? [];
    // `remaining` null is unlimited usage, which a new key has unless it says otherwise; a refill
    // without credits is the operation's to refuse, as it refuses v1's.
    if (body.credits && body.credits.remaining !== null) input.remaining = body.credits.remaining;
    if (body.credits?.refill) input.refill = v2Refill(body.credits.refill);
    return input;
  },
  toBody: (created) => ({ data: { keyId: created.keyId, key: created.key } }),
});
