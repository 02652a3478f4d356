import type { RefillConfig } from '../../domain/credits';
import type { KeyFields } from '../../domain/key';
import { type FieldPath, invalidField } from '../../errors';
import { DEFAULT_LIMIT_NAME } from '../../domain/namedLimits';
import { normalizeRatelimit, type RatelimitInput } from '../../limiter/ratelimitConfig';
import { checkMeta } from '../limits';
import { normalizeNamedLimits, type NamedLimitInput } from '../namedLimits';

/** The key fields a client may send, to createKey, updateKey or migrations.createKeys. */
export interface KeyFieldsInput {
  name?: string | null;
  ownerId?: string | null;
  /** v1's newer name for ownerId. */
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  environment?: string | null;
  enabled?: boolean;
  ratelimit?: RatelimitInput | null;
  /**
   * Named limits; one named `default` is the seed `ratelimit`. Given on an update, the named ones
   * are replaced (null removes them); the `default` changes only when named or `ratelimit` is sent.
   */
  ratelimits?: NamedLimitInput[] | null;
  /** Usage credits; null (on update) makes usage unlimited. */
  remaining?: number | null;
  refill?: RefillConfig | null;
}

/** `ownerId` or its newer v1 name `externalId`; both at once must agree. */
export function ownerIdOf(input: {
  ownerId?: string | null;
  externalId?: string | null;
}): string | null | undefined {
  if (input.externalId === undefined) return input.ownerId;
  if (input.ownerId !== undefined && input.ownerId !== input.externalId) {
    throw invalidField(['externalId'], 'must equal ownerId when both are given');
  }
  return input.externalId;
}

/**
 * A refill as stored: a monthly one without `refillDay` refills on day 1, and says so (Unkey
 * stores and shows the 1; keyward used to leave it implicit).
 */
export function storedRefill(
  refill: RefillConfig | null | undefined,
): RefillConfig | null | undefined {
  if (!refill) return refill;
  if (refill.interval !== 'monthly') {
    if (refill.refillDay !== undefined) {
      throw invalidField(['refill', 'refillDay'], 'only allowed with interval monthly');
    }
    return refill;
  }
  return refill.refillDay === undefined ? { ...refill, refillDay: 1 } : refill;
}

/**
 * The key fields an input sets. `hadCredits` says whether the key has usage credits already, since
 * a refill needs credits to refill (as in Unkey v1).
 */
export function toKeyFields(input: KeyFieldsInput, now: number, hadCredits: boolean): KeyFields {
  if (input.expires !== undefined && input.expires !== null && input.expires <= now) {
    throw invalidField(['expires'], 'must be in the future');
  }
  const fields: KeyFields = {};
  if (input.name !== undefined) fields.name = input.name;
  const ownerId = ownerIdOf(input);
  if (ownerId !== undefined) fields.ownerId = ownerId;
  if (input.meta !== undefined && input.meta !== null) checkMeta(input.meta);
  if (input.meta !== undefined) fields.meta = input.meta;
  if (input.expires !== undefined) fields.expires = input.expires;
  if (input.environment !== undefined) fields.environment = input.environment;
  if (input.enabled !== undefined) fields.enabled = input.enabled;
  if (input.ratelimit !== undefined) {
    fields.ratelimit = input.ratelimit === null ? null : normalizeRatelimit(input.ratelimit);
  }
  if (input.ratelimits !== undefined) setNamedLimits(fields, input);
  const refill = storedRefill(input.refill);
  if (input.remaining === null) {
    if (refill) throw invalidField(['refill'], 'requires remaining');
    fields.credits = null;
  } else if (input.remaining !== undefined || refill !== undefined) {
    if (input.remaining === undefined && !hadCredits && refill) {
      throw invalidField(['refill'], 'requires remaining');
    }
    if (input.remaining !== undefined || hadCredits) {
      fields.credits = {
        ...(refill !== undefined ? { refill } : {}),
        ...(input.remaining !== undefined ? { resetTo: input.remaining } : {}),
      };
    }
  }
  return fields;
}

/** `ratelimits` into fields: the one named `default` is the seed limit, the others are stored apart. */
function setNamedLimits(fields: KeyFields, input: KeyFieldsInput): void {
  if (input.ratelimits === null || input.ratelimits === undefined) {
    if (input.ratelimits === null) fields.ratelimits = null;
    return;
  }
  const named = normalizeNamedLimits(input.ratelimits);
  const index = named.findIndex((limit) => limit.name === DEFAULT_LIMIT_NAME);
  if (index >= 0) {
    if (input.ratelimit !== undefined) {
      throw invalidField(
        ['ratelimits', index, 'name'],
        '"default" is the limit `ratelimit` sets; send one of them',
      );
    }
    if (input.ratelimits[index]!.autoApply === false) {
      throw invalidField(['ratelimits', index, 'autoApply'], 'the default limit always applies');
    }
    const { type, limit, duration } = named[index]!;
    fields.ratelimit = { type, limit, refillRate: limit, refillInterval: duration };
    named.splice(index, 1);
  }
  fields.ratelimits = named.length > 0 ? named : null;
}

/** The fields of a new key (created or imported): enabled unless it says otherwise. */
export function newKeyFields(
  input: KeyFieldsInput,
  now: number,
  path: FieldPath = ['remaining'],
): KeyFields {
  if (input.remaining === null) throw invalidField(path, 'must be integer');
  const fields = toKeyFields(input, now, false);
  fields.enabled = input.enabled ?? true;
  return fields;
}
