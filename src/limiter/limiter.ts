import type { RatelimitConfig } from '../domain/ratelimit';
import {
  decide,
  decideMany,
  type BucketDecision,
  type BucketRedis,
  type BucketStanding,
  type CreditSpend,
  type ManyDecision,
} from './tokenBucket';
import { names } from '../store/names';
import {
  ConsistentLeases,
  type LeaseEvents,
  type LeaseLocalRedis,
  type LeasePrimaryRedis,
  type LeaseSettings,
} from './leases';

/** Told about every script run: which Redis, how long, and whether it answered. */
export type LimiterObserver = (
  role: 'local' | 'primary',
  seconds: number,
  answered: boolean,
) => void;

/** One bucket a verification spends: its Redis key, its hash tag, its shape and mode, its cost. */
export interface LimitCharge {
  bucketKey: string;
  /** The `{…}` tag of bucketKey: on a Redis Cluster, charges of one tag share a slot. */
  tag: string;
  config: RatelimitConfig;
  cost: number;
}

/** Usage credits to spend with the limits: always on the primary. */
export interface CreditCharge {
  /** Whose credits: a key's id, or an identity's (its pool): the credits' hash tag. */
  owner: string;
  spend: CreditSpend;
}

/**
 * The credits a verification spends: the identity's pool, the key's own, or both (all or
 * nothing, the pool first: only the key's are never given back).
 */
export interface CreditCharges {
  pool?: CreditCharge;
  key?: CreditCharge;
}

export interface ChargeOutcome {
  allowed: boolean;
  /** Refused because the credits ran out (every bucket had room and was charged nothing). */
  usageExceeded: boolean;
  /**
   * Per charge, in order: where its bucket stands now. Undefined when the verification stopped
   * before reaching that bucket's Redis (a bucket on another Redis refused first).
   */
  standings: (BucketStanding | undefined)[];
  /** The key's credits after this call, when it has some and the call reached them. */
  creditsRemaining?: number;
  /** The identity pool's, likewise. */
  poolRemaining?: number;
  /** The clock reading of the Redis that decided last. */
  now: number;
}

/** Charges decided by one script call on one Redis. */
interface Group {
  redis: BucketRedis;
  /** Indexes into the charges. */
  members: number[];
  credits?: CreditCharge;
  /** Its credits are the identity's pool (refunded when a later call refuses). */
  pool?: boolean;
  /** The key the script names first: the credits, or any key of the group's tag. */
  anchor: string;
}

/**
 * Chooses where a bucket lives: `fast` buckets in the node-local Redis (cheap, per edge),
 * `consistent` buckets in the primary (one bucket for the whole deployment). Usage credits are
 * global, so they always live in the primary.
 */
export class Limiter {
  private readonly local: BucketRedis;
  private readonly primary: BucketRedis;
  /** A Redis Cluster primary: one script call may only name keys of one slot. */
  private readonly primaryIsCluster: boolean;
  /** KEYWARD_CONSISTENT_LEASES=on: a lone consistent bucket is spent through leases. */
  private readonly leases: ConsistentLeases | undefined;

  constructor(
    redis: {
      local: BucketRedis;
      primary: BucketRedis;
      primaryIsCluster?: boolean;
    },
    observe?: LimiterObserver,
    leases?: {
      local: LeaseLocalRedis;
      primary: LeasePrimaryRedis;
      settings: LeaseSettings;
      events?: LeaseEvents;
    },
  ) {
    this.local = observe ? observed(redis.local, 'local', observe) : redis.local;
    this.primary = observe ? observed(redis.primary, 'primary', observe) : redis.primary;
    this.primaryIsCluster = redis.primaryIsCluster ?? false;
    this.leases = leases
      ? new ConsistentLeases(
          observe ? observedLeaseLocal(leases.local, observe) : leases.local,
          observe ? observedLeasePrimary(leases.primary, observe) : leases.primary,
          leases.settings,
          leases.events,
        )
      : undefined;
  }

  private redisFor(config: RatelimitConfig): BucketRedis {
    return config.type === 'fast' ? this.local : this.primary;
  }

  /** A bucket alone (standalone rate limits, the management limit). */
  take(bucketId: string, config: RatelimitConfig, cost: number): Promise<BucketDecision> {
    return this.alone(names.bucket(bucketId), config, cost);
  }

  /**
   * One bucket with nothing else to decide: through the region's lease when it is consistent and
   * leases are on, else one script call on the Redis of its mode.
   */
  private alone(key: string, config: RatelimitConfig, cost: number): Promise<BucketDecision> {
    // A read (cost 0) asks the primary: the bucket itself, not what one region holds of it.
    if (this.leases && config.type === 'consistent' && cost > 0) {
      return this.leases.take(key, config, cost);
    }
    return decide(this.redisFor(config), { bucket: key, credits: key }, config, cost);
  }

