import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';

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

/** Every key name of the database, sorted. SCAN, never KEYS. */
export async function allKeys(redis: Redis, pattern = '*'): Promise<string[]> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    for (const name of batch) found.add(name);
    cursor = next;
  } while (cursor !== '0');
  return [...found].sort();
}

/**
 * The whole keyspace as `name → hex(DUMP name)`. DUMP is Redis's own serialisation of a value
 * (type, encoding and content), so two dumps are equal exactly when nothing was written in
 * between. TTLs are left out: they tick on their own.
 */
export async function dumpKeyspace(redis: Redis): Promise<Map<string, string>> {
  const names = await allKeys(redis);
  const dump = new Map<string, string>();
  const batch = 500;
  for (let i = 0; i < names.length; i += batch) {
    const slice = names.slice(i, i + batch);
    const pipeline = redis.pipeline();
    for (const name of slice) pipeline.dumpBuffer(name);
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([error, value], index) => {
      if (error) throw error;
      // A key that expired between SCAN and DUMP is simply not there.
      if (value !== null) dump.set(slice[index] as string, (value as Buffer).toString('hex'));
    });
  }
  return dump;
}

/** What changed between two dumps, one line per key: empty when nothing was written. */
export function diffKeyspace(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [name, value] of after) {
    const old = before.get(name);
    if (old === undefined) changes.push(`+ ${name}`);
    else if (old !== value) changes.push(`~ ${name}`);
  }
  for (const name of before.keys()) if (!after.has(name)) changes.push(`- ${name}`);
  return changes.sort();
}
