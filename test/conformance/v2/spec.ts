import { INVALID_INPUT, type ConformanceCase, type Json } from '../types';

/**
 * The bounds of Unkey's v2 OpenAPI spec (`svc/api/openapi/spec/paths/v2/<area>/<operation>/
 * *RequestBody.yaml`, read at `fc99b6b925`, `$ref`s followed), one case per bound: a body that is
 * otherwise accepted (its control case is a 200) with the field one past the bound is a 400
 * (`…/application/invalid_input`), as Unkey's server answers whatever fails its spec. A bound at
 * `2^63 - 1` is left out (JSON numbers cannot hold one past it), and so is `keys.migrateKeys`,
 * which keyward refuses whole (docs/decisions.md). The table below lists what the spec says;
 * `bodyPast` builds the request from it.
 */

type Bound =
  'minLength' | 'maxLength' | 'minimum' | 'maximum' | 'minItems' | 'maxItems' | 'pattern' | 'enum';

/** [route, field path, bound, the spec's value]. */
const BOUNDS: [string, string, Bound, Json][] = [
  ['apis.createApi', 'body.name', 'minLength', 3],
  ['apis.createApi', 'body.name', 'maxLength', 256],
  ['apis.deleteApi', 'body.apiId', 'minLength', 8],
  ['apis.deleteApi', 'body.apiId', 'maxLength', 255],
  ['apis.deleteApi', 'body.apiId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['apis.getApi', 'body.apiId', 'minLength', 8],
  ['apis.getApi', 'body.apiId', 'maxLength', 255],
  ['apis.getApi', 'body.apiId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['apis.listKeys', 'body.apiId', 'minLength', 1],
  ['apis.listKeys', 'body.limit', 'minimum', 1],
  ['apis.listKeys', 'body.limit', 'maximum', 100],
  ['apis.listKeys', 'body.externalId', 'minLength', 1],
  ['keys.addPermissions', 'body.keyId', 'minLength', 3],
  ['keys.addPermissions', 'body.keyId', 'maxLength', 255],
  ['keys.addPermissions', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.addPermissions', 'body.permissions', 'minItems', 1],
  ['keys.addPermissions', 'body.permissions', 'maxItems', 1000],
  ['keys.addPermissions', 'body.permissions[]', 'minLength', 1],
  ['keys.addPermissions', 'body.permissions[]', 'maxLength', 128],
  ['keys.addPermissions', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['keys.addRoles', 'body.keyId', 'minLength', 3],
  ['keys.addRoles', 'body.keyId', 'maxLength', 255],
  ['keys.addRoles', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.addRoles', 'body.roles', 'minItems', 1],
  ['keys.addRoles', 'body.roles', 'maxItems', 100],
  ['keys.addRoles', 'body.roles[]', 'minLength', 1],
  ['keys.addRoles', 'body.roles[]', 'maxLength', 128],
  ['keys.createKey', 'body.apiId', 'minLength', 3],
  ['keys.createKey', 'body.apiId', 'maxLength', 255],
  ['keys.createKey', 'body.apiId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.createKey', 'body.prefix', 'minLength', 1],
  ['keys.createKey', 'body.prefix', 'maxLength', 16],
  ['keys.createKey', 'body.prefix', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.createKey', 'body.name', 'minLength', 1],
  ['keys.createKey', 'body.name', 'maxLength', 255],
  ['keys.createKey', 'body.byteLength', 'minimum', 16],
  ['keys.createKey', 'body.byteLength', 'maximum', 255],
  ['keys.createKey', 'body.externalId', 'minLength', 1],
  ['keys.createKey', 'body.externalId', 'maxLength', 255],
  ['keys.createKey', 'body.externalId', 'pattern', '^[a-zA-Z0-9_.-]+$'],
  ['keys.createKey', 'body.roles', 'maxItems', 100],
  ['keys.createKey', 'body.roles[]', 'minLength', 1],
  ['keys.createKey', 'body.roles[]', 'maxLength', 128],
  ['keys.createKey', 'body.permissions', 'maxItems', 1000],
  ['keys.createKey', 'body.permissions[]', 'minLength', 1],
  ['keys.createKey', 'body.permissions[]', 'maxLength', 128],
  ['keys.createKey', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['keys.createKey', 'body.expires', 'minimum', 0],
  ['keys.createKey', 'body.expires', 'maximum', 4102444800000],
  ['keys.createKey', 'body.credits.remaining', 'minimum', 0],
  ['keys.createKey', 'body.credits.refill.interval', 'enum', ['daily', 'monthly']],
  ['keys.createKey', 'body.credits.refill.amount', 'minimum', 1],
  ['keys.createKey', 'body.credits.refill.refillDay', 'minimum', 1],
  ['keys.createKey', 'body.credits.refill.refillDay', 'maximum', 31],
  ['keys.createKey', 'body.ratelimits', 'maxItems', 50],
  ['keys.createKey', 'body.ratelimits[].name', 'minLength', 3],
  ['keys.createKey', 'body.ratelimits[].name', 'maxLength', 128],
  ['keys.createKey', 'body.ratelimits[].limit', 'minimum', 1],
  ['keys.createKey', 'body.ratelimits[].duration', 'minimum', 1000],
  ['keys.deleteKey', 'body.keyId', 'minLength', 3],
  ['keys.deleteKey', 'body.keyId', 'maxLength', 255],
  ['keys.deleteKey', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.getKey', 'body.keyId', 'minLength', 3],
  ['keys.getKey', 'body.keyId', 'maxLength', 255],
  ['keys.getKey', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.removePermissions', 'body.keyId', 'minLength', 3],
  ['keys.removePermissions', 'body.keyId', 'maxLength', 255],
  ['keys.removePermissions', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.removePermissions', 'body.permissions', 'minItems', 1],
  ['keys.removePermissions', 'body.permissions', 'maxItems', 1000],
  ['keys.removePermissions', 'body.permissions[]', 'minLength', 1],
  ['keys.removePermissions', 'body.permissions[]', 'maxLength', 128],
  ['keys.removePermissions', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['keys.removeRoles', 'body.keyId', 'minLength', 3],
  ['keys.removeRoles', 'body.keyId', 'maxLength', 255],
  ['keys.removeRoles', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.removeRoles', 'body.roles', 'minItems', 1],
  ['keys.removeRoles', 'body.roles', 'maxItems', 100],
  ['keys.removeRoles', 'body.roles[]', 'minLength', 1],
  ['keys.removeRoles', 'body.roles[]', 'maxLength', 128],
  ['keys.rerollKey', 'body.keyId', 'minLength', 3],
  ['keys.rerollKey', 'body.keyId', 'maxLength', 255],
  ['keys.rerollKey', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.rerollKey', 'body.expiration', 'minimum', 0],
  ['keys.rerollKey', 'body.expiration', 'maximum', 4102444800000],
  ['keys.setPermissions', 'body.keyId', 'minLength', 3],
  ['keys.setPermissions', 'body.keyId', 'maxLength', 255],
  ['keys.setPermissions', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.setPermissions', 'body.permissions[]', 'minLength', 1],
  ['keys.setPermissions', 'body.permissions[]', 'maxLength', 128],
  ['keys.setPermissions', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['keys.setRoles', 'body.keyId', 'minLength', 3],
  ['keys.setRoles', 'body.keyId', 'maxLength', 255],
  ['keys.setRoles', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.setRoles', 'body.roles', 'maxItems', 100],
  ['keys.setRoles', 'body.roles[]', 'minLength', 1],
  ['keys.setRoles', 'body.roles[]', 'maxLength', 128],
  ['keys.updateCredits', 'body.keyId', 'minLength', 3],
  ['keys.updateCredits', 'body.value', 'minimum', 0],
  ['keys.updateCredits', 'body.operation', 'enum', ['set', 'increment', 'decrement']],
  ['keys.updateKey', 'body.keyId', 'minLength', 3],
  ['keys.updateKey', 'body.keyId', 'maxLength', 255],
  ['keys.updateKey', 'body.keyId', 'pattern', '^[a-zA-Z0-9_]+$'],
  ['keys.updateKey', 'body.name', 'minLength', 1],
  ['keys.updateKey', 'body.name', 'maxLength', 255],
  ['keys.updateKey', 'body.externalId', 'minLength', 1],
  ['keys.updateKey', 'body.externalId', 'maxLength', 255],
  ['keys.updateKey', 'body.externalId', 'pattern', '^[a-zA-Z0-9_.-]+$'],
  ['keys.updateKey', 'body.expires', 'minimum', 0],
  ['keys.updateKey', 'body.expires', 'maximum', 4102444800000],
  ['keys.updateKey', 'body.credits.remaining', 'minimum', 0],
  ['keys.updateKey', 'body.credits.refill.interval', 'enum', ['daily', 'monthly']],
  ['keys.updateKey', 'body.credits.refill.amount', 'minimum', 1],
  ['keys.updateKey', 'body.credits.refill.refillDay', 'minimum', 1],
  ['keys.updateKey', 'body.credits.refill.refillDay', 'maximum', 31],
  ['keys.updateKey', 'body.ratelimits', 'maxItems', 50],
  ['keys.updateKey', 'body.ratelimits[].name', 'minLength', 3],
  ['keys.updateKey', 'body.ratelimits[].name', 'maxLength', 128],
  ['keys.updateKey', 'body.ratelimits[].limit', 'minimum', 1],
  ['keys.updateKey', 'body.ratelimits[].duration', 'minimum', 1000],
  ['keys.updateKey', 'body.roles', 'maxItems', 100],
  ['keys.updateKey', 'body.roles[]', 'minLength', 1],
  ['keys.updateKey', 'body.roles[]', 'maxLength', 128],
  ['keys.updateKey', 'body.permissions', 'maxItems', 1000],
  ['keys.updateKey', 'body.permissions[]', 'minLength', 1],
  ['keys.updateKey', 'body.permissions[]', 'maxLength', 128],
  ['keys.updateKey', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['keys.verifyKey', 'body.key', 'minLength', 1],
  ['keys.verifyKey', 'body.key', 'maxLength', 512],
  ['keys.verifyKey', 'body.tags', 'maxItems', 20],
  ['keys.verifyKey', 'body.tags[]', 'minLength', 1],
  ['keys.verifyKey', 'body.tags[]', 'maxLength', 512],
  ['keys.verifyKey', 'body.permissions', 'minLength', 1],
  ['keys.verifyKey', 'body.permissions', 'maxLength', 1000],
  ['keys.verifyKey', 'body.credits.cost', 'minimum', 0],
  ['keys.verifyKey', 'body.credits.cost', 'maximum', 1000000000000],
  ['keys.verifyKey', 'body.ratelimits[].name', 'minLength', 3],
  ['keys.verifyKey', 'body.ratelimits[].name', 'maxLength', 255],
  ['keys.verifyKey', 'body.ratelimits[].cost', 'minimum', 0],
  ['keys.verifyKey', 'body.ratelimits[].limit', 'minimum', 0],
  ['keys.verifyKey', 'body.ratelimits[].duration', 'minimum', 0],
  ['keys.verifyKey', 'body.migrationId', 'maxLength', 256],
  ['keys.whoami', 'body.key', 'minLength', 1],
  ['keys.whoami', 'body.key', 'maxLength', 512],
  ['identities.createIdentity', 'body.externalId', 'minLength', 1],
  ['identities.createIdentity', 'body.externalId', 'maxLength', 255],
  ['identities.createIdentity', 'body.externalId', 'pattern', '^[a-zA-Z0-9_.-]+$'],
  ['identities.createIdentity', 'body.ratelimits', 'maxItems', 50],
  ['identities.createIdentity', 'body.ratelimits[].name', 'minLength', 3],
  ['identities.createIdentity', 'body.ratelimits[].name', 'maxLength', 128],
  ['identities.createIdentity', 'body.ratelimits[].limit', 'minimum', 1],
  ['identities.createIdentity', 'body.ratelimits[].duration', 'minimum', 1000],
  ['identities.deleteIdentity', 'body.identity', 'minLength', 1],
  ['identities.getIdentity', 'body.identity', 'minLength', 1],
  ['identities.listIdentities', 'body.limit', 'minimum', 1],
  ['identities.listIdentities', 'body.limit', 'maximum', 100],
  ['identities.listIdentities', 'body.search', 'maxLength', 256],
  ['identities.updateIdentity', 'body.identity', 'minLength', 1],
  ['identities.updateIdentity', 'body.ratelimits', 'maxItems', 50],
  ['identities.updateIdentity', 'body.ratelimits[].name', 'minLength', 3],
  ['identities.updateIdentity', 'body.ratelimits[].name', 'maxLength', 128],
  ['identities.updateIdentity', 'body.ratelimits[].limit', 'minimum', 1],
  ['identities.updateIdentity', 'body.ratelimits[].duration', 'minimum', 1000],
  ['permissions.createPermission', 'body.name', 'minLength', 1],
  ['permissions.createPermission', 'body.name', 'maxLength', 512],
  ['permissions.createPermission', 'body.slug', 'minLength', 1],
  ['permissions.createPermission', 'body.slug', 'maxLength', 128],
  ['permissions.createPermission', 'body.slug', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['permissions.createPermission', 'body.description', 'maxLength', 512],
  ['permissions.createRole', 'body.name', 'minLength', 1],
  ['permissions.createRole', 'body.name', 'maxLength', 128],
  ['permissions.createRole', 'body.description', 'maxLength', 512],
  ['permissions.createRole', 'body.permissions[]', 'minLength', 1],
  ['permissions.createRole', 'body.permissions[]', 'maxLength', 128],
  ['permissions.createRole', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['permissions.deletePermission', 'body.permission', 'minLength', 1],
  ['permissions.deletePermission', 'body.permission', 'maxLength', 128],
  ['permissions.deletePermission', 'body.permission', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['permissions.deleteRole', 'body.role', 'minLength', 1],
  ['permissions.deleteRole', 'body.role', 'maxLength', 128],
  ['permissions.getPermission', 'body.permission', 'minLength', 1],
  ['permissions.getPermission', 'body.permission', 'maxLength', 128],
  ['permissions.getPermission', 'body.permission', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['permissions.getRole', 'body.role', 'minLength', 1],
  ['permissions.getRole', 'body.role', 'maxLength', 128],
  ['permissions.listPermissions', 'body.cursor', 'maxLength', 1024],
  ['permissions.listPermissions', 'body.limit', 'minimum', 1],
  ['permissions.listPermissions', 'body.limit', 'maximum', 100],
  ['permissions.listPermissions', 'body.search', 'maxLength', 256],
  ['permissions.listRoles', 'body.limit', 'minimum', 1],
  ['permissions.listRoles', 'body.limit', 'maximum', 100],
  ['permissions.listRoles', 'body.cursor', 'maxLength', 1024],
  ['permissions.listRoles', 'body.search', 'maxLength', 256],
  ['permissions.setRolePermissions', 'body.roleId', 'minLength', 3],
  ['permissions.setRolePermissions', 'body.roleId', 'maxLength', 255],
  ['permissions.setRolePermissions', 'body.roleId', 'pattern', '^[a-zA-Z0-9_-]+$'],
  ['permissions.setRolePermissions', 'body.permissions[]', 'minLength', 1],
  ['permissions.setRolePermissions', 'body.permissions[]', 'maxLength', 128],
  ['permissions.setRolePermissions', 'body.permissions[]', 'pattern', '^[a-zA-Z0-9_:\\-\\.\\*]+$'],
  ['ratelimit.deleteOverride', 'body.namespace', 'minLength', 1],
  ['ratelimit.deleteOverride', 'body.namespace', 'maxLength', 512],
  ['ratelimit.deleteOverride', 'body.identifier', 'minLength', 1],
  ['ratelimit.deleteOverride', 'body.identifier', 'maxLength', 512],
  ['ratelimit.getOverride', 'body.namespace', 'minLength', 1],
  ['ratelimit.getOverride', 'body.namespace', 'maxLength', 512],
  ['ratelimit.getOverride', 'body.identifier', 'minLength', 1],
  ['ratelimit.getOverride', 'body.identifier', 'maxLength', 512],
  ['ratelimit.limit', 'body.namespace', 'minLength', 1],
  ['ratelimit.limit', 'body.namespace', 'maxLength', 512],
  ['ratelimit.limit', 'body.cost', 'minimum', 0],
  ['ratelimit.limit', 'body.duration', 'minimum', 1000],
  ['ratelimit.limit', 'body.duration', 'maximum', 2592000000],
  ['ratelimit.limit', 'body.identifier', 'minLength', 1],
  ['ratelimit.limit', 'body.identifier', 'maxLength', 512],
  ['ratelimit.limit', 'body.limit', 'minimum', 1],
  ['ratelimit.listOverrides', 'body.namespace', 'minLength', 1],
  ['ratelimit.listOverrides', 'body.namespace', 'maxLength', 512],
  ['ratelimit.listOverrides', 'body.limit', 'minimum', 1],
  ['ratelimit.listOverrides', 'body.limit', 'maximum', 100],
  ['ratelimit.multiLimit', 'body', 'minItems', 1],
  ['ratelimit.multiLimit', 'body', 'maxItems', 100],
  ['ratelimit.multiLimit', 'body[].namespace', 'minLength', 1],
  ['ratelimit.multiLimit', 'body[].namespace', 'maxLength', 512],
  ['ratelimit.multiLimit', 'body[].cost', 'minimum', 0],
  ['ratelimit.multiLimit', 'body[].duration', 'minimum', 1000],
  ['ratelimit.multiLimit', 'body[].duration', 'maximum', 2592000000],
  ['ratelimit.multiLimit', 'body[].identifier', 'minLength', 1],
  ['ratelimit.multiLimit', 'body[].identifier', 'maxLength', 512],
  ['ratelimit.multiLimit', 'body[].limit', 'minimum', 1],
  ['ratelimit.setOverride', 'body.namespace', 'minLength', 1],
  ['ratelimit.setOverride', 'body.namespace', 'maxLength', 512],
  ['ratelimit.setOverride', 'body.duration', 'minimum', 1000],
  ['ratelimit.setOverride', 'body.identifier', 'minLength', 1],
  ['ratelimit.setOverride', 'body.identifier', 'maxLength', 512],
  ['ratelimit.setOverride', 'body.limit', 'minimum', 0],
];

/** The spec file of each route's request body, under `svc/api/openapi/spec/paths/v2/`. */
const FILES: Record<string, string> = {
  'apis.createApi': 'apis/createApi/V2ApisCreateApiRequestBody.yaml',
  'apis.deleteApi': 'apis/deleteApi/V2ApisDeleteApiRequestBody.yaml',
  'apis.getApi': 'apis/getApi/V2ApisGetApiRequestBody.yaml',
  'apis.listKeys': 'apis/listKeys/V2ApisListKeysRequestBody.yaml',
  'identities.createIdentity':
    'identities/createIdentity/V2IdentitiesCreateIdentityRequestBody.yaml',
  'identities.deleteIdentity':
    'identities/deleteIdentity/V2IdentitiesDeleteIdentityRequestBody.yaml',
  'identities.getIdentity': 'identities/getIdentity/V2IdentitiesGetIdentityRequestBody.yaml',
  'identities.listIdentities':
    'identities/listIdentities/V2IdentitiesListIdentitiesRequestBody.yaml',
  'identities.updateIdentity':
    'identities/updateIdentity/V2IdentitiesUpdateIdentityRequestBody.yaml',
  'keys.addPermissions': 'keys/addPermissions/V2KeysAddPermissionsRequestBody.yaml',
  'keys.addRoles': 'keys/addRoles/V2KeysAddRolesRequestBody.yaml',
  'keys.createKey': 'keys/createKey/V2KeysCreateKeyRequestBody.yaml',
  'keys.deleteKey': 'keys/deleteKey/V2KeysDeleteKeyRequestBody.yaml',
  'keys.getKey': 'keys/getKey/V2KeysGetKeyRequestBody.yaml',
  'keys.removePermissions': 'keys/removePermissions/V2KeysRemovePermissionsRequestBody.yaml',
  'keys.removeRoles': 'keys/removeRoles/V2KeysRemoveRolesRequestBody.yaml',
  'keys.rerollKey': 'keys/rerollKey/V2KeysRerollKeyRequestBody.yaml',
  'keys.setPermissions': 'keys/setPermissions/V2KeysSetPermissionsRequestBody.yaml',
  'keys.setRoles': 'keys/setRoles/V2KeysSetRolesRequestBody.yaml',
  'keys.updateCredits': 'keys/updateCredits/V2KeysUpdateCreditsRequestBody.yaml',
  'keys.updateKey': 'keys/updateKey/V2KeysUpdateKeyRequestBody.yaml',
  'keys.verifyKey': 'keys/verifyKey/V2KeysVerifyKeyRequestBody.yaml',
  'keys.whoami': 'keys/whoami/V2KeysWhoamiRequestBody.yaml',
  'permissions.createPermission':
    'permissions/createPermission/V2PermissionsCreatePermissionRequestBody.yaml',
  'permissions.createRole': 'permissions/createRole/V2PermissionsCreateRoleRequestBody.yaml',
  'permissions.deletePermission':
    'permissions/deletePermission/V2PermissionsDeletePermissionRequestBody.yaml',
  'permissions.deleteRole': 'permissions/deleteRole/V2PermissionsDeleteRoleRequestBody.yaml',
  'permissions.getPermission':
    'permissions/getPermission/V2PermissionsGetPermissionRequestBody.yaml',
  'permissions.getRole': 'permissions/getRole/V2PermissionsGetRoleRequestBody.yaml',
  'permissions.listPermissions':
    'permissions/listPermissions/V2PermissionsListPermissionsRequestBody.yaml',
  'permissions.listRoles': 'permissions/listRoles/V2PermissionsListRolesRequestBody.yaml',
  'permissions.setRolePermissions':
    'permissions/setRolePermissions/V2PermissionsSetRolePermissionsRequestBody.yaml',
  'ratelimit.deleteOverride': 'ratelimit/deleteOverride/V2RatelimitDeleteOverrideRequestBody.yaml',
  'ratelimit.getOverride': 'ratelimit/getOverride/V2RatelimitGetOverrideRequestBody.yaml',
  'ratelimit.limit': 'ratelimit/limit/V2RatelimitLimitRequestBody.yaml',
  'ratelimit.listOverrides': 'ratelimit/listOverrides/V2RatelimitListOverridesRequestBody.yaml',
  'ratelimit.multiLimit': 'ratelimit/multiLimit/V2RatelimitMultiLimitRequestBody.yaml',
  'ratelimit.setOverride': 'ratelimit/setOverride/V2RatelimitSetOverrideRequestBody.yaml',
};

/** A body each route accepts (its control case), with fixtures. */
const BASE: Record<string, Json> = {
  'apis.createApi': { name: 'conformance' },
  'apis.deleteApi': { apiId: '{api}' },
  'apis.getApi': { apiId: '{api}' },
  'apis.listKeys': { apiId: '{api}' },
  'keys.addPermissions': { keyId: '{key}', permissions: ['{permissionSlug}'] },
  'keys.addRoles': { keyId: '{key}', roles: ['{roleName}'] },
  'keys.createKey': { apiId: '{api}' },
  'keys.deleteKey': { keyId: '{key}' },
  'keys.getKey': { keyId: '{key}' },
  'keys.removePermissions': { keyId: '{key}', permissions: ['{permissionSlug}'] },
  'keys.removeRoles': { keyId: '{key}', roles: ['{roleName}'] },
  'keys.rerollKey': { keyId: '{key}', expiration: 0 },
  'keys.setPermissions': { keyId: '{key}', permissions: ['{permissionSlug}'] },
  'keys.setRoles': { keyId: '{key}', roles: ['{roleName}'] },
  'keys.updateCredits': { keyId: '{key}', operation: 'set', value: 10 },
  'keys.updateKey': { keyId: '{key}' },
  'keys.verifyKey': { key: '{keyString}' },
  'keys.whoami': { key: '{keyString}' },
  'identities.createIdentity': { externalId: '{externalId}_new' },
  'identities.deleteIdentity': { identity: '{externalId}' },
  'identities.getIdentity': { identity: '{externalId}' },
  'identities.listIdentities': {},
  'identities.updateIdentity': { identity: '{externalId}' },
  'permissions.createPermission': { name: '{permissionSlug}.new', slug: '{permissionSlug}.new' },
  'permissions.createRole': { name: '{roleName}.new' },
  'permissions.deletePermission': { permission: '{permission}' },
  'permissions.deleteRole': { role: '{role}' },
  'permissions.getPermission': { permission: '{permission}' },
  'permissions.getRole': { role: '{role}' },
  'permissions.listPermissions': {},
  'permissions.listRoles': {},
  'permissions.setRolePermissions': { roleId: '{role}', permissions: ['{permissionSlug}'] },
  'ratelimit.deleteOverride': { namespace: '{namespace}', identifier: '{overrideIdentifier}' },
  'ratelimit.getOverride': { namespace: '{namespace}', identifier: '{overrideIdentifier}' },
  'ratelimit.limit': {
    namespace: '{namespace}',
    identifier: 'user_123',
    limit: 10,
    duration: 60000,
  },
  'ratelimit.listOverrides': { namespace: '{namespace}' },
  'ratelimit.multiLimit': [
    { namespace: '{namespace}', identifier: 'user_123', limit: 10, duration: 60000 },
  ],
  'ratelimit.setOverride': {
    namespace: '{namespace}',
    identifier: 'conf_spec',
    limit: 10,
    duration: 60000,
  },
};

/** What an object on the way to a field holds when the base has none (valid on its own). */
const PARENTS: Record<string, Json> = {
  credits: { remaining: 10 },
  refill: { interval: 'daily', amount: 10 },
};

/** The i-th item of an array the spec bounds (valid on its own, distinct from the others). */
function item(field: string, i: number): Json {
  if (field === 'ratelimits') return { name: `limit_${i}`, limit: 10, duration: 60000 };
  if (field === 'body')
    return { namespace: `conf.spec.${i}`, identifier: 'user_123', limit: 10, duration: 60000 };
  return `conf.${field}_${i}`;
}

/** A value one past the bound. */
function past(field: string, bound: Bound, value: Json): Json {
  switch (bound) {
    case 'minLength':
      return 'a'.repeat((value as number) - 1);
    case 'maxLength':
      return 'a'.repeat((value as number) + 1);
    case 'minimum':
      return (value as number) - 1;
    case 'maximum':
      return (value as number) + 1;
    case 'minItems':
      return [];
    case 'maxItems':
      return Array.from({ length: (value as number) + 1 }, (_, i) => item(field, i));
    case 'pattern':
      return 'not allowed!';
    case 'enum':
      return 'not_one_of_them';
  }
}

/** `base` with the field at `path` (`body.credits.refill.amount`, `body.ratelimits[].name`) set. */
function withField(base: Json, path: string, value: Json): Json {
  const steps = path.split('.').slice(1);
  const root = structuredClone(base);
  if (steps.length === 0) return value;
  // `body[]` (multiLimit): the first item of the body itself.
  let node = (path.startsWith('body[]') ? (root as Json[])[0] : root) as Record<string, Json>;
  for (const [i, raw] of steps.entries()) {
    const field = raw.replace('[]', '');
    const last = i === steps.length - 1;
    if (raw.endsWith('[]')) {
      if (!Array.isArray(node[field]) || (node[field] as Json[]).length === 0) {
        node[field] = [item(field, 0)];
      }
      const list = node[field] as Json[];
      if (last) list[0] = value;
      else node = list[0] as Record<string, Json>;
      continue;
    }
    if (last) {
      node[field] = value;
    } else {
      if (node[field] === undefined || node[field] === null)
        node[field] = structuredClone(PARENTS[field] ?? {});
      // A monthly refill where the field is refillDay, so that the day is the only thing wrong.
      if (field === 'refill' && steps[i + 1] === 'refillDay') {
        node[field] = { interval: 'monthly', amount: 10, refillDay: 1 };
      }
      node = node[field] as Record<string, Json>;
    }
  }
  return root;
}

/** keyward's permission and role names keep Unkey v1's bounds in both dialects. */
const names = (status: number): Partial<ConformanceCase> => ({
  deviation: { id: 'v1-name-bounds', keyward: { status } },
});

/**
 * Where keyward answers otherwise: the deviation it documents, or why the case waits.
 */
const KEYWARD: Record<string, Partial<ConformanceCase>> = {
  'keys.addPermissions body.permissions[] maxLength': names(200),
  'keys.addRoles body.roles[] maxLength': names(404),
  'keys.createKey body.roles[] maxLength': names(200),
  'keys.createKey body.permissions[] maxLength': names(200),
  'keys.createKey body.permissions[] pattern': names(200),
  'keys.removePermissions body.permissions[] maxLength': names(200),
  'keys.removeRoles body.roles[] maxLength': names(200),
  'keys.setPermissions body.permissions[] maxLength': names(200),
  'keys.setRoles body.roles[] maxLength': names(404),
  'keys.updateKey body.roles[] maxLength': names(200),
  'keys.updateKey body.permissions[] maxLength': names(200),
  'permissions.createRole body.name maxLength': names(200),
  'permissions.createRole body.permissions[] maxLength': names(200),
  'permissions.deletePermission body.permission maxLength': names(404),
  'permissions.deletePermission body.permission pattern': names(404),
  'permissions.deleteRole body.role maxLength': names(404),
  'permissions.getPermission body.permission maxLength': names(404),
  'permissions.getPermission body.permission pattern': names(404),
  'permissions.getRole body.role maxLength': names(404),
  'permissions.setRolePermissions body.permissions[] maxLength': names(200),
};

const fileOf = (route: string) => `svc/api/openapi/spec/paths/v2/${FILES[route]}`;

export const controls: ConformanceCase[] = Object.entries(BASE).map(([route, body]) => ({
  from: `${fileOf(route)}: a body the spec accepts (control)`,
  route,
  caller: { permissions: ['*'] },
  body,
  expect: { status: 200 },
}));

export const bounds: ConformanceCase[] = BOUNDS.map(([route, path, bound, value]) => {
  const field = (path.split('.').pop() ?? path).replace('[]', '');
  return {
    from: `${fileOf(route)}: ${path} ${bound} ${JSON.stringify(value)}`,
    route,
    caller: { permissions: ['*'] },
    body: withField(BASE[route]!, path, past(field, bound, value)),
    expect: { status: 400, type: INVALID_INPUT },
    ...KEYWARD[`${route} ${path} ${bound}`],
  };
});

/** Values at a bound the spec accepts, where keyward answers otherwise on purpose. */
export const atBounds: ConformanceCase[] = [
  {
    from: `${fileOf('keys.createKey')}: body.credits.remaining minimum 0 (at the bound)`,
    route: 'keys.createKey',
    caller: { permissions: ['*'] },
    body: { apiId: '{api}', credits: { remaining: 0 } },
    expect: { status: 200 },
    deviation: { id: 'create-credits-from-1', keyward: { status: 400, type: INVALID_INPUT } },
  },
];
