import { GRANULARITIES, type Granularity } from '../../domain/usage';
import { invalidField } from '../../errors';
import { checkRange, timeSlots } from '../analytics/counts';
import { defineOperation } from '../operation';
import { identifier, namespaceRef, object } from '../schemas';
import { exactlyOneNamespace, resolveNamespace, type NamespaceRef } from './namespaces';

export interface GetUsageInput extends NamespaceRef {
  identifier?: string;
  start?: number;
  end?: number;
  granularity?: Granularity;
  groupBy?: 'time' | 'identifier';
  limit?: number;
}

/** One row of the answer: a bucket's counts (by time), or an identifier's over the range. */
export interface UsageRow {
  time?: number;
  identifier?: string;
  passed: number;
  limited: number;
  total: number;
}

const DAY = 86_400_000;
const count = { type: 'integer', minimum: 0 } as const;

/**
 * keyward's own reader of the standalone limits' usage counts (ratelimits.limit and multiLimit,
 * v1 and v2): how many passed and how many were refused in a namespace, from every node, as a
 * time series with every bucket of the range (zeros included), or summed per identifier.
 */
export const getUsage = defineOperation({
  name: 'ratelimits.getUsage',
  method: 'GET',
  plane: 'management',
  summary:
    "A namespace's standalone limits that passed and that were refused, per minute, hour or day, or per identifier.",
  // Unkey's namespace actions: reading a namespace (and its analytics) is read_namespace.
  permission: { resource: 'ratelimit', action: 'read_namespace', scope: 'resource' },
  input: object({
    ...namespaceRef,
    identifier,
    start: { type: 'integer', minimum: 0 },
    end: { type: 'integer', minimum: 0 },
    granularity: { enum: GRANULARITIES },
    groupBy: { enum: ['time', 'identifier'] },
    limit: { type: 'integer', minimum: 1, maximum: 1000 },
  }),
  output: object(
    {
      usage: {
        type: 'array',
        items: object(
          {
            time: { type: 'integer' },
            identifier: { type: 'string' },
            passed: count,
            limited: count,
            total: count,
          },
          ['passed', 'limited', 'total'],
        ),
      },
    },
    ['usage'],
  ),
  check(input: GetUsageInput) {
    exactlyOneNamespace(input);
    checkRange(input);
    if (input.limit !== undefined && input.groupBy !== 'identifier') {
      throw invalidField(['limit'], 'only with groupBy identifier');
    }
  },
  uses: ['ratelimits', 'usageCounts', 'now'],
  async handle(deps, caller, input: GetUsageInput): Promise<{ usage: UsageRow[] }> {
    const namespace = await resolveNamespace(deps, caller, input, 'read_namespace');
    const now = deps.now();
    const end = input.end ?? now;
    const range = { start: input.start ?? end - DAY, end, now };
    const granularity = input.granularity ?? 'hour';
    const slots = timeSlots(deps.usageCounts, granularity, range, 'ask for a coarser granularity');
    const rows = (
      await deps.usageCounts.limits(
        caller.rootKey.workspaceId,
        namespace.id,
        granularity,
        range,
        input.identifier,
      )
    ).filter((row) => input.identifier === undefined || row.identifier === input.identifier);

    if (input.groupBy === 'identifier') {
      const byIdentifier = new Map<string, UsageRow>();
      for (const row of rows) {
        let out = byIdentifier.get(row.identifier);
        if (!out) {
          out = { identifier: row.identifier, passed: 0, limited: 0, total: 0 };
          byIdentifier.set(row.identifier, out);
        }
        add(out, row.passed, row.count);
      }
      const usage = [...byIdentifier.values()].sort(
        (a, b) => b.total - a.total || (a.identifier! < b.identifier! ? -1 : 1),
      );
      return { usage: usage.slice(0, input.limit ?? 100) };
    }
    // Every slot answers, zeros included, so a chart needs no gaps filled.
    const byTime = new Map<number, UsageRow>();
    for (const time of slots) byTime.set(time, { time, passed: 0, limited: 0, total: 0 });
    for (const row of rows) {
      const out = byTime.get(row.time);
      if (out) add(out, row.passed, row.count);
    }
    return { usage: [...byTime.values()] };
  },
});

function add(row: UsageRow, passed: boolean, count: number): void {
  if (passed) row.passed += count;
  else row.limited += count;
  row.total += count;
}
