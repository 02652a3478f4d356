import { BEARER_ONLY, EMPTY, MISSING, NO_BEARER, UNKNOWN, headerCases } from './auth';
import { perms, bodyCase as at, UNKEY_ERRORS, type ConformanceCase, type Json } from '../types';

/**
 * keys.* from Unkey's `svc/api/routes/v2_keys_*` tests (4xx files, and the 200s those files
 * assert beside them). Unkey's createKey now grants URN permissions
 * (`unkey:v1:<ws>:keyspaces/*#create_key`); the cases grant keyward's (and Unkey's legacy)
 * equivalent, `api.*.create_key` or `api.<api>.create_key`.
 */

const noLeak = (keyward: number): Partial<ConformanceCase> => ({
  deviation: { id: 'no-permission-404', keyward: { status: keyward } },
});
const URN = { note: 'Unkey grants the URN form; the case grants api.*.create_key' };
const QUERY_SYNTAX = `${UNKEY_ERRORS}/user/bad_request/permissions_query_syntax_error`;

const C = 'v2_keys_create_key';
const CREATE = perms('api.*.create_key');
export const createKey: ConformanceCase[] = [
  ...(
    [
      ['missing apiId', {}],
      ['empty apiId', { apiId: '' }],
      ['apiId too short', { apiId: 'ab' }],
      ['byteLength too small', { apiId: '{api}', byteLength: 10 }],
      ['byteLength too large', { apiId: '{api}', byteLength: 300 }],
      ['prefix too long', { apiId: '{api}', prefix: 'this_prefix_is_way_too_long_for_the_api' }],
      ['negative expires timestamp', { apiId: '{api}', expires: -1 }],
      ['empty permission in list', { apiId: '{api}', permissions: [''] }],
      ['empty role in list', { apiId: '{api}', roles: [''] }],
      ['permission too long', { apiId: '{api}', permissions: ['a'.repeat(513)] }],
      ['role too long', { apiId: '{api}', roles: ['a'.repeat(513)] }],
      [
        'credits.remaining null with refill should error',
        {
          apiId: '{api}',
          credits: { remaining: null, refill: { amount: 100, interval: 'daily' } },
        },
      ],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(
      `${C}/400_test.go: TestCreateKeyBadRequest/${name}`,
      'keys.createKey',
      CREATE,
      body,
      { status: 400 },
      URN,
    ),
  ),
  ...[
    ['invalid bearer token', 'Bearer invalid_key_12345'],
    ['nonexistent key', 'Bearer key_3ZGp4bGXXRq6JbtKLVrCmZrM'],
    ['bearer with extra spaces', 'Bearer   invalid_key_with_spaces   '],
  ].map(([name, header]) =>
    at(
      `${C}/401_test.go: TestCreateKeyUnauthorized/${name}`,
      'keys.createKey',
      { header: header! },
      { apiId: 'api_1234567890abcdef' },
      { status: 401 },
    ),
  ),
  at(
    `${C}/403_test.go: TestCreateKeyMissingPermissionsDoNotLeakKeyspace/no permissions`,
    'keys.createKey',
    perms(),
    { apiId: '{api}' },
    { status: 404 },
    noLeak(403),
  ),
  at(
    `${C}/403_test.go: TestCreateKeyMissingPermissionsDoNotLeakKeyspace/create permission for different keyspace`,
    'keys.createKey',
    perms('api.{otherApi}.create_key'),
    { apiId: '{api}' },
    { status: 404 },
    { ...noLeak(403), ...URN },
  ),
  at(
    `${C}/404_test.go: TestCreateKeyNotFound/nonexistent api`,
    'keys.createKey',
    CREATE,
    { apiId: 'api_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
    URN,
  ),
  at(
    `${C}/404_test.go: TestCreateKeyNotFound/api with valid format but invalid id`,
    'keys.createKey',
    CREATE,
    { apiId: 'api_1234567890abcdef' },
    { status: 404 },
    URN,
  ),
  at(
    `${C}/404_test.go: TestCreateKeyNotFound/api from different workspace`,
    'keys.createKey',
    { otherWorkspace: ['api.*.create_key'] },
    { apiId: '{api}' },
    { status: 404 },
    {
      ...URN,
      note: "Unkey's test names an id no API has (its comment: an API of the other workspace is hard to make there); the case names an existing API of a workspace other than the caller's, as the test's name says",
    },
  ),
  at(
    `${C}/404_test.go: TestCreateKeyNotFound/deleted api`,
    'keys.createKey',
    CREATE,
    { apiId: '{deletedApi}' },
    { status: 404 },
    URN,
  ),
  ...(
    [
      ['no permissions', []],
      ['unrelated permission', ['workspace.*.read']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${C}/404_test.go: TestCreateKeyMissingPermissionsDoNotLeakAPIOrKeyspaceState/${name}`,
      'keys.createKey',
      perms(...granted),
      { apiId: '{api}' },
      { status: 404 },
      noLeak(403),
    ),
  ),
  at(
    `${C}/412_test.go: TestPreconditionError/Try creating a recoverable key without being opt-in`,
    'keys.createKey',
    perms('api.*.create_key', 'api.*.encrypt_key'),
    { apiId: '{api}', recoverable: true },
    { status: 412 },
    URN,
  ),
];

const G = 'v2_keys_get_key';
const READ = perms('api.*.read_key');
export const getKey: ConformanceCase[] = [
  at(
    `${G}/400_test.go: TestGetKeyBadRequest/empty keyId string`,
    'keys.getKey',
    READ,
    { keyId: '', decrypt: false },
    { status: 400 },
  ),
  at(
    `${G}/400_test.go: TestGetKeyBadRequest/invalid key format`,
    'keys.getKey',
    { header: 'Bearer invalid_key_format_not_uid' },
    { keyId: '', decrypt: false },
    { status: 400 },
    { deviation: { id: 'authenticate-first', keyward: { status: 401 } } },
  ),
  ...headerCases(
    `${G}/401_test.go: TestGetKeyUnauthorized`,
    'keys.getKey',
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', decrypt: false },
    [MISSING, EMPTY, NO_BEARER, BEARER_ONLY, UNKNOWN],
  ),
  ...(
    [
      ['no permissions', [], 403],
      ['wrong permission - has create but not read', ['api.*.create_key'], 403],
      [
        'wrong permission - trying to decrypt key but no decrypt permissions',
        ['api.*.read_key'],
        403,
      ],
      ['cross api access', ['api.{otherApi}.read_key'], 403],
      ['decrypt permission without read permission', ['api.*.decrypt_key'], 403],
      ['wrong resource type permissions', ['workspace.*.read', 'identity.*.read'], 403],
      ['specific API permission but wrong action', ['api.{api}.delete_key'], 403],
    ] as [string, string[], number][]
  ).map(([name, granted, status]) =>
    at(
      `${G}/403_test.go: TestGetKeyForbidden/${name}`,
      'keys.getKey',
      perms(...granted),
      { keyId: '{key}', decrypt: true },
      { status },
    ),
  ),
  at(
    `${G}/403_test.go: TestGetKeyForbidden/cross workspace access`,
    'keys.getKey',
    { otherWorkspace: ['api.*.read_key', 'api.*.read_api'] },
    { keyId: '{key}', decrypt: true },
    { status: 404 },
  ),
  at(
    `${G}/404_test.go: TestGetKeyNotFound/nonexistent keyId`,
    'keys.getKey',
    READ,
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', decrypt: false },
    { status: 404 },
  ),
  at(
    `${G}/404_test.go: TestGetKeyNotFound/key from different workspace`,
    'keys.getKey',
    READ,
    { keyId: '{foreignKey}', decrypt: false },
    { status: 404 },
  ),
  at(
    `${G}/412_test.go: TestPreconditionError/Try getting a recoverable key without being opt-in`,
    'keys.getKey',
    perms('api.*.read_key', 'api.*.decrypt_key'),
    { keyId: '{key}', decrypt: true },
    { status: 412 },
  ),
];

const D = 'v2_keys_delete_key';
const DEL = perms('api.*.delete_key');
export const deleteKey: ConformanceCase[] = [
  at(
    `${D}/400_test.go: TestKeyDeleteBadRequest/missing keyId`,
    'keys.deleteKey',
    DEL,
    {},
    { status: 400 },
  ),
  at(
    `${D}/400_test.go: TestKeyDeleteBadRequest/empty keyId string`,
    'keys.deleteKey',
    DEL,
    { keyId: '' },
    { status: 400 },
  ),
  ...headerCases(
    `${D}/401_test.go: TestKeyDeleteUnauthorized`,
    'keys.deleteKey',
    { keyId: '{key}' },
    [MISSING, EMPTY, NO_BEARER, BEARER_ONLY, UNKNOWN],
  ),
  at(
    `${D}/403_test.go: TestKeyDeleteForbidden/no permissions`,
    'keys.deleteKey',
    perms(),
    { keyId: '{key}' },
    { status: 403 },
  ),
  at(
    `${D}/403_test.go: TestKeyDeleteForbidden/wrong permission - has create but not delete`,
    'keys.deleteKey',
    perms('api.*.create_key'),
    { keyId: '{key}' },
    { status: 403 },
  ),
  at(
    `${D}/403_test.go: TestKeyDeleteForbidden/cross workspace access`,
    'keys.deleteKey',
    { otherWorkspace: ['api.*.delete_key'] },
    { keyId: '{key}' },
    { status: 404 },
  ),
  at(
    `${D}/403_test.go: TestKeyDeleteForbidden/cross api access`,
    'keys.deleteKey',
    perms('api.{otherApi}.delete_key'),
    { keyId: '{key}' },
    { status: 403 },
  ),
  at(
    `${D}/404_test.go: TestKeyDeleteNotFound/nonexistent keyId`,
    'keys.deleteKey',
    DEL,
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
  ),
  at(
    `${D}/404_test.go: TestKeyDeleteNotFound/can't delete soft deleted key`,
    'keys.deleteKey',
    DEL,
    { keyId: '{deletedKey}' },
    { status: 404 },
  ),
];

const V = 'v2_keys_verify_key';
const VERIFY = perms('api.*.verify_key');
export const verifyKey: ConformanceCase[] = [
  at(
    `${V}/400_test.go: TestBadRequest/missing required fields/missing key`,
    'keys.verifyKey',
    VERIFY,
    {},
    { status: 400 },
  ),
  at(
    `${V}/400_test.go: TestBadRequest/invalid validation/invalid cost value`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', ratelimits: [{ name: 'test', cost: -1, limit: 10, duration: 60000 }] },
    { status: 400 },
  ),
  at(
    `${V}/400_test.go: TestBadRequest/invalid validation/invalid credits cost`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}', credits: { cost: -1 } },
    { status: 400 },
  ),
  ...(
    [
      ['too many tags', Array.from({ length: 21 }, (_, i) => `tag-${i}`)],
      ['empty tag string', ['valid', '']],
      ['tag exceeds max length', ['\u0000'.repeat(513)]],
    ] as [string, string[]][]
  ).map(([name, tags]) =>
    at(
      `${V}/400_test.go: TestBadRequest/tags rejected when exceeding limits/${name}`,
      'keys.verifyKey',
      VERIFY,
      { key: '{keyString}', tags },
      { status: 400 },
    ),
  ),
  ...[
    ['missing operand', 'permission_1 AND'],
    ['unmatched parenthesis', '(permission_1 AND permission_2'],
    ['empty parentheses', 'permission_1 AND ()'],
    ['operator at start', 'AND permission_1'],
  ].map(([name, query]) =>
    at(
      `${V}/400_test.go: TestBadRequest/invalid permissions query syntax/${name}`,
      'keys.verifyKey',
      VERIFY,
      { key: '{keyString}', permissions: query! },
      { status: 400, type: QUERY_SYNTAX },
    ),
  ),
  ...headerCases(`${V}/401_test.go: TestUnauthorized`, 'keys.verifyKey', { key: '{keyString}' }, [
    MISSING,
    ['invalid bearer token', 'Bearer invalid_token_here', 401],
    ['malformed authorization header', 'InvalidFormat', 400],
  ]),
  at(
    `${V}/403_test.go: TestForbidden_NoVerifyPermissions/root key with verify permission for different api returns 200 NOT_FOUND (not 403)`,
    'keys.verifyKey',
    perms('api.{otherApi}.verify_key'),
    { key: '{keyString}' },
    { status: 200, data: { valid: false, code: 'NOT_FOUND' } },
    { deviation: { id: 'verify-other-api-403', keyward: { status: 403 } } },
  ),
  at(
    `${V}/403_test.go: TestForbidden_NoVerifyPermissions/root key with wildcard verify permission returns 200 VALID`,
    'keys.verifyKey',
    VERIFY,
    { key: '{keyString}' },
    { status: 200, data: { valid: true, code: 'VALID' } },
  ),
  at(
    `${V}/403_test.go: TestForbidden_NoVerifyPermissions/root key with specific api verify permission returns 200 VALID`,
    'keys.verifyKey',
    perms('api.{api}.verify_key'),
    { key: '{keyString}' },
    { status: 200, data: { valid: true, code: 'VALID' } },
  ),
  at(
    `${V}/404_test.go: TestNotFound/key not found`,
    'keys.verifyKey',
    VERIFY,
    { key: 'test_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 200, data: { valid: false, code: 'NOT_FOUND' } },
  ),
  at(
    `${V}/404_test.go: TestNotFound/soft deleted key`,
    'keys.verifyKey',
    VERIFY,
    { key: '{deletedKeyString}' },
    { status: 200, data: { valid: false, code: 'NOT_FOUND' } },
  ),
  at(
    `${V}/404_test.go: TestNotFound/key belongs to different workspace`,
    'keys.verifyKey',
    VERIFY,
    { key: '{foreignKeyString}' },
    { status: 200, data: { valid: false, code: 'NOT_FOUND' } },
  ),
];

const W = 'v2_keys_whoami';
export const whoami: ConformanceCase[] = [
  at(
    `${W}/400_test.go: TestGetKeyBadRequest/empty key string`,
    'keys.whoami',
    READ,
    { key: '' },
    { status: 400 },
  ),
  ...headerCases(
    `${W}/401_test.go: TestGetKeyUnauthorized`,
    'keys.whoami',
    { key: '{keyString}' },
    [MISSING, EMPTY, NO_BEARER, BEARER_ONLY, UNKNOWN],
  ),
  at(
    `${W}/404_test.go: TestGetKeyNotFound/nonexistent raw key`,
    'keys.whoami',
    READ,
    { key: 'test_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
  ),
  ...(
    [
      ['no permissions', []],
      ['wrong permission - has create but not read', ['api.*.create_key']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${W}/404_test.go: TestGetKeyForbidden/${name}`,
      'keys.whoami',
      perms(...granted),
      { key: '{keyString}' },
      { status: 404 },
      noLeak(403),
    ),
  ),
  at(
    `${W}/404_test.go: TestGetKeyForbidden/cross api access`,
    'keys.whoami',
    perms('api.{otherApi}.read_key'),
    { key: '{keyString}' },
    { status: 404 },
  ),
  at(
    `${W}/404_test.go: TestGetKeyForbidden/cross workspace access`,
    'keys.whoami',
    { otherWorkspace: ['api.*.read_key', 'api.*.read_api'] },
    { key: '{keyString}' },
    { status: 404 },
  ),
];

const U = 'v2_keys_update_key';
const UPDATE = perms('api.*.update_key');
export const updateKey: ConformanceCase[] = [
  at(
    `${U}/400_test.go: TestUpdateKeyInvalidRefillConfig/reject invalid refill config`,
    'keys.updateKey',
    UPDATE,
    {
      keyId: '{key}',
      credits: { remaining: 100, refill: { interval: 'daily', amount: 100, refillDay: 4 } },
    },
    { status: 400 },
  ),
  ...[
    ['invalid bearer token', 'Bearer invalid_key_12345'],
    ['nonexistent key', 'Bearer key_3ZGp4bGXXRq6JbtKLVrCmZrM'],
    ['bearer with extra spaces', 'Bearer   invalid_key_with_spaces   '],
  ].map(([name, header]) =>
    at(
      `${U}/401_test.go: TestUpdateKeyUnauthorized/${name}`,
      'keys.updateKey',
      { header: header! },
      { keyId: '{key}', name: 'x' },
      { status: 401 },
    ),
  ),
  at(
    `${U}/403_test.go: TestUpdateKeyInsufficientPermissions`,
    'keys.updateKey',
    perms('api.*.create_key'),
    { keyId: '{key}', name: 'updated' },
    { status: 403 },
  ),
  at(
    `${U}/403_test.go: TestUpdateKeyCrossWorkspaceIsolation`,
    'keys.updateKey',
    { otherWorkspace: ['api.*.update_key'] },
    { keyId: '{key}', name: 'updated' },
    { status: 404 },
  ),
  at(
    `${U}/404_test.go: TestUpdateKeyNotFound/when the key does not exist`,
    'keys.updateKey',
    UPDATE,
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', name: 'x' },
    { status: 404 },
  ),
  at(
    `${U}/404_test.go: TestUpdateKeyNotFound/when the key has been deleted`,
    'keys.updateKey',
    UPDATE,
    { keyId: '{deletedKey}', name: 'x' },
    { status: 404 },
  ),
];

const UC = 'v2_keys_update_credits';
export const updateCredits: ConformanceCase[] = [
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/missing keyId`,
    'keys.updateCredits',
    UPDATE,
    { operation: 'set', value: 10 },
    { status: 400 },
  ),
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/empty keyId string`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '', operation: 'set', value: 10 },
    { status: 400 },
  ),
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/increment with null throws error`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'increment' },
    { status: 400 },
  ),
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/can't increment unlimited key`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'increment', value: 1 },
    { status: 400 },
  ),
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/decrement with null throws error`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'decrement' },
    { status: 400 },
  ),
  at(
    `${UC}/400_test.go: TestKeyUpdateCreditsBadRequest/can't decrement unlimited key`,
    'keys.updateCredits',
    UPDATE,
    { keyId: '{key}', operation: 'decrement', value: 1 },
    { status: 400 },
  ),
  ...headerCases(
    `${UC}/401_test.go: TestKeyUpdateCreditsUnauthorized`,
    'keys.updateCredits',
    { keyId: '{key}', operation: 'increment', value: 10 },
    [MISSING, EMPTY, NO_BEARER, BEARER_ONLY, UNKNOWN],
  ),
  ...(
    [
      ['no permissions', [], 403],
      ['wrong permission - has create but not update', ['api.*.create_key'], 403],
      ['cross api access', ['api.{otherApi}.update_key'], 403],
    ] as [string, string[], number][]
  ).map(([name, granted, status]) =>
    at(
      `${UC}/403_test.go: TestKeyUpdateCreditsForbidden/${name}`,
      'keys.updateCredits',
      perms(...granted),
      { keyId: '{key}', operation: 'set', value: 10 },
      { status },
    ),
  ),
  at(
    `${UC}/403_test.go: TestKeyUpdateCreditsForbidden/cross workspace access`,
    'keys.updateCredits',
    { otherWorkspace: ['api.*.update_key'] },
    { keyId: '{key}', operation: 'set', value: 10 },
    { status: 404 },
  ),
  at(
    `${UC}/404_test.go: TestUpdateKeyCreditsNotFound/nonexistent keyId`,
    'keys.updateCredits',
    UPDATE,
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', operation: 'set', value: 10 },
    { status: 404 },
  ),
];

const R = 'v2_keys_reroll_key';
export const rerollKey: ConformanceCase[] = [
  ...(
    [
      ['missing keyId', { expiration: 0 }],
      ['empty keyId', { keyId: '', expiration: 0 }],
      ['keyId too short', { keyId: 'ab', expiration: 0 }],
      ['negative expiration', { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', expiration: -1 }],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(`${R}/400_test.go: TestRerollKeyBadRequest/${name}`, 'keys.rerollKey', CREATE, body, {
      status: 400,
    }),
  ),
  ...[
    ['invalid bearer token', 'Bearer invalid_key_12345'],
    ['nonexistent key', 'Bearer key_3ZGp4bGXXRq6JbtKLVrCmZrM'],
    ['bearer with extra spaces', 'Bearer   invalid_key_with_spaces   '],
  ].map(([name, header]) =>
    at(
      `${R}/401_test.go: TestRerollKeyUnauthorized/${name}`,
      'keys.rerollKey',
      { header: header! },
      { keyId: '{key}', expiration: 0 },
      { status: 401 },
    ),
  ),
  ...(
    [
      ['no permissions', []],
      ['wrong permission - has read but not create', ['api.*.read_key']],
      ['permission for different API', ['api.{otherApi}.create_key']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${R}/403_test.go: TestRerollKeyForbidden/${name}`,
      'keys.rerollKey',
      perms(...granted),
      { keyId: '{key}', expiration: 0 },
      { status: 403 },
    ),
  ),
  at(
    `${R}/404_test.go: TestRerollKeyNotFound/nonexistent key`,
    'keys.rerollKey',
    CREATE,
    { keyId: 'key_3ZGp4bGXXRq6JbtKLVrCmZrM', expiration: 0 },
    { status: 404 },
  ),
  at(
    `${R}/404_test.go: TestRerollKeyNotFound/key belongs to different workspace`,
    'keys.rerollKey',
    CREATE,
    { keyId: '{foreignKey}', expiration: 0 },
    { status: 404 },
  ),
];
