import type { Directory } from '../cache/directory';
import { InsufficientPermissionsError } from '../errors';
import { isGranted, mayHaveAction, type Permission } from '../auth/permissions';
import type { Limiter } from '../limiter/limiter';
import type { Metrics } from '../observability/metrics';
import type { RecentVerifications } from '../observability/recentVerifications';
import type { ManagementLimiter } from '../limiter/managementLimiter';
import type { ApiStore } from '../store/apiStore';
import type { KeyStore } from '../store/keyStore';
import type { RootKeyRecord } from '../store/records';
import type { RootKeyStore } from '../store/rootKeyStore';
import type { RatelimitStore } from '../store/ratelimitStore';

/** What operations run on: stores on the primary, the cached directory, and the limiter. */
export interface Services {
  apis: ApiStore;
  keys: KeyStore;
  rootKeys: RootKeyStore;
  ratelimits: RatelimitStore;
  directory: Directory;
  limiter: Limiter;
  management: ManagementLimiter;
  /** closed: a bucket that cannot be reached refuses; open: it admits, and says so. */
  limiterFailure: 'closed' | 'open';
  now: () => number;
  metrics: Metrics;
  recent: RecentVerifications;
}

/**
 * Ids an operation notes for the request's access-log line. A closed set of ids, never a secret:
 * the access log relies on it to skip the wildcard redaction (src/http/requestLog.ts).
 */
export interface LogFields {
  apiId?: string;
  keyId?: string;
  mode?: string;
}

/** Who is calling: the authenticated root key, and where to note ids for the access log. */
export interface Caller {
  rootKey: RootKeyRecord;
  requestId: string;
  logFields: LogFields;
}

export function requirePermission(caller: Caller, permission: Permission): void {
  if (!isGranted(caller.rootKey.permissions, permission)) {
    throw new InsufficientPermissionsError(permission);
  }
}

/**
 * Refuses before any lookup a root key that holds no `api.<any id>.<action>` at all; the exact
 * permission is checked once the resource, and so its API, is known.
 */
export function requireAction(caller: Caller, action: string): void {
  if (!mayHaveAction(caller.rootKey.permissions, 'api', action)) {
    throw new InsufficientPermissionsError(`api.*.${action}`);
  }
}
