import { Cluster, Redis } from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { names } from '../../src/store/names';
import { UNFINISHED_SHARDS } from '../../src/store/unfinishedWrites';

/**
 * A Redis the test reads directly (never through a node): a slow, patient client, so that a
 * dump of a few thousand keys does not trip the 100 ms command timeout nodes use.
 */
export async function adminRedis(url: string): Promise<Redis> {
  const redis = createRedis(url, { commandTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
  await connectRedis(redis);
  return redis;
}

export { closeRedis };

/** Every key name of the database (of every master of a cluster), sorted. SCAN, never KEYS. */
export async function allKeys(redis: Redis | Cluster, pattern = '*'): Promise<string[]> {
  const found = new Set<string>();
  for (const server of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, batch] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      for (const name of batch) found.add(name);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...found].sort();
}

/**
 * Usage analytics (`keyward:usage:{…}:…`, and the previous release's `keyward:{ws}:usage:…`) and
 * keys' last uses (`keyward:lastused:{…}`) are written by a node's flush timer, a moment after the
 * verifications they count: a comparison of two dumps around a request leaves them out.
 * test/integration/usageAnalytics.test.ts checks them instead. So is the registry of audit
 * outboxes, which a node's sweep tidies on a timer (test/integration/auditOutbox.test.ts).
 */
const TIMER_WRITTEN = /^keyward:(usage:|lastused:|\{[^}]*\}:usage:)/;

const written = async (redis: Redis) =>
  (await allKeys(redis)).filter(
    (name) => !TIMER_WRITTEN.test(name) && name !== names.auditOutboxes,
  );

/** Marks, in a dump, a key with a TTL: it may vanish on its own between two dumps. */
const VOLATILE = 'volatile:';

/**
 * The whole keyspace (but usage analytics) as `name → hex(DUMP name)`. DUMP is Redis's own serialisation of a value
 * (type, encoding and content), so two dumps are equal exactly when nothing was written in
 * between. TTLs are left out: they tick on their own; a key that has one is marked, since its
 * expiry is not a write (see diffKeyspace).
 */
export async function dumpKeyspace(redis: Redis): Promise<Map<string, string>> {
  const names = await written(redis);
  const dump = new Map<string, string>();
  const batch = 500;
  for (let i = 0; i < names.length; i += batch) {
    const slice = names.slice(i, i + batch);
    const pipeline = redis.pipeline();
    for (const name of slice) pipeline.dumpBuffer(name).pttl(name);
    const replies = (await pipeline.exec()) ?? [];
    for (let i = 0; i < slice.length; i++) {
      const [dumpError, value] = replies[2 * i] ?? [];
      const [ttlError, ttl] = replies[2 * i + 1] ?? [];
      if (dumpError) throw dumpError;
      if (ttlError) throw ttlError;
      // A key that expired between SCAN and DUMP is simply not there.
      if (value === null || value === undefined) continue;
      const hex = (value as Buffer).toString('hex');
      // -1: no expiry. Anything else is a TTL, or -2 when it expired right after DUMP.
      dump.set(slice[i] as string, Number(ttl) === -1 ? hex : `${VOLATILE}${hex}`);
    }
  }
  return dump;
}

/**
 * What changed between two dumps, one line per key: empty when nothing was written. A key with a
 * TTL that is gone in the second dump expired: that is not a write, and it is not reported.
 */
export function diffKeyspace(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [name, value] of after) {
    const old = before.get(name);
    if (old === undefined) changes.push(`+ ${name}`);
    else if (old !== value) changes.push(`~ ${name}`);
  }
  for (const [name, value] of before) {
    if (!after.has(name) && !value.startsWith(VOLATILE)) changes.push(`- ${name}`);
  }
  return changes.sort();
}

/**
 * The whole keyspace as `name → its content` in a canonical form (hash fields, set and zset
 * members sorted). Unlike DUMP, it does not depend on how Redis encodes a value in memory, so it
 * compares a database with the same database reloaded from its append-only file.
 */
export async function snapshotKeyspace(redis: Redis): Promise<Map<string, string>> {
  const snapshot = new Map<string, string>();
  for (const name of await written(redis)) {
    const type = await redis.type(name);
    let content: unknown;
    switch (type) {
      case 'string':
        content = await redis.get(name);
        break;
      case 'hash':
        content = Object.entries(await redis.hgetall(name)).sort(([a], [b]) => (a < b ? -1 : 1));
        break;
      case 'zset':
        content = await redis.zrange(name, 0, -1, 'WITHSCORES');
        break;
      case 'set':
        content = (await redis.smembers(name)).sort();
        break;
      case 'list':
        content = await redis.lrange(name, 0, -1);
        break;
      case 'none':
        continue;
      default:
        content = `(${type})`;
    }
    snapshot.set(name, `${type} ${JSON.stringify(content)}`);
  }
  return snapshot;
}

