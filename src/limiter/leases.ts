import { resultDecoder } from '../redis/scriptTable';
import { names } from '../store/names';
import type { BucketDecision, BucketShape } from './tokenBucket';

/** The lease scripts a node-local Redis runs (lua/lease-spend-1.lua, lua/lease-install-1.lua). */
export interface LeaseLocalRedis {
  leaseSpendV1Buffer(leaseKey: string, ...args: (string | number)[]): Promise<number[]>;
  leaseInstallV1(leaseKey: string, ...args: (string | number)[]): Promise<number>;
}

/** The script the primary runs to grant and take back leases (lua/lease-grant-1.lua). */
export interface LeasePrimaryRedis {
  leaseGrantV1Buffer(bucketKey: string, ...args: (string | number)[]): Promise<number[]>;
}

/** `KEYWARD_CONSISTENT_LEASES=on` and its settings (docs/guarantees.md, "Leases"). */
export interface LeaseSettings {
  /** Who holds a lease: the node's region. A region holds at most one per bucket. */
  holder: string;
  /** How long a lease lives on the primary. */
  ttlMs: number;
  /** The most one lease may hold, as a share of the limit. */
  maxShare: number;
}

/** What the node counts (src/observability/metrics.ts). */
export interface LeaseEvents {
  /** A lease granted with `tokens`. */
  granted(tokens: number): void;
  /** A lease closed on the region's Redis and `tokens` unspent given back. */
  returned(tokens: number): void;
  /** A lease found expired on the region's Redis, `tokens` unspent and lost to the region. */
  expired(tokens: number): void;
  /** Where a verification was decided. */
  served(where: 'lease' | 'primary'): void;
}

const spendOutcome = resultDecoder('leaseSpend');
const grantOutcome = resultDecoder('leaseGrant');

/**
 * The bounds of a lease's life on the region's side, relative to the primary's: the region stops
 * spending a lease this long before the primary takes it back, whatever the grant's round trip
 * (which is subtracted too) and whatever the two clocks do meanwhile.
 */
function clockMargin(ttlMs: number): number {
  return Math.max(50, Math.ceil(ttlMs / 20));
}

/** A lease this close to its end is closed and renewed by the next verification. */
function renewWithin(ttlMs: number): number {
  return Math.ceil(ttlMs / 5);
}

/** Grants asked for per node without lease history: first visits, counted per horizon. */
interface Visits {
  since: number;
  count: number;
}

/** How many buckets' first visits a node remembers before it starts over. */
const MAX_VISITS = 10_000;

/**
 * A consistent bucket spent through leases (issue 27; docs/guarantees.md, "Leases"): a region
 * takes a slice of the primary's bucket in one atomic step and its nodes spend it on their
 * node-local Redis, so a warm verification never waits for the primary. A token is spent in
 * exactly one place, so the limit still holds; what a lease costs is tokens sitting unused in it.
 */
export class ConsistentLeases {
  private readonly visits = new Map<string, Visits>();
  /** Top-ups under way, by bucket. */
  private readonly toppingUp = new Map<string, Promise<void>>();
  private readonly margin: number;
  private readonly renewWithinMs: number;
  /** A lease should last about this long at the rate its region spends. */
  private readonly horizonMs: number;

  constructor(
    private readonly local: LeaseLocalRedis,
    private readonly primary: LeasePrimaryRedis,
    private readonly settings: LeaseSettings,
    private readonly events?: LeaseEvents,
    /** TEST ONLY: a virtual clock for every script and every elapsed time. */
    private readonly virtualClock?: () => number,
  ) {
    this.margin = clockMargin(settings.ttlMs);
    this.renewWithinMs = renewWithin(settings.ttlMs);
    this.horizonMs = Math.max(1, Math.floor(settings.ttlMs / 2));
  }

  /**
   * Takes `cost` tokens of a consistent bucket: from the region's lease when it can pay, else
   * from the primary, returning what a closed lease left and asking for a new one in that same
   * call. The region's Redis unreachable: the primary decides, as without leases.
   */
  async take(bucketKey: string, shape: BucketShape, cost: number): Promise<BucketDecision> {
    const leaseKey = names.localLease(bucketKey);
    let spent: number[];
    try {
      spent = await this.local.leaseSpendV1Buffer(
        leaseKey,
        cost,
        this.scriptNow(),
        this.renewWithinMs,
      );
    } catch {
      return this.fromPrimary(bucketKey, shape, cost, 0);
    }
    const { tokens, reset, now, leaseId, granted, grantedAt, version, expiresAt } = replyFields(
      spent,
      SPEND_REPLY,
    );
    const outcome = spendOutcome(spent[0]!);
    const want = Math.ceil(((granted - tokens) / Math.max(1, now - grantedAt)) * this.horizonMs);
    if (outcome === 'spent') {
      this.events?.served('lease');
      // Half spent, or half its life gone: topped up in the background, so that a busy region
      // never waits for the primary while it keeps spending.
      if (tokens * 2 <= granted || (expiresAt - now) * 2 < this.settings.ttlMs) {
        this.topUpSoon(bucketKey, shape, { leaseId, version, unused: tokens, want });
      }
      return {
        allowed: true,
        usageExceeded: false,
        limit: shape.limit,
        remaining: tokens,
        reset: Math.max(reset, now),
        now,
      };
    }
    if (outcome === 'closed') {
      return this.fromPrimary(bucketKey, shape, cost, want, { leaseId, unused: tokens });
    }
    if (outcome === 'expired') this.events?.expired(tokens);
    return this.fromPrimary(bucketKey, shape, cost, this.wantWithoutHistory(bucketKey, cost));
  }

