import {
  bucketStarts,
  parseLimitField,
  parseVerificationField,
  usageShard,
  type Counted,
  type CountRow,
  type Granularity,
  type LimitRow,
  type ReadRange,
  type UsageCounts,
} from '../domain/usage';
import { ALL_SHARDS, type UsageStore } from './usageStore';

/**
 * The readers' counts out of Redis's buckets: one HGETALL per bucket and shard, pipelined per
 * shard (UsageStore.read). Given keys or an identifier, only their shards are read, as no other
 * holds their counters; rows of other subjects in those shards are answered too.
 */
export class RedisUsageCounts implements UsageCounts {
  readonly store = 'redis';

  constructor(private readonly usage: UsageStore) {}

  get retention() {
    return this.usage.retention;
  }

  verifications(
    ws: string,
    apiId: string,
    granularity: Granularity,
    range: ReadRange,
    keyIds?: ReadonlySet<string>,
  ): Promise<CountRow[]> {
    return this.read(ws, 'v', apiId, granularity, range, keyIds, parseVerificationField);
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
