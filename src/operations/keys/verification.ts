import { copyDetails, VERDICT_DETAIL_NAMES, type VerifiableKey } from '../../domain/key';
import { DECIDED_AT } from '../../limiter/tokenBucket';
import { rateLimitHeaders } from '../rateLimitHeaders';
import type { IdentityRecord } from '../../domain/identity';
import { DEFAULT_LIMIT_NAME, type NamedLimit } from '../../domain/namedLimits';
import type { Holdings } from './holdings';
import { identityView, type IdentityView } from './identityLink';

export type VerificationCode =
  | 'VALID'
  | 'NOT_FOUND'
  | 'FORBIDDEN'
  | 'DISABLED'
  | 'EXPIRED'
  | 'RATE_LIMITED'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'USAGE_EXCEEDED'
  | 'LIMITER_UNAVAILABLE';

/** verifyKey's answer: always a 200, whatever the verdict. */
/** Where a verdict notes its key's API for usage analytics; a symbol, so never serialised. */
export const KEY_API: unique symbol = Symbol('keyApi');

export interface Verification extends Partial<
  Pick<VerifiableKey, (typeof VERDICT_DETAIL_NAMES)[number]>
> {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  /** Usage credits left after this verification. */
  remaining?: number;
  /** false: the rate limit and credits could not be checked (their Redis was unreachable). */
  evaluated?: false;
  [DECIDED_AT]?: number;
  /** The API of the key verified: what usage analytics count it under (never answered). */
  [KEY_API]?: string;
  ratelimit?:
    | { limit: number; remaining: number; reset: number }
    /** The bucket could not be reached: nothing was counted. */
    | { limit: number; evaluated: false };
  /** Every limit this verification applied: only when it went beyond the seed `ratelimit`. */
  ratelimits?: LimitStanding[];
  enabled?: boolean;
  requestId: string;
  /** Every permission the key holds, its roles' included: only for a key that holds any. */
  permissions?: string[];
  /** Its roles: only for a key that holds any. */
  roles?: string[];
  /** The identity the key belongs to, with its limits the key does not have one of its own for. */
  identity?: IdentityView;
}

/** Where one applied limit stands after a verification. */
export type LimitStanding = {
  name: string;
  limit: number;
  /** The refill interval, ms: the whole limit comes back over it. */
  duration: number;
  autoApply: boolean;
  /** Whose limit it is, the key's id or its identity's (v2 derives the limit's id from it). */
  owner: string;
} & (
  | { remaining: number; reset: number; exceeded: boolean }
  /** Not checked: its Redis was not reached (another limit refused first) or not reachable. */
  | { evaluated: false }
);

/** The verdict on a found key: its identity and details, in the order the answer shows them. */
export function verdict(
  key: VerifiableKey,
  code: VerificationCode,
  requestId: string,
  holdings?: Holdings,
  identity?: IdentityRecord,
): Verification {
  const result: Verification = {
    valid: code === 'VALID',
    code,
    keyId: key.id,
    enabled: key.enabled,
    requestId,
  };
  copyDetails(result, key, VERDICT_DETAIL_NAMES);
  result[KEY_API] = key.apiId;
  if (holdings) {
    // A copy: the memoized list is shared by every verification of the key.
    result.permissions = holdings.effectiveSorted.slice();
    result.roles = holdings.roles.slice();
  }
  if (identity) result.identity = identityView(identity, identityLimitsShown(key, identity));
  return result;
}

/**
 * The identity's limits a verdict shows: those the key has no limit of the same name for (the
 * key's is the one that applies), as Unkey v2's verifyKey lists them. getKey shows them all.
 */
function identityLimitsShown(
  key: Pick<VerifiableKey, 'ratelimit' | 'ratelimits'>,
  identity: IdentityRecord,
): readonly NamedLimit[] | undefined {
  const limits = identity.ratelimits;
  if (!limits || (!key.ratelimit && !key.ratelimits)) return limits;
  const own = (name: string) =>
    name === DEFAULT_LIMIT_NAME
      ? key.ratelimit !== undefined
      : (key.ratelimits ?? []).some((limit) => limit.name === name);
  return limits.filter((limit) => !own(limit.name));
}

/** RateLimit-* headers of a verification that carried a rate limit. */
export function verificationHeaders(
  verification: Verification,
  now: number,
): Record<string, string> {
  const limit = headlineLimit(verification);
  if (!limit) return {};
  return rateLimitHeaders(
    limit,
    verification.code === 'RATE_LIMITED',
    verification[DECIDED_AT] ?? now,
  );
}

/**
 * The limit the RateLimit-* headers describe: the seed limit as before, else of the named ones
 * the one that refused, or the one closest to refusing.
 */
function headlineLimit(
  verification: Verification,
): { limit: number; remaining: number; reset: number } | undefined {
  const { ratelimit, ratelimits } = verification;
  if (ratelimit) return 'remaining' in ratelimit ? ratelimit : undefined;
  let headline: { limit: number; remaining: number; reset: number; exceeded: boolean } | undefined;
  for (const standing of ratelimits ?? []) {
    if (!('remaining' in standing)) continue;
    if (standing.exceeded) return standing;
    if (!headline || standing.remaining < headline.remaining) headline = standing;
  }
  return headline;
}
