import fc from 'fast-check';
import {
  badCost,
  badCursor,
  badExpires,
  badInteger,
  badLimit,
  badMeta,
  badNamedLimits,
  badNamespace,
  badAsync,
  binaryString,
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
import type { JsonSchema, Operation } from '../../src/operations/operation';
import { operations } from '../../src/operations/registry';
import { v1Routes } from '../../src/dialects/v1/routes';
import { fixture } from './hostileTarget';

/**
 * Every operation of src/operations/registry.ts as the hostile-input tests see it: a valid input
 * built on the fixtures, and how each of its fields can be broken. Whether it is a POST or a GET,
 * which fields it declares and which of them it requires come from its declaration; a declared
 * field whose schema says enough (a string's maximum length, an integer's range) is broken as that
 * schema says, the others by the breakers written here.
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

/**
 * A list of permission (or role) names: up to 100 names of 3–256 characters, or (createKey, as
 * Unkey v1's) of 1–512 characters.
 */
const badNames = (loose = false) =>
  fc.oneof(
    wrongType(['array']),
    fc.constantFrom(
      '[5]',
      loose ? '[""]' : '["ab"]',
      ...(loose ? [json(['n'.repeat(513)])] : []),
      '[null]',
      `[${Array.from({ length: 101 }, (_, i) => `"n.${i}"`).join(',')}]`,
    ),
  );

/** A query value no boolean parameter takes: anything but `true` and `false`. */
const badQueryBoolean = () => fc.constantFrom('', '1', 'yes', 'TRUE', 'true,false');

/** Fields createKey and updateKey share beyond the key's own: what it holds, by name. */
const holdingBreakers = (loose = false) => ({
  permissions: badNames(loose),
  roles: badNames(loose),
});

export const keyFieldBreakers = () => ({
  name: badString(256, { nullable: true }),
  ownerId: badString(256, { nullable: true }),
  externalId: fc.oneof(badString(256, { nullable: true }), fc.constant('"someone-else"')),
  meta: badMeta({ nullable: true }),
  expires: badExpires(true),
  // Unkey takes any string of up to 256 characters, the empty one included.
  environment: fc.oneof(
    wrongType(['string', 'null']),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('e'.repeat(n))),
  ),
  ratelimit: badRatelimit({ nullable: true }),
  ratelimits: badNamedLimits({ nullable: true, defaultIsTaken: true }),
  enabled: fc.oneof(wrongType(['boolean', 'null']), fc.constantFrom('1', '"true"')),
  refill: badRefill(),
});

/** A permission name or slug: 3–256 of `[a-zA-Z0-9_.:-]` (Unkey v1's identifier). */
function badPermissionName(options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(options.nullable === false ? ['string'] : ['string']),
    fc.constantFrom('""', '"ab"', '"has space"', '"a*b"', '"slash/ed"', '"é.read"'),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('p'.repeat(n))),
  );
}

/** The refs of a key's permissions or roles: `[{ id? | name?, create? }]`, 1–100 of them. */
function badLinks(minItems: number): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['array']),
    fc.constantFrom(
      ...(minItems > 0 ? ['[]'] : []),
      '[5]',
      '[{"id":5}]',
      '[{"name":""}]',
      '[{"name":"x","create":"yes"}]',
      `[${Array.from({ length: 101 }, () => '{"name":"x"}').join(',')}]`,
    ),
  );
}

/** A description: 3–256 characters, or empty. */
function badDescription(): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['string']),
    fc.constantFrom('"a"', '"ab"'),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('d'.repeat(n))),
  );
}

/** What the hostile-input tests need to know of an operation beyond its declaration. */
interface Fuzz {
  /** A valid input (the entries of one object, as raw JSON texts for a POST). */
  base: () => [string, string][];
  /**
   * How to break the fields whose schema does not say enough, or says less than the contract
   * (patterns, enums, objects, nulls the contract leaves open); and fields the operation does not
   * declare but refuses.
   */
  breakers?: () => Record<string, fc.Arbitrary<string>>;
  /** Required by the operation's own check (`Operation.check`) beyond the schema's `required`. */
  alsoRequired?: string[];
}

