import { namedBucket } from '../../domain/namedLimits';
import type { RatelimitConfig, RatelimitType } from '../../domain/ratelimit';
import { names } from '../../store/names';
import type { BucketPlace, BucketReading, BucketRedisRole } from '../../limiter/bucketProbe';
import { runOperation, type Caller } from '../operation';
import type { Services } from '../services';
import type { KeyView } from '../views';
import { getKey } from './getKey';

/** A key's bucket in one Redis that can hold it, read without spending a token. */
export interface BucketState extends BucketPlace, BucketReading {
  /** The key's current rate-limit type picks this Redis: verifications spend from this bucket. */
  inUse: boolean;
}

export interface InspectedCredits {
  /** What a verification would see now, a refill point that passed applied. */
  remaining: number;
  refill?: KeyView['refill'];
  /** The credits hash as stored, before any pending refill. */
  stored: { remaining: number; lastRefillAt: number } | null;
}

/** A named limit's bucket (the key's own, or its identity's shared one), read without spending. */
export interface NamedBucketState extends BucketReading {
  name: string;
  owner: 'key' | 'identity';
  type: RatelimitType;
  limit: number;
  duration: number;
  /** The Redis its mode places it in. */
  redis: BucketRedisRole;
}

export interface Inspection {
  key: KeyView;
  credits: InspectedCredits | null;
  buckets: BucketState[];
  /** The key's named limits, then its identity's, each in the Redis its mode places it. */
  namedBuckets: NamedBucketState[];
}

export interface InspectDeps extends Pick<Services, 'keys' | 'directory' | 'now' | 'metrics'> {
  /** Every Redis that can hold a bucket, in the order they are shown. */
  places: readonly BucketPlace[];
  /** Reads the key's bucket in one of those Redis without spending. */
  probe(
    redis: BucketRedisRole,
    bucketKey: string,
    ratelimit: RatelimitConfig | undefined,
  ): Promise<BucketReading>;
}

/**
 * An operator's look at a key: the key as keys.getKey shows it (with that operation's checks and
 * permission), its credits as stored and as they stand now, and its bucket in every Redis that
 * can hold one. Not an RPC: it reaches Redis a node does not own (another node's local Redis).
 */
export async function inspectKey(
  deps: InspectDeps,
  caller: Caller,
  keyId: string,
): Promise<Inspection> {
  // deps need hold only what getKey uses: a new `uses` of getKey fails to compile here.
  const input = { keyId };
  const key = await runOperation(getKey, deps, caller, input);
  const type = key.ratelimit?.type;
  // Every Redis is read even when the key uses one: a bucket left in another by a change of type
  // is worth seeing, and it expires on its own.
  const [stored, buckets] = await Promise.all([
    key.remaining !== undefined ? deps.keys.readCredits(key.id) : undefined,
    Promise.all(
      deps.places.map(async (place): Promise<BucketState> => ({
        redis: place.redis,
        holds: [...place.holds],
        inUse: type !== undefined && place.holds.includes(type),
        ...(await deps.probe(place.redis, names.bucket(key.id), key.ratelimit)),
      })),
    ),
  ]);
  const credits: InspectedCredits | null =
    key.remaining === undefined
      ? null
      : {
          remaining: key.remaining,
          ...(key.refill ? { refill: key.refill } : {}),
          stored: stored ?? null,
        };
  return { key, credits, buckets, namedBuckets: await namedBuckets(deps, key) };
}

async function namedBuckets(deps: InspectDeps, key: KeyView): Promise<NamedBucketState[]> {
  const identity = key.identity
    ? await deps.directory.identity(key.workspaceId, key.identity.id)
    : undefined;
  const owned = [
    ...(key.ratelimits ?? []).map((limit) => ({ limit, owner: 'key' as const, id: key.id })),
    ...(identity?.ratelimits ?? []).map((limit) => ({
      limit,
      owner: 'identity' as const,
      id: identity!.id,
    })),
  ];
  const local = deps.places.find((place) => place.holds.includes('fast'))!.redis;
  return Promise.all(
    owned.map(async ({ limit, owner, id }): Promise<NamedBucketState> => {
      const redis = limit.type === 'fast' ? local : 'primary';
      const reading = await deps.probe(
        redis,
        names.namedBucket(id, limit.name),
        namedBucket(limit),
      );
      const { name, type, duration } = limit;
      return { name, owner, type, limit: limit.limit, duration, redis, ...reading };
    }),
  );
}
