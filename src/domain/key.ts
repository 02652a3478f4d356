import type { CreditReset, RefillConfig } from './credits';
import type { NamedLimit } from './namedLimits';
import type { RatelimitConfig } from './ratelimit';

/**
 * The optional, plain fields of a key: the one definition that the stored hash, the view
 * (getKey, listKeys), the cache entry and the verdict (verifyKey) are derived from.
 */
export interface KeyDetails {
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  updatedAt?: number;
  expires?: number;
  /** A label of the caller's own (`production`, `test`…), answered by every verification. */
  environment?: string;
  /** Named rate limits beside the seed `ratelimit` (which is the one named `default`). */
  ratelimits?: NamedLimit[];
}

export type KeyDetailName = keyof KeyDetails;

/** The details clients set, and verifications answer with: all but the write time. */
export type ClientDetailName = Exclude<KeyDetailName, 'updatedAt'>;

interface KeyDetailRule {
  /** How the value is kept in the key's Redis hash (a flat string, for redis-cli). */
  stored: 'text' | 'number' | 'json';
  /** Set by clients (createKey, updateKey); the others are written by keyward itself. */
  input: boolean;
  /** Answered by verifyKey, and so kept in every node's cache. */
  verdict: boolean;
}

/**
 * Every optional field and where it goes. The order is the order of the fields in answers and in
 * the stored hash: a new optional field is one line here (and its input schema).
 */
export const KEY_DETAIL_RULES: Readonly<Record<KeyDetailName, KeyDetailRule>> = {
  name: { stored: 'text', input: true, verdict: true },
  ownerId: { stored: 'text', input: true, verdict: true },
  meta: { stored: 'json', input: true, verdict: true },
  updatedAt: { stored: 'number', input: false, verdict: false },
  expires: { stored: 'number', input: true, verdict: true },
  environment: { stored: 'text', input: true, verdict: true },
  ratelimits: { stored: 'json', input: true, verdict: false },
};

export const KEY_DETAIL_NAMES = Object.keys(KEY_DETAIL_RULES) as readonly KeyDetailName[];

/**
 * The details a verification answers as they are stored: the rules' `verdict: true` ones (a
 * verdict lists the named limits it applied, in its own shape).
 */
export type VerdictDetailName = Exclude<ClientDetailName, 'ratelimits'>;

/** The details a verification answers with, in answer order. */
export const VERDICT_DETAIL_NAMES = KEY_DETAIL_NAMES.filter(
  (name) => KEY_DETAIL_RULES[name].verdict,
) as readonly VerdictDetailName[];

/** Usage credits: their count lives in its own hash (names.credits). */
export interface KeyCredits {
  refill?: RefillConfig;
  /**
   * The latest "set remaining to N" (createKey, updateKey), kept in the record so that such a
   * write is one atomic write of the record, applied to the credits hash when next used.
   */
  reset: CreditReset;
}

/** A key as stored on the primary. Never the plaintext. */
export interface KeyRecord extends KeyDetails {
  id: string;
  workspaceId: string;
  apiId: string;
  hash: string;
  start: string;
  createdAt: number;
  enabled: boolean;
  ratelimit?: RatelimitConfig;
  credits?: KeyCredits;
  /**
   * The ids of the permissions and roles the key holds, each present only when not empty (kept
   * in sets beside the record). An id whose permission or role is gone holds nothing.
   */
  permissionIds?: readonly string[];
  roleIds?: readonly string[];
  /** The identity the key belongs to (its `ownerId` is that identity's externalId). */
  identityId?: string;
  /**
   * A recoverable key's plaintext, sealed by the vault (src/vault/vault.ts): ciphertext bound to
   * this workspace and key id, opened only by getKey and listKeys with `decrypt`.
   */
  sealed?: string;
  /**
   * When it was last verified (unix ms), as the nodes' last flush noted it (LastUseRecorder),
   * read from beside the record (`names.lastUsed`): absent until its first verification was
   * flushed.
   */
  lastUsedAt?: number;
  /** Bumped by every write; updates and deletes compare-and-set on it. */
  version: number;
  /** Position in the API's creation order. */
  seq: number;
}

/** What a verification needs of a key: the record without what only management reads. */
export type VerifiableKey = Pick<
  KeyRecord,
  | 'id'
  | 'workspaceId'
  | 'apiId'
  | 'enabled'
  | 'ratelimit'
  | 'credits'
  | 'permissionIds'
  | 'roleIds'
  | 'identityId'
  | ClientDetailName
>;

/** The mutable part of a key: what createKey sets and updateKey may change or clear. */
export type KeyFields = { [Name in ClientDetailName]?: KeyDetails[Name] | null } & {
  enabled?: boolean;
  identityId?: string | null;
  ratelimit?: RatelimitConfig | null;
  /** null: unlimited usage; refill null: credits that never refill; resetTo: set remaining. */
  credits?: { refill?: RefillConfig | null; resetTo?: number } | null;
  /** Set once, by the creation of a recoverable key; never by a client. */
  sealed?: string;
};

/** Copies the details `names` lists that `source` has, in that order (answers keep it). */
export function copyDetails<Name extends KeyDetailName>(
  target: Partial<Pick<KeyDetails, Name>>,
  source: Partial<Pick<KeyDetails, Name>>,
  names: readonly Name[],
): void {
  for (const name of names) {
    const value = source[name];
    if (value !== undefined) target[name] = value;
  }
}