/** Every operation, by name; `every route … is fuzzed here` checks it against the registry. */
export const fuzz: Readonly<Record<string, Fuzz>> = {
  'apis.createApi': { base: () => [['name', '"fuzz-created"']] },
  'apis.deleteApi': { base: () => [['apiId', json(fixture.apiId)]] },
  'apis.deleteKeys': {
    base: () => [
      ['apiId', json(fixture.apiId)],
      ['permanent', 'false'],
    ],
    breakers: () => ({ permanent: wrongType(['boolean']) }),
  },
  'keys.whoami': { base: () => [['key', json(fixture.key)]] },
  'keys.addPermissions': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['permissions', `[{"name":"fuzz.permissions","create":true}]`],
    ],
    breakers: () => ({ permissions: badLinks(1) }),
  },
  'keys.removePermissions': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['permissions', `[{"name":"fuzz.permissions","create":true}]`],
    ],
    breakers: () => ({ permissions: badLinks(1) }),
  },
  'keys.setPermissions': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['permissions', `[{"name":"fuzz.permissions","create":true}]`],
    ],
    breakers: () => ({ permissions: badLinks(1) }),
  },
  'keys.addRoles': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['roles', `[{"name":"fuzz.roles","create":true}]`],
    ],
    breakers: () => ({ roles: badLinks(1) }),
  },
  'keys.removeRoles': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['roles', `[{"name":"fuzz.roles","create":true}]`],
    ],
    breakers: () => ({ roles: badLinks(1) }),
  },
  'keys.setRoles': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['roles', `[{"name":"fuzz.roles","create":true}]`],
    ],
    breakers: () => ({ roles: badLinks(1) }),
  },
  'permissions.createPermission': {
    base: () => [
      ['name', '"fuzz.documents.read"'],
      ['slug', '"fuzz-documents-read"'],
      ['description', '"read the documents"'],
    ],
    breakers: () => ({
      name: badPermissionName(),
      slug: badPermissionName({ nullable: false }),
      description: badDescription(),
    }),
  },
  'permissions.getPermission': {
    base: () => [['permissionId', fixture.permissionId]],
    // Neither permissionId nor name: 400 too.
    alsoRequired: ['permissionId'],
    // Both permissionId and name: 400 whatever the name.
    breakers: () => ({ name: fc.oneof(badQueryString(256), fc.constant('fuzz.fixture')) }),
  },
  'permissions.listPermissions': { base: () => [] },
  'permissions.deletePermission': {
    base: () => [['permissionId', json(fixture.permissionId)]],
    alsoRequired: ['permissionId'],
    breakers: () => ({ name: fc.oneof(badString(256), fc.constant('"fuzz.fixture"')) }),
  },
  'permissions.createRole': {
    base: () => [
      ['name', '"fuzz reader"'],
      ['description', '"reads"'],
    ],
    breakers: () => ({
      name: fc.oneof(
        wrongType(['string']),
        fc.constantFrom('""', '"ab"'),
        fc.integer({ min: 257, max: 100_000 }).map((n) => json('r'.repeat(n))),
      ),
      description: badDescription(),
      permissions: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[5]',
          '["ab"]',
          '["has space"]',
          `[${Array.from({ length: 101 }, (_, i) => `"p.${i}"`).join(',')}]`,
        ),
      ),
    }),
  },
  'permissions.getRole': {
    base: () => [['roleId', fixture.roleId]],
    alsoRequired: ['roleId'],
    breakers: () => ({ name: fc.oneof(badQueryString(256), fc.constant('fuzz fixture')) }),
  },
  'permissions.listRoles': { base: () => [] },
  'permissions.setRolePermissions': {
    base: () => [
      ['roleId', json(fixture.roleId)],
      ['permissions', '["fuzz.fixture"]'],
    ],
    breakers: () => ({
      permissions: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[5]',
          '["ab"]',
          '["has space"]',
          `[${Array.from({ length: 101 }, (_, i) => `"p.${i}"`).join(',')}]`,
        ),
      ),
    }),
  },
  'permissions.deleteRole': {
    base: () => [['roleId', json(fixture.roleId)]],
    alsoRequired: ['roleId'],
    breakers: () => ({ name: fc.oneof(badString(256), fc.constant('"fuzz fixture"')) }),
  },
  'identities.createIdentity': {
    base: () => [
      ['externalId', '"fuzz-created-user"'],
      ['meta', '{"plan":"pro"}'],
      ['ratelimits', '[{"name":"requests","limit":10,"duration":1000}]'],
    ],
    breakers: () => ({
      // 3–256 characters, as Unkey v1 asks.
      externalId: fc.oneof(badString(256), fc.constantFrom('"a"', '"ab"')),
      meta: badMeta(),
      ratelimits: badNamedLimits(),
    }),
  },
  'identities.getIdentity': {
    base: () => [['identityId', fixture.identityId]],
    // Neither identityId nor externalId: 400 too.
    alsoRequired: ['identityId'],
    breakers: () => ({
      // Both identityId and externalId: 400 whatever the externalId.
      externalId: fc.oneof(badQueryString(256), fc.constant(fixture.identityExternalId)),
    }),
  },
  'identities.listIdentities': {
    base: () => [['limit', '10']],
    // A blank search lists everything, as Unkey's does: only a longer one is refused.
    breakers: () => ({
      search: fc.oneof(
        binaryString(257, 260),
        fc.integer({ min: 257, max: 6_000 }).map((n) => 'x'.repeat(n)),
      ),
    }),
  },
  'auditLogs.list': {
    base: () => [
      ['limit', '10'],
      ['operation', 'keys.createKey'],
    ],
    // Both have patterns: an entry id (a stream id, then a shard 0–15 or nothing), and
    // `service.method`.
    breakers: () => ({
      cursor: fc.oneof(
        badQueryString(41),
        fc.constantFrom(
          '1',
          '1-',
          '-1',
          'a-1',
          '1-1-16',
          '1-1-01',
          '1-1-1-1',
          '1 -1',
          `${'9'.repeat(21)}-0`,
        ),
      ),
      operation: fc.oneof(
        badQueryString(65),
        fc.constantFrom(
          'keys',
          'keys.',
          '.createKey',
          'a.b.c',
          'keys createKey',
          'keys.create_key',
        ),
      ),
    }),
  },
  'identities.updateIdentity': {
    base: () => [
      ['identityId', json(fixture.identityId)],
      ['meta', '{"plan":"pro"}'],
      ['ratelimits', '[{"name":"requests","limit":10,"duration":1000}]'],
    ],
    alsoRequired: ['identityId'],
    breakers: () => ({
      externalId: fc.oneof(badString(256), fc.constant(json(fixture.identityExternalId))),
      meta: badMeta(),
      ratelimits: badNamedLimits({ twiceIsConflict: true }),
    }),
  },
  'identities.deleteIdentity': {
    base: () => [['identityId', json(fixture.identityId)]],
    alsoRequired: ['identityId'],
    breakers: () => ({
      externalId: fc.oneof(badString(256), fc.constant(json(fixture.identityExternalId))),
    }),
  },
  'keys.createKey': {
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
    // Optional fields of createKey are not fuzzed with null: the contract leaves null open there.
    breakers: () => ({
      ...keyFieldBreakers(),
      ...holdingBreakers(true),
      recoverable: fc.oneof(wrongType(['boolean']), fc.constantFrom('1', '"true"')),
      prefix: badPrefix().filter((text) => text !== 'null'),
      byteLength: badInteger(16, 255, { nullable: true }),
      remaining: badRemaining(),
    }),
  },
  'keys.updateKey': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['name', '"renamed"'],
      ['ownerId', json(fixture.ownerId)],
      ['meta', '{"plan":"pro"}'],
      ['expires', String(Date.now() + DAY)],
      ['ratelimit', VALID_RATELIMIT],
      ['enabled', 'true'],
    ],
    breakers: () => ({
      ...keyFieldBreakers(),
      // v1's refs (`{ id } | { name, create? }`) or names alone (v2's form).
      permissions: fc.oneof(badNames(), badLinks(0), fc.constant('[{"create":true}]')),
      roles: fc.oneof(badNames(), badLinks(0), fc.constant('[{}]')),
      remaining: badRemaining().filter((text) => text !== '0'),
    }),
  },
  'keys.updateRemaining': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['op', '"set"'],
      ['value', '10'],
    ],
    breakers: () => ({
      op: fc.oneof(wrongType(['string']), fc.constantFrom('"add"', '"SET"', '""', '"set "')),
    }),
  },
  'ratelimits.limit': {
    base: () => [
      ['namespace', '"fuzz.ns"'],
      ['identifier', '"user_1"'],
      ['limit', '1000'],
      ['duration', '60000'],
      ['cost', '1'],
      ['async', 'false'],
    ],
    breakers: () => ({ namespace: badNamespace(), async: badAsync() }),
  },
  'ratelimits.multiLimit': {
    base: () => [
      ['namespace', '"fuzz.ns"'],
      ['identifier', '"user_2"'],
      ['limit', '1000'],
      ['duration', '60000'],
      ['cost', '1'],
      ['async', 'false'],
    ],
    breakers: () => ({ namespace: badNamespace(), async: badAsync() }),
  },
  'ratelimits.setOverride': {
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
      ['limit', '5'],
      ['duration', '1000'],
      ['async', 'true'],
    ],
    // Neither namespaceName nor namespaceId: 400 too.
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      // Both namespaceName and namespaceId: 400 whatever the id.
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
      async: badAsync(),
    }),
  },
  'ratelimits.deleteOverride': {
    base: () => [
      ['namespaceName', '"fuzz.ns"'],
      ['identifier', '"user_*"'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badNamespace(),
      namespaceId: fc.oneof(badString(64), fc.constant('"rlns_1ChFn6PMC5yVErDBdZFGpo"')),
    }),
  },
  'migrations.createKeys': {
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
    // One of plaintext and hash is required; hash is broken below.
    alsoRequired: ['plaintext'],
    breakers: () => ({
      ...keyFieldBreakers(),
      recoverable: fc.oneof(wrongType(['boolean']), fc.constantFrom('1', '"true"')),
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
  'keys.deleteKey': { base: () => [['keyId', json(fixture.keyId)]] },
  // A day's grace: the fixture key keeps verifying. Both fields are broken as their schemas say.
  'keys.rerollKey': {
    base: () => [
      ['keyId', json(fixture.keyId)],
      ['expiration', String(DAY)],
    ],
  },
  'keys.verifyKey': {
    base: () => [
      ['key', json(fixture.key)],
      ['apiId', json(fixture.apiId)],
      ['ratelimit', '{"cost":1}'],
      ['authorization', '{"permissions":{"or":["documents.read","documents.write"]}}'],
    ],
    breakers: () => ({
      ratelimit: badCost(),
      remaining: badCost(),
      tags: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[""]',
          '[1]',
          `["${'t'.repeat(513)}"]`,
          JSON.stringify(Array.from({ length: 21 }, (_, i) => `t${i}`)),
        ),
      ),
      authorization: fc.oneof(
        badObject(),
        fc.constant('{}'),
        badPermissionQuery().map((query) => `{"permissions":${query}}`),
      ),
      // A limit the key lacks is refused only when the verification reaches its limits (as in
      // Unkey), and the fixture key fails its permission query first: tests of its own cover it.
      ratelimits: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[{}]',
          '[{"name":"has space","limit":1,"duration":1000}]',
          '[{"name":"tokens","cost":-1,"limit":1,"duration":1000}]',
          '[{"name":"tokens","limit":0,"duration":1000}]',
          `[${Array.from({ length: 21 }, (_, i) => `{"name":"l${i}","limit":1,"duration":1000}`).join(',')}]`,
        ),
      ),
    }),
  },
  'apis.getApi': { base: () => [['apiId', fixture.apiId]] },
  'analytics.getVerifications': {
    base: () => [
      ['apiId', fixture.apiId],
      ['start', '0'],
      // No list parameter here: a list may be given twice (keyId=a&keyId=b), the rest may not.
      ['end', '3600000'],
    ],
    breakers: () => ({
      apiId: badQueryString(64),
      externalId: badQueryString(256),
      keyId: fc.constantFrom('', 'k'.repeat(65), `k,${'k'.repeat(65)}`),
      tag: fc.constant(''),
      start: fc.constantFrom('-1', 'yesterday', '4000000'),
      end: fc.constantFrom('-1', 'now', '0'),
      groupBy: fc.constantFrom('week', 'tag,tags', ''),
      limit: fc.constantFrom('0', '-1', 'ten'),
      orderBy: fc.constantFrom('size', ''),
      order: fc.constantFrom('up', ''),
    }),
  },
  'apis.listKeys': {
    base: () => [
      ['apiId', fixture.apiId],
      ['limit', '10'],
      ['ownerId', fixture.ownerId],
    ],
    breakers: () => ({
      cursor: badCursor(),
      externalId: fc.oneof(badQueryString(256), fc.constant('someone-else')),
      decrypt: badQueryBoolean(),
    }),
  },
  'keys.getKey': {
    base: () => [['keyId', fixture.keyId]],
    breakers: () => ({ keyId: badQueryString(64), decrypt: badQueryBoolean() }),
  },
  'apis.listApis': { base: () => [['limit', '10']] },
  'keys.getVerifications': {
    base: () => [['keyId', fixture.keyId]],
    breakers: () => ({
      keyId: badQueryString(64),
      ownerId: badQueryString(256),
      start: fc.constantFrom('-1', 'yesterday', '1.5'),
      end: fc.constantFrom('-1', 'now', '1e3'),
      granularity: fc.constantFrom('hour', 'month', ''),
    }),
  },
  'keys.getRecentVerifications': { base: () => [['keyId', fixture.keyId]] },
  'keys.getBucket': { base: () => [['keyId', fixture.keyId]] },
  'ratelimits.getOverride': {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['identifier', 'user_*'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
    }),
  },
  'ratelimits.listOverrides': {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['limit', '10'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
    }),
  },
  'ratelimits.getUsage': {
    base: () => [
      ['namespaceName', 'fuzz.ns'],
      ['identifier', 'user_1'],
      ['start', '0'],
      ['end', '3600000'],
      ['granularity', 'minute'],
      ['groupBy', 'identifier'],
      ['limit', '10'],
    ],
    alsoRequired: ['namespaceName'],
    breakers: () => ({
      namespaceName: badQueryNamespace(),
      namespaceId: fc.string({ maxLength: 70 }),
      start: fc.constantFrom('-1', 'yesterday', '1.5', '3600000'),
      end: fc.constantFrom('-1', 'now', '0', '1e3'),
      granularity: fc.constantFrom('month', 'second', ''),
      groupBy: fc.constantFrom('key', 'time,identifier', ''),
      limit: fc.constantFrom('0', '-1', 'ten', '1001'),
    }),
  },
};