  /**
   * A key's verification with its one limit (the seed `ratelimit`, if any) and its credits (if
   * any), spent together or not at all. The common case, and the hot path: a bucket alone is one
   * call with the fewest arguments.
   */
  check(
    keyId: string,
    ratelimit: RatelimitConfig | undefined,
    cost: number,
    credits: CreditSpend | undefined,
    /** The credits of the key's identity's pool, when it has one. */
    pool?: CreditCharge,
  ): Promise<BucketDecision> {
    // Not an async function: returning alone()'s promise from one would cost the hot path two
    // more turns of the microtask queue.
    if (!credits && !pool) return this.alone(names.bucket(keyId), ratelimit!, cost);
    return this.checkWithCredits(keyId, ratelimit, cost, credits, pool);
  }

  private async checkWithCredits(
    keyId: string,
    ratelimit: RatelimitConfig | undefined,
    cost: number,
    credits: CreditSpend | undefined,
    pool: CreditCharge | undefined,
  ): Promise<BucketDecision> {
    const charges: LimitCharge[] = ratelimit
      ? [{ bucketKey: names.bucket(keyId), tag: keyId, config: ratelimit, cost }]
      : [];
    const outcome = await this.charge(charges, {
      ...(pool ? { pool } : {}),
      ...(credits ? { key: { owner: keyId, spend: credits } } : {}),
    });
    const standing = outcome.standings[0];
    const decision: BucketDecision = {
      allowed: outcome.allowed,
      usageExceeded: outcome.usageExceeded,
      limit: ratelimit?.limit ?? 0,
      remaining: standing?.remaining ?? 0,
      reset: standing?.reset ?? outcome.now,
      now: outcome.now,
    };
    if (outcome.creditsRemaining !== undefined) {
      decision.creditsRemaining = outcome.creditsRemaining;
    }
    if (outcome.poolRemaining !== undefined) decision.poolRemaining = outcome.poolRemaining;
    return decision;
  }

  /**
   * Every bucket and the credits, all or nothing. One script call per Redis involved: the fast
   * buckets on the local Redis, the rest (and the key's credits) on the primary, per slot on a
   * cluster; an identity's pool is a call of its own. When more than one call is needed they run
   * one after another, the pool's before the key's credits and those last (they are never given
   * back), and a refusal or an unreachable Redis gives back what the earlier calls took: for that
   * moment those tokens and credits are held (docs/guarantees.md, "Several limits").
   */
  async charge(
    charges: readonly LimitCharge[],
    credits: CreditCharges = {},
  ): Promise<ChargeOutcome> {
    const groups = this.groups(charges, credits);
    const standings: (BucketStanding | undefined)[] = new Array(charges.length).fill(undefined);
    const done: Group[] = [];
    let last: ManyDecision | undefined;
    let poolRemaining: number | undefined;
    let keyRemaining: number | undefined;
    for (const group of groups) {
      let decision: ManyDecision;
      try {
        decision = await this.run(
          group.redis,
          pick(charges, group.members),
          group.anchor,
          group.credits?.spend,
        );
      } catch (error) {
        await this.refund(done, charges);
        throw error;
      }
      group.members.forEach((index, at) => (standings[index] = decision.buckets[at]));
      last = decision;
      if (group.pool) poolRemaining = decision.creditsRemaining;
      else if (group.credits) keyRemaining = decision.creditsRemaining;
      if (!decision.allowed) {
        await this.refund(done, charges);
        for (const earlier of done) {
          for (const index of earlier.members) {
            const standing = standings[index]!;
            const { config, cost } = charges[index]!;
            standing.remaining = Math.min(config.limit, standing.remaining + cost);
          }
          if (earlier.pool && poolRemaining !== undefined) {
            poolRemaining += earlier.credits!.spend.cost;
          }
        }
        break;
      }
      done.push(group);
    }
    const outcome: ChargeOutcome = {
      allowed: last?.allowed ?? true,
      usageExceeded: last?.usageExceeded ?? false,
      standings,
      now: last?.now ?? 0,
    };
    if (keyRemaining !== undefined) outcome.creditsRemaining = keyRemaining;
    if (poolRemaining !== undefined) outcome.poolRemaining = poolRemaining;
    return outcome;
  }

