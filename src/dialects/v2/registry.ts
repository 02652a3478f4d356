import { v2CreateApi, v2GetApi } from './apis';
import {
  v2CreateIdentity,
  v2DeleteIdentity,
  v2GetIdentity,
  v2ListIdentities,
  v2UpdateIdentity,
} from './identities';
import { v2CreateKey, v2GetKey, v2VerifyKey } from './keys';
import {
  v2CreatePermission,
  v2CreateRole,
  v2DeletePermission,
  v2DeleteRole,
  v2GetPermission,
  v2GetRole,
  v2ListPermissions,
  v2ListRoles,
  v2SetRolePermissions,
} from './permissions';
import {
  v2DeleteOverride,
  v2GetOverride,
  v2Limit,
  v2ListOverrides,
  v2MultiLimit,
  v2SetOverride,
} from './ratelimit';
import type { V2Route } from './route';

/** Every operation the v2 dialect speaks, each at `POST /v2/{name}`. */
export const v2Routes: readonly V2Route<unknown, object, unknown>[] = [
  v2CreateApi,
  v2GetApi,
  v2CreateKey,
  v2GetKey,
  v2VerifyKey,
  v2Limit,
  v2MultiLimit,
  v2SetOverride,
  v2GetOverride,
  v2ListOverrides,
  v2DeleteOverride,
  v2CreateIdentity,
  v2GetIdentity,
  v2ListIdentities,
  v2UpdateIdentity,
  v2DeleteIdentity,
  v2CreatePermission,
  v2GetPermission,
  v2ListPermissions,
  v2DeletePermission,
  v2CreateRole,
  v2GetRole,
  v2ListRoles,
  v2DeleteRole,
  v2SetRolePermissions,
] as unknown as readonly V2Route<unknown, object, unknown>[];
