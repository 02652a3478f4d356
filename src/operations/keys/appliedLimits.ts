import type { VerifiableKey } from '../../domain/key';
import { DEFAULT_LIMIT_NAME, namedBucket, type NamedLimit } from '../../domain/namedLimits';
import type { RatelimitConfig } from '../../domain/ratelimit';
import { invalidField } from '../../errors';
import type { LimitCharge } from '../../limiter/limiter';
import { names } from '../../store/names';

/** A limit a verification names (Unkey v1's verifyKey `ratelimits`). */
export interface LimitRequest {
  name: string;
  cost?: number;
  /** With `duration`: this call's own limit under that name, whether configured or not. */
  limit?: number;
  duration?: number;
}

/** The identity's part in a verification: its id tags its buckets. */
export interface LimitOwnerIdentity {
  id: string;
  externalId: string;
  ratelimits?: readonly NamedLimit[];
}

/** A limit a verification spends: its name, whether it applies itself, and the bucket charge. */
export interface AppliedLimit extends LimitCharge {
  name: string;
  autoApply: boolean;
}

/** A configured limit, found by name: whose it is (its bucket), its shape, whether it applies itself. */
interface Configured {
  owner: string;
  bucketKey: string;
  config: RatelimitConfig;
  autoApply: boolean;
}

/**
 * A key's configured limits, worked out once per key and identity object: the node's cached key
 * and identity are replaced, never changed, when they are invalidated.
 */
const memo = new WeakMap<
  object,
  { identity: LimitOwnerIdentity | undefined; configured: ReadonlyMap<string, Configured> }
>();

function configuredLimits(
  key: Pick<VerifiableKey, 'id' | 'ratelimit' | 'ratelimits'>,
  identity: LimitOwnerIdentity | undefined,
): ReadonlyMap<string, Configured> {
  const known = memo.get(key);
  if (known && known.identity === identity) return known.configured;
  const configured = buildConfigured(key, identity);
  memo.set(key, { identity, configured });
  return configured;
}

function buildConfigured(
  key: Pick<VerifiableKey, 'id' | 'ratelimit' | 'ratelimits'>,
  identity: LimitOwnerIdentity | undefined,
): Map<string, Configured> {
  const configured = new Map<string, Configured>();
  const add = (owner: string, limit: NamedLimit) =>
    configured.set(limit.name, {
      owner,
      bucketKey: names.namedBucket(owner, limit.name),
      config: namedBucket(limit),
      autoApply: limit.autoApply,
    });
  // The key's own limits win over its identity's of the same name: they are added after.
  for (const limit of identity?.ratelimits ?? []) add(identity!.id, limit);
  if (key.ratelimit) {
    configured.set(DEFAULT_LIMIT_NAME, {
      owner: key.id,
      bucketKey: names.bucket(key.id),
      config: key.ratelimit,
      autoApply: true,
    });
  }
  for (const limit of key.ratelimits ?? []) add(key.id, limit);
  return configured;
}

/**
 * The limits a verification spends, in answer order: every limit that applies itself (cost 1;
 * the seed limit's cost is `ratelimit.cost`, as before), then those the request names, which may
 * set their cost and, with `limit` and `duration` together, a shape of their own. A name the key
 * and its identity do not have, without a shape, is a 400 (Unkey's MissingRatelimitError).
 * A name requested twice counts once, its last mention deciding.
 */
export function appliedLimits(
  key: Pick<VerifiableKey, 'id' | 'ratelimit' | 'ratelimits'>,
  identity: LimitOwnerIdentity | undefined,
  input: { ratelimit?: { cost?: number }; ratelimits?: readonly LimitRequest[] },
): AppliedLimit[] {
  const configured = configuredLimits(key, identity);
  const applied = new Map<string, AppliedLimit>();
  const apply = (name: string, found: Configured, config: RatelimitConfig, cost: number) =>
    applied.set(name, {
      name,
      autoApply: found.autoApply,
      bucketKey: found.bucketKey,
      tag: found.owner,
      config,
      cost,
    });
  for (const [name, found] of configured) {
    if (!found.autoApply) continue;
    const cost = name === DEFAULT_LIMIT_NAME ? (input.ratelimit?.cost ?? 1) : 1;
    apply(name, found, found.config, cost);
  }
  (input.ratelimits ?? []).forEach((request, index) => {
    const found = configured.get(request.name);
    const cost = request.cost ?? 1;
    if (request.limit !== undefined && request.duration !== undefined) {
      const config: RatelimitConfig = {
        type: found?.config.type ?? 'consistent',
        limit: request.limit,
        refillRate: request.limit,
        refillInterval: request.duration,
      };
      const owner = found ?? {
        owner: key.id,
        bucketKey: names.namedBucket(key.id, request.name),
        config,
        autoApply: false,
      };
      apply(request.name, owner, config, cost);
      return;
    }
    if (!found) {
      throw invalidField(
        ['ratelimits', index, 'name'],
        `ratelimit "${request.name}" was requested but does not exist ` +
          `for key ${key.id}${identity ? ` nor its identity ${identity.id}` : ' and it has no identity'}`,
      );
    }
    apply(request.name, found, found.config, cost);
  });
  return [...applied.values()];
}

/**
 * Whether a verification goes beyond the seed limit (a named limit of the key, of its identity,
 * or of the request): only then does it take the named path. Naming none takes the seed path,
 * which still lists the seed limit's standing when the request asked for the list.
 */
export function usesNamedLimits(
  key: Pick<VerifiableKey, 'ratelimits'>,
  identity: LimitOwnerIdentity | undefined,
  input: { ratelimits?: readonly LimitRequest[] },
): boolean {
  return (
    key.ratelimits !== undefined ||
    identity?.ratelimits !== undefined ||
    (input.ratelimits !== undefined && input.ratelimits.length > 0)
  );
}