/** The object schema of one input: the input's own, or its items' for an array (createKeys). */
/** What v1 takes of the operation: its input, but where Unkey v1 took less (a listing's paging). */
function v1InputOf(op: Operation): JsonSchema {
  return v1Routes.find((route) => route.operation === op)?.input ?? op.input;
}

export function inputObject(op: Operation): {
  properties: Readonly<Record<string, JsonSchema>>;
  required: readonly string[];
} {
  const input = v1InputOf(op);
  const schema = input.type === 'array' ? (input.items as JsonSchema) : input;
  return {
    properties: (schema.properties ?? {}) as Readonly<Record<string, JsonSchema>>,
    required: (schema.required ?? []) as readonly string[],
  };
}

/**
 * How the declared schema of one field breaks it: a string is broken by its maximum length
 * (`minLength: 1`: empty too), an integer by its range, a page size by every way a query can miss
 * 1–100. Anything else needs a breaker written in `fuzz`; without one the test says which.
 */
function breakerOf(
  op: Operation,
  field: string,
  schema: JsonSchema,
): fc.Arbitrary<string> | undefined {
  const types = ([] as unknown[]).concat(schema.type);
  const nullable = types.includes('null');
  const kind = types.find((type) => type !== 'null');
  if (schema.pattern !== undefined || schema.enum !== undefined) return undefined;
  if (kind === 'string' && schema.minLength === 1 && typeof schema.maxLength === 'number') {
    return op.method === 'GET'
      ? badQueryString(schema.maxLength)
      : badString(schema.maxLength, { nullable });
  }
  const { minimum, maximum } = schema;
  if (kind === 'integer' && typeof minimum === 'number' && typeof maximum === 'number') {
    if (op.method === 'GET') return minimum === 1 && maximum === 100 ? badLimit() : undefined;
    return badInteger(minimum, maximum, { nullable });
  }
  return undefined;
}

