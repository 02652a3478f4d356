import { getKey } from '../operations/keys/getKey';
import { runOperation } from '../operations/operation';
import type { KeyView } from '../operations/views';
import type { CommandSpec } from './framework';
import { probeBucket, type BucketState } from './bucketProbe';
import { emit, fieldLines, isoTime, relative } from './output';
import type { Runtime } from './runtime';
import { operatorCaller, operatorServices, requireWorkspace, workspaceOption } from './services';

interface Credits {
  /** What a verification would see now, a refill point that passed applied. */
  remaining: number;
  refill?: KeyView['refill'];
  /** The credits hash as stored, before any pending refill. */
  stored: { remaining: number; lastRefillAt: number } | null;
}

interface Inspection {
  key: KeyView;
  credits: Credits | null;
  buckets: BucketState[];
}

async function readBuckets(runtime: Runtime, key: KeyView): Promise<BucketState[]> {
  const type = key.ratelimit?.type;
  const places: Pick<BucketState, 'redis' | 'holds' | 'inUse'>[] = runtime.localIsPrimary
    ? [{ redis: 'primary', holds: ['consistent', 'fast'], inUse: type !== undefined }]
    : [
        { redis: 'primary', holds: ['consistent'], inUse: type === 'consistent' },
        { redis: 'local', holds: ['fast'], inUse: type === 'fast' },
      ];
  // Both Redis are read even when the key uses one: a bucket left in the other by a change of
  // type is worth seeing, and it expires on its own.
  return Promise.all(
    places.map(async (place) => ({
      ...place,
      ...(await probeBucket(await runtime.redis(place.redis), key.id, key.ratelimit)),
    })),
  );
}

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
    const ws = invocation.required('workspace');
    await requireWorkspace(runtime, ws);
    const services = await operatorServices(runtime);
    const view = await runOperation(getKey, services, operatorCaller(ws), {
      keyId: invocation.args[0] ?? '',
    });
    const [stored, buckets] = await Promise.all([
      view.remaining !== undefined ? services.keys.readCredits(view.id) : undefined,
      readBuckets(runtime, view),
    ]);
    const credits: Credits | null =
      view.remaining === undefined
        ? null
        : {
            remaining: view.remaining,
            ...(view.refill ? { refill: view.refill } : {}),
            stored: stored ?? null,
          };
    const inspection: Inspection = { key: view, credits, buckets };
    emit(invocation, inspection, () => humanLines(inspection));
    return 0;
  },
};

export const inspectCommands: readonly CommandSpec[] = [key];