  /**
   * The primary decides: the verification's tokens, the return of the lease the region closed,
   * and a new lease of about `want` tokens.
   */
  private async fromPrimary(
    bucketKey: string,
    shape: BucketShape,
    cost: number,
    want: number,
    closed?: { leaseId: number; unused: number },
  ): Promise<BucketDecision> {
    const leaseId = newLeaseId();
    const maxLease = Math.floor(shape.limit * this.settings.maxShare);
    const sentAt = this.elapsedClock();
    const reply = await this.grant(bucketKey, shape, {
      cost,
      leaseId,
      want: maxLease >= 1 ? Math.min(want, maxLease) : 0,
      maxLease,
      ...(closed ? { held: { leaseId: closed.leaseId, unused: closed.unused } } : {}),
    });
    const { remaining, reset, now, granted, version } = replyFields(reply, GRANT_REPLY);
    this.events?.served('primary');
    if (closed) this.events?.returned(closed.unused);
    if (granted > 0) {
      this.events?.granted(granted);
      const lifetime = Math.floor(
        this.settings.ttlMs - (this.elapsedClock() - sentAt) - this.margin,
      );
      await this.install(bucketKey, shape, { leaseId, version }, granted, lifetime, reset - now);
    }
    return {
      allowed: grantOutcome(reply[0]!) === 'admitted',
      usageExceeded: false,
      limit: shape.limit,
      remaining,
      reset,
      now,
    };
  }

  /**
   * Puts a granted lease on the region's Redis. One that cannot be spent there (too little of its
   * life left, another in place, that Redis unreachable) goes straight back.
   */
  private async install(
    bucketKey: string,
    shape: BucketShape,
    lease: { leaseId: number; version: number },
    granted: number,
    lifetimeMs: number,
    resetInMs: number,
  ): Promise<void> {
    const { leaseId } = lease;
    let installed = false;
    if (lifetimeMs > this.renewWithinMs) {
      installed = await this.local
        .leaseInstallV1(
          names.localLease(bucketKey),
          leaseId,
          granted,
          lifetimeMs,
          Math.max(0, resetInMs),
          this.keepMs(),
          this.scriptNow(),
          '',
          lease.version,
        )
        .then((answer) => answer === 1)
        .catch(() => false);
    }
    if (installed) return;
    // Nothing was spent from it: all of it goes back. Lost if this fails: under-admission only.
    await this.grant(bucketKey, shape, { held: { leaseId, unused: granted } })
      .then(() => this.events?.returned(granted))
      .catch(() => undefined);
  }

  /**
   * Tops the region's lease up in the background: what was spent of it is released on the
   * primary, up to `want` more added, and its life starts again. One at a time per bucket and
   * node; a top-up of a lease another node already topped up (or closed) is refused by the
   * primary and changes nothing.
   */
  private topUpSoon(
    bucketKey: string,
    shape: BucketShape,
    lease: { leaseId: number; version: number; unused: number; want: number },
  ): void {
    if (this.toppingUp.has(bucketKey)) return;
    const work = this.topUp(bucketKey, shape, lease)
      .catch(() => undefined)
      .finally(() => this.toppingUp.delete(bucketKey));
    this.toppingUp.set(bucketKey, work);
  }

  private async topUp(
    bucketKey: string,
    shape: BucketShape,
    lease: { leaseId: number; version: number; unused: number; want: number },
  ): Promise<void> {
    const maxLease = Math.floor(shape.limit * this.settings.maxShare);
    const sentAt = this.elapsedClock();
    const reply = await this.grant(bucketKey, shape, {
      want: Math.max(0, Math.min(lease.want, maxLease) - lease.unused),
      maxLease,
      held: { leaseId: lease.leaseId, unused: lease.unused },
      topUpAt: lease.version,
    });
    if (grantOutcome(reply[0]!) === 'top_up_refused') return;
    const { reset, now, granted: extra } = replyFields(reply, GRANT_REPLY);
    if (extra > 0) this.events?.granted(extra);
    const lifetime = Math.floor(this.settings.ttlMs - (this.elapsedClock() - sentAt) - this.margin);
    // Not installed (the lease closed meanwhile, or its life is too short): the extra tokens
    // stay counted on the primary until the lease ends there. Under-admission, never more.
    await this.local.leaseInstallV1(
      names.localLease(bucketKey),
      lease.leaseId,
      extra,
      Math.max(1, lifetime),
      Math.max(0, reset - now),
      this.keepMs(),
      this.scriptNow(),
      lease.version,
      '',
    );
  }

