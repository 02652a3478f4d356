import type { CreditReset } from '../domain/credits';
import type { RatelimitConfig } from '../domain/ratelimit';
import { resultDecoder } from '../redis/scriptTable';

/**
 * Where an answer carries the clock reading of the Redis that decided it: header arithmetic
 * (seconds until `reset`) must use that clock, not the node's estimate of it. A symbol, so the
 * JSON answer never shows it.
 */
export const DECIDED_AT: unique symbol = Symbol('decidedAt');

/** The one command the limiter needs from a Redis: the token-bucket script (lua/token-bucket-2.lua). */
/**
 * Where a bucket script runs. The Buffer variant of the ioredis command: the script answers
 * integers only, and the default variant would still walk the reply converting buffers to strings
 * (a few per cent of a node's CPU in a profile of fast verifications).
 */
export interface BucketRedis {
  tokenBucketV1Buffer(bucketKey: string, ...args: (string | number)[]): Promise<number[]>;
  /** lua/multi-bucket-n.lua: the number of keys first. */
  multiBucketV1Buffer(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
}

export type BucketShape = Pick<RatelimitConfig, 'limit' | 'refillRate' | 'refillInterval'>;

/** Usage credits to spend in the same atomic step as the tokens. */
export interface CreditSpend {
  cost: number;
  /** The key record's latest "set remaining": applied by the script the first time it sees it. */
  reset: CreditReset;
  /** The latest refill point (unix ms) and what `remaining` resets to there; absent: no refill. */
  refill?: { boundary: number; amount: number };
}

export interface BucketDecision {
  allowed: boolean;
  /** Refused because the credits ran out (the bucket, if any, had room and was not charged). */
  usageExceeded: boolean;
  limit: number;
  /** Tokens left after this call. */
  remaining: number;
  /** Unix ms at which the bucket next gains a token. */
  reset: number;
  /** The clock reading of the Redis that holds the bucket. */
  now: number;
  /** Credits left after this call, when credits were checked. */
  creditsRemaining?: number;
  /** The identity pool's credits after this call (Limiter.check with a pool). */
  poolRemaining?: number;
}

const tokenBucketOutcome = resultDecoder('tokenBucket');
const multiBucketOutcome = resultDecoder('multiBucket');

/**
 * Runs the script on one Redis: tokens from `bucket` (if any) and credits (if any), both or
 * neither. `creditsKey` must share the bucket key's hash tag. `nowOverride` is for tests only.
 */
export async function decide(
  redis: Pick<BucketRedis, 'tokenBucketV1Buffer'>,
  keys: { bucket: string; credits: string },
  bucket: BucketShape | undefined,
  cost: number,
  credits?: CreditSpend,
  nowOverride?: number,
): Promise<BucketDecision> {
  // Arguments the script would not read are left off: the bucket-only call of a verification
  // sends six instead of twelve (the script reads a missing argument as nil).
  const args: (string | number)[] = [
    keys.credits,
    bucket?.limit ?? '',
    bucket?.refillRate ?? '',
    bucket?.refillInterval ?? '',
    cost,
  ];
  if (nowOverride !== undefined || credits) args.push(nowOverride ?? '');
  if (credits) {
    args.push(
      '1',
      credits.cost,
      credits.refill?.boundary ?? '',
      credits.refill?.amount ?? '',
      credits.reset.nonce,
      credits.reset.value,
      credits.reset.at,
    );
  }
  const [status, remaining, reset, now, creditsRemaining] = await redis.tokenBucketV1Buffer(
    keys.bucket,
    ...args,
  );
  const outcome = tokenBucketOutcome(status as number);
  const decision: BucketDecision = {
    allowed: outcome === 'admitted',
    usageExceeded: outcome === 'out_of_credits',
    limit: bucket?.limit ?? 0,
    remaining: remaining as number,
    reset: reset as number,
    now: now as number,
  };
  // -1: the bucket refused first and the credits were not looked at.
  if (credits && (creditsRemaining as number) >= 0)
    decision.creditsRemaining = creditsRemaining as number;
  return decision;
}

/** Takes `cost` tokens from a bucket alone. */
export function takeTokens(
  redis: Pick<BucketRedis, 'tokenBucketV1Buffer'>,
  bucketKey: string,
  config: BucketShape,
  cost: number,
  nowOverride?: number,
): Promise<BucketDecision> {
  // The credits key is never read here; naming the bucket again keeps the script in one slot.
  return decide(
    redis,
    { bucket: bucketKey, credits: bucketKey },
    config,
    cost,
    undefined,
    nowOverride,
  );
}

/** One bucket of a call that decides several: where it lives, its shape, what to take. */
export interface BucketCharge {
  key: string;
  shape: BucketShape;
  /** Tokens to take; 0 reads; negative gives back (a refund). */
  cost: number;
}

/** What one bucket of a several-bucket call stands at afterwards. */
export interface BucketStanding {
  remaining: number;
  reset: number;
  /** This bucket alone could not pay its cost. */
  exceeded: boolean;
}

export interface ManyDecision {
  allowed: boolean;
  usageExceeded: boolean;
  /** In the order of the charges. */
  buckets: BucketStanding[];
  now: number;
  creditsRemaining?: number;
  /** The identity pool's credits after this call (Limiter.check with a pool). */
  poolRemaining?: number;
}

/**
 * Runs lua/multi-bucket-n.lua on one Redis: every bucket pays its cost and the credits (if any)
 * theirs, or nothing is written. All keys must share one hash tag on a cluster; `creditsKey` is
 * read only with `credits`.
 */
export async function decideMany(
  redis: Pick<BucketRedis, 'multiBucketV1Buffer'>,
  creditsKey: string,
  charges: readonly BucketCharge[],
  credits?: CreditSpend,
  nowOverride?: number,
): Promise<ManyDecision> {
  const keys: string[] = [creditsKey];
  const args: (string | number)[] = [nowOverride ?? '', credits ? '1' : '0', credits?.cost ?? 0];
  if (credits) {
    args.push(
      credits.refill?.boundary ?? '',
      credits.refill?.amount ?? '',
      credits.reset.nonce,
      credits.reset.value,
      credits.reset.at,
    );
  } else {
    args.push('', '', '', '', '');
  }
  args.push(charges.length);
  for (const charge of charges) {
    keys.push(charge.key);
    const { limit, refillRate, refillInterval } = charge.shape;
    args.push(limit, refillRate, refillInterval, charge.cost);
  }
  const reply = await redis.multiBucketV1Buffer(keys.length, ...keys, ...args);
  const outcome = multiBucketOutcome(reply[0]!);
  const buckets: BucketStanding[] = [];
  for (let i = 0; i < charges.length; i++) {
    buckets.push({
      remaining: reply[3 + 3 * i]!,
      reset: reply[4 + 3 * i]!,
      exceeded: reply[5 + 3 * i] === 1,
    });
  }
  const decision: ManyDecision = {
    allowed: outcome === 'admitted',
    usageExceeded: outcome === 'out_of_credits',
    buckets,
    now: reply[1]!,
  };
  if (credits && reply[2]! >= 0) decision.creditsRemaining = reply[2]!;
  return decision;
}
