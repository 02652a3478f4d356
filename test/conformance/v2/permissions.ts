import { INVALID_TOKEN, MALFORMED_HEADER, MISSING_HEADER, headerCases, named } from './auth';
import { perms, bodyCase as at, type ConformanceCase, type Json } from '../types';

/**
 * permissions.* from Unkey's `svc/api/routes/v2_permissions_*` tests. A v2 permission's `slug` is
 * keyward's permission name and its `name` keyward's slug (docs/decisions.md, "identities.*,
 * permissions.* and ratelimit.*").
 */

/** The three header cases every permissions route's `401_test.go` has. */
const headers = (from: string, route: string, body: Json) =>
  headerCases(`${from}/401_test.go: TestAuthenticationErrors`, route, body, [
    MISSING_HEADER,
    named('invalid authorization token', INVALID_TOKEN),
    MALFORMED_HEADER,
  ]);

const CP = 'v2_permissions_create_permission';
const CREATE_P = perms('rbac.*.create_permission');
export const createPermission: ConformanceCase[] = [
  ...(
    [
      ['missing name', { slug: 'test-slug' }],
      ['missing slug', { name: 'test.permission' }],
      ['empty name', { name: '', slug: 'test-slug' }],
      ['empty slug', { name: 'test.permission', slug: '' }],
      ['invalid slug with spaces', { name: 'test.permission', slug: 'test slug with spaces' }],
      [
        'invalid slug with special characters',
        { name: 'test.permission', slug: 'test@slug#with$special%chars' },
      ],
      [
        'description too long',
        { name: 'test.permission', slug: 'test-permission', description: 'a'.repeat(513) },
      ],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(
      `${CP}/400_test.go: TestValidationErrors/${name}`,
      'permissions.createPermission',
      CREATE_P,
      body,
      { status: 400 },
    ),
  ),
  at(
    `${CP}/400_test.go: TestValidationErrors/slug too long`,
    'permissions.createPermission',
    CREATE_P,
    { name: 'test.permission', slug: 'a'.repeat(130) },
    { status: 400 },
  ),
  at(
    `${CP}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.createPermission',
    CREATE_P,
    null,
    { status: 400 },
    { raw: '{"name": "test.permission", "invalid json": }' },
  ),
  ...headerCases(
    `${CP}/401_test.go: TestAuthenticationErrors`,
    'permissions.createPermission',
    { name: 'auth.test.permission', slug: 'auth-test-permission' },
    [MISSING_HEADER],
  ),
  at(
    `${CP}/403_test.go: TestAuthorizationErrors/missing create_permission permission`,
    'permissions.createPermission',
    perms('rbac.*.read_permission'),
    { name: 'test.permission.unauthorized', slug: 'test-permission-unauthorized' },
    { status: 403 },
  ),
  at(
    `${CP}/409_test.go: TestConflictErrors/duplicate permission slug`,
    'permissions.createPermission',
    CREATE_P,
    { name: 'second.name', slug: '{permissionSlug}' },
    { status: 409 },
  ),
];

const CR = 'v2_permissions_create_role';
const CREATE_R = perms('rbac.*.create_role');
export const createRole: ConformanceCase[] = [
  at(
    `${CR}/400_test.go: TestValidationErrors/missing name`,
    'permissions.createRole',
    CREATE_R,
    {},
    { status: 400 },
  ),
  at(
    `${CR}/400_test.go: TestValidationErrors/empty name`,
    'permissions.createRole',
    CREATE_R,
    { name: '' },
    { status: 400 },
  ),
  at(
    `${CR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.createRole',
    CREATE_R,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  at(
    `${CR}/400_test.go: TestValidationErrors/description too long`,
    'permissions.createRole',
    CREATE_R,
    { name: 'test.role', description: 'a'.repeat(513) },
    { status: 400 },
  ),
  ...headers(CR, 'permissions.createRole', { name: 'auth.test.role' }),
  at(
    `${CR}/403_test.go: TestAuthorizationErrors/missing create_role permission`,
    'permissions.createRole',
    perms('rbac.*.read_role'),
    { name: 'test.role.unauthorized' },
    { status: 403 },
  ),
  at(
    `${CR}/403_test.go: TestAuthorizationErrors/missing add_permission_to_role permission`,
    'permissions.createRole',
    perms('rbac.*.create_role', 'rbac.*.create_permission'),
    { name: 'test.role.missing.add', permissions: ['documents.read.missing.add'] },
    { status: 403 },
  ),
  at(
    `${CR}/403_test.go: TestAuthorizationErrors/missing create_permission permission`,
    'permissions.createRole',
    perms('rbac.*.create_role', 'rbac.*.add_permission_to_role'),
    {
      name: 'test.role.missing.create',
      permissions: ['{permissionSlug}', 'documents.write.missing.create.role'],
    },
    { status: 403 },
  ),
  at(
    `${CR}/409_test.go: TestConflictErrors/duplicate role name`,
    'permissions.createRole',
    CREATE_R,
    { name: '{roleName}' },
    { status: 409 },
  ),
];

const DP = 'v2_permissions_delete_permission';
const DELETE_P = perms('rbac.*.delete_permission');
export const deletePermission: ConformanceCase[] = [
  at(
    `${DP}/400_test.go: TestValidationErrors/missing permissionId`,
    'permissions.deletePermission',
    DELETE_P,
    {},
    { status: 400 },
  ),
  at(
    `${DP}/400_test.go: TestValidationErrors/empty permissionId`,
    'permissions.deletePermission',
    DELETE_P,
    { permission: '' },
    { status: 400 },
  ),
  at(
    `${DP}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.deletePermission',
    DELETE_P,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  ...headers(DP, 'permissions.deletePermission', { permission: 'perm_test123' }),
  at(
    `${DP}/403_test.go: TestAuthorizationErrors/missing delete_permission permission`,
    'permissions.deletePermission',
    perms('rbac.*.read_permission'),
    { permission: '{permission}' },
    { status: 403 },
  ),
  at(
    `${DP}/403_test.go: TestAuthorizationErrors/wrong workspace`,
    'permissions.deletePermission',
    { otherWorkspace: ['rbac.*.delete_permission'] },
    { permission: '{permission}' },
    { status: 404 },
  ),
  at(
    `${DP}/404_test.go: TestNotFoundErrors/non-existent permission ID`,
    'permissions.deletePermission',
    DELETE_P,
    { permission: 'perm_does_not_exist' },
    { status: 404 },
  ),
  at(
    `${DP}/404_test.go: TestNotFoundErrors/valid-looking but non-existent permission ID`,
    'permissions.deletePermission',
    DELETE_P,
    { permission: 'perm_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
  ),
];

const DR = 'v2_permissions_delete_role';
const DELETE_R = perms('rbac.*.delete_role');
export const deleteRole: ConformanceCase[] = [
  at(
    `${DR}/400_test.go: TestValidationErrors/missing roleId`,
    'permissions.deleteRole',
    DELETE_R,
    {},
    { status: 400 },
  ),
  at(
    `${DR}/400_test.go: TestValidationErrors/empty role`,
    'permissions.deleteRole',
    DELETE_R,
    { role: '' },
    { status: 400 },
  ),
  at(
    `${DR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.deleteRole',
    DELETE_R,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  ...headers(DR, 'permissions.deleteRole', { role: 'role_test123' }),
  at(
    `${DR}/403_test.go: TestPermissionErrors/missing required permission`,
    'permissions.deleteRole',
    perms('rbac.*.read_role'),
    { role: '{role}' },
    { status: 403 },
  ),
  at(
    `${DR}/403_test.go: TestPermissionErrors/no permissions`,
    'permissions.deleteRole',
    perms(),
    { role: '{role}' },
    { status: 403 },
  ),
  at(
    `${DR}/404_test.go: TestNotFound/nonexistent role`,
    'permissions.deleteRole',
    DELETE_R,
    { role: 'role_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
  ),
  at(
    `${DR}/404_test.go: TestNotFound/role from different workspace`,
    'permissions.deleteRole',
    { otherWorkspace: ['rbac.*.delete_role'] },
    { role: '{role}' },
    { status: 404 },
  ),
];

const GP = 'v2_permissions_get_permission';
const READ_P = perms('rbac.*.read_permission');
export const getPermission: ConformanceCase[] = [
  at(
    `${GP}/400_test.go: TestValidationErrors/missing permission id / slug`,
    'permissions.getPermission',
    READ_P,
    {},
    { status: 400 },
  ),
  at(
    `${GP}/400_test.go: TestValidationErrors/empty permission id / slug`,
    'permissions.getPermission',
    READ_P,
    { permission: '' },
    { status: 400 },
  ),
  at(
    `${GP}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.getPermission',
    READ_P,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  ...headers(GP, 'permissions.getPermission', { permission: 'perm_test123' }),
  at(
    `${GP}/403_test.go: TestPermissionErrors/missing required permission`,
    'permissions.getPermission',
    perms('rbac.*.create_permission'),
    { permission: '{permission}' },
    { status: 403 },
  ),
  at(
    `${GP}/403_test.go: TestPermissionErrors/no permissions`,
    'permissions.getPermission',
    perms(),
    { permission: '{permission}' },
    { status: 403 },
  ),
  at(
    `${GP}/404_test.go: TestNotFoundErrors/non-existent permission ID`,
    'permissions.getPermission',
    READ_P,
    { permission: 'perm_does_not_exist' },
    { status: 404 },
  ),
  at(
    `${GP}/404_test.go: TestNotFoundErrors/valid-looking but non-existent permission ID`,
    'permissions.getPermission',
    READ_P,
    { permission: 'perm_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    { status: 404 },
  ),
];

const GR = 'v2_permissions_get_role';
const READ_R = perms('rbac.*.read_role');
export const getRole: ConformanceCase[] = [
  at(
    `${GR}/400_test.go: TestValidationErrors/missing roleId`,
    'permissions.getRole',
    READ_R,
    {},
    { status: 400 },
  ),
  at(
    `${GR}/400_test.go: TestValidationErrors/empty roleId`,
    'permissions.getRole',
    READ_R,
    { role: '' },
    { status: 400 },
  ),
  at(
    `${GR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.getRole',
    READ_R,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  ...headers(GR, 'permissions.getRole', { role: 'role_test123' }),
  at(
    `${GR}/403_test.go: TestPermissionErrors/missing required permission`,
    'permissions.getRole',
    perms('rbac.*.create_role'),
    { role: '{role}' },
    { status: 403 },
  ),
  at(
    `${GR}/403_test.go: TestPermissionErrors/no permissions`,
    'permissions.getRole',
    perms(),
    { role: '{role}' },
    { status: 403 },
  ),
  at(
    `${GR}/404_test.go: TestNotFoundErrors/non-existent role ID`,
    'permissions.getRole',
    READ_R,
    { role: 'role_does_not_exist' },
    { status: 404 },
  ),
];

const LP = 'v2_permissions_list_permissions';
export const listPermissions: ConformanceCase[] = [
  at(
    `${LP}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.listPermissions',
    READ_P,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  at(
    `${LP}/400_test.go: TestValidationErrors/search exceeding max length`,
    'permissions.listPermissions',
    READ_P,
    { search: 'a'.repeat(257) },
    { status: 400 },
  ),
  ...headers(LP, 'permissions.listPermissions', {}),
  at(
    `${LP}/403_test.go: TestAuthorizationErrors/missing read_permission permission`,
    'permissions.listPermissions',
    perms('rbac.*.create_permission'),
    {},
    { status: 403 },
  ),
  at(
    `${LP}/403_test.go: TestAuthorizationErrors/wrong workspace`,
    'permissions.listPermissions',
    READ_P,
    {},
    { status: 200 },
  ),
];

const LR = 'v2_permissions_list_roles';
export const listRoles: ConformanceCase[] = [
  at(
    `${LR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'permissions.listRoles',
    READ_R,
    { invalid: 'json structure' },
    { status: 400 },
  ),
  at(
    `${LR}/400_test.go: TestValidationErrors/search exceeding max length`,
    'permissions.listRoles',
    READ_R,
    { search: 'a'.repeat(257) },
    { status: 400 },
  ),
  ...headers(LR, 'permissions.listRoles', {}),
  at(
    `${LR}/403_test.go: TestAuthorizationErrors/missing read_role permission`,
    'permissions.listRoles',
    perms('rbac.*.create_role'),
    {},
    { status: 403 },
  ),
  at(
    `${LR}/403_test.go: TestAuthorizationErrors/wrong workspace`,
    'permissions.listRoles',
    READ_R,
    {},
    { status: 200 },
  ),
];