  /**
   * One call of lua/lease-grant-1.lua: the verification's `cost`, a new lease of about `want`,
   * and the region's lease `held` given back (closed) or topped up (`topUpAt`: its version).
   */
  private grant(
    bucketKey: string,
    shape: BucketShape,
    call: {
      cost?: number;
      leaseId?: number;
      want?: number;
      maxLease?: number;
      held?: { leaseId: number; unused: number };
      topUpAt?: number;
    },
  ): Promise<number[]> {
    return this.primary.leaseGrantV1Buffer(
      bucketKey,
      shape.limit,
      shape.refillRate,
      shape.refillInterval,
      call.cost ?? 0,
      this.scriptNow(),
      this.settings.holder,
      call.leaseId ?? newLeaseId(),
      call.want ?? 0,
      call.maxLease ?? 0,
      this.settings.ttlMs,
      call.held?.leaseId ?? '',
      call.held?.unused ?? 0,
      call.topUpAt === undefined ? '0' : '1',
      call.topUpAt ?? '',
    );
  }

  /** Background top-ups still running: tests on the virtual clock wait for them. */
  async settled(): Promise<void> {
    await Promise.all([...this.toppingUp.values()]);
  }

  /** How long a lease hash outlives its life: a virtual clock runs apart from Redis's. */
  private keepMs(): number {
    return this.virtualClock ? 3_600_000 : this.settings.ttlMs;
  }

  /**
   * With no closed lease to measure the region's rate by, the node's own visits to the primary
   * for this bucket within one horizon do: a bucket seen once asks for nothing (a key verified
   * now and then never strands tokens in a lease), a busy one for what it took at that rate.
   */
  private wantWithoutHistory(bucketKey: string, cost: number): number {
    const now = this.elapsedClock();
    let visits = this.visits.get(bucketKey);
    if (!visits || now - visits.since > this.horizonMs) {
      if (this.visits.size >= MAX_VISITS) this.visits.clear();
      visits = { since: now, count: 0 };
      this.visits.set(bucketKey, visits);
    }
    visits.count += 1;
    if (visits.count < 2) return 0;
    const rate = ((visits.count - 1) * cost) / Math.max(1, now - visits.since);
    return Math.ceil(rate * this.horizonMs);
  }

  private scriptNow(): number | '' {
    return this.virtualClock ? this.virtualClock() : '';
  }

  /** Milliseconds for elapsed times: monotonic, or the virtual clock. */
  private elapsedClock(): number {
    return this.virtualClock ? this.virtualClock() : performance.now();
  }
}

/** A region's lease as the primary records it in the bucket hash (lua/includes/bucket.lua). */
export interface LeaseRecord {
  holder: string;
  leaseId: string;
  granted: number;
  expiresAt: number;
  version: number;
}

/**
 * The bucket hash's lease fields, `lease:<holder>` = "<leaseId> <granted> <expiresAt> <version>":
 * what the primary counts out, live or not (compare `expiresAt` with its clock).
 */
export function leaseRecords(hash: Readonly<Record<string, string>>): LeaseRecord[] {
  return Object.entries(hash)
    .filter(([field]) => field.startsWith('lease:'))
    .map(([field, value]) => {
      const [leaseId = '', granted, expiresAt, version] = value.split(' ');
      return {
        holder: field.slice('lease:'.length),
        leaseId,
        granted: Number(granted),
        expiresAt: Number(expiresAt),
        version: Number(version),
      };
    });
}

/** The fields of lua/lease-spend-1.lua's and lua/lease-grant-1.lua's replies, in order. */
const SPEND_REPLY = [
  'status',
  'tokens',
  'reset',
  'now',
  'leaseId',
  'granted',
  'grantedAt',
  'version',
  'expiresAt',
] as const;
const GRANT_REPLY = [
  'status',
  'remaining',
  'reset',
  'now',
  'granted',
  'expiresAt',
  'version',
] as const;

/** A script's integer reply by its fields' names (a missing one reads as 0). */
function replyFields<const F extends readonly string[]>(
  reply: readonly number[],
  fields: F,
): Record<F[number], number> {
  const named = {} as Record<F[number], number>;
  fields.forEach((field: F[number], i) => (named[field] = reply[i] ?? 0));
  return named;
}

/** A lease's id: the holder's previous lease is told apart from its next by it. */
function newLeaseId(): number {
  return Math.floor(Math.random() * 2 ** 48);
}
