import { perms, bodyCase as at, PRESENT } from '../types';

/**
 * The answers of Unkey's v2 `200_test.go` files, where they look at fields: one export per route.
 * Where Unkey's test sets its own values (an override's limit, a role's description), the case
 * sets its fixture's and expects those.
 */

/** 2100-01-01, a fixed expiry in the future. */
const FUTURE = 4_102_444_800_000;

export const createApi = [
  at(
    'v2_apis_create_api/200_test.go: TestCreateApiSuccessfully/create basic api',
    'apis.createApi',
    perms('api.*.create_api'),
    { name: 'test-api' },
    { status: 200, data: { apiId: PRESENT } },
  ),
];

export const getApi = [
  at(
    'v2_apis_get_api/200_test.go: TestGetApiSuccessfully/get existing api',
    'apis.getApi',
    perms('api.*.read_api'),
    { apiId: '{api}' },
    { status: 200, data: { id: '{api}', name: PRESENT } },
  ),
];

export const createKey = [
  at(
    'v2_keys_create_key/200_test.go: TestCreateKeySuccess',
    'keys.createKey',
    perms('api.*.create_key'),
    { apiId: '{api}' },
    { status: 200, data: { keyId: PRESENT, key: PRESENT } },
  ),
  at(
    'v2_keys_create_key/200_test.go: TestCreateKeyWithCreditsRemainingNull/credits.remaining null without refill should succeed',
    'keys.createKey',
    perms('api.*.create_key'),
    { apiId: '{api}', credits: { remaining: null } },
    { status: 200, data: { keyId: PRESENT, key: PRESENT } },
  ),
];

const W = 'v2_keys_whoami/200_test.go';
const READ = perms('api.*.read_key');
export const whoami = [
  at(
    `${W}: TestGetKeyByKey/get key by plaintext key`,
    'keys.whoami',
    READ,
    { key: '{keyString}' },
    { status: 200, data: { keyId: '{key}' } },
  ),
  at(
    `${W}: TestGetKey_AdditionalScenarios/key with expiration date`,
    'keys.whoami',
    READ,
    { key: '{keyString}' },
    { status: 200, data: { expires: FUTURE } },
    { setup: { key: { expires: FUTURE } } },
  ),
  at(
    `${W}: TestGetKey_AdditionalScenarios/key with credits and daily refill`,
    'keys.whoami',
    READ,
    { key: '{keyString}' },
    {
      status: 200,
      data: { credits: { remaining: 50, refill: { amount: 100, interval: 'daily' } } },
    },
    { setup: { key: { credits: { remaining: 50, refill: { amount: 100, interval: 'daily' } } } } },
  ),
  at(
    `${W}: TestGetKey_AdditionalScenarios/key with monthly refill`,
    'keys.whoami',
    READ,
    { key: '{keyString}' },
    { status: 200, data: { credits: { refill: { interval: 'monthly', refillDay: 1 } } } },
    {
      setup: {
        key: {
          credits: { remaining: 50, refill: { amount: 100, interval: 'monthly', refillDay: 1 } },
        },
      },
    },
  ),
];

const I = 'v2_identities_get_identity/200_test.go';
const READ_I = perms('identity.*.read_identity');
const META = { name: 'Test User', email: 'test@example.com', plan: 'pro', credits: 100 };
export const getIdentity = [
  at(
    `${I}: TestSuccess/get by externalId`,
    'identities.getIdentity',
    READ_I,
    { identity: '{externalId}' },
    {
      status: 200,
      data: { externalId: '{externalId}', meta: META, ratelimits: [PRESENT, PRESENT] },
    },
    {
      setup: {
        identity: {
          meta: META,
          ratelimits: [
            { name: 'requests', limit: 1000, duration: 3_600_000 },
            { name: 'tokens', limit: 100_000, duration: 86_400_000 },
          ],
        },
      },
    },
  ),
  at(
    `${I}: TestSuccess/metadata is empty object when not set`,
    'identities.getIdentity',
    READ_I,
    { identity: '{externalId}' },
    { status: 200, data: { meta: {} } },
  ),
  at(
    `${I}: TestSuccess/ratelimits is empty array when none exist`,
    'identities.getIdentity',
    READ_I,
    { identity: '{externalId}' },
    { status: 200, data: { ratelimits: [] } },
  ),
  at(
    `${I}: TestSuccess/retrieve identity with identityId`,
    'identities.getIdentity',
    READ_I,
    { identity: '{identity}' },
    { status: 200, data: { externalId: '{externalId}' } },
  ),
];

const P = 'v2_permissions_get_permission/200_test.go';
const described = {
  setup: { permission: { description: 'A permission for the conformance corpus' } },
};
export const getPermission = [
  ...[
    ['get permission with all fields by ID', '{permission}'],
    ['get permission with all fields by slug', '{permissionSlug}'],
  ].map(([name, permission]) =>
    at(
      `${P}: TestSuccess/${name}`,
      'permissions.getPermission',
      perms('rbac.*.read_permission'),
      { permission: permission! },
      {
        status: 200,
        data: {
          id: '{permission}',
          name: '{permissionSlug}',
          description: 'A permission for the conformance corpus',
        },
      },
      described,
    ),
  ),
];

