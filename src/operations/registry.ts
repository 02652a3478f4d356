import { getAnalyticsVerifications } from './analytics/getVerifications';
import { queryRatelimits } from './analytics/queryRatelimits';
import { queryVerifications } from './analytics/queryVerifications';
import { createApi } from './apis/createApi';
import { deleteApi } from './apis/deleteApi';
import { deleteKeys } from './apis/deleteKeys';
import { getApi } from './apis/getApi';
import { listApis } from './apis/listApis';
import { listKeys } from './apis/listKeys';
import { addPermissions } from './keys/addPermissions';
import { removePermissions } from './keys/removePermissions';
import { setPermissions } from './keys/setPermissions';
import { addRoles } from './keys/addRoles';
import { removeRoles } from './keys/removeRoles';
import { setRoles } from './keys/setRoles';
import { createKey } from './keys/createKey';
import { deleteKey } from './keys/deleteKey';
import { getBucket } from './keys/getBucket';
import { getKey } from './keys/getKey';
import { getRecentVerifications } from './keys/getRecentVerifications';
import { getVerifications } from './keys/getVerifications';
import { rerollKey } from './keys/rerollKey';
import { updateKey } from './keys/updateKey';
import { updateRemaining } from './keys/updateRemaining';
import { verifyKey } from './keys/verifyKey';
import { whoami } from './keys/whoami';
import { createKeys } from './migrations/createKeys';
import { listAuditLogs } from './auditLogs/list';
import { createIdentity } from './identities/createIdentity';
import { deleteIdentity } from './identities/deleteIdentity';
import { getIdentity } from './identities/getIdentity';
import { listIdentities } from './identities/listIdentities';
import { updateCredits as updateIdentityCredits } from './identities/updateCredits';
import { updateIdentity } from './identities/updateIdentity';
import type { Operation } from './operation';
import { createPermission } from './permissions/createPermission';
import { createRole } from './permissions/createRole';
import { deletePermission } from './permissions/deletePermission';
import { deleteRole } from './permissions/deleteRole';
import { getPermission } from './permissions/getPermission';
import { getRole } from './permissions/getRole';
import { listPermissions } from './permissions/listPermissions';
import { listRoles } from './permissions/listRoles';
import { setRolePermissions } from './permissions/setRolePermissions';
import { deleteOverride } from './ratelimits/deleteOverride';
import { getOverride } from './ratelimits/getOverride';
import { getUsage } from './ratelimits/getUsage';
import { limit } from './ratelimits/limit';
import { listOverrides } from './ratelimits/listOverrides';
import { multiLimit } from './ratelimits/multiLimit';
import { setOverride } from './ratelimits/setOverride';
import { createWebhook } from './webhooks/createWebhook';
import { deleteWebhook } from './webhooks/deleteWebhook';
import { listDeliveries } from './webhooks/listDeliveries';
import { listWebhooks } from './webhooks/listWebhooks';

/**
 * Every RPC, in the order the reference lists them: the one table the HTTP routes, the OpenAPI
 * document and the reference pages are derived from. A new operation is a module of its own,
 * declared with defineOperation, and one line here.
 */
export const operations: readonly Operation[] = [
  createApi,
  getApi,
  deleteApi,
  listKeys,
  createKey,
  getKey,
  verifyKey,
  updateKey,
  updateRemaining,
  rerollKey,
  limit,
  multiLimit,
  setOverride,
  getOverride,
  listOverrides,
  deleteOverride,
  createKeys,
  deleteKeys,
  whoami,
  createPermission,
  getPermission,
  listPermissions,
  deletePermission,
  createRole,
  getRole,
  listRoles,
  deleteRole,
  setRolePermissions,
  addPermissions,
  removePermissions,
  setPermissions,
  addRoles,
  removeRoles,
  setRoles,
  createIdentity,
  getIdentity,
  listIdentities,
  updateIdentity,
  updateIdentityCredits,
  deleteIdentity,
  // keyward's own additions, for the dashboard.
  listApis,
  getVerifications,
  getRecentVerifications,
  getAnalyticsVerifications,
  queryVerifications,
  queryRatelimits,
  getUsage,
  getBucket,
  deleteKey,
  listAuditLogs,
  createWebhook,
  listWebhooks,
  deleteWebhook,
  listDeliveries,
];
