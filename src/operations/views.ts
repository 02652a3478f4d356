import type { RefillConfig } from '../domain/credits';
import { copyDetails, KEY_DETAIL_NAMES, type KeyDetails, type KeyRecord } from '../domain/key';
import type { ApiRecord } from '../domain/records';
import { ratelimitOutput, type RatelimitOutput } from '../limiter/ratelimitConfig';
import type { IdentityView } from './keys/identityLink';

/** A key as clients see it: never the hash; the plaintext only when asked to decrypt it. */
export interface KeyView extends KeyDetails {
  id: string;
  start: string;
  workspaceId: string;
  apiId: string;
  createdAt: number;
  ratelimit?: RatelimitOutput;
  /** Usage credits left; absent for unlimited usage. */
  remaining?: number;
  refill?: RefillConfig & { lastRefillAt: number };
  enabled: boolean;
  /**
   * Its permissions and its roles, by name: only for a key that holds any. `permissions` are its
   * own (getKey, whoami, as Unkey v1's getKey answered them) or its own and its roles' (listKeys,
   * as Unkey's v1 and v2 listKeys answer them).
   */
  permissions?: string[];
  roles?: string[];
  /**
   * Its own permissions and its roles', sorted, whichever the view: what Unkey v2's key views
   * answer as `permissions`. Only for a key that holds any; not in a v1 answer (src/dialects/v1/views.ts).
   */
  effectivePermissions?: string[];
  /** The identity it belongs to, when linked to one that exists. */
  identity?: IdentityView;
  /**
   * True for a key whose plaintext is sealed by the vault, absent otherwise: a keyward addition
   * (Unkey's key has no such field) so that a client knows a `decrypt` read is worth asking for.
   */
  recoverable?: true;
  /** A recoverable key's plaintext, only for a read with `decrypt` (and audited). */
  plaintext?: string;
  /** Its latest verification (unix ms), to within the nodes' flush period; absent before one. */
  lastUsedAt?: number;
}

export function keyView(key: KeyRecord): KeyView {
  const view: KeyView = {
    id: key.id,
    start: key.start,
    workspaceId: key.workspaceId,
    apiId: key.apiId,
    createdAt: key.createdAt,
    enabled: key.enabled,
  };
  copyDetails(view, key, KEY_DETAIL_NAMES);
  if (key.ratelimit !== undefined) view.ratelimit = ratelimitOutput(key.ratelimit);
  // Absent rather than false, so the answers for keys that are not recoverable stay as they were.
  if (key.sealed !== undefined) view.recoverable = true;
  if (key.lastUsedAt !== undefined) view.lastUsedAt = key.lastUsedAt;
  return view;
}

export interface ApiView {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
}

export function apiView(api: ApiRecord): ApiView {
  return { id: api.id, workspaceId: api.workspaceId, name: api.name, createdAt: api.createdAt };
}