const R = 'v2_permissions_get_role/200_test.go';
export const getRole = [
  at(
    `${R}: TestSuccess/get role without permissions`,
    'permissions.getRole',
    perms('rbac.*.read_role'),
    { role: '{role}' },
    {
      status: 200,
      data: {
        id: '{role}',
        name: '{roleName}',
        description: 'A role for the conformance corpus',
        permissions: null,
      },
    },
    {
      setup: { role: { description: 'A role for the conformance corpus' } },
    },
  ),
];

const L = 'v2_ratelimit_limit/200_test.go';
const LIMIT = perms('ratelimit.*.limit');
export const limit = [
  at(
    `${L}: TestLimitSuccessfully/basic rate limiting`,
    'ratelimit.limit',
    LIMIT,
    { namespace: '{namespace}', identifier: 'user_123', limit: 100, duration: 60_000 },
    { status: 200, data: { success: true, limit: 100, remaining: 99 } },
  ),
  at(
    `${L}: TestLimitSuccessfully/custom cost`,
    'ratelimit.limit',
    LIMIT,
    { namespace: '{namespace}', identifier: 'user_123', limit: 100, duration: 60_000, cost: 5 },
    { status: 200, data: { success: true, limit: 100, remaining: 95 } },
  ),
  at(
    `${L}: TestLimitSuccessfully/with override`,
    'ratelimit.limit',
    LIMIT,
    { namespace: '{namespace}', identifier: '{overrideIdentifier}', limit: 100, duration: 60_000 },
    { status: 200, data: { success: true, limit: 10, remaining: 9, overrideId: '{override}' } },
    { note: "Unkey's override allows 200; the fixture's allows 10" },
  ),
];

const O = 'v2_ratelimit_get_override/200_test.go';
export const getOverride = [
  at(
    `${O}: TestGetOverrideSuccessfully/get by namespace name`,
    'ratelimit.getOverride',
    perms('ratelimit.*.read_override'),
    { namespace: '{namespace}', identifier: '{overrideIdentifier}' },
    {
      status: 200,
      data: {
        overrideId: '{override}',
        identifier: '{overrideIdentifier}',
        limit: 10,
        duration: 60_000,
      },
    },
  ),
];

const V = 'v2_keys_verify_key/200_test.go: TestSuccess';
const VERIFY = perms('api.*.verify_key');
const credits = (remaining: number) =>
  remaining === 0
    ? { setup: { key: { credits: { remaining: 1 } }, keyUpdate: { credits: { remaining: 0 } } } }
    : { setup: { key: { credits: { remaining } } } };
const limits = (name: string, autoApply: boolean) => ({
  setup: { key: { ratelimits: [{ name, limit: 1, duration: 60_000, autoApply }] } },
});
/** Unkey's ratelimit tests verify twice; the case is the first verification. */
export const verifyKey = [
  at(
    `${V}/verifies key as valid`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: true, code: 'VALID' } },
  ),
  at(
    `${V}/disabled key`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: false, code: 'DISABLED' } },
    { setup: { key: { enabled: false } } },
  ),
  at(
    `${V}/key with credits/allowed default credit cost`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: true, code: 'VALID', credits: 4 } },
    credits(5),
  ),
  at(
    `${V}/key with credits/exceeding with default credit cost`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: false, code: 'USAGE_EXCEEDED', credits: 0 } },
    credits(0),
  ),
  at(
    `${V}/key with credits/allowed custom credit cost`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', credits: { cost: 5 } },
    { status: 200, data: { valid: true, code: 'VALID', credits: 0 } },
    credits(5),
  ),
  at(
    `${V}/key with credits/exceeding with custom credit cost`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', credits: { cost: 15 } },
    { status: 200, data: { valid: false, code: 'USAGE_EXCEEDED', credits: 5 } },
    credits(5),
  ),
  at(
    `${V}/key with credits/allow credits 0 even when remaining 0`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', credits: { cost: 0 } },
    { status: 200, data: { valid: true, code: 'VALID', credits: 0 } },
    credits(0),
  ),
  at(
    `${V}/key with permissions/with direct permission valid`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', permissions: 'documents.read' },
    { status: 200, data: { valid: true, code: 'VALID' } },
    { setup: { key: { permissions: ['documents.read'] } } },
  ),
  at(
    `${V}/key with permissions/with role permission valid`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', permissions: 'documents.read' },
    { status: 200, data: { valid: true, code: 'VALID' } },
    { setup: { keyRole: { permissions: ['documents.read'] } } },
  ),
  at(
    `${V}/key with permissions/missing permissions`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', permissions: 'domain.write' },
    { status: 200, data: { valid: false, code: 'INSUFFICIENT_PERMISSIONS' } },
  ),
  at(
    `${V}/key with auto applied ratelimit`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: true, code: 'VALID' } },
    limits('auto-apply', true),
  ),
  at(
    `${V}/key with specified ratelimit`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', ratelimits: [{ name: 'requests' }] },
    { status: 200, data: { valid: true, code: 'VALID' } },
    limits('requests', false),
  ),
  at(
    `${V}/key with custom ratelimit`,
    'keys.verifyKey',
    VERIFY,
    {
      key: '{keyString}',
      ratelimits: [{ name: 'requests', cost: 15, duration: 60_000, limit: 20 }],
    },
    { status: 200, data: { valid: true, code: 'VALID' } },
  ),
  at(
    'v2_keys_verify_key/200_test.go: TestNoVerifyPermissionReturnsNotFound',
    'keys.verifyKey',
    perms('api.*.read_key'),
    { key: '{keyString}' },
    { status: 200, data: { code: 'NOT_FOUND' } },
    { deviation: { id: 'verify-other-api-403', keyward: { status: 403 } } },
  ),
];

