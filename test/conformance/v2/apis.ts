import { INVALID_TOKEN, MALFORMED_HEADER, MISSING_HEADER, headerCases, named } from './auth';
import { INSUFFICIENT, INVALID_INPUT, notFound, type ConformanceCase } from '../types';

/**
 * apis.* from Unkey's `svc/api/routes/v2_apis_*` tests. Cases whose Unkey test accepts either of
 * two answers ("200 or 400, depending on the schema") are left out: they assert nothing to hold.
 */

const CREATE = 'v2_apis_create_api';
const DELETE = 'v2_apis_delete_api';
const GET = 'v2_apis_get_api';
const LIST = 'v2_apis_list_keys';

export const createApi: ConformanceCase[] = [
  {
    from: `${CREATE}/400_test.go: TestCreateApi_BadRequest/name too short`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.create_api'] },
    body: { name: 'ab' },
    expect: { status: 400, type: INVALID_INPUT },
  },
  {
    from: `${CREATE}/400_test.go: TestCreateApi_BadRequest/missing name field`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.create_api'] },
    body: {},
    expect: { status: 400 },
  },
  {
    from: `${CREATE}/400_test.go: TestCreateApi_BadRequest/empty name`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.create_api'] },
    body: { name: '' },
    expect: { status: 400 },
  },
  {
    from: `${CREATE}/400_test.go: TestCreateApi_BadRequest/invalid json`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.create_api'] },
    raw: '{"name": "test-api", "invalid json": }',
    expect: { status: 400 },
  },
  ...headerCases(
    `${CREATE}/400_test.go: TestCreateApi_BadRequest`,
    'apis.createApi',
    { name: 'test-api' },
    [named('missing authorization', MISSING_HEADER)],
  ),
  {
    from: `${CREATE}/401_test.go: TestCreateApi_Unauthorized/invalid auth token`,
    route: 'apis.createApi',
    caller: { header: 'Bearer invalid_token' },
    body: { name: 'test-api' },
    expect: { status: 401 },
  },
  {
    from: `${CREATE}/403_test.go: TestCreateApi_Forbidden/insufficient permissions`,
    route: 'apis.createApi',
    caller: { permissions: ['identity.*.create_identity'] },
    body: { name: 'test-api' },
    expect: { status: 403 },
  },
  {
    from: `${CREATE}/403_test.go: TestCreateApi_Forbidden/permission combinations/specific permission`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.create_api'] },
    body: { name: 'test-api-permissions' },
    expect: { status: 200 },
  },
  {
    from: `${CREATE}/403_test.go: TestCreateApi_Forbidden/permission combinations/insufficient permission`,
    route: 'apis.createApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { name: 'test-api-permissions' },
    expect: { status: 403 },
  },
];

export const deleteApi: ConformanceCase[] = [
  {
    from: `${DELETE}/400_test.go: TestValidationErrors/missing apiId`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.delete_api'] },
    body: {},
    expect: { status: 400 },
  },
  {
    from: `${DELETE}/400_test.go: TestValidationErrors/invalid apiId format`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.delete_api'] },
    body: { apiId: '' },
    expect: { status: 400 },
  },
  ...headerCases(
    `${DELETE}/401_test.go: TestAuthenticationErrors`,
    'apis.deleteApi',
    { apiId: 'api_1234' },
    [MISSING_HEADER, named('invalid authorization token', INVALID_TOKEN), MALFORMED_HEADER],
  ),
  {
    from: `${DELETE}/403_test.go: TestAuthorizationErrors/missing delete_api permission`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { apiId: '{api}' },
    expect: { status: 403 },
  },
  {
    from: `${DELETE}/403_test.go: TestAuthorizationErrors/permission for different API`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.{otherApi}.delete_api'] },
    body: { apiId: '{api}' },
    expect: { status: 403 },
  },
  {
    from: `${DELETE}/403_test.go: TestAuthorizationErrors/wrong workspace`,
    route: 'apis.deleteApi',
    caller: { otherWorkspace: ['api.*.delete_api'] },
    body: { apiId: '{api}' },
    expect: { status: 404 },
  },
  {
    from: `${DELETE}/404_test.go: TestNotFoundErrors/non-existent API`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.delete_api'] },
    body: { apiId: 'api_does_not_exist' },
    expect: { status: 404 },
  },
  {
    from: `${DELETE}/404_test.go: TestNotFoundErrors/already deleted API`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.delete_api'] },
    body: { apiId: '{deletedApi}' },
    expect: { status: 404 },
  },
  {
    from: `${DELETE}/404_test.go: TestNotFoundErrors/API belongs to different workspace`,
    route: 'apis.deleteApi',
    caller: { permissions: ['api.*.delete_api'] },
    body: { apiId: '{foreignApi}' },
    expect: { status: 404 },
  },
];

const notReadApi: [string, string[]][] = [
  ['no permissions', []],
  ['wrong api permission', ['api.*.create_api']],
  ['wrong scope for specific api', ['api.{api}.create_api']],
  ['permission for different api', ['api.{otherApi}.read_api']],
  ['multiple insufficient permissions', ['key.*.create', 'ratelimit.*.create', 'identity.*.read']],
];

