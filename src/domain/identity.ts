import type { KeyCredits } from './key';
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
  /**
   * A pool of usage credits every key of the identity spends from (its count lives in
   * names.credits(id), as a key's does). Its reset is the value it was created with (nonce 1):
   * later writes set the count itself, in the step that writes the record.
   */
  credits?: KeyCredits;
  createdAt: number;
  updatedAt?: number;
}

/** The nonce of an identity pool's creation value: the only reset an identity's record holds. */
export const IDENTITY_CREDITS_NONCE = '1';

/** What an update replaces; an absent field is left as it is. */
export interface IdentityChanges {
  meta?: Record<string, unknown>;
  ratelimits?: NamedLimit[];
  /**
   * null: the pool is dropped. Otherwise the record's pool as it is to be, and, with `set`, the
   * count it is set to, refills counted from `from` (unix ms), in the same step.
   */
  credits?: { record: KeyCredits; set?: { remaining: number; from: number } } | null;
  /** Set by a rename only. */
  formerExternalIds?: string[];
}
