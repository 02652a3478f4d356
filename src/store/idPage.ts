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
