import {
  EMPTY_BEARER,
  INVALID_TOKEN,
  MALFORMED_HEADER,
  MISSING_HEADER,
  UNKNOWN,
  BEARER_ONLY,
  EMPTY,
  headerCases,
  named,
} from './auth';
import { perms, bodyCase as at, type Answer, type ConformanceCase, type Json } from '../types';

/**
 * keys.add|remove|set Permissions|Roles from Unkey's `svc/api/routes/v2_keys_{add,remove,set}_
 * {permissions,roles}` tests. Three documented differences cover most refusals here
 * (docs/decisions.md, "keys.* and apis.*"): keyward's link calls need the `rbac.*` permission
 * alone (`links-rbac-only`), take names only and create a missing permission (`links-by-name`),
 * and pass over a name to remove that names nothing (`links-remove-missing`).
 */

const deviation = (id: string, keyward: Answer): Partial<ConformanceCase> => ({
  deviation: { id, keyward },
});
const MISSING_ID = 'key_3ZGp4bGXXRq6JbtKLVrCmZrM';

const AP = 'v2_keys_add_permissions';
const ADD_P = perms('api.*.update_key', 'rbac.*.add_permission_to_key');
export const addPermissions: ConformanceCase[] = [
  ...(
    [
      ['missing keyId', { permissions: ['{permissionSlug}'] }],
      ['empty keyId', { keyId: '', permissions: ['{permissionSlug}'] }],
      ['missing permissions', { keyId: '{key}' }],
      ['empty permissions array', { keyId: '{key}', permissions: [] }],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(`${AP}/400_test.go: TestValidationErrors/${name}`, 'keys.addPermissions', ADD_P, body, {
      status: 400,
    }),
  ),
  at(
    `${AP}/400_test.go: TestValidationErrors/permission not found by id`,
    'keys.addPermissions',
    ADD_P,
    { keyId: '{key}', permissions: ['perm_3ZGp4bGXXRq6JbtKLVrCmZrM'] },
    { status: 404 },
    deviation('links-by-name', { status: 403 }),
  ),
  at(
    `${AP}/400_test.go: TestValidationErrors/permission not found by slug`,
    'keys.addPermissions',
    ADD_P,
    { keyId: '{key}', permissions: ['nonexistent.permission'] },
    { status: 404 },
    deviation('links-by-name', { status: 403 }),
  ),
  at(
    `${AP}/400_test.go: TestValidationErrors/key not found`,
    'keys.addPermissions',
    ADD_P,
    { keyId: MISSING_ID, permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
  ...headerCases(
    `${AP}/401_test.go: TestAuthenticationErrors`,
    'keys.addPermissions',
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    [MISSING_HEADER, INVALID_TOKEN, MALFORMED_HEADER, EMPTY_BEARER],
  ),
  at(
    `${AP}/403_test.go: TestAuthorizationErrors/root key without required permissions`,
    'keys.addPermissions',
    perms('some.other.permission'),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${AP}/403_test.go: TestAuthorizationErrors/root key with partial permissions`,
    'keys.addPermissions',
    perms('api.read.update_key'),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${AP}/403_test.go: TestAuthorizationErrors/key belongs to different workspace`,
    'keys.addPermissions',
    ADD_P,
    { keyId: '{foreignKey}', permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
  at(
    `${AP}/403_test.go: TestAuthorizationErrors/root key with no permissions`,
    'keys.addPermissions',
    perms(),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${AP}/404_test.go: TestNotFoundErrors/key not found`,
    'keys.addPermissions',
    ADD_P,
    { keyId: MISSING_ID, permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
  at(
    `${AP}/404_test.go: TestNotFoundErrors/key from different workspace`,
    'keys.addPermissions',
    ADD_P,
    { keyId: '{foreignKey}', permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
];

const RP = 'v2_keys_remove_permissions';
const REMOVE_P = perms('api.*.update_key', 'rbac.*.remove_permission_from_key');
export const removePermissions: ConformanceCase[] = [
  ...(
    [
      ['missing keyId', { permissions: ['{permissionSlug}'] }],
      ['empty keyId', { keyId: '', permissions: ['{permissionSlug}'] }],
      ['missing permissions', { keyId: '{key}' }],
      ['empty permissions array', { keyId: '{key}', permissions: [] }],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(
      `${RP}/400_test.go: TestValidationErrors/${name}`,
      'keys.removePermissions',
      perms('api.*.update_key'),
      body,
      { status: 400 },
    ),
  ),
  ...headerCases(
    `${RP}/401_test.go: TestAuthenticationErrors`,
    'keys.removePermissions',
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    [MISSING_HEADER, INVALID_TOKEN, MALFORMED_HEADER, EMPTY_BEARER],
  ),
  at(
    `${RP}/403_test.go: TestAuthorizationErrors/root key without required permissions`,
    'keys.removePermissions',
    perms('some.other.permission'),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${RP}/403_test.go: TestAuthorizationErrors/root key with partial permissions`,
    'keys.removePermissions',
    perms('api.read.update_key'),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${RP}/403_test.go: TestAuthorizationErrors/key belongs to different workspace`,
    'keys.removePermissions',
    perms('api.*.update_key'),
    { keyId: '{foreignKey}', permissions: ['{permissionSlug}'] },
    { status: 404 },
    deviation('links-rbac-only', { status: 403 }),
  ),
  at(
    `${RP}/403_test.go: TestAuthorizationErrors/root key with no permissions`,
    'keys.removePermissions',
    perms(),
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    { status: 403 },
  ),
  at(
    `${RP}/404_test.go: TestNotFoundErrors/key not found`,
    'keys.removePermissions',
    REMOVE_P,
    { keyId: MISSING_ID, permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
  at(
    `${RP}/404_test.go: TestNotFoundErrors/permission not found by ID`,
    'keys.removePermissions',
    REMOVE_P,
    { keyId: '{key}', permissions: ['perm_3ZGp4bGXXRq6JbtKLVrCmZrM'] },
    { status: 404 },
    deviation('links-remove-missing', { status: 200 }),
  ),
  at(
    `${RP}/404_test.go: TestNotFoundErrors/key from different workspace`,
    'keys.removePermissions',
    REMOVE_P,
    { keyId: '{foreignKey}', permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
];

const SP = 'v2_keys_set_permissions';
const SET_P = perms(
  'api.*.update_key',
  'rbac.*.remove_permission_from_key',
  'rbac.*.add_permission_to_key',
);
export const setPermissions: ConformanceCase[] = [
  at(
    `${SP}/400_test.go: TestBadRequest/missing keyId`,
    'keys.setPermissions',
    perms('api.*.update_key'),
    { permissions: ['{permissionSlug}'] },
    { status: 400 },
  ),
  at(
    `${SP}/400_test.go: TestBadRequest/missing permissions field`,
    'keys.setPermissions',
    perms('api.*.update_key'),
    { keyId: '{key}' },
    { status: 400 },
  ),
  at(
    `${SP}/400_test.go: TestBadRequest/permission with empty string id and name`,
    'keys.setPermissions',
    perms('api.*.update_key'),
    { keyId: '{key}', permissions: [''] },
    { status: 400 },
  ),
  at(
    `${SP}/400_test.go: TestBadRequest/malformed JSON`,
    'keys.setPermissions',
    perms('api.*.update_key'),
    undefined as never,
    { status: 400 },
    { raw: '{"keyId": "key_123", "permissions": [' },
  ),
  at(
    `${SP}/400_test.go: TestBadRequest/permissions as string instead of array`,
    'keys.setPermissions',
    perms('api.*.update_key'),
    { keyId: '{key}', permissions: 'perm_123' },
    { status: 400 },
  ),
  ...headerCases(
    `${SP}/401_test.go: TestAuthenticationErrors`,
    'keys.setPermissions',
    { keyId: '{key}', permissions: ['{permissionSlug}'] },
    [MISSING_HEADER, INVALID_TOKEN, MALFORMED_HEADER, EMPTY_BEARER],
  ),
  ...(
    [
      ['missing update_key permission', ['api.*.read_key']],
      ['no permissions at all', []],
      ['insufficient permissions', ['api.*.read_key', 'api.*.create_key']],
      ['permission for different resource', ['identity.*.update_identity']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${SP}/403_test.go: TestForbidden/${name}`,
      'keys.setPermissions',
      perms(...granted),
      { keyId: '{key}', permissions: ['{permissionSlug}'] },
      { status: 403 },
    ),
  ),
  at(
    `${SP}/404_test.go: TestNotFound/non-existent key ID`,
    'keys.setPermissions',
    SET_P,
    { keyId: MISSING_ID, permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
  at(
    `${SP}/404_test.go: TestNotFound/key from different workspace (isolation)`,
    'keys.setPermissions',
    SET_P,
    { keyId: '{foreignKey}', permissions: ['{permissionSlug}'] },
    { status: 404 },
  ),
];

const AR = 'v2_keys_add_roles';
const ADD_R = perms('api.*.update_key', 'rbac.*.add_role_to_key');
export const addRoles: ConformanceCase[] = [
  ...(
    [
      ['missing keyId', { roles: ['{roleName}'] }],
      ['missing roles', { keyId: '{key}' }],
      ['empty roles array', { keyId: '{key}', roles: [] }],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(`${AR}/400_test.go: TestValidationErrors/${name}`, 'keys.addRoles', ADD_R, body, {
      status: 400,
    }),
  ),
  at(
    `${AR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'keys.addRoles',
    ADD_R,
    undefined as never,
    { status: 400 },
    { raw: '{"keyId": "key_123", "roles": [' },
  ),
  ...headerCases(
    `${AR}/401_test.go: TestAuthenticationErrors`,
    'keys.addRoles',
    { keyId: '{key}', roles: ['role_123'] },
    [
      MISSING_HEADER,
      named('invalid authorization token', INVALID_TOKEN),
      MALFORMED_HEADER,
      named('empty authorization header', EMPTY),
      named('bearer token only', BEARER_ONLY),
      named('non-existent root key', UNKNOWN),
    ],
  ),
  at(
    `${AR}/403_test.go: TestAuthorizationErrors/insufficient permissions - no update_key`,
    'keys.addRoles',
    perms('api.*.read_key'),
    { keyId: '{key}', roles: ['{roleName}'] },
    { status: 403 },
  ),
  at(
    `${AR}/403_test.go: TestAuthorizationErrors/cross workspace access`,
    'keys.addRoles',
    perms('api.*.update_key'),
    { keyId: '{foreignKey}', roles: ['{roleName}'] },
    { status: 404 },
    deviation('links-rbac-only', { status: 403 }),
  ),
  at(
    `${AR}/403_test.go: TestAuthorizationErrors/root key with read only permissions`,
    'keys.addRoles',
    perms('api.*.read_key', 'rbac.*.read_role'),
    { keyId: '{key}', roles: ['{roleName}'] },
    { status: 403 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/key not found`,
    'keys.addRoles',
    ADD_R,
    { keyId: 'key_nonexistent123456789', roles: ['{roleName}'] },
    { status: 404 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/key in different workspace`,
    'keys.addRoles',
    ADD_R,
    { keyId: '{foreignKey}', roles: ['{roleName}'] },
    { status: 404 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/role not found by ID`,
    'keys.addRoles',
    ADD_R,
    { keyId: '{key}', roles: ['role_3ZGp4bGXXRq6JbtKLVrCmZrM'] },
    { status: 404 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/role not found by name`,
    'keys.addRoles',
    ADD_R,
    { keyId: '{key}', roles: ['nonexistent_role_name'] },
    { status: 404 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/multiple roles one not found`,
    'keys.addRoles',
    ADD_R,
    { keyId: '{key}', roles: ['{roleName}', 'nonexistent_role_name'] },
    { status: 404 },
  ),
  at(
    `${AR}/404_test.go: TestNotFoundErrors/deleted key`,
    'keys.addRoles',
    ADD_R,
    { keyId: '{deletedKey}', roles: ['{roleName}'] },
    { status: 404 },
  ),
];

const RR = 'v2_keys_remove_roles';
const REMOVE_R = perms('api.*.update_key', 'rbac.*.remove_role_from_key');
export const removeRoles: ConformanceCase[] = [
  at(
    `${RR}/400_test.go: TestValidationErrors/missing keyId field`,
    'keys.removeRoles',
    REMOVE_R,
    { roles: ['{roleName}'] },
    { status: 400 },
  ),
  at(
    `${RR}/400_test.go: TestValidationErrors/empty keyId string`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: '', roles: ['{roleName}'] },
    { status: 400 },
  ),
  at(
    `${RR}/400_test.go: TestValidationErrors/invalid keyId format`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: 'invalid_key_format', roles: ['{roleName}'] },
    { status: 404 },
  ),
  at(
    `${RR}/400_test.go: TestValidationErrors/missing roles field`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: '{key}' },
    { status: 400 },
  ),
  at(
    `${RR}/400_test.go: TestValidationErrors/empty roles array`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: '{key}', roles: [] },
    { status: 400 },
  ),
  ...(
    [
      ['role not found by ID', 'role_3ZGp4bGXXRq6JbtKLVrCmZrM'],
      ['role not found by name', 'nonexistent_role_name'],
    ] as [string, string][]
  ).map(([name, role]) =>
    at(
      `${RR}/400_test.go: TestValidationErrors/${name}`,
      'keys.removeRoles',
      REMOVE_R,
      { keyId: '{key}', roles: [role] },
      { status: 404 },
      deviation('links-remove-missing', { status: 200 }),
    ),
  ),
  at(
    `${RR}/400_test.go: TestValidationErrors/key not found`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: MISSING_ID, roles: ['{roleName}'] },
    { status: 404 },
  ),
  ...headerCases(
    `${RR}/401_test.go: TestAuthenticationErrors`,
    'keys.removeRoles',
    { keyId: '{key}', roles: ['{roleName}'] },
    [
      MISSING_HEADER,
      INVALID_TOKEN,
      MALFORMED_HEADER,
      EMPTY_BEARER,
      named('non-existent root key', UNKNOWN),
    ],
  ),
  ...(
    [
      ['root key without required permissions', []],
      ['root key with partial permissions', ['api.read.update_key']],
      ['root key with unrelated permissions', ['different.permission.scope']],
      ['root key with create permissions but not update', ['api.*.create_key']],
      ['root key with delete permissions but not update', ['api.*.delete_key']],
      ['root key with specific API permissions but not wildcard', ['api.specific.update_key']],
      [
        'root key with mixed permissions but missing required',
        ['api.*.create_key', 'api.*.delete_key', 'api.*.read_key'],
      ],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${RR}/403_test.go: TestAuthorizationErrors/${name}`,
      'keys.removeRoles',
      perms(...granted),
      { keyId: '{key}', roles: ['{roleName}'] },
      { status: 403 },
    ),
  ),
  at(
    `${RR}/404_test.go: TestNotFoundErrors/key not found`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: MISSING_ID, roles: ['{roleName}'] },
    { status: 404 },
  ),
  at(
    `${RR}/404_test.go: TestNotFoundErrors/key from different workspace`,
    'keys.removeRoles',
    REMOVE_R,
    { keyId: '{foreignKey}', roles: ['{roleName}'] },
    { status: 404 },
  ),
];

const SR = 'v2_keys_set_roles';
export const setRoles: ConformanceCase[] = [
  at(
    `${SR}/400_test.go: TestValidationErrors/missing keyId`,
    'keys.setRoles',
    perms('api.*.update_key'),
    { roles: ['{roleName}'] },
    { status: 400 },
  ),
  at(
    `${SR}/400_test.go: TestValidationErrors/missing roles`,
    'keys.setRoles',
    perms('api.*.update_key'),
    { keyId: '{key}' },
    { status: 400 },
  ),
  at(
    `${SR}/400_test.go: TestValidationErrors/malformed JSON body`,
    'keys.setRoles',
    perms('api.*.update_key'),
    undefined as never,
    { status: 400 },
    { raw: '{"keyId": "key_123", "roles": [' },
  ),
  ...headerCases(
    `${SR}/401_test.go: TestAuthenticationErrors`,
    'keys.setRoles',
    { keyId: 'key_123', roles: ['role_123'] },
    [MISSING_HEADER, named('invalid authorization token', INVALID_TOKEN), MALFORMED_HEADER],
  ),
  at(
    `${SR}/403_test.go: TestAuthorizationErrors/missing update_key permission`,
    'keys.setRoles',
    perms('api.*.create_key'),
    { keyId: '{key}', roles: ['{roleName}'] },
    { status: 403 },
  ),
  at(
    `${SR}/403_test.go: TestAuthorizationErrors/no permissions`,
    'keys.setRoles',
    perms(),
    { keyId: '{key}', roles: ['{roleName}'] },
    { status: 403 },
  ),
  ...(
    [
      ['non-existent key ID', MISSING_ID, '{roleName}'],
      ['non-existent role ID', '{key}', 'role_3ZGp4bGXXRq6JbtKLVrCmZrM'],
      ['non-existent role name', '{key}', 'nonexistent_role_name'],
      ['key from different workspace', '{foreignKey}', '{roleName}'],
      ['valid key format but non-existent', 'key_1234567890abcdef', '{roleName}'],
    ] as [string, string, string][]
  ).map(([name, keyId, role]) =>
    at(
      `${SR}/404_test.go: TestNotFoundErrors/${name}`,
      'keys.setRoles',
      perms('api.*.update_key', 'rbac.*.add_role_to_key', 'rbac.*.remove_role_from_key'),
      { keyId, roles: [role] },
      { status: 404 },
    ),
  ),
];
