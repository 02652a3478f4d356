import { v2GetVerifications } from './analytics';
import { v2CreateApi, v2DeleteApi, v2GetApi, v2ListKeys } from './apis';
import {
  v2CreateIdentity,
  v2DeleteIdentity,
  v2GetIdentity,
  v2ListIdentities,
  v2UpdateIdentity,
} from './identities';
import {
  v2AddPermissions,
  v2AddRoles,
  v2RemovePermissions,
  v2RemoveRoles,
  v2SetPermissions,
  v2SetRoles,
} from './keyLinks';
import { v2CreateKey, v2DeleteKey, v2GetKey, v2MigrateKeys, v2VerifyKey, v2Whoami } from './keys';
import { v2UpdateCredits, v2UpdateKey } from './keyUpdates';
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
import { v2RerollKey } from './reroll';
import type { V2Route } from './route';

/** Every operation the v2 dialect speaks, each at `POST /v2/{name}`. */
export const v2Routes: readonly V2Route<unknown, object, unknown>[] = [
  v2CreateApi,
  v2GetApi,
  v2DeleteApi,
  v2ListKeys,
  v2CreateKey,
  v2GetKey,
  v2VerifyKey,
  v2RerollKey,
  v2UpdateKey,
  v2DeleteKey,
  v2Whoami,
  v2UpdateCredits,
  v2AddPermissions,
  v2RemovePermissions,
  v2SetPermissions,
  v2AddRoles,
  v2RemoveRoles,
  v2SetRoles,
  v2MigrateKeys,
  v2GetVerifications,
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