export const getApi: ConformanceCase[] = [
  ...notReadApi.map(([name, permissions]): ConformanceCase => ({
    from: `${GET}/403_test.go: TestGetApiInsufficientPermissions/${name}`,
    route: 'apis.getApi',
    caller: { permissions },
    body: { apiId: '{api}' },
    expect: { status: 403, type: INSUFFICIENT },
  })),
  {
    from: `${GET}/403_test.go: TestGetApiInsufficientPermissions/key from wrong workspace`,
    route: 'apis.getApi',
    caller: { otherWorkspace: ['api.*.read_api'] },
    body: { apiId: '{api}' },
    expect: { status: 404, type: notFound('workspace') },
    deviation: { id: 'getApi-foreign-workspace', keyward: { status: 404, type: notFound('api') } },
  },
  {
    from: `${GET}/404_test.go: TestGetApiNotFound/non-existent api id`,
    route: 'apis.getApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { apiId: 'api_1234567890abcdefghijkl' },
    expect: { status: 404, type: notFound('api') },
  },
  {
    from: `${GET}/404_test.go: TestGetApiNotFound/api from different workspace`,
    route: 'apis.getApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { apiId: '{foreignApi}' },
    expect: { status: 404, type: notFound('api') },
  },
  {
    from: `${GET}/404_test.go: TestGetApiNotFound/deleted api`,
    route: 'apis.getApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { apiId: '{deletedApi}' },
    expect: { status: 404, type: notFound('api') },
  },
  {
    from: `${GET}/404_test.go: TestGetApiNotFound/empty api id`,
    route: 'apis.getApi',
    caller: { permissions: ['api.*.read_api'] },
    body: { apiId: '' },
    expect: { status: 400, type: INVALID_INPUT },
  },
];

const readBoth = ['api.*.read_key', 'api.*.read_api'];

export const listKeys: ConformanceCase[] = [
  {
    from: `${LIST}/400_test.go: TestValidationErrors/missing apiId`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: {},
    expect: { status: 400 },
  },
  ...[
    ['invalid authorization token', 'Bearer invalid_token_that_does_not_exist'],
    ['invalid key', 'Bearer not_a_valid_key'],
    ['valid format non-existent key', 'Bearer sk_test_1234567890abcdef1234567890abcdef'],
  ].map(([name, header]): ConformanceCase => ({
    from: `${LIST}/401_test.go: TestAuthenticationErrors/${name}`,
    route: 'apis.listKeys',
    caller: { header: header! },
    body: { apiId: 'api_1234' },
    expect: { status: 401 },
  })),
  ...(
    [
      ['missing read_key permission', ['api.*.read_api'], 'no-permission-404', 403],
      ['missing read_api permission', ['api.*.read_key'], 'listKeys-read-key-only', 200],
      [
        'permission for different API',
        ['api.{otherApi}.read_key', 'api.{otherApi}.read_api'],
        'no-permission-404',
        403,
      ],
      ['no permissions', [], 'no-permission-404', 403],
    ] as [string, string[], string, number][]
  ).map(([name, permissions, id, status]): ConformanceCase => ({
    from: `${LIST}/403_test.go: TestAuthorizationErrors/${name}`,
    route: 'apis.listKeys',
    caller: { permissions },
    body: { apiId: '{api}' },
    expect: { status: 404 },
    deviation: { id, keyward: { status } },
  })),
  {
    from: `${LIST}/403_test.go: TestAuthorizationErrors/cross workspace access`,
    route: 'apis.listKeys',
    caller: { otherWorkspace: readBoth },
    body: { apiId: '{api}' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/403_test.go: TestAuthorizationErrors/wildcard permissions should work`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: '{api}' },
    expect: { status: 200 },
  },
  {
    from: `${LIST}/403_test.go: TestAuthorizationErrors/specific API permissions should work`,
    route: 'apis.listKeys',
    caller: { permissions: ['api.{api}.read_key', 'api.{api}.read_api'] },
    body: { apiId: '{api}' },
    expect: { status: 200 },
  },
  {
    from: `${LIST}/403_test.go: TestAuthorizationErrors/missing decrypt permission`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: '{api}', decrypt: true },
    expect: { status: 403 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/non-existent API`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: 'api_does_not_exist_123' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/API in different workspace`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: '{foreignApi}' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/deleted API`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: '{deletedApi}' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/invalid API ID format`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: 'invalid_format' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/API exists but has no keys`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: '{api}' },
    expect: { status: 200 },
  },
  {
    from: `${LIST}/404_test.go: TestNotFoundErrors/API ID with special characters`,
    route: 'apis.listKeys',
    caller: { permissions: readBoth },
    body: { apiId: 'api_special!@#$%^&*()' },
    expect: { status: 404 },
  },
  {
    from: `${LIST}/412_test.go: TestPreconditionError/Try decrypting key without opt-in`,
    route: 'apis.listKeys',
    caller: { permissions: ['api.*.read_key', 'api.*.read_api', 'api.*.decrypt_key'] },
    body: { apiId: '{api}', decrypt: true },
    expect: { status: 412 },
  },
];