/** What `writeWatcher` reports: every write to the primary since `start`, but the timers'. */
export interface WriteWatcher {
  start(): Promise<void>;
  /** `<event> <key>` of each write since `start`, in order; empty when nothing was written. */
  writes(): Promise<string[]>;
  close(): Promise<void>;
}

/** Key events that are not writes: a TTL running out, or memory pressure. */
const NOT_WRITES = new Set(['expired', 'evicted']);

/**
 * Every write a database sees, from Redis's own keyspace notifications: a cheap stand-in for two
 * `dumpKeyspace` calls around each request when a suite asks "did this write nothing?" hundreds
 * of times. It is stricter than a dump diff (a write of the same value counts too). A PUBLISH on
 * the same server is the barrier: notifications and messages reach one subscriber in the order
 * Redis published them, so once the barrier's message is in, every earlier write's event is.
 */
export async function writeWatcher(url: string): Promise<WriteWatcher> {
  // Patient clients that ride out a suite stopping and restarting the server (a node's clients
  // fail fast instead): commands wait for the reconnection, and the subscriptions are renewed.
  const patient = { enableOfflineQueue: true, maxRetriesPerRequest: null, retryStrategy: () => 50 };
  const control = new Redis(url, patient);
  // Subscribed again below on every 'ready': ioredis's own resubscription leaves its promise
  // unhandled, and `close()` right after a reconnection rejects it (src/redis/clients.ts).
  const subscriber = new Redis(url, { ...patient, autoResubscribe: false });
  for (const client of [control, subscriber]) client.on('error', () => undefined);
  // A restarted server forgets the setting: it is set again on every connection, before
  // whatever waited for it.
  const notify = () => control.config('SET', 'notify-keyspace-events', 'KEA');
  control.on('ready', () => void notify().catch(() => undefined));
  await notify();
  const barrierChannel = `keyward-test:barrier:${process.pid}`;
  let events: string[] = [];
  let awaited: { token: string; resolve: () => void } | undefined;
  subscriber.on('pmessage', (_pattern: string, channel: string, key: string) => {
    const event = channel.slice(channel.indexOf(':') + 1);
    const timerWrite = TIMER_WRITTEN.test(key) || key === names.auditOutboxes;
    if (!NOT_WRITES.has(event) && !timerWrite) events.push(`${event} ${key}`);
  });
  subscriber.on('message', (_channel: string, token: string) => {
    if (awaited?.token === token) awaited.resolve();
  });
  const subscribe = async () => {
    await subscriber.psubscribe('__keyevent@*__:*');
    await subscriber.subscribe(barrierChannel);
  };
  subscriber.on('ready', () => void subscribe().catch(() => undefined));
  // Not before 'ready': between connecting and its ready check (an INFO, sent once the client's
  // CLIENT SETINFO calls are answered) ioredis writes a PSUBSCRIBE at once, and Redis then refuses
  // the INFO in subscriber mode, which failed this call (seen once in a full run).
  // A plain listener, not events.once: an 'error' before it (a reconnection) must not end the wait.
  if (subscriber.status !== 'ready') {
    await new Promise<void>((resolve) => subscriber.once('ready', () => resolve()));
  }
  await subscribe();
  let sequence = 0;
  const barrier = async () => {
    const token = String(++sequence);
    let arrived = false;
    const reached = new Promise<void>((resolve) => {
      awaited = { token, resolve: () => ((arrived = true), resolve()) };
    });
    // Sent again until it arrives: a subscriber renewing its subscription after a reconnection
    // misses what was published meanwhile.
    while (!arrived) {
      await control.publish(barrierChannel, token);
      await Promise.race([reached, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
  };
  return {
    async start() {
      await barrier();
      events = [];
    },
    async writes() {
      await barrier();
      return events;
    },
    async close() {
      subscriber.disconnect();
      control.disconnect();
    },
  };
}

/**
 * The writes since `watcher.start()` that lasted. A creation journals itself before it learns its
 * API is missing (one round trip, docs/redis.md) and takes the entry back: journal writes count
 * only when the journal is not empty again. Suites that call this send one request at a time.
 */
export async function lastingWrites(watcher: WriteWatcher, redis: Redis): Promise<string[]> {
  const writes = (await watcher.writes()).filter((write) => !/ keyward:unfinished:/.test(write));
  const pipeline = redis.pipeline();
  for (let shard = 0; shard < UNFINISHED_SHARDS; shard++) pipeline.zcard(names.unfinished(shard));
  const journaled = ((await pipeline.exec()) ?? []).reduce((sum, [, n]) => sum + Number(n), 0);
  return journaled === 0 ? writes : [...writes, `${journaled} unfinished writes journaled`];
}