export const createPermission = [
  at(
    'v2_permissions_create_permission/200_test.go: TestSuccess/create permission',
    'permissions.createPermission',
    perms('rbac.*.create_permission'),
    { name: 'conf.documents.read', slug: 'conf.documents.read', description: 'Read documents' },
    { status: 200, data: { permissionId: PRESENT } },
  ),
  at(
    'v2_permissions_create_permission/200_test.go: TestSuccess/create permission without description',
    'permissions.createPermission',
    perms('rbac.*.create_permission'),
    { name: 'conf.documents.write', slug: 'conf.documents.write' },
    { status: 200, data: { permissionId: PRESENT } },
  ),
];

export const createRole = [
  at(
    'v2_permissions_create_role/200_test.go: TestSuccess/create role without permissions',
    'permissions.createRole',
    perms('rbac.*.create_role'),
    { name: 'conf.reader' },
    { status: 200, data: { roleId: PRESENT } },
  ),
  at(
    'v2_permissions_create_role/200_test.go: TestSuccess/create role with description',
    'permissions.createRole',
    perms('rbac.*.create_role'),
    { name: 'conf.writer', description: 'Writes documents' },
    { status: 200, data: { roleId: PRESENT } },
  ),
];

const SO = 'v2_ratelimit_set_override/200_test.go: TestSetOverrideSuccessfully';
const SET = perms('ratelimit.*.set_override');
export const setOverride = [
  ...[
    ['create override using namespace name', 'user_conf'],
    ['create override with wildcard identifier', 'user_*'],
    ['create same override twice should update existing record', '{overrideIdentifier}'],
  ].map(([name, identifier]) =>
    at(
      `${SO}/${name}`,
      'ratelimit.setOverride',
      SET,
      { namespace: '{namespace}', identifier: identifier!, limit: 20, duration: 60_000 },
      { status: 200, data: { overrideId: PRESENT } },
    ),
  ),
];

export const multiLimit = [
  at(
    'v2_ratelimit_multi_limit/200_test.go: TestLimitSuccessfully/basic multi rate limiting',
    'ratelimit.multiLimit',
    perms('ratelimit.*.limit'),
    [
      { namespace: '{namespace}', identifier: 'user_1', limit: 100, duration: 60_000 },
      { namespace: '{namespace}', identifier: 'user_2', limit: 50, duration: 60_000 },
    ],
    { status: 200, data: { passed: true, limits: [{ passed: true }, { passed: true }] } },
  ),
];

const LO = 'v2_ratelimit_list_overrides/200_test.go: TestListOverridesSuccessfully';
export const listOverrides = [
  at(
    `${LO}/get by namespace name`,
    'ratelimit.listOverrides',
    perms('ratelimit.*.read_override'),
    { namespace: '{namespace}' },
    { status: 200, data: [{ overrideId: '{override}' }] },
    { note: "Unkey's test checks that the one override is listed; the case names it" },
  ),
  at(
    `${LO}/get empty list for namespace without overrides`,
    'ratelimit.listOverrides',
    perms('ratelimit.*.read_override'),
    { namespace: '{namespace}' },
    { status: 200, data: [] },
  ),
];

const UC = 'v2_keys_update_credits/200_test.go: TestKeyUpdateCreditsSuccess';
const UPDATE = perms('api.*.update_key');
const withCredits = { setup: { key: { credits: { remaining: 10 } } } };
/** Unkey's test moves its own numbers; the cases start from 10 credits. */
export const updateCredits = [
  at(
    `${UC}/update key set to unlimited credits`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'set', value: null },
    { status: 200, data: { remaining: null } },
    withCredits,
  ),
  at(
    `${UC}/set to fixed value`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'set', value: 50 },
    { status: 200, data: { remaining: 50 } },
    withCredits,
  ),
  at(
    `${UC}/increase credits`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'increment', value: 5 },
    { status: 200, data: { remaining: 15 } },
    withCredits,
  ),
  at(
    `${UC}/decrease credits`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'decrement', value: 3 },
    { status: 200, data: { remaining: 7 } },
    withCredits,
  ),
];

export const rerollKey = [
  at(
    'v2_keys_reroll_key/200_test.go: TestRerollKeySuccess/successfully rerolled key with all options',
    'keys.rerollKey',
    perms('api.*.create_key'),
    { keyId: '{key}', expiration: 0 },
    { status: 200, data: { keyId: PRESENT, key: PRESENT } },
  ),
];
