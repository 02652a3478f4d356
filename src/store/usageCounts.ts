import {
  bucketStarts,
  parseLimitField,
  usageShard,
  type CountDetail,
  type Counted,
  type CountRow,
  type Granularity,
  type LimitRow,
  type ReadRange,
  type UsageCounts,
} from '../domain/usage';
import { ALL_SHARDS, type UsageStore } from './usageStore';

/**
 * The readers' counts out of Redis: an API's verifications from its keys' span hashes (and its
 * minutes' hashes), a namespace's limits from one hash per bucket and shard, pipelined per shard
 * (UsageStore). Given keys or an identifier, only their shards are read, as no other holds their
 * counters; rows of other subjects in those shards may be answered too.
 */
export class RedisUsageCounts implements UsageCounts {
  readonly store = 'redis';

  constructor(private readonly usage: UsageStore) {}

  get retention() {
    return this.usage.retention;
  }

  /** An API's minutes are kept summed over its keys and identities, by outcome and tags. */
  readonly minuteDetail: CountDetail = { key: false, identity: false, tags: true };

  verifications(
    ws: string,
    apiId: string,
    granularity: Granularity,
    range: ReadRange,
    keyIds?: ReadonlySet<string>,
  ): Promise<CountRow[]> {
    const starts = bucketStarts(granularity, range.start, range.end, range.now, this.retention);
    const shards = keyIds ? [...new Set([...keyIds].map(usageShard))] : ALL_SHARDS;
    return this.usage.readVerifications(ws, apiId, granularity, starts, shards, keyIds);
  }

  limits(
    ws: string,
    namespaceId: string,
    granularity: Granularity,
    range: ReadRange,
    identifier?: string,
  ): Promise<LimitRow[]> {
    const subjects = identifier === undefined ? undefined : [identifier];
    return this.read(ws, 'rl', namespaceId, granularity, range, subjects, parseLimitField);
  }

  /** Every counter of the range's buckets, parsed; fields that do not parse are skipped. */
  private async read<Counter extends object>(
    ws: string,
    scope: 'v' | 'rl',
    owner: string,
    granularity: Granularity,
    range: ReadRange,
    subjects: Iterable<string> | undefined,
    parse: (field: string) => Counter | undefined,
  ): Promise<Counted<Counter>[]> {
    const starts = bucketStarts(granularity, range.start, range.end, range.now, this.retention);
    const shards = subjects ? [...new Set([...subjects].map(usageShard))] : ALL_SHARDS;
    const buckets = await this.usage.read(ws, scope, owner, granularity, starts, shards);
    const rows: Counted<Counter>[] = [];
    buckets.forEach((hash, i) => {
      for (const [field, count] of hash) {
        const counter = parse(field);
        if (counter) rows.push({ ...counter, time: starts[i]!, count });
      }
    });
    return rows;
  }
}
