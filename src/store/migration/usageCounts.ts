import { randomBytes } from 'node:crypto';
import {
  parseLimitField,
  parseVerificationField,
  usageShard,
  type Granularity,
} from '../../domain/usage';
import type { RedisClient } from '../../redis/clients';
import { names } from '../names';
import { partTag, type UsagePart } from '../usageStore';
import { scanKeys, type MigrationStep } from './step';

/** The previous release's hash: `keyward:{<ws>}:usage:<v|rl>:<owner>:<g>:<start>`. */
const LEGACY =
  /^keyward:\{([A-Za-z0-9_]+)\}:usage:(v|rl):([A-Za-z0-9_-]+):(minute|hour|day):(\d+)$/;
/** One being moved: `keyward:{<ws>}:usage:moving:<token>:<v|rl>:<owner>:<g>:<start>`. */
const MOVING =
  /^keyward:\{([A-Za-z0-9_]+)\}:usage:moving:([0-9a-f]+):(v|rl):([A-Za-z0-9_-]+):(minute|hour|day):(\d+)$/;

/** What a moving hash's name says. */
interface Moving {
  name: string;
  ws: string;
  token: string;
  scope: 'v' | 'rl';
  owner: string;
  g: Granularity;
  start: number;
}

/** How long a marker lives when its hash had no expiry (none of keyward's has). */
const NO_EXPIRY_MARKER_MS = 7 * 86_400_000;
/** Hashes moved at once. */
const CONCURRENCY = 16;

/**
 * `keyward migrate`'s step `usage`: moves every usage hash of the previous release (one per
 * workspace's API or namespace and bucket, tagged `{ws}`) into the shards of the current layout
 * (docs/redis.md, "Usage analytics"), while nodes of either release count.
 *
 * Each hash is first renamed, in its own slot, under a fresh token; then its fields are added
 * into each shard they belong to in one MULTI per shard, with a marker of the token in that
 * shard's slot; then the renamed hash is deleted. Run again after an interruption, a step finds
 * the renamed hashes and adds only into shards without the token's marker, so nothing is counted
 * twice; a node of the previous release that counts into the old name meanwhile starts a new
 * hash, which the run (or the next) moves in turn. Readers sum the old names in until then, and
 * miss a hash only while it is renamed and not yet added (milliseconds). Two runs at once may
 * both finish one interrupted hash (each checks the marker, then adds): one run at a time.
 */
export const usageCounts: MigrationStep = {
  name: 'usage',
  async run(redis, progress) {
    let moved = 0;
    const done = () => progress(++moved);
    // What an interrupted run left half done first: its tokens' markers are in place.
    for await (const batch of scanKeys(redis, 'keyward:{*}:usage:moving:*')) {
      await inTurns(batch, async (name) => {
        const moving = parseMoving(name);
        if (moving && (await finish(redis, moving))) done();
      });
    }
    for (const scope of ['v', 'rl']) {
      for await (const batch of scanKeys(redis, `keyward:{*}:usage:${scope}:*`)) {
        await inTurns(batch, async (name) => {
          if (await move(redis, name)) done();
        });
      }
    }
    return { moved };
  },
};

/** `each` of `names`, CONCURRENCY at a time; the first failure ends the run once all settled. */
async function inTurns(names: readonly string[], each: (name: string) => Promise<void>) {
  for (let i = 0; i < names.length; i += CONCURRENCY) {
    const results = await Promise.allSettled(names.slice(i, i + CONCURRENCY).map(each));
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }
}

function parseMoving(name: string): Moving | undefined {
  const match = MOVING.exec(name);
  if (!match) return undefined;
  const [, ws, token, scope, owner, g, start] = match;
  return {
    name,
    ws: ws!,
    token: token!,
    scope: scope as 'v' | 'rl',
    owner: owner!,
    g: g as Granularity,
    start: Number(start),
  };
}

/**
 * Moves one old hash; false when `name` is not one (a namespace name may spell anything after
 * `rlns:name:`, and the regular expression, not the SCAN pattern, decides) or is gone already.
 */
async function move(redis: RedisClient, name: string): Promise<boolean> {
  const match = LEGACY.exec(name);
  if (!match) return false;
  const [, ws, scope, owner, g, start] = match;
  const token = randomBytes(8).toString('hex');
  const to = names.legacyUsageMoving(ws!, token, scope as 'v' | 'rl', owner!, g!, Number(start));
  try {
    await redis.rename(name, to);
  } catch (error) {
    // Expired, or moved by another run, since the SCAN saw it.
    if (error instanceof Error && /no such key/i.test(error.message)) return false;
    throw error;
  }
  return finish(redis, parseMoving(to)!);
}

/** Adds a renamed hash into its shards, each once, then deletes it. */
async function finish(redis: RedisClient, moving: Moving): Promise<boolean> {
  const [[hashError, hash], [ttlError, ttl]] = (await redis
    .multi()
    .hgetall(moving.name)
    .pttl(moving.name)
    .exec()) as [[Error | null, Record<string, string>], [Error | null, number]];
  if (hashError) throw hashError;
  if (ttlError) throw ttlError;
  const byShard = new Map<number, [string, string][]>();
  for (const entry of Object.entries(hash)) {
    const shard = usageShard(subjectOf(moving.scope, entry[0]));
    if (!byShard.has(shard)) byShard.set(shard, []);
    byShard.get(shard)!.push(entry);
  }
  const markerMs = ttl > 0 ? ttl + 60_000 : NO_EXPIRY_MARKER_MS;
  for (const [shard, fields] of byShard) {
    const part: UsagePart = { ws: moving.ws, scope: moving.scope, owner: moving.owner, shard };
    const marker = names.usageMoved(partTag(part), moving.token);
    if ((await redis.exists(marker)) === 1) continue;
    const target =
      part.scope === 'v'
        ? names.usageVerifications(part.ws, part.owner, shard, moving.g, moving.start)
        : names.usageLimits(part.ws, part.owner, shard, moving.g, moving.start);
    const multi = redis.multi();
    for (const [field, count] of fields) multi.hincrby(target, field, Number(count));
    // A hash the nodes write already has the expiry of the retention they run with: kept.
    if (ttl > 0) multi.pexpire(target, ttl, 'NX');
    multi.set(marker, '1', 'PX', markerMs);
    const replies = await multi.exec();
    if (!replies) throw new Error(`usage migration: transaction on ${target} discarded`);
    for (const [error] of replies) if (error) throw error;
  }
  await redis.del(moving.name);
  return Object.keys(hash).length > 0;
}

/** What chose a field's shard when it was counted: a key id, or an identifier. */
function subjectOf(scope: 'v' | 'rl', field: string): string {
  if (scope === 'v') return parseVerificationField(field)?.keyId ?? '';
  return parseLimitField(field)?.identifier ?? '';
}
