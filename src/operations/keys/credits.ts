import type { KeyCredits, KeyRecord } from '../../domain/key';
import type { CreditState } from '../../store/creditPools';
import { creditsAt, latestRefillPoint } from '../../limiter/credits';
import type { CreditSpend } from '../../limiter/tokenBucket';
import type { Services } from '../services';
import { keyView, type KeyView } from '../views';
import { holdingsOf, holdsAny } from './holdings';
import { identityView } from './identityLink';

/**
 * What the credits are worth now: the record's latest "set remaining" if the hash has not
 * applied it yet, then any refill point that passed since.
 */
export async function currentCredits(
  deps: Pick<Services, 'keys' | 'now'>,
  key: KeyRecord,
): Promise<{ remaining: number; lastRefillAt: number } | undefined> {
  if (!key.credits) return undefined;
  return standingAt(deps.now(), key.credits, await deps.keys.readCredits(key.id));
}

/** A pool's worth now from its record and its hash as stored (a key's, or an identity's). */
export function standingAt(
  now: number,
  credits: KeyCredits,
  stored: CreditState | undefined,
): { remaining: number; lastRefillAt: number } {
  const { reset, refill } = credits;
  const applied =
    stored && stored.appliedReset === reset.nonce
      ? stored
      : { remaining: reset.value, lastRefillAt: reset.at };
  return creditsAt(now, applied, refill);
}

/** The credits a verification (or a zero-cost look) spends, with what the script must apply. */
export function creditSpend(
  now: number,
  key: Pick<KeyRecord, 'credits'>,
  cost: number,
): CreditSpend | undefined {
  if (!key.credits) return undefined;
  const { refill, reset } = key.credits;
  return {
    cost,
    reset,
    ...(refill
      ? { refill: { boundary: latestRefillPoint(now, refill), amount: refill.amount } }
      : {}),
  };
}

/**
 * A key as clients see it, with its credits as they stand now. `permissions` are its own (getKey),
 * or its own and its roles' (listKeys, as Unkey's v1 and v2 listKeys answer them);
 * `effectivePermissions` are always the latter. The identity comes with its named limits: the
 * record read for it holds them, so they cost no further read.
 */
export async function viewWithCredits(
  deps: Pick<Services, 'keys' | 'now' | 'directory'>,
  key: KeyRecord,
  permissions: 'own' | 'effective' = 'own',
): Promise<KeyView> {
  const view = keyView(key);
  if (holdsAny(key)) {
    const holdings = holdingsOf(key, await deps.directory.catalogue(key.workspaceId));
    view.permissions = permissions === 'own' ? holdings.permissions : [...holdings.effectiveSorted];
    view.roles = holdings.roles;
    view.effectivePermissions = [...holdings.effectiveSorted];
  }
  const identity = key.identityId
    ? await deps.directory.identity(key.workspaceId, key.identityId)
    : undefined;
  if (identity) view.identity = identityView(identity);
  const credits = await currentCredits(deps, key);
  if (credits) {
    view.remaining = credits.remaining;
    if (key.credits?.refill)
      view.refill = { ...key.credits.refill, lastRefillAt: credits.lastRefillAt };
  }
  return view;
}
