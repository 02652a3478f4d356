import { PREFIX_PATTERN, MAX_BYTE_LENGTH, MIN_BYTE_LENGTH } from '../../keys/keyMaterial';
import { createKey, type CreateKeyInput } from '../../operations/keys/createKey';
import { deleteKey } from '../../operations/keys/deleteKey';
import { getKey } from '../../operations/keys/getKey';
import type { Verification } from '../../operations/keys/verification';
import { verifyKey, type VerifyKeyInput } from '../../operations/keys/verifyKey';
import { whoami } from '../../operations/keys/whoami';
import { createKeys } from '../../operations/migrations/createKeys';
import type { NamedLimitInput } from '../../operations/namedLimits';
import { INTERVAL_MAX, LIMIT_MAX, limitName, object } from '../../operations/schemas';
import { defineV2Route, open, widen } from './route';
import { v2ExternalId } from './identities';
import { limitId, refuse, v2Identity, v2Key } from './shapes';

/** The most credits one v2 verification may spend (Unkey v2's `credits.cost` maximum). */
export const CREDIT_COST_MAX = 1_000_000_000_000;

export const keyId = {
  type: 'string',
  minLength: 3,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_]+$',
} as const;
export const meta = { type: 'object' } as const;
export const refill = object(
  {
    interval: { type: 'string', enum: ['daily', 'monthly'] },
    amount: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillDay: { type: 'integer', minimum: 1, maximum: 31 },
  },
  ['interval', 'amount'],
);
/** v2's KeyCreditsData: `remaining` null is unlimited usage. */
const credits = object(
  { remaining: { type: ['integer', 'null'], minimum: 0, maximum: LIMIT_MAX }, refill },
  ['remaining'],
);
/** A limit's name as v2 takes it: keyward's (which names a bucket), from 3 characters as Unkey's. */
const v2LimitName = { ...limitName, minLength: 3 } as const;

/**
 * v2's RatelimitRequest, with keyward's `type` beside it (v2 has no fast mode of its own). Open,
 * as Unkey's spec leaves it: other fields are accepted and not read.
 */
export const ratelimits = {
  type: 'array',
  maxItems: 50,
  items: open(
    object(
      {
        // Unkey's RatelimitRequest: a name of at least 3 characters, a window of at least 1 s.
        name: v2LimitName,
        limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
        duration: { type: 'integer', minimum: 1000, maximum: INTERVAL_MAX },
        autoApply: { type: 'boolean' },
        type: { type: 'string', enum: ['fast', 'consistent'] },
      },
      ['name', 'limit', 'duration'],
    ),
  ),
} as const;

/**
 * A refill as v2 takes it: a `monthly` one names its day, as Unkey's createKey and updateKey ask
 * (`refillDay` must be provided when the refill interval is `monthly`); v1 defaults it to 1.
 */
export function v2Refill<Refill extends { interval: string; refillDay?: number }>(
  refill: Refill,
): Refill {
  if (refill.interval === 'monthly' && refill.refillDay === undefined) {
    refuse('credits.refill.refillDay', 'is required with interval monthly');
  }
  return refill;
}

export interface V2Credits {
  remaining: number | null;
  refill?: { interval: 'daily' | 'monthly'; amount: number; refillDay?: number };
}

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

export const v2GetKey = defineV2Route({
  name: 'keys.getKey',
  operation: getKey,
  input: object({ keyId, decrypt: { type: 'boolean' } }, ['keyId']),
  output: { type: 'object' },
  toInput: (body: { keyId: string; decrypt?: boolean }) => ({
    keyId: body.keyId,
    ...(body.decrypt !== undefined ? { decrypt: body.decrypt } : {}),
  }),
  toBody: (view) => ({ data: v2Key(view) }),
});

interface V2VerifyKeyBody {
  key: string;
  tags?: string[];
  permissions?: string;
  credits?: { cost: number };
  ratelimits?: { name: string; cost?: number; limit?: number; duration?: number }[];
  migrationId?: string;
}

