import { Cluster } from 'ioredis';
import type { RedisClient } from '../../redis/clients';

/**
 * One part of `keyward migrate`: moves records of one kind from the previous release's layout
 * (everything under the workspace's `{ws}` tag) to the current one, while nodes serve. A step is
 * idempotent and resumable: run again after an interruption, it finishes what is left and
 * changes nothing that was already moved.
 */
export interface MigrationStep {
  /** Shown in progress lines and `--json`: `keys`, `usage`. */
  readonly name: string;
  /** Moves what is left; `moved` counts the records moved by this run. */
  run(redis: RedisClient, progress: (moved: number) => void): Promise<{ moved: number }>;
}

/**
 * Every key name matching `pattern`, on a single Redis or on each master of a cluster, in
 * batches of `count`: a SCAN, so a live server is never blocked by it.
 */
export async function* scanKeys(
  redis: RedisClient,
  pattern: string,
  count = 500,
): AsyncGenerator<string[]> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, found] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      if (found.length > 0) yield found;
    } while (cursor !== '0');
  }
}
