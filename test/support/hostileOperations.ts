import fc from 'fast-check';
import {
  INTERVAL_MAX,
  LIMIT_MAX,
  badCost,
  badCursor,
  badExpires,
  badInteger,
  badLimit,
  badMeta,
  badNamespace,
  badAsync,
  badObject,
  badPermissionQuery,
  badPrefix,
  badQueryNamespace,
  badQueryString,
  badRatelimit,
  badRefill,
  badRemaining,
  badString,
  json,
  objectText,
  wrongType,
} from './hostile';
import { fixture } from './hostileTarget';

/**
 * Every operation of src/http/routes.ts as the hostile-input tests see it: a valid input built
 * on the fixtures, and how each of its fields can be broken.
 */
const DAY = 86_400_000;

export const VALID_RATELIMIT =
  '{"type":"consistent","limit":1000,"refillRate":1,"refillInterval":60000}';

export interface PostOperation {
  name: string;
  base: () => [string, string][];
  required: string[];
  breakers: () => Record<string, fc.Arbitrary<string>>;
  /** migrations.createKeys takes an array of such objects. */
  wrap?: (item: string) => string;
}

export const bodyOf = (op: PostOperation, entries: readonly (readonly [string, string])[]) =>
  (op.wrap ?? ((item: string) => item))(objectText(entries));

export const keyFieldBreakers = () => ({
  name: badString(256, { nullable: true }),
  ownerId: badString(256, { nullable: true }),
  externalId: fc.oneof(badString(256, { nullable: true }), fc.constant('"someone-else"')),
  meta: badMeta({ nullable: true }),
  expires: badExpires(true),
  ratelimit: badRatelimit({ nullable: true }),
  enabled: fc.oneof(wrongType(['boolean', 'null']), fc.constantFrom('1', '"true"')),
  refill: badRefill(),
});

export const postOperations: PostOperation[] = [
  {
    name: 'apis.createApi',
    base: () => [['name', '"fuzz-created"']],
    required: ['name'],
    breakers: () => ({ name: badString(256) }),
  },
  {
    name: 'apis.deleteApi',
    base: () => [['apiId', json(fixture.apiId)]],
    required: ['apiId'],
    breakers: () => ({ apiId: badString(64) }),
  },
  {
    name: 'keys.createKey',
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['name', '"k"'],
      ['prefix', '"sk_test"'],
      ['byteLength', '16'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"plan":"pro"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['enabled', 'true'],
      ['remaining', '100'],
      ['refill', '{"interval":"monthly","amount":100,"refillDay":31}'],
    ],
    required: ['apiId'],
    // Optional fields of createKey are not fuzzed with null: the contract leaves null open there.
    breakers: () => ({
      ...keyFieldBreakers(),
      apiId: badString(64),
      prefix: badPrefix().filter((text) => text !== 'null'),
      byteLength: badInteger(16, 255, { nullable: true }),
      remaining: badRemaining(),
    }),
  },
  {
    name: 'keys.updateKey',
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['name', '"renamed"'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"plan":"pro"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['enabled', 'true'],
    ],
    required: ['keyId'],
    breakers: () => ({
      ...keyFieldBreakers(),
      keyId: badString(64),
      remaining: badRemaining().filter((text) => text !== '0'),
    }),
  },
  {
    name: 'keys.updateRemaining',
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['op', '"set"'],
      ['value', '10'],
    ],
    required: ['keyId', 'op', 'value'],
    breakers: () => ({
      keyId: badString(64),
      op: fc.oneof(wrongType(['string']), fc.constantFrom('"add"', '"SET"', '""', '"set "')),
      value: badInteger(0, LIMIT_MAX),
    }),
  },
  {
    name: 'ratelimits.limit',
    base: () => [
      ['namespace', '"fuzz.ns"'],
      ['identifier', '"user_1"'],
      ['limit', '1000'],
      ['duration', '60000'],
      ['cost', '1'],
      ['async', 'false'],
    ],
    required: ['identifier', 'limit', 'duration'],
    breakers: () => ({
      namespace: badNamespace(),
      identifier: badString(256),
      limit: badInteger(1, LIMIT_MAX),
      duration: badInteger(1, INTERVAL_MAX),
      cost: badInteger(0, LIMIT_MAX),
      async: badAsync(),
    }),
  },
  {
    name: 'ratelimits.setOverride',
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
      ['limit', '5'],
      ['duration', '1000'],
      ['async', 'true'],
    ],
    // Neither namespaceName nor namespaceId: 400 too.
    required: ['identifier', 'limit', 'duration', 'namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      // Both namespaceName and namespaceId: 400 whatever the id.
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
      identifier: badString(256),
      limit: badInteger(1, LIMIT_MAX),
      duration: badInteger(1, INTERVAL_MAX),
      async: badAsync(),
    }),
  },
  {
    name: 'ratelimits.deleteOverride',
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
    ],
    required: ['identifier', 'namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
      identifier: badString(256),
    }),
  },
  {
    name: 'migrations.createKeys',
    wrap: (item) => `[${item}]`,
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['plaintext', json(`migrated_${fixture.keyId}`)],
      ['prefix', '"migrated"'],
      ['name', '"imported"'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"from":"elsewhere"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['remaining', '5'],
      ['enabled', 'true'],
    ],
    required: ['apiId', 'plaintext'],
    breakers: () => ({
      ...keyFieldBreakers(),
      apiId: badString(64),
      plaintext: badString(512),
      // With plaintext, any hash is one too many; alone, these are malformed.
      hash: fc.oneof(
        badObject(),
        fc.constantFrom(
          '{"value":"abc","variant":"sha256_base64"}',
          `{"value":"${'A'.repeat(43)}=","variant":"sha256_hex"}`,
          '{"variant":"sha256_base64"}',
          `{"value":"${'A'.repeat(43)}="}`,
        ),
      ),
      start: fc.oneof(
        wrongType(['string', 'null']),
        fc.integer({ min: 33, max: 100 }).map((n) => json('s'.repeat(n))),
      ),
      prefix: badPrefix().filter((text) => text !== 'null'),
      remaining: badRemaining(),
    }),
  },
  {
    name: 'keys.deleteKey',
    base: () => [['keyId', json(fixture.keyId)]],
    required: ['keyId'],
    breakers: () => ({ keyId: badString(64) }),
  },
  {
    name: 'keys.verifyKey',
    base: () => [
      ['key', json(fixture.key)],
      ['apiId', json(fixture.apiId)],
      ['ratelimit', '{"cost":1}'],
      ['authorization', '{"permissions":{"and":[]}}'],
    ],
    required: ['key'],
    breakers: () => ({
      key: badString(512),
      apiId: badString(64),
      ratelimit: badCost(),
      remaining: badCost(),
      authorization: fc.oneof(
        badObject(),
        fc.constant('{}'),
        badPermissionQuery().map((query) => `{"permissions":${query}}`),
      ),
      ratelimits: fc.constantFrom('[]', '[{"name":"requests","cost":1}]', '{}'),
    }),
  },
];