  /**
   * The calls a charge needs, in the order they run: local first, then the primary's buckets,
   * the pool's call, and the key's credits' call last.
   */
  private groups(charges: readonly LimitCharge[], credits: CreditCharges): Group[] {
    const local: Group = { redis: this.local, members: [], anchor: '' };
    const primary = new Map<string, Group>();
    const primaryGroup = (tag: string): Group => {
      const slot = this.primaryIsCluster ? tag : '';
      let group = primary.get(slot);
      if (!group) {
        group = { redis: this.primary, members: [], anchor: '' };
        primary.set(slot, group);
      }
      return group;
    };
    charges.forEach((charge, index) => {
      const group = charge.config.type === 'fast' ? local : primaryGroup(charge.tag);
      group.members.push(index);
      group.anchor ||= charge.bucketKey;
    });
    let creditGroup: Group | undefined;
    if (credits.key) {
      creditGroup = primaryGroup(credits.key.owner);
      creditGroup.credits = credits.key;
      creditGroup.anchor = names.credits(credits.key.owner);
    }
    const ordered = local.members.length > 0 ? [local] : [];
    for (const group of primary.values()) if (group !== creditGroup) ordered.push(group);
    if (credits.pool) {
      ordered.push({
        redis: this.primary,
        members: [],
        credits: credits.pool,
        pool: true,
        anchor: names.credits(credits.pool.owner),
      });
    }
    if (creditGroup) ordered.push(creditGroup);
    return ordered;
  }

  /** One script call: the single-bucket script for one bucket, else the several-bucket one. */
  private async run(
    redis: BucketRedis,
    members: readonly LimitCharge[],
    anchor: string,
    spend?: CreditSpend,
  ): Promise<ManyDecision> {
    if (members.length > 1) {
      const many = members.map((charge) => ({
        key: charge.bucketKey,
        shape: charge.config,
        cost: charge.cost,
      }));
      return decideMany(redis, anchor, many, spend);
    }
    const only = members[0];
    const decision = await decide(
      redis,
      { bucket: only?.bucketKey ?? anchor, credits: anchor },
      only?.config,
      only?.cost ?? 0,
      spend,
    );
    const many: ManyDecision = {
      allowed: decision.allowed,
      usageExceeded: decision.usageExceeded,
      buckets: only
        ? [
            {
              remaining: decision.remaining,
              reset: decision.reset,
              exceeded: !decision.allowed && !decision.usageExceeded,
            },
          ]
        : [],
      now: decision.now,
    };
    if (decision.creditsRemaining !== undefined) many.creditsRemaining = decision.creditsRemaining;
    return many;
  }

  /**
   * Gives back what earlier calls took, the pool's credits included; best effort, since a refund
   * that fails cannot be undone.
   */
  private async refund(groups: readonly Group[], charges: readonly LimitCharge[]): Promise<void> {
    await Promise.all(
      groups.map(async (group) => {
        const given = pick(charges, group.members)
          .filter((charge) => charge.cost > 0)
          .map((charge) => ({ ...charge, cost: -charge.cost }));
        const pool = group.pool && group.credits ? group.credits.spend : undefined;
        const poolBack = pool && pool.cost > 0 ? { ...pool, cost: -pool.cost } : undefined;
        if (given.length === 0 && !poolBack) return;
        const anchor = poolBack ? group.anchor : given[0]!.bucketKey;
        await this.run(group.redis, given, anchor, poolBack).catch(() => undefined);
      }),
    );
  }
}

function pick(charges: readonly LimitCharge[], indexes: readonly number[]): LimitCharge[] {
  return indexes.map((index) => charges[index]!);
}

/**
 * Times a script call and tells `observe`, answered or not. A `then` rather than an async
 * function with try/finally: one promise and one turn of the microtask queue less per call.
 */
function timer(role: 'local' | 'primary', observe: LimiterObserver) {
  return <T>(run: () => Promise<T>): Promise<T> => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    return run().then(
      (reply) => {
        observe(role, seconds(), true);
        return reply;
      },
      (error: unknown) => {
        observe(role, seconds(), false);
        throw error;
      },
    );
  };
}

function observed(
  redis: BucketRedis,
  role: 'local' | 'primary',
  observe: LimiterObserver,
): BucketRedis {
  const timed = timer(role, observe);
  return {
    tokenBucketV1Buffer: (bucketKey, ...args) =>
      timed(() => redis.tokenBucketV1Buffer(bucketKey, ...args)),
    multiBucketV1Buffer: (numberOfKeys, ...args) =>
      timed(() => redis.multiBucketV1Buffer(numberOfKeys, ...args)),
  };
}

function observedLeaseLocal(redis: LeaseLocalRedis, observe: LimiterObserver): LeaseLocalRedis {
  const timed = timer('local', observe);
  return {
    leaseSpendV1Buffer: (leaseKey, ...args) =>
      timed(() => redis.leaseSpendV1Buffer(leaseKey, ...args)),
    leaseInstallV1: (leaseKey, ...args) => timed(() => redis.leaseInstallV1(leaseKey, ...args)),
  };
}

function observedLeasePrimary(
  redis: LeasePrimaryRedis,
  observe: LimiterObserver,
): LeasePrimaryRedis {
  const timed = timer('primary', observe);
  return {
    leaseGrantV1Buffer: (bucketKey, ...args) =>
      timed(() => redis.leaseGrantV1Buffer(bucketKey, ...args)),
  };
}
