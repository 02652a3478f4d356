import type { NamedLimit } from './namedLimits';

/**
 * Who keys belong to (Unkey's identity): a user or an organisation of the customer's own system,
 * named there by `externalId`. Keys linked to one identity share its `meta` and its named limits.
 */
export interface IdentityRecord {
  id: string;
  workspaceId: string;
  /** The customer's own id for it; unique in its workspace. */
  externalId: string;
  /** Absent when it has none: answered as `{}`, as Unkey does. */
  meta?: Record<string, unknown>;
  /** Absent when it has none. */
  ratelimits?: NamedLimit[];
  /**
   * The externalIds it had before a rename, oldest first: its keys made before carry the name
   * they were made with (`ownerId`) and are listed under the current one through these.
   */
  formerExternalIds?: string[];
  createdAt: number;
  updatedAt?: number;
}

/** What an update replaces; an absent field is left as it is. */
export interface IdentityChanges {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimit[];
  /** Set by a rename only. */
  formerExternalIds?: string[];
}
