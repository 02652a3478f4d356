/**
 * JSON schemas of every operation's input: the single source of the wire rules (issue 8 derives
 * the OpenAPI document from them). Compiled once, at start-up, by validation.ts.
 */
const LIMIT_MAX = 1_000_000_000;
const INTERVAL_MAX = 2_592_000_000;

const id = { type: 'string', minLength: 1, maxLength: 64 } as const;
const text = { type: 'string', minLength: 1, maxLength: 256 } as const;
const nullable = <S extends { type: string }>(schema: S) => ({
  ...schema,
  type: [schema.type, 'null'],
});

const ratelimit = {
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

const meta = { type: 'object' } as const;
const remaining = { type: 'integer', minimum: 1, maximum: LIMIT_MAX } as const;
const refill = {
  type: 'object',
  required: ['interval', 'amount'],
  properties: {
    interval: { type: 'string', enum: ['daily', 'monthly'] },
    amount: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
    refillDay: { type: 'integer', minimum: 1, maximum: 31 },
  },
} as const;
const expires = { type: 'integer', minimum: 0, maximum: 8_640_000_000_000_000 } as const;
const cost = {
  type: 'object',
  properties: { cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX } },
} as const;

/** v1's permission query: a permission, or `{ and: [...] }` / `{ or: [...] }` of queries. */
const permissionQuery = {
  anyOf: [
    { type: 'string', minLength: 1, maxLength: 256 },
    { type: 'object', required: ['and'], properties: { and: { type: 'array', maxItems: 100 } } },
    { type: 'object', required: ['or'], properties: { or: { type: 'array', maxItems: 100 } } },
  ],
} as const;

/** What a new key may carry, whether created (keys.createKey) or imported (migrations). */
const newKeyFields = {
  apiId: id,
  name: text,
  prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,16}$' },
  ownerId: text,
  externalId: text,
  meta,
  expires,
  ratelimit,
  remaining,
  refill,
  enabled: { type: 'boolean' },
} as const;

const namespaceName = { type: 'string', pattern: '^[A-Za-z0-9_.:/-]{1,128}$' } as const;
const identifier = { type: 'string', minLength: 1, maxLength: 256 } as const;
const tokens = { type: 'integer', minimum: 1, maximum: LIMIT_MAX } as const;
const duration = { type: 'integer', minimum: 1, maximum: INTERVAL_MAX } as const;
const namespaceRef = { namespaceId: id, namespaceName } as const;

export const schemas = {
  'apis.createApi': {
    type: 'object',
    required: ['name'],
    properties: { name: text },
  },
  'apis.getApi': {
    type: 'object',
    required: ['apiId'],
    properties: { apiId: id },
  },
  'apis.deleteApi': {
    type: 'object',
    required: ['apiId'],
    properties: { apiId: id },
  },
  'apis.listKeys': {
    type: 'object',
    required: ['apiId'],
    properties: {
      apiId: id,
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: { type: 'string', minLength: 1, maxLength: 64 },
      ownerId: text,
      externalId: text,
    },
  },
  'keys.createKey': {
    type: 'object',
    required: ['apiId'],
    properties: {
      ...newKeyFields,
      byteLength: { type: 'integer', minimum: 16, maximum: 255 },
    },
  },
  'keys.getKey': {
    type: 'object',
    required: ['keyId'],
    properties: { keyId: id },
  },
  'keys.verifyKey': {
    type: 'object',
    required: ['key'],
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 512 },
      apiId: id,
      ratelimit: cost,
      remaining: cost,
      authorization: {
        type: 'object',
        required: ['permissions'],
        properties: { permissions: permissionQuery },
      },
    },
  },
  'keys.updateKey': {
    type: 'object',
    required: ['keyId'],
    properties: {
      keyId: id,
      name: nullable(text),
      ownerId: nullable(text),
      externalId: nullable(text),
      meta: nullable(meta),
      expires: nullable(expires),
      ratelimit: { ...ratelimit, type: ['object', 'null'] },
      remaining: nullable(remaining),
      refill: { ...refill, type: ['object', 'null'] },
      enabled: { type: 'boolean' },
    },
  },
  'keys.updateRemaining': {
    type: 'object',
    required: ['keyId', 'op', 'value'],
    properties: {
      keyId: id,
      op: { type: 'string', enum: ['increment', 'decrement', 'set'] },
      value: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
    },
  },
  'keys.deleteKey': {
    type: 'object',
    required: ['keyId'],
    properties: { keyId: id },
  },
  'ratelimits.limit': {
    type: 'object',
    required: ['identifier', 'limit', 'duration'],
    properties: {
      namespace: namespaceName,
      identifier,
      limit: tokens,
      duration,
      cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
      async: { type: 'boolean' },
    },
  },
  'ratelimits.setOverride': {
    type: 'object',
    required: ['identifier', 'limit', 'duration'],
    properties: {
      ...namespaceRef,
      identifier,
      limit: tokens,
      duration,
      async: { type: 'boolean' },
    },
  },
  'ratelimits.getOverride': {
    type: 'object',
    required: ['identifier'],
    properties: { ...namespaceRef, identifier },
  },
  'ratelimits.listOverrides': {
    type: 'object',
    properties: {
      ...namespaceRef,
      cursor: identifier,
      limit: { type: 'integer', minimum: 1, maximum: 100 },
    },
  },
  'ratelimits.deleteOverride': {
    type: 'object',
    required: ['identifier'],
    properties: { ...namespaceRef, identifier },
  },
  'migrations.createKeys': {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    items: {
      type: 'object',
      required: ['apiId'],
      properties: {
        plaintext: { type: 'string', minLength: 1, maxLength: 512 },
        hash: {
          type: 'object',
          required: ['value', 'variant'],
          properties: {
            value: { type: 'string', minLength: 1, maxLength: 64 },
            variant: { type: 'string', enum: ['sha256_base64'] },
          },
        },
        start: { type: 'string', maxLength: 32 },
        ...newKeyFields,
      },
    },
  },
  'apis.listApis': {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: id },
  },
  'keys.getVerifications': {
    type: 'object',
    required: ['keyId'],
    properties: { keyId: id },
  },
  'keys.getBucket': {
    type: 'object',
    required: ['keyId'],
    properties: { keyId: id },
  },
} as const;

export type OperationName = keyof typeof schemas;