export const v2VerifyKey = defineV2Route({
  name: 'keys.verifyKey',
  fieldNames: { 'remaining.cost': 'credits.cost', 'authorization.permissions': 'permissions' },
  operation: verifyKey,
  // Unkey v2's credits.cost goes to 1e12; keyward's v1 remaining.cost to 1e9.
  coreInput: widen(verifyKey.input, {
    remaining: { properties: { cost: { type: 'integer', minimum: 0, maximum: CREDIT_COST_MAX } } },
  }),
  input: object(
    {
      key: { type: 'string', minLength: 1, maxLength: 512 },
      tags: {
        type: 'array',
        maxItems: 20,
        items: { type: 'string', minLength: 1, maxLength: 512 },
      },
      permissions: { type: 'string', minLength: 1, maxLength: 1000 },
      credits: object({ cost: { type: 'integer', minimum: 0, maximum: CREDIT_COST_MAX } }, [
        'cost',
      ]),
      ratelimits: {
        type: 'array',
        maxItems: 20,
        // Open, as Unkey's spec leaves KeysVerifyKeyRatelimit.
        items: open(
          object(
            {
              name: v2LimitName,
              cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
              limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
              duration: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
            },
            ['name'],
          ),
        ),
      },
      migrationId: { type: 'string', maxLength: 256 },
    },
    ['key'],
  ),
  output: { type: 'object' },
  toInput(body: V2VerifyKeyBody): VerifyKeyInput {
    if (body.migrationId !== undefined) {
      refuse('migrationId', 'keyward imports keys with their hash (migrations.createKeys)');
    }
    const input: VerifyKeyInput = { key: body.key };
    if (body.permissions !== undefined) input.authorization = { permissions: body.permissions };
    if (body.credits !== undefined) input.remaining = { cost: body.credits.cost };
    // Unkey v2 always lists the limits a verification applied: ask for the list, even naming none.
    input.ratelimits = body.ratelimits ?? [];
    if (body.tags !== undefined) input.tags = body.tags;
    return input;
  },
  toBody: (verification: Verification) => ({ data: v2Verification(verification) }),
});

/**
 * v2's verification: `credits` for the credits left, each applied limit with its v2 id, duration
 * and autoApply, the identity with its limits. The seed limit is the one named `default`.
 */
function v2Verification(v: Verification): Record<string, unknown> {
  const data: Record<string, unknown> = { valid: v.valid, code: v.code };
  if (v.keyId !== undefined) data.keyId = v.keyId;
  if (v.name !== undefined) data.name = v.name;
  if (v.meta !== undefined) data.meta = v.meta;
  if (v.expires !== undefined) data.expires = v.expires;
  if (v.remaining !== undefined) data.credits = v.remaining;
  if (v.enabled !== undefined) data.enabled = v.enabled;
  if (v.permissions !== undefined) data.permissions = v.permissions;
  if (v.roles !== undefined) data.roles = v.roles;
  if (v.identity) data.identity = v2Identity(v.identity);
  // Every applied limit, the seed one as `default`.
  if (v.ratelimits && v.ratelimits.length > 0) {
    data.ratelimits = v.ratelimits.map((standing) => ({
      id: limitId(standing.owner, standing.name),
      name: standing.name,
      limit: standing.limit,
      duration: standing.duration,
      autoApply: standing.autoApply,
      // A limit that was not checked stands as v2 has no word for: untouched, not exceeded.
      remaining: 'remaining' in standing ? standing.remaining : standing.limit,
      reset: 'reset' in standing ? standing.reset : 0,
      exceeded: 'exceeded' in standing ? standing.exceeded : false,
    }));
  }
  return data;
}

export const v2Whoami = defineV2Route({
  name: 'keys.whoami',
  operation: whoami,
  input: object({ key: { type: 'string', minLength: 1, maxLength: 512 } }, ['key']),
  output: { type: 'object' },
  toInput: (body: { key: string }) => ({ key: body.key }),
  toBody: (view) => ({ data: v2Key(view) }),
});

/**
 * keyward's deletion is always v2's `permanent: true`: the record, its hash and what it holds are
 * erased at once. `permanent: false` (the client's default) deletes it the same way, since a
 * soft-deleted key could only be recovered in Unkey's database, never through the API.
 */
export const v2DeleteKey = defineV2Route({
  name: 'keys.deleteKey',
  operation: deleteKey,
  input: object({ keyId, permanent: { type: 'boolean' } }, ['keyId']),
  output: object({}),
  toInput: (body: { keyId: string; permanent?: boolean }) => ({ keyId: body.keyId }),
  toBody: () => ({ data: {} }),
});

/**
 * v2 imports hashes made by a migration Unkey configured for the workspace (`migrationId`), to be
 * rehashed when verifyKey names it. keyward has no migrations: it imports keys by their SHA-256,
 * all or none, with /v1/migrations.createKeys.
 */
export const v2MigrateKeys = defineV2Route({
  name: 'keys.migrateKeys',
  operation: createKeys,
  input: object(
    {
      migrationId: { type: 'string', minLength: 3, maxLength: 255 },
      apiId: { type: 'string', minLength: 3, maxLength: 255 },
      keys: {
        type: 'array',
        minItems: 1,
        // keyward reads none of a key's fields (the call is refused), so they pass unchecked.
        items: open(object({ hash: { type: 'string', minLength: 3 } }, ['hash'])),
      },
    },
    ['migrationId', 'apiId', 'keys'],
  ),
  output: { type: 'object' },
  toInput(): never {
    return refuse(
      'migrationId',
      'keyward has no key migrations; import keys by their SHA-256 hash with /v1/migrations.createKeys',
    );
  },
  toBody: () => ({ data: { migrated: [], failed: [] } }),
});
