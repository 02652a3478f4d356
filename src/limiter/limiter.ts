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

/** A key's usage credits to spend with its limits: always on the primary. */
export interface CreditCharge {
  /** The key id: the credits' hash tag. */
  keyId: string;
  spend: CreditSpend;
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
  creditsRemaining?: number;
  /** The clock reading of the Redis that decided last. */
  now: number;
}

/** Charges decided by one script call on one Redis. */
interface Group {
  redis: BucketRedis;
  /** Indexes into the charges. */
  members: number[];
  credits?: CreditCharge;
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

  constructor(
    redis: { local: BucketRedis; primary: BucketRedis; primaryIsCluster?: boolean },
    observe?: LimiterObserver,
  ) {
    this.local = observe ? observed(redis.local, 'local', observe) : redis.local;
    this.primary = observe ? observed(redis.primary, 'primary', observe) : redis.primary;
    this.primaryIsCluster = redis.primaryIsCluster ?? false;
  }

  private redisFor(config: RatelimitConfig): BucketRedis {
    return config.type === 'fast' ? this.local : this.primary;
  }

  /** A bucket alone (standalone rate limits, the management limit). */
  take(bucketId: string, config: RatelimitConfig, cost: number): Promise<BucketDecision> {
    const key = names.bucket(bucketId);
    return decide(this.redisFor(config), { bucket: key, credits: key }, config, cost);
  }

  /**
   * A key's verification with its one limit (the seed `ratelimit`, if any) and its credits (if
   * any), spent together or not at all. The common case, and the hot path: a bucket alone is one
   * call with the fewest arguments.
   */
  async check(
    keyId: string,
    ratelimit: RatelimitConfig | undefined,
    cost: number,
    credits: CreditSpend | undefined,
  ): Promise<BucketDecision> {
    if (!credits) {
      const key = names.bucket(keyId);
      return decide(this.redisFor(ratelimit!), { bucket: key, credits: key }, ratelimit, cost);
    }
    const charges: LimitCharge[] = ratelimit
      ? [{ bucketKey: names.bucket(keyId), tag: keyId, config: ratelimit, cost }]
      : [];
    const outcome = await this.charge(charges, { keyId, spend: credits });
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
    return decision;
  }

  /**
   * Every bucket and the credits, all or nothing. One script call per Redis involved: the fast
   * buckets on the local Redis, the rest (and the credits) on the primary, per slot on a cluster.
   * When more than one call is needed they run one after another, the credits' call last (they are
   * never given back), and a refusal or an unreachable Redis gives back what the earlier calls
   * took: for that moment those tokens are held (docs/guarantees.md, "Several limits").
   */
  async charge(charges: readonly LimitCharge[], credits?: CreditCharge): Promise<ChargeOutcome> {
    const groups = this.groups(charges, credits);
    const standings: (BucketStanding | undefined)[] = new Array(charges.length).fill(undefined);
    const done: Group[] = [];
    let last: ManyDecision | undefined;
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
      if (!decision.allowed) {
        await this.refund(done, charges);
        for (const earlier of done) {
          for (const index of earlier.members) {
            const standing = standings[index]!;
            const { config, cost } = charges[index]!;
            standing.remaining = Math.min(config.limit, standing.remaining + cost);
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
    if (last?.creditsRemaining !== undefined) outcome.creditsRemaining = last.creditsRemaining;
    return outcome;
  }

  /** The calls a charge needs, in the order they run: local first, the credits' call last. */
  private groups(charges: readonly LimitCharge[], credits: CreditCharge | undefined): Group[] {
    const local: Group = { redis: this.local, members: [], anchor: '' };
    const primary = new Map<string, Group>();
    const creditsTag = credits ? credits.keyId : undefined;
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
    if (credits) {
      creditGroup = primaryGroup(creditsTag!);
      creditGroup.credits = credits;
      creditGroup.anchor = names.credits(credits.keyId);
    }
    const ordered = local.members.length > 0 ? [local] : [];
    for (const group of primary.values()) if (group !== creditGroup) ordered.push(group);
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

  /** Gives back what earlier calls took; best effort, since a refund that fails cannot be undone. */
  private async refund(groups: readonly Group[], charges: readonly LimitCharge[]): Promise<void> {
    await Promise.all(
      groups.map(async (group) => {
        const given = pick(charges, group.members)
          .filter((charge) => charge.cost > 0)
          .map((charge) => ({ ...charge, cost: -charge.cost }));
        if (given.length === 0) return;
        await this.run(group.redis, given, given[0]!.bucketKey).catch(() => undefined);
      }),
    );
  }
}

function pick(charges: readonly LimitCharge[], indexes: readonly number[]): LimitCharge[] {
  return indexes.map((index) => charges[index]!);
}

function observed(
  redis: BucketRedis,
  role: 'local' | 'primary',
  observe: LimiterObserver,
): BucketRedis {
  const timed = async (run: () => Promise<number[]>): Promise<number[]> => {
    const started = process.hrtime.bigint();
    let answered = false;
    try {
      const reply = await run();
      answered = true;
      return reply;
    } finally {
      observe(role, Number(process.hrtime.bigint() - started) / 1e9, answered);
    }
  };
  return {
    tokenBucketV1Buffer: (bucketKey, ...args) =>
      timed(() => redis.tokenBucketV1Buffer(bucketKey, ...args)),
    multiBucketV1Buffer: (numberOfKeys, ...args) =>
      timed(() => redis.multiBucketV1Buffer(numberOfKeys, ...args)),
  };
}
