import { id, meta, namedLimitOutput, object, text } from '../schemas';

/**
 * A new identity's externalId: at least 3 characters, as Unkey v1's createIdentity asks, and at
 * most 256 (Unkey sets no bound; keyward's other names stop there).
 */
export const newExternalId = { type: 'string', minLength: 3, maxLength: 256 } as const;

/**
 * How a call names an existing identity: by id or by externalId, exactly one of them. An
 * externalId is looked up at any length, since a key's externalId (1–256 characters) may have
 * made the identity.
 */
export const identityHandles = { identityId: id, externalId: text } as const;

const string = { type: 'string' } as const;
const ratelimits = { type: 'array', items: namedLimitOutput } as const;

const integer = { type: 'integer' } as const;

/** An identity's credit pool, when it has one: its count now and its refill (v1's key names). */
const pool = {
  remaining: integer,
  refill: object({ interval: string, amount: integer, refillDay: integer, lastRefillAt: integer }),
} as const;

export const identityOutput = object(
  { id: string, externalId: string, meta, ratelimits, ...pool },
  ['id', 'externalId', 'meta', 'ratelimits'],
);

/** Unkey v1 lists an identity without its meta. */
export const listedIdentityOutput = object(
  { id: string, externalId: string, ratelimits, ...pool },
  ['id', 'externalId', 'ratelimits'],
);
