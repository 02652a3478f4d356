import { createHash } from 'node:crypto';
import type { RefillConfig } from '../../domain/credits';
import { encodeBase58 } from '../../keys/base58';
import type { NamedLimit } from '../../domain/namedLimits';
import type { IdentityView } from '../../operations/keys/identityLink';
import type { KeyView } from '../../operations/views';
import { invalidField } from '../../errors';

/**
 * The pieces v2 answers share, from keyward's views. Field names and nesting are v2's (`keyId`,
 * `credits: {remaining, refill}`); what keyward does not have is left out, never made up.
 */

/**
 * A named limit's v2 id (`rl_…`). keyward names limits only by owner and name, so the id is
 * derived from both: stable, and the same on every node.
 */
export function limitId(ownerId: string, name: string): string {
  const digest = createHash('sha256').update(`${ownerId}\u0000${name}`).digest();
  return `rl_${encodeBase58(digest.subarray(0, 16))}`;
}

export interface V2Limit {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

export function v2Limits(ownerId: string, limits: readonly NamedLimit[] = []): V2Limit[] {
  return limits.map(({ name, limit, duration, autoApply }) => ({
    id: limitId(ownerId, name),
    name,
    limit,
    duration,
    autoApply,
  }));
}

export interface V2Identity {
  id: string;
  externalId: string;
  meta: Record<string, unknown>;
  ratelimits?: V2Limit[];
  /** Its credit pool: as a key's in getIdentity, its count alone after a verification. */
  credits?:
    | { remaining: number; refill?: { interval: string; amount: number; refillDay?: number } }
    | number;
}

/**
 * A key's identity as v2's key views show it (getKey, whoami, listKeys, verifyKey): its limits
 * in v2's shape, left out when it has none, as Unkey leaves them out.
 */
export function v2Identity(identity: IdentityView): V2Identity {
  const { id, externalId, meta, ratelimits, remaining } = identity;
  const v2: V2Identity = ratelimits
    ? { id, externalId, meta, ratelimits: v2Limits(id, ratelimits) }
    : { id, externalId, meta };
  // What its pool holds after the verification that spent from it (v2 calls a count `credits`).
  if (remaining !== undefined) v2.credits = remaining;
  return v2;
}

/** A key as v2's KeyResponseData shows it. */
export function v2Key(view: KeyView): Record<string, unknown> {
  const key: Record<string, unknown> = {
    keyId: view.id,
    start: view.start,
    enabled: view.enabled,
    createdAt: view.createdAt,
  };
  if (view.name !== undefined) key.name = view.name;
  if (view.meta !== undefined) key.meta = view.meta;
  if (view.updatedAt !== undefined) key.updatedAt = view.updatedAt;
  if (view.expires !== undefined) key.expires = view.expires;
  // v2 answers a key's own permissions and its roles', as Unkey's getKey merges them.
  if (view.effectivePermissions !== undefined) key.permissions = view.effectivePermissions;
  if (view.roles !== undefined) key.roles = view.roles;
  if (view.remaining !== undefined) {
    key.credits = {
      remaining: view.remaining,
      ...(view.refill ? { refill: refillOf(view.refill) } : {}),
    };
  }
  if (view.identity) key.identity = v2Identity(view.identity);
  if (view.plaintext !== undefined) key.plaintext = view.plaintext;
  if (view.lastUsedAt !== undefined) key.lastUsedAt = view.lastUsedAt;
  const limits = [
    ...(view.ratelimit
      ? [
          {
            name: 'default',
            type: view.ratelimit.type,
            limit: view.ratelimit.limit,
            duration: view.ratelimit.refillInterval,
            autoApply: true,
          },
        ]
      : []),
    ...(view.ratelimits ?? []),
  ];
  if (limits.length > 0) key.ratelimits = v2Limits(view.id, limits);
  return key;
}

/** v2's KeyCreditsRefill (keyward's `lastRefillAt` is not in it). */
export function refillOf(refill: RefillConfig) {
  return {
    interval: refill.interval,
    amount: refill.amount,
    ...(refill.refillDay !== undefined ? { refillDay: refill.refillDay } : {}),
  };
}

/** v2 names what keyward does not offer: refused with a 400 rather than ignored. */
export function refuse(field: string, why: string): never {
  throw invalidField(field.split('.'), why);
}
