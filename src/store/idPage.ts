import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';

/**
 * One page of ids from an index zset whose scores are all 0 (so `ZRANGEBYLEX` reads it in id
 * order, which is creation order), after `afterId`, with the index's exact size. `more`: ids
 * follow the page (one more than the page is read to know).
 */
export async function idPage(
  redis: Redis,
  index: string,
  options: { limit: number; afterId?: string },
): Promise<{ page: string[]; total: number; more: boolean }> {
  const min = options.afterId === undefined ? '-' : `(${options.afterId}`;
  const [ids, total] = execResults(
    await redis
      .multi()
      .zrangebylex(index, min, '+', 'LIMIT', 0, options.limit + 1)
      .zcard(index)
      .exec(),
  ) as [string[], number];
  return { page: ids.slice(0, options.limit), total, more: ids.length > options.limit };
}

/**
 * One page of ids after `afterId` in id order from several such zsets (the shards of one
 * listing), each read in a MULTI of its own (one slot) and all at once, with the sum of their
 * sizes. An id in two of them (an identity being moved from the previous layout) is listed once.
 */
export async function idPageOfIndexes(
  redis: Redis,
  indexes: readonly string[],
  options: { limit: number; afterId?: string },
): Promise<{ page: string[]; total: number; more: boolean }> {
  const reads = await Promise.all(indexes.map((index) => idPage(redis, index, options)));
  const merged = new Set<string>();
  let total = 0;
  let more = false;
  for (const read of reads) {
    total += read.total;
    more ||= read.more;
    for (const id of read.page) merged.add(id);
  }
  const sorted = [...merged].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    page: sorted.slice(0, options.limit),
    total,
    more: more || sorted.length > options.limit,
  };
}
