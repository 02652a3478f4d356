import type Redis from 'ioredis';
import {
  ConsistentLeases,
  leaseRecords,
  type LeaseLocalRedis,
  type LeasePrimaryRedis,
} from '../../src/limiter/leases';
import { decide, type BucketShape } from '../../src/limiter/tokenBucket';
import { execResults } from '../../src/redis/results';
import { names } from '../../src/store/names';

/** A script's arguments after its one key. */
type After<F> = F extends (key: string, ...rest: infer R) => unknown ? R : never;

/** A node of a region: what it does with a consistent bucket. */
export interface LeaseNode {
  /** A verification, and then the node's background top-up, if it started one. */
  take: ConsistentLeases['take'];
  /** A verification whose background top-up is left running (for races between nodes). */
  takeUnsettled: ConsistentLeases['take'];
  settled(): Promise<void>;
}

/**
 * Consistent buckets with leases on a virtual clock: a primary and any number of regions, each
 * region a Redis database of its own shared by its nodes, all driven by the scripts' test-only
 * clock. Every script call runs in a MULTI with a PERSIST of what it wrote: the scripts set
 * expiries in virtual milliseconds, which Redis would count in real ones.
 */
export interface LeaseRig {
  /** The virtual clock, unix ms. */
  now: number;
  /** Where the regions' verifications were decided, and what their leases did. */
  counts: { lease: number; primary: number; granted: number; returned: number; expired: number };
  /** Node `node` (default 1) of region `name`. */
  region(name: string, node?: number): LeaseNode;
  /** A verification by a node without leases: straight to the primary's bucket. */
  direct(bucketKey: string, shape: BucketShape, cost: number): ReturnType<typeof decide>;
  /** What the primary's bucket holds now (a cost-0 read). */
  primaryTokens(bucketKey: string, shape: BucketShape): Promise<number>;
  /** The tokens of a region's lease on a bucket that it could still spend now. */
  leaseTokens(region: string, bucketKey: string): Promise<number>;
  /**
   * What the primary counts as out on a region's lease of a bucket (0: none live): never less
   * than the lease's tokens on the region's Redis.
   */
  primaryLease(region: string, bucketKey: string): Promise<number>;
  /** A region's Redis lost: everything on it gone. */
  loseRegion(region: string): Promise<void>;
}

export function leaseRig(
  primary: Redis,
  regions: Record<string, Redis>,
  settings: { ttlMs: number; maxShare: number },
): LeaseRig {
  const frozenPrimary: LeasePrimaryRedis & {
    tokenBucketV1Buffer(key: string, ...args: (string | number)[]): Promise<number[]>;
  } = {
    async leaseGrantV1Buffer(key, ...args) {
      const [reply] = execResults(
        await primary
          .multi()
          .leaseGrantV1(key, ...(args as After<Redis['leaseGrantV1']>))
          .persist(key)
          .exec(),
      );
      return reply as number[];
    },
    async tokenBucketV1Buffer(key, ...args) {
      const [reply] = execResults(
        await primary
          .multi()
          .tokenBucketV1(key, ...args)
          .persist(key)
          .exec(),
      );
      return reply as number[];
    },
  };
  const frozenLocal = (redis: Redis): LeaseLocalRedis => ({
    async leaseSpendV1Buffer(key, ...args) {
      const [reply] = execResults(
        await redis
          .multi()
          .leaseSpendV1(key, ...(args as After<Redis['leaseSpendV1']>))
          .persist(key)
          .exec(),
      );
      return reply as number[];
    },
    async leaseInstallV1(key, ...args) {
      const [reply] = execResults(
        await redis
          .multi()
          .leaseInstallV1(key, ...(args as After<Redis['leaseInstallV1']>))
          .persist(key)
          .exec(),
      );
      return reply as number;
    },
  });
  const holders = new Map<string, LeaseNode>();
  const rig: LeaseRig = {
    now: 1_000_000,
    counts: { lease: 0, primary: 0, granted: 0, returned: 0, expired: 0 },
    region(name, node = 1) {
      let holder = holders.get(`${name}:${node}`);
      if (!holder) {
        const leases = new ConsistentLeases(
          frozenLocal(regions[name]!),
          frozenPrimary,
          { holder: name, ...settings },
          {
            served: (where) => (rig.counts[where] += 1),
            granted: (tokens) => (rig.counts.granted += tokens),
            returned: (tokens) => (rig.counts.returned += tokens),
            expired: (tokens) => (rig.counts.expired += tokens),
          },
          () => rig.now,
        );
        holder = {
          take: async (...args) => {
            const decision = await leases.take(...args);
            await leases.settled();
            return decision;
          },
          takeUnsettled: (...args) => leases.take(...args),
          settled: () => leases.settled(),
        };
        holders.set(`${name}:${node}`, holder);
      }
      return holder;
    },
    direct: (bucketKey, shape, cost) =>
      decide(
        frozenPrimary,
        { bucket: bucketKey, credits: bucketKey },
        shape,
        cost,
        undefined,
        rig.now,
      ),
    async primaryTokens(bucketKey, shape) {
      return (await rig.direct(bucketKey, shape, 0)).remaining;
    },
    async leaseTokens(region, bucketKey) {
      const lease = await regions[region]!.hmget(
        names.localLease(bucketKey),
        'tokens',
        'expiresAt',
      );
      if (lease[0] === null || Number(lease[1]) <= rig.now) return 0;
      return Number(lease[0]);
    },
    async primaryLease(region, bucketKey) {
      const held = leaseRecords(await primary.hgetall(bucketKey)).find(
        (lease) => lease.holder === region,
      );
      return held && held.expiresAt > rig.now ? held.granted : 0;
    },
    async loseRegion(region) {
      await regions[region]!.flushdb();
    },
  };
  return rig;
}
