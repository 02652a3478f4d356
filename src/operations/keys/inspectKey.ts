import type { RatelimitConfig } from '../../domain/ratelimit';
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

export interface Inspection {
  key: KeyView;
  credits: InspectedCredits | null;
  buckets: BucketState[];
}

export interface InspectDeps extends Pick<Services, 'keys' | 'directory' | 'now'> {
  /** Every Redis that can hold a bucket, in the order they are shown. */
  places: readonly BucketPlace[];
  /** Reads the key's bucket in one of those Redis without spending. */
  probe(
    redis: BucketRedisRole,
    keyId: string,
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
        ...(await deps.probe(place.redis, key.id, key.ratelimit)),
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
  return { key, credits, buckets };
}
