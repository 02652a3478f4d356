import { MAX_BYTE_LENGTH, MIN_BYTE_LENGTH, PREFIX_PATTERN } from '../keys/keyMaterial';

/**
 * The pieces operations build their input and output schemas from: one definition of each wire
 * rule. Compiled once, at start-up, by src/http/validation.ts; published by src/http/openapi.ts.
 */
export const LIMIT_MAX = 1_000_000_000;
export const INTERVAL_MAX = 2_592_000_000;

export const id = { type: 'string', minLength: 1, maxLength: 64 } as const;
export const text = { type: 'string', minLength: 1, maxLength: 256 } as const;
export const nullable = <S extends { type: string }>(schema: S) => ({
  ...schema,
  type: [schema.type, 'null'],
});

export const ratelimit = {
  type: 'object',
  required: ['limit'],
  properties: {
    type: { type: 'string', enum: ['fast', 'consistent'] },
    async: { type: 'boolean' },
    limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillRate: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillInterval: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
    duration: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
  },
} as const;

/** A named limit's name: part of its bucket's Redis key, so kept to characters redis-cli shows plainly. */
export const limitName = { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,64}$' } as const;

/** Named rate limits (Unkey v1's `ratelimits`) of a key or an identity; normalised by operations/namedLimits.ts. */
export const namedLimits = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    required: ['name', 'limit', 'duration'],
    properties: {
      name: limitName,
      limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
      duration: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
      autoApply: { type: 'boolean' },
      type: { type: 'string', enum: ['fast', 'consistent'] },
    },
  },
} as const;

export const namedLimitOutput = object(
  {
    name: { type: 'string' },
    type: { type: 'string', enum: ['fast', 'consistent'] },
    limit: { type: 'integer' },
    duration: { type: 'integer' },
    autoApply: { type: 'boolean' },
  },
  ['name', 'type', 'limit', 'duration', 'autoApply'],
);

export const meta = { type: 'object' } as const;
export const remaining = { type: 'integer', minimum: 1, maximum: LIMIT_MAX } as const;
export const refill = {
  type: 'object',
  required: ['interval', 'amount'],
  properties: {
    interval: { type: 'string', enum: ['daily', 'monthly'] },
    amount: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillDay: { type: 'integer', minimum: 1, maximum: 31 },
  },
} as const;
/** Unkey v1 takes any string up to 256 characters, the empty one included. */
export const environment = { type: 'string', maxLength: 256 } as const;
export const expires = { type: 'integer', minimum: 0, maximum: 8_640_000_000_000_000 } as const;
export const cost = {
  type: 'object',
  properties: { cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX } },
} as const;
export const plaintextKey = { type: 'string', minLength: 1, maxLength: 512 } as const;
export const pageLimit = { type: 'integer', minimum: 1, maximum: 100 } as const;

/** What a new key may carry, whether created (keys.createKey) or imported (migrations). */
export const newKeyFields = {
  apiId: id,
  name: text,
  prefix: { type: 'string', pattern: PREFIX_PATTERN },
  ownerId: text,
  externalId: text,
  meta,
  expires,
  environment,
  ratelimit,
  ratelimits: namedLimits,
  remaining,
  refill,
  enabled: { type: 'boolean' },
} as const;

export const byteLength = {
  type: 'integer',
  minimum: MIN_BYTE_LENGTH,
  maximum: MAX_BYTE_LENGTH,
} as const;

export const namespaceName = { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,128}$' } as const;
export const identifier = { type: 'string', minLength: 1, maxLength: 256 } as const;
export const tokens = { type: 'integer', minimum: 1, maximum: LIMIT_MAX } as const;
export const duration = { type: 'integer', minimum: 1, maximum: INTERVAL_MAX } as const;
export const namespaceRef = { namespaceId: id, namespaceName } as const;

/** An input of named fields (the query of a GET, or a JSON body). */
export function object(
  properties: Readonly<Record<string, unknown>>,
  required: readonly string[] = [],
) {
  return required.length > 0
    ? ({ type: 'object', required, properties } as const)
    : ({ type: 'object', properties } as const);
}

// Output shapes, for the OpenAPI document: what a client may rely on in a 200 answer.
export const integer = { type: 'integer' } as const;
export const string = { type: 'string' } as const;
const boolean = { type: 'boolean' } as const;
export const empty = { type: 'object', properties: {}, additionalProperties: false } as const;

export const ratelimitOutput = object(
  {
    type: { type: 'string', enum: ['fast', 'consistent'] },
    async: boolean,
    limit: integer,
    refillRate: integer,
    refillInterval: integer,
    duration: integer,
  },
  ['type', 'async', 'limit', 'refillRate', 'refillInterval', 'duration'],
);

/** A key's identity in getKey and verifyKey answers. */
export const identityRef = object({ id: string, externalId: string, meta }, [
  'id',
  'externalId',
  'meta',
]);

export const keyOutput = object(
  {
    id: string,
    start: string,
    workspaceId: string,
    apiId: string,
    name: string,
    ownerId: string,
    meta,
    createdAt: integer,
    updatedAt: integer,
    expires: integer,
    environment: string,
    ratelimit: ratelimitOutput,
    ratelimits: { type: 'array', items: namedLimitOutput },
    remaining: integer,
    refill: object(
      { interval: string, amount: integer, refillDay: integer, lastRefillAt: integer },
      ['interval', 'amount', 'lastRefillAt'],
    ),
    enabled: boolean,
    permissions: { type: 'array', items: string },
    roles: { type: 'array', items: string },
    identity: identityRef,
    recoverable: { type: 'boolean', enum: [true] },
    plaintext: string,
  },
  ['id', 'start', 'workspaceId', 'apiId', 'createdAt', 'enabled'],
);

export const apiOutput = object(
  { id: string, workspaceId: string, name: string, createdAt: integer },
  ['id', 'workspaceId', 'name', 'createdAt'],
);

/** A page of a listing: its items, the exact total, and a cursor while more may follow. */
export function page(itemsName: string, item: unknown) {
  return object({ [itemsName]: { type: 'array', items: item }, cursor: string, total: integer }, [
    itemsName,
    'total',
  ]);
}

export const overrideOutput = object(
  { id: string, identifier: string, limit: integer, duration: integer, async: boolean },
  ['id', 'identifier', 'limit', 'duration'],
);

export const limitOutput = object(
  {
    success: boolean,
    limit: integer,
    remaining: integer,
    reset: integer,
    overrideId: string,
    evaluated: { const: false },
  },
  ['success', 'limit', 'remaining', 'reset'],
);
