import type { Verification } from '../../../operations/keys/verification';
import { verifyKey, type VerifyKeyInput } from '../../../operations/keys/verifyKey';
import { INTERVAL_MAX, LIMIT_MAX, object } from '../../../operations/schemas';
import { defineV2Route, open, widen } from '../route';
import { limitId, refuse, v2Identity } from '../shapes';
import { CREDIT_COST_MAX, v2LimitName } from './shapes';

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