function breakersOf(op: Operation, written: Fuzz['breakers']): PostOperation['breakers'] {
  return () => {
    const explicit = written?.() ?? {};
    const derived: Record<string, fc.Arbitrary<string>> = {};
    for (const [field, schema] of Object.entries(inputObject(op).properties)) {
      if (field in explicit) continue;
      const breaker = breakerOf(op, field, schema);
      if (!breaker) {
        throw new Error(
          `${op.name}: no breaker for its declared field ${field} ` +
            `(${JSON.stringify(schema)}): write one in test/support/hostileOperations.ts`,
        );
      }
      derived[field] = breaker;
    }
    return { ...derived, ...explicit };
  };
}

function fuzzed(op: Operation, entry: Fuzz): PostOperation {
  return {
    name: op.name,
    base: entry.base,
    required: [...inputObject(op).required, ...(entry.alsoRequired ?? [])],
    breakers: breakersOf(op, entry.breakers),
    ...(op.input.type === 'array' ? { wrap: (item: string) => `[${item}]` } : {}),
  };
}

/** The registry's operations that have an entry in `fuzz`, split by their declared method. */
const withFuzz = (method: Operation['method']) =>
  operations.flatMap((op) => {
    const entry = fuzz[op.name];
    return op.method === method && entry ? [fuzzed(op, entry)] : [];
  });

export const postOperations: PostOperation[] = withFuzz('POST');

export type GetOperation = Omit<PostOperation, 'wrap'>;

export const getOperations: GetOperation[] = withFuzz('GET');

export const queryText = (entries: readonly (readonly [string, string])[]) =>
  entries
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');

export const ALL_PATHS = [
  ...operations.map((op) => ({
    path: `/v1/${op.name}`,
    allow: op.method === 'POST' ? 'POST' : 'GET, HEAD',
  })),
  { path: '/v1/liveness', allow: 'GET, HEAD' },
];
