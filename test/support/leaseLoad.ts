import type { BucketShape } from '../../src/limiter/tokenBucket';
import type { LeaseRig } from './leaseRig';

/**
 * Under-admission of leases (issue 27, point 4), on the virtual clock: the same arrivals go to a
 * consistent bucket through the regions' leases and, as the reference, to one plain bucket of the
 * same shape. "Wrongly refused" is what the reference admitted beyond what the leases did.
 */
export interface LoadPhase {
  /** How long, in virtual ms. */
  ms: number;
  /** Per region: its share of the bucket's refill rate (0.4 = 40 %). */
  load: Record<string, number>;
}

export interface LoadResult {
  requests: number;
  admittedWithLeases: number;
  admittedByOneBucket: number;
  /** (admittedByOneBucket − admittedWithLeases) / requests, in per cent; never below 0. */
  wronglyRefusedPercent: number;
  /** Verifications the regions answered from their leases, in per cent of those admitted. */
  servedFromLeasesPercent: number;
}

/** A seeded generator, so a run is the same run every time. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Poisson arrivals of every region, merged in time order. */
function arrivals(phases: readonly LoadPhase[], shape: BucketShape, seed: number) {
  const next = random(seed);
  const perMs = shape.refillRate / shape.refillInterval;
  const all: { at: number; region: string }[] = [];
  let start = 0;
  for (const phase of phases) {
    for (const [region, share] of Object.entries(phase.load)) {
      if (share <= 0) continue;
      let at = start;
      for (;;) {
        at += -Math.log(1 - next()) / (perMs * share);
        if (at >= start + phase.ms) break;
        all.push({ at: Math.floor(at), region });
      }
    }
    start += phase.ms;
  }
  return all.sort((a, b) => a.at - b.at);
}

export async function underAdmission(
  rig: LeaseRig,
  bucketKey: string,
  referenceKey: string,
  shape: BucketShape,
  phases: readonly LoadPhase[],
  seed = 27,
): Promise<LoadResult> {
  const start = rig.now;
  let withLeases = 0;
  let byOneBucket = 0;
  const fromLeasesBefore = rig.counts.lease;
  const requests = arrivals(phases, shape, seed);
  for (const request of requests) {
    rig.now = start + request.at;
    if ((await rig.region(request.region).take(bucketKey, shape, 1)).allowed) withLeases += 1;
    if ((await rig.direct(referenceKey, shape, 1)).allowed) byOneBucket += 1;
  }
  return {
    requests: requests.length,
    admittedWithLeases: withLeases,
    admittedByOneBucket: byOneBucket,
    wronglyRefusedPercent: Math.max(0, ((byOneBucket - withLeases) / requests.length) * 100),
    // A verification served from a lease is always admitted.
    servedFromLeasesPercent:
      withLeases === 0 ? 0 : ((rig.counts.lease - fromLeasesBefore) / withLeases) * 100,
  };
}
