/**
 * Redis memory of usage counts (docs/redis.md, "Memory"): what a key verified in every minute
 * costs, measured with keyward's own writer (UsageStore from dist/) on a redis-server of its own.
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && node .run/bench-build/bench/usageMemory.js [keys]
 *
 * Three runs, each on an empty server, `keys` keys (1,000 by default) of one API, one outcome, no
 * identity, no tags, ids of keyward's length:
 * - a day: every key counted in each of the 1,440 minutes of one day, one flush a minute (the
 *   doc's first figure, bytes a key a day);
 * - the default retention (48 h of minutes, 90 days of hours, 730 days of days): the last 48 h a
 *   flush every minute, the 88 days before one per hour (count 60), the 640 days before one per
 *   day (count 1,440). This is the figure the 50 KB target is about;
 * - daily: every key counted once a day, at noon, for the 730 days of retention: what a quiet key
 *   costs.
 * `node …/usageMemory.js 1000 retention` runs one of them (day, retention, daily).
 * The simulated clock is the real one's past (each run ends at today's 00:00 UTC): the writer
 * sets each hash's EXPIREAT from the time it counts, so a hash whose retention has passed is
 * deleted by Redis as it is written (EXPIREAT in the past), and what is left at the end is what
 * retention keeps. Prints one JSON line per run: used_memory before and after, and MEMORY USAGE
 * summed by kind of name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { connectRedis } from './redisClient';

/** The parts of dist/ this script uses (declared here so that bench/ compiles without src/). */
interface UsagePart {
  ws: string;
  scope: 'v' | 'rl';
  owner: string;
  shard: number;
}
interface UsageIncrement {
  minute: number;
  field: string;
  count: number;
}
interface UsageStoreModule {
  UsageStore: new (
    redis: unknown,
    retention: Record<'minute' | 'hour' | 'day', number>,
  ) => {
    write(
      part: UsagePart,
      increments: UsageIncrement[],
      nodeId: string,
      seq: number,
    ): Promise<void>;
  };
  usagePart(ws: string, scope: 'v', owner: string, subject: string): UsagePart;
}
interface UsageModule {
  verificationField(counter: {
    keyId: string;
    identityId: string;
    outcome: string;
    tags: string[];
  }): string;
}
interface IdsModule {
  newId(prefix: 'ws' | 'api' | 'key'): string;
}

const root = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const load = createRequire(join(root, 'package.json'));
const { UsageStore, usagePart } = load(join(root, 'dist/store/usageStore.js')) as UsageStoreModule;
const { verificationField } = load(join(root, 'dist/domain/usage.js')) as UsageModule;
const { newId } = load(join(root, 'dist/keys/ids.js')) as IdsModule;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** keyward's defaults (src/config.ts, analytics.retention). */
const RETENTION = { minute: 48 * HOUR, hour: 90 * DAY, day: 730 * DAY };

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keyward-usage-memory-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = connectRedis(url);
  for (let i = 0; ; i++) {
    try {
      await probe.ping();
      break;
    } catch (error) {
      if (i > 100) throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  probe.disconnect();
  return {
    url,
    stop: async () => {
      await new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGTERM');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Redis = ReturnType<typeof connectRedis>;

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/** The kind of a usage name: the part after its tag and before the start (`h`, `d`, `m`, …). */
function kindOf(name: string): string {
  return /\}:([a-z]+):/.exec(name)?.[1] ?? 'other';
}

/** Every name, with MEMORY USAGE summed by kind. */
async function survey(redis: Redis) {
  const byKind: Record<string, { names: number; bytes: number }> = {};
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const name of found) pipeline.memory('USAGE', name, 'SAMPLES', '0');
    const sizes = (await pipeline.exec()) ?? [];
    found.forEach((name, i) => {
      const kind = kindOf(name);
      const entry = (byKind[kind] ??= { names: 0, bytes: 0 });
      entry.names += 1;
      entry.bytes += Number(sizes[i]?.[1] ?? 0);
    });
  } while (cursor !== '0');
  return byKind;
}

/** Writes one flush: every key counted `count` times in `minute`, one MULTI per shard. */
async function flush(
  store: InstanceType<UsageStoreModule['UsageStore']>,
  ws: string,
  apiId: string,
  keyIds: readonly string[],
  minute: number,
  count: number,
  seq: number,
): Promise<void> {
  const parts = new Map<number, { part: UsagePart; increments: UsageIncrement[] }>();
  for (const keyId of keyIds) {
    const part = usagePart(ws, 'v', apiId, keyId);
    let entry = parts.get(part.shard);
    if (!entry) parts.set(part.shard, (entry = { part, increments: [] }));
    const field = verificationField({ keyId, identityId: '', outcome: 'VALID', tags: [] });
    entry.increments.push({ minute, field, count });
  }
  await Promise.all(
    [...parts.values()].map(({ part, increments }) => store.write(part, increments, 'bench', seq)),
  );
}

async function run(
  name: string,
  keys: number,
  minutes: (now: number) => Iterable<{ minute: number; count: number }>,
): Promise<void> {
  const server = await startRedis();
  const redis = connectRedis(server.url);
  try {
    const store = new UsageStore(redis, RETENTION);
    const ws = newId('ws');
    const apiId = newId('api');
    const keyIds = Array.from({ length: keys }, () => newId('key'));
    // Today's 00:00 UTC: see the header.
    const now = Math.floor(Date.now() / DAY) * DAY;
    const before = await usedMemory(redis);
    const started = Date.now();
    let seq = 0;
    let flushes = 0;
    for (const { minute, count } of minutes(now)) {
      await flush(store, ws, apiId, keyIds, minute, count, ++seq);
      flushes += 1;
    }
    const byKind = await survey(redis);
    const after = await usedMemory(redis);
    const names = await redis.dbsize();
    const bytes = after - before;
    console.log(
      JSON.stringify({
        run: name,
        keys,
        flushes,
        names,
        usedMemoryDelta: bytes,
        bytesPerKey: Math.round(bytes / keys),
        byKind,
        seconds: Math.round((Date.now() - started) / 1000),
      }),
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

function* day(now: number) {
  for (let t = now - DAY; t < now; t += MINUTE) yield { minute: t, count: 1 };
}

/** A key verified every minute, as retention keeps it at `now`: see the header. */
function* retention(now: number) {
  for (let t = now - RETENTION.day; t < now - RETENTION.hour; t += DAY) {
    yield { minute: t, count: 1440 };
  }
  for (let t = now - RETENTION.hour; t < now - RETENTION.minute; t += HOUR) {
    yield { minute: t, count: 60 };
  }
  for (let t = now - RETENTION.minute; t < now; t += MINUTE) yield { minute: t, count: 1 };
}

/** A key verified once a day (at noon UTC), as retention keeps it at `now`. */
function* daily(now: number) {
  for (let t = now - RETENTION.day + DAY / 2; t < now; t += DAY) yield { minute: t, count: 1 };
}

const RUNS = { day, retention, daily } as const;

async function main(): Promise<void> {
  const keys = Number(process.argv[2] ?? 1000);
  const which = process.argv[3] ?? 'all';
  for (const [name, minutes] of Object.entries(RUNS)) {
    if (which === 'all' || which === name) await run(name, keys, minutes);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