export interface GetOperation {
  name: string;
  base: () => [string, string][];
  required: string[];
  breakers: () => Record<string, fc.Arbitrary<string>>;
}

export const getOperations: GetOperation[] = [
  {
    name: 'apis.getApi',
    base: () => [['apiId', fixture.apiId]],
    required: ['apiId'],
    breakers: () => ({ apiId: badQueryString(64) }),
  },
  {
    name: 'apis.listKeys',
    base: () => [
      ['apiId', fixture.apiId],
      ['limit', '10'],
      ['ownerId', fixture.ownerId],
    ],
    required: ['apiId'],
    breakers: () => ({
      apiId: badQueryString(64),
      limit: badLimit(),
      cursor: badCursor(),
      ownerId: badQueryString(256),
      externalId: fc.oneof(badQueryString(256), fc.constant('someone-else')),
    }),
  },
  {
    name: 'keys.getKey',
    base: () => [['keyId', fixture.keyId]],
    required: ['keyId'],
    breakers: () => ({ keyId: badQueryString(64) }),
  },
  {
    name: 'apis.listApis',
    base: () => [['limit', '10']],
    required: [],
    breakers: () => ({ limit: badLimit(), cursor: badQueryString(64) }),
  },
  {
    name: 'keys.getVerifications',
    base: () => [['keyId', fixture.keyId]],
    required: ['keyId'],
    breakers: () => ({ keyId: badQueryString(64) }),
  },
  {
    name: 'keys.getBucket',
    base: () => [['keyId', fixture.keyId]],
    required: ['keyId'],
    breakers: () => ({ keyId: badQueryString(64) }),
  },
  {
    name: 'ratelimits.getOverride',
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['identifier', 'user_*'],
    ],
    required: ['identifier', 'namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
      identifier: badQueryString(256),
    }),
  },
  {
    name: 'ratelimits.listOverrides',
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['limit', '10'],
    ],
    required: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
      cursor: badQueryString(256),
      limit: badLimit(),
    }),
  },
];

export const queryText = (entries: readonly (readonly [string, string])[]) =>
  entries
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');

export const ALL_PATHS = [
  ...postOperations.map((op) => ({ path: `/v1/${op.name}`, allow: 'POST' })),
  ...getOperations.map((op) => ({ path: `/v1/${op.name}`, allow: 'GET, HEAD' })),
  { path: '/v1/liveness', allow: 'GET, HEAD' },
];
