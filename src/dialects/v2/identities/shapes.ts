import type { RefillConfig } from '../../../domain/credits';
import type { IdentityHandle } from '../../../operations/identities/loadIdentity';
import type { IdentityView } from '../../../operations/identities/views';
import type { NamedLimitInput } from '../../../operations/namedLimits';
import { LIMIT_MAX, meta, namedLimits, object } from '../../../operations/schemas';
import { isKeywardId } from '../lists';
import { open } from '../route';
import { v2Limits, type V2Identity } from '../shapes';
import { credits, refill, v2Refill } from '../keys/shapes';

/**
 * identities.* in v2's shapes. An identity is named by one field, `identity`: its id or its
 * externalId. v2's limits are keyward's named limits (with keyward's `type` beside them), answered
 * with their v2 ids.
 */

/** v2's `identity`: an identity's id when it has the form of one, else its externalId. */
export function identityHandle(identity: string): IdentityHandle {
  return isKeywardId('id', identity) ? { identityId: identity } : { externalId: identity };
}

export function v2IdentityOf(
  view: Pick<IdentityView, 'id' | 'externalId' | 'ratelimits' | 'remaining' | 'refill'>,
  meta: Record<string, unknown>,
): V2Identity {
  const identity: V2Identity = {
    id: view.id,
    externalId: view.externalId,
    meta,
    ratelimits: v2Limits(view.id, view.ratelimits),
  };
  // Its credit pool in the shape of a key's credits (keyward's own: Unkey's identities have none).
  if (view.remaining !== undefined) {
    identity.credits = { remaining: view.remaining };
    if (view.refill) {
      const { interval, amount, refillDay } = view.refill;
      identity.credits.refill =
        refillDay === undefined ? { interval, amount } : { interval, amount, refillDay };
    }
  }
  return identity;
}

/** How v2 names the pool's fields in its 400s. */
export const poolFieldNames = { remaining: 'credits.remaining', refill: 'credits.refill' } as const;

/** A new identity's pool, as a key's credits (`remaining` null: none). */
export const newPoolCredits = credits;

/** An update's pool: null (or `remaining: null`) drops it; `refill: null` stops its refills. */
export const poolCreditsUpdate = {
  type: ['object', 'null'],
  properties: {
    remaining: {
      type: ['integer', 'null'],
      minimum: 0,
      maximum: LIMIT_MAX,
    },
    refill: { ...refill, type: ['object', 'null'] },
  },
} as const;

export const identityOutput = object(
  {
    id: { type: 'string' },
    externalId: { type: 'string' },
    meta,
    ratelimits: { type: 'array', items: { type: 'object' } },
    credits: { type: 'object' },
  },
  ['id', 'externalId', 'meta', 'ratelimits'],
);

/**
 * v2's RatelimitRequest list: each limit open, as Unkey's spec leaves it, with its bounds where
 * they are narrower than keyward's: a name of at least 3 characters, a `duration` from 1,000 ms.
 */
export const v2NamedLimits = {
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

export interface V2IdentityFields {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimitInput[];
  credits?: { remaining?: number | null; refill?: RefillConfig | null } | null;
}

/** The fields an identity's create and update both take, as the operations name them. */
export function identityFields(body: V2IdentityFields): {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimitInput[];
  remaining?: number | null;
  refill?: RefillConfig | null;
} {
  const { credits } = body;
  return {
    ...(body.meta !== undefined ? { meta: body.meta } : {}),
    ...(body.ratelimits !== undefined ? { ratelimits: body.ratelimits } : {}),
    // What a pool and its refill may be together is the operation's rule, for both dialects.
    ...(credits === null ? { remaining: null } : {}),
    ...(credits?.remaining !== undefined ? { remaining: credits.remaining } : {}),
    ...(credits?.refill !== undefined
      ? { refill: credits.refill === null ? null : v2Refill(credits.refill) }
      : {}),
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
