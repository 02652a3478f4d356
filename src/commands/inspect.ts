import { bucketPlaces, probeBucket } from '../limiter/bucketProbe';
import { inspectKey, type BucketState, type Inspection } from '../operations/keys/inspectKey';
import type { KeyView } from '../operations/views';
import type { CommandSpec } from './framework';
import { emit, fieldLines, isoTime, relative } from './output';
import { operatorCaller, operatorServices, workspaceArgument, workspaceOption } from './services';

function bucketLines(bucket: BucketState, key: KeyView): string[] {
  const label = `${bucket.redis} (${bucket.holds.join('+')}${bucket.inUse ? ', in use' : ''})`;
  const limit = key.ratelimit?.limit;
  const parts: string[] = [];
  if (!bucket.exists) parts.push(bucket.inUse ? 'no bucket: full' : 'no bucket');
  if ((bucket.exists || bucket.inUse) && bucket.tokens !== null && limit !== undefined) {
    parts.push(`${bucket.tokens} of ${limit} tokens`);
  }
  if (bucket.nextRefillAt !== null && (bucket.exists || bucket.inUse)) {
    parts.push(
      `next refill ${isoTime(bucket.nextRefillAt)} (${relative(bucket.nextRefillAt, bucket.now)})`,
    );
  }
  const lines = [`  ${label}: ${parts.join(', ')}`];
  if (bucket.stored) {
    lines.push(
      `    stored tokens ${bucket.stored.tokens} at ${isoTime(bucket.stored.last)}, PTTL ${bucket.pttlMs ?? '-'} ms (full ${bucket.pttlMs === null ? '?' : relative(bucket.now + bucket.pttlMs, bucket.now)})`,
    );
  }
  for (const lease of bucket.leases) {
    lines.push(
      `    out on lease to ${lease.holder}: ${lease.granted} tokens until ${isoTime(lease.expiresAt)} (${relative(lease.expiresAt, bucket.now)})`,
    );
  }
  if (bucket.regionLease) {
    lines.push(
      `    this region's lease: ${bucket.regionLease.tokens} tokens left until ${isoTime(bucket.regionLease.expiresAt)} (${relative(bucket.regionLease.expiresAt, bucket.now)})`,
    );
  }
  return lines;
}

function humanLines(inspection: Inspection): string[] {
  const { key, credits, buckets } = inspection;
  const lines = ['key', ...fieldLines(key, '  ')];
  lines.push('credits');
  if (!credits) lines.push('  unlimited usage');
  else {
    lines.push(`  remaining  ${credits.remaining}`);
    if (credits.refill) {
      const day =
        credits.refill.refillDay !== undefined ? ` on day ${credits.refill.refillDay}` : '';
      lines.push(
        `  refill     ${credits.refill.interval}${day} to ${credits.refill.amount}, last applied ${isoTime(credits.refill.lastRefillAt)}`,
      );
    }
  }
  const ratelimit = key.ratelimit;
  lines.push(
    ratelimit
      ? `buckets (${ratelimit.type}: ${ratelimit.limit} tokens, +${ratelimit.refillRate} every ${ratelimit.refillInterval} ms)`
      : 'buckets (the key has no rate limit)',
  );
  for (const bucket of buckets) lines.push(...bucketLines(bucket, key));
  if (inspection.namedBuckets.length > 0) lines.push('named limits');
  for (const named of inspection.namedBuckets) {
    const parts = [`${named.tokens ?? '?'} of ${named.limit} tokens`];
    if (named.nextRefillAt !== null) {
      parts.push(
        `next refill ${isoTime(named.nextRefillAt)} (${relative(named.nextRefillAt, named.now)})`,
      );
    }
    lines.push(
      `  ${named.name} (${named.type}, ${named.owner === 'key' ? 'the key' : 'its identity, shared'}, ` +
        `${named.limit} every ${named.duration} ms, in ${named.redis}): ${parts.join(', ')}`,
    );
  }
  return lines;
}

const key: CommandSpec = {
  path: ['inspect', 'key'],
  brief: 'a key, its credits and its live buckets, read without spending',
  summary:
    'Shows a key (as keys.getKey does), its usage credits, and its live bucket in each Redis that can hold one: the primary (consistent) and the local Redis of KEYWARD_LOCAL_REDIS_URL (fast). Nothing is spent: buckets are read with the token-bucket script at cost 0.',
  options: { workspace: workspaceOption },
  args: [{ name: 'keyId', description: 'the key id (key_…)' }],
  notes:
    "A fast bucket lives in the local Redis of the node that served the verification: point KEYWARD_LOCAL_REDIS_URL at that node's Redis to see it.",
  example: 'keyward inspect key --workspace ws_… key_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const ws = await workspaceArgument(invocation, runtime);
    const services = await operatorServices(runtime);
    const inspection = await inspectKey(
      {
        keys: services.keys,
        directory: services.directory,
        now: services.now,
        metrics: services.metrics,
        places: bucketPlaces(runtime.localIsPrimary),
        probe: async (redis, bucketKey, ratelimit) =>
          probeBucket(await runtime.redis(redis), bucketKey, ratelimit),
      },
      operatorCaller(ws),
      invocation.args[0] ?? '',
    );
    emit(invocation, inspection, () => humanLines(inspection));
    return 0;
  },
};

export const inspectCommands: readonly CommandSpec[] = [key];
