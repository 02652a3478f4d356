import type { RedisClient as Redis } from '../redis/clients';
import { crc32 } from '../keys/crc32';
import { names } from './names';

/**
 * An API's keys are listed from shards, so that an API of many keys spreads over the masters of
 * a cluster instead of filling one slot. 16, with tags chosen to fall in 16 sixteenths of the
 * slots (names.ts): on three masters the busiest holds 6 of them; a page reads one range per
 * shard, all at once.
 */
export const KEY_LISTING_SHARDS = 16;

export function listingShard(keyId: string): number {
  return crc32(keyId) % KEY_LISTING_SHARDS;
}

/** The shard of an API's listing that holds this key. */
export function listingIndex(apiId: string, keyId: string): string {
  return names.apiKeyShard(apiId, listingShard(keyId));
}

export function listingIndexes(apiId: string): string[] {
  return Array.from({ length: KEY_LISTING_SHARDS }, (_, shard) => names.apiKeyShard(apiId, shard));
}

export interface ListedId {
  id: string;
  seq: number;
}

/**
 * One page of ids after `afterSeq`, in sequence order, from zsets that all score ids by their
 * sequence number, and the sum of their sizes. Each zset is read in a MULTI of its own (one
 * slot); an id in two of them (a key being moved from the previous layout) is listed once.
 */
export async function pageOfIndexes(
  redis: Redis,
  indexes: readonly string[],
  options: { limit: number; afterSeq?: number },
): Promise<{ ids: ListedId[]; total: number; more: boolean }> {
  const min = options.afterSeq === undefined ? '-inf' : `(${options.afterSeq}`;
  const reads = await Promise.all(
    indexes.map(async (index) => {
      const replies = await redis
        .multi()
        // One more than asked for, to tell whether another page follows.
        .zrangebyscore(index, min, '+inf', 'WITHSCORES', 'LIMIT', 0, options.limit + 1)
        .zcard(index)
        .exec();
      if (!replies) throw new Error('listing read: transaction discarded');
      for (const [error] of replies) if (error) throw error;
      return { flat: replies[0]?.[1] as string[], size: replies[1]?.[1] as number };
    }),
  );
  const seen = new Set<string>();
  const merged: ListedId[] = [];
  let total = 0;
  for (const { flat, size } of reads) {
    total += size;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i] as string;
      if (seen.has(id)) continue;
      seen.add(id);
      merged.push({ id, seq: Number(flat[i + 1]) });
    }
  }
  merged.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    ids: merged.slice(0, options.limit),
    total,
    more: merged.length > options.limit,
  };
}
