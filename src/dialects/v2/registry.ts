import { v2GetRatelimits } from './analytics/queryRatelimits';
import { v2GetVerifications } from './analytics/queryVerifications';
import { v2CreateApi } from './apis/createApi';
import { v2DeleteApi } from './apis/deleteApi';
import { v2GetApi } from './apis/getApi';
import { v2ListKeys } from './apis/listKeys';
import { v2CreateIdentity } from './identities/createIdentity';
import { v2DeleteIdentity } from './identities/deleteIdentity';
import { v2GetIdentity } from './identities/getIdentity';
import { v2ListIdentities } from './identities/listIdentities';
import { v2UpdateIdentityCredits } from './identities/updateCredits';
import { v2UpdateIdentity } from './identities/updateIdentity';
import { v2CreateWebhook } from './webhooks/createWebhook';
import { v2DeleteWebhook } from './webhooks/deleteWebhook';
import { v2ListDeliveries } from './webhooks/listDeliveries';
import { v2ListWebhooks } from './webhooks/listWebhooks';
import { v2AddPermissions } from './keys/addPermissions';
import { v2AddRoles } from './keys/addRoles';
import { v2CreateKey } from './keys/createKey';
import { v2DeleteKey } from './keys/deleteKey';
import { v2GetKey } from './keys/getKey';
import { v2RemovePermissions } from './keys/removePermissions';
import { v2RemoveRoles } from './keys/removeRoles';
import { v2RerollKey } from './keys/rerollKey';
import { v2SetPermissions } from './keys/setPermissions';
import { v2SetRoles } from './keys/setRoles';
import { v2UpdateKey } from './keys/updateKey';
import { v2UpdateCredits } from './keys/updateRemaining';
import { v2VerifyKey } from './keys/verifyKey';
import { v2Whoami } from './keys/whoami';
import { v2MigrateKeys } from './migrations/createKeys';
import { v2CreatePermission } from './permissions/createPermission';
import { v2CreateRole } from './permissions/createRole';
import { v2DeletePermission } from './permissions/deletePermission';
import { v2DeleteRole } from './permissions/deleteRole';
import { v2GetPermission } from './permissions/getPermission';
import { v2GetRole } from './permissions/getRole';
import { v2ListPermissions } from './permissions/listPermissions';
import { v2ListRoles } from './permissions/listRoles';
import { v2SetRolePermissions } from './permissions/setRolePermissions';
import { v2DeleteOverride } from './ratelimits/deleteOverride';
import { v2GetOverride } from './ratelimits/getOverride';
import { v2Limit } from './ratelimits/limit';
import { v2ListOverrides } from './ratelimits/listOverrides';
import { v2MultiLimit } from './ratelimits/multiLimit';
import { v2SetOverride } from './ratelimits/setOverride';
import type { V2Route } from './route';

/**
 * Every operation the v2 dialect speaks, each at `POST /v2/{name}`. A route's module sits where its
 * operation's does in src/operations (`keys/updateRemaining.ts` speaks keys.updateRemaining as
 * v2's keys.updateCredits), so the two trees read side by side.
 */
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
  v2GetRatelimits,
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
  v2UpdateIdentityCredits,
  v2DeleteIdentity,
  v2CreateWebhook,
  v2ListWebhooks,
  v2DeleteWebhook,
  v2ListDeliveries,
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
