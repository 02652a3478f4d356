import { CREDITS, type CountRow, type Granularity } from '../../domain/usage';
import { BadRequestError, NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { id, object } from '../schemas';
import type { Services } from '../services';
import { checkRange, timeSlots } from './counts';

const GROUPS = ['key', 'identity', 'tags', 'tag', 'month', 'day', 'hour', 'minute'] as const;
type Group = (typeof GROUPS)[number];

/** Each outcome's name in an answer, as Unkey v1 names them (and keyward's own two). */
export const OUTCOME_NAMES: Readonly<Record<string, string>> = {
  VALID: 'valid',
  NOT_FOUND: 'notFound',
  FORBIDDEN: 'forbidden',
  USAGE_EXCEEDED: 'usageExceeded',
  RATE_LIMITED: 'rateLimited',
  DISABLED: 'disabled',
  INSUFFICIENT_PERMISSIONS: 'insufficientPermissions',
  EXPIRED: 'expired',
  LIMITER_UNAVAILABLE: 'limiterUnavailable',
};
const ORDER_BY = [
  'time',
  'valid',
  'notFound',
  'forbidden',
  'usageExceeded',
  'rateLimited',
  'unauthorized',
  'disabled',
  'insufficientPermissions',
  'expired',
  'limiterUnavailable',
  'total',
  'spentCredits',
] as const;

export interface AnalyticsInput {
  apiId: string;
  externalId?: string;
  keyId?: string[];
  tag?: string[];
  start: number;
  end?: number;
  groupBy?: Group[];
  limit?: number;
  orderBy?: (typeof ORDER_BY)[number];
  order?: 'asc' | 'desc';
}

type Row = Record<string, unknown> & { total: number; spentCredits: number };

/**
 * Unkey v1's analytics.getVerifications over keyward's usage counts: an API's verifications,
 * filtered by key, identity (externalId) and tags, grouped by time (minute is keyward's own),
 * key, identity, tags or each tag, ordered and limited. Without a time group the counts of the
 * range are summed (from the hourly buckets, as Unkey's hourly table).
 */
export const getAnalyticsVerifications = defineOperation({
  name: 'analytics.getVerifications',
  method: 'GET',
  plane: 'management',
  summary:
    "An API's verification counts by outcome, filtered by key, identity and tags, grouped by time, key, identity or tags.",
  // Unkey's route asks for api.*.read_api or api.<apiId>.read_api.
  permission: {
    resource: 'api',
    action: 'read_api',
    scope: 'input',
    ids: (input: { apiId: string }) => [input.apiId],
  },
  input: object(
    {
      apiId: id,
      externalId: { type: 'string', minLength: 1, maxLength: 256 },
      keyId: { type: 'array', maxItems: 100, items: id },
      tag: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 512 } },
      start: { type: 'integer', minimum: 0 },
      end: { type: 'integer', minimum: 0 },
      groupBy: { type: 'array', maxItems: 8, items: { enum: GROUPS } },
      limit: { type: 'integer', minimum: 1, maximum: 100_000 },
      orderBy: { enum: ORDER_BY },
      order: { enum: ['asc', 'desc'] },
    },
    ['apiId', 'start'],
  ),
  output: { type: 'array', items: { type: 'object' } },
  check(input: AnalyticsInput) {
    checkRange(input);
    if (input.groupBy?.includes('tag') && input.groupBy.includes('tags')) {
      throw new BadRequestError('You can not group by tag and tags at the same time');
    }
  },
  uses: ['apis', 'directory', 'identities', 'usageCounts', 'now'],
  async handle(deps, caller, input: AnalyticsInput): Promise<Row[]> {
    const ws = caller.rootKey.workspaceId;
    if (!(await deps.directory.liveApi(ws, input.apiId))) {
      throw new NotFoundError('api', `api ${input.apiId} not found`);
    }
    let identityId: string | undefined;
    if (input.externalId !== undefined) {
      const identity = await deps.identities.byExternalId(ws, input.externalId);
      if (!identity) throw new NotFoundError('identity', `identity ${input.externalId} not found`);
      identityId = identity.id;
    }
    const groups = new Set(input.groupBy ?? []);
    const granularity: Granularity = groups.has('minute')
      ? 'minute'
      : groups.has('month') || groups.has('day')
        ? 'day'
        : 'hour';
    const keyIds = input.keyId && input.keyId.length > 0 ? new Set(input.keyId) : undefined;
    if (granularity === 'minute') {
      const detail = deps.usageCounts.minuteDetail;
      const perKey = keyIds !== undefined || groups.has('key');
      const perIdentity = identityId !== undefined || groups.has('identity');
      // Redis keeps an API's minutes, not each key's (docs/decisions.md, "Per-key minutes"):
      // hours are the finest a key's counts are there, ClickHouse keeps every detail.
      if ((perKey && !detail.key) || (perIdentity && !detail.identity)) {
        throw new BadRequestError(
          `minutes of ${perKey ? 'a key' : 'an identity'} are kept only in ClickHouse (KEYWARD_CLICKHOUSE_URL); this store keeps an API's minutes: group by hour, or drop the ${perKey ? 'keyId filter and key group' : 'externalId filter and identity group'}`,
        );
      }
    }
    const timed =
      groups.has('minute') || groups.has('hour') || groups.has('day') || groups.has('month');
    const now = deps.now();
    const range = { start: input.start, end: input.end ?? now, now };
    const filled = timeSlots(deps.usageCounts, granularity, range, 'group by a coarser time');
    const tags = input.tag ?? [];
    const rows = (
      await deps.usageCounts.verifications(ws, input.apiId, granularity, range, keyIds, {
        key: groups.has('key'),
        identity: groups.has('identity') || identityId !== undefined,
        tags: groups.has('tags') || groups.has('tag') || tags.length > 0,
      })
    ).filter(
      (row) =>
        (OUTCOME_NAMES[row.outcome] !== undefined || row.outcome === CREDITS) &&
        (!keyIds || keyIds.has(row.keyId)) &&
        (identityId === undefined || row.identityId === identityId) &&
        tags.every((tag) => row.tags.includes(tag)) &&
        (!groups.has('identity') || row.identityId !== '') &&
        (!groups.has('tag') || row.tags.length > 0),
    );

    const answer = new Map<string, Row>();
    const add = (row: CountRow, tag?: string) => {
      const time = !timed ? undefined : groups.has('month') ? monthStart(row.time) : row.time;
      const parts: unknown[] = [time];
      if (groups.has('key')) parts.push(row.keyId);
      if (groups.has('identity')) parts.push(row.identityId);
      if (groups.has('tags')) parts.push(row.tags);
      if (tag !== undefined) parts.push(tag);
      const id = JSON.stringify(parts);
      let out = answer.get(id);
      if (!out) {
        out = emptyRow(time);
        if (groups.has('key')) out.keyId = row.keyId;
        if (groups.has('identity')) out.identity = { id: row.identityId, externalId: '' };
        if (groups.has('tags')) out.tags = [...row.tags];
        if (tag !== undefined) out.tag = tag;
        answer.set(id, out);
      }
      // Credits are counted beside the verifications that spent them, not as one.
      if (row.outcome === CREDITS) {
        out.spentCredits += row.count;
        return;
      }
      const name = OUTCOME_NAMES[row.outcome]!;
      out[name] = (out[name] as number) + row.count;
      out.total += row.count;
    };
    for (const row of rows) {
      if (groups.has('tag')) for (const tag of row.tags) add(row, tag);
      else add(row);
    }
    // Time alone: every slot of the range answers, zeros included (Unkey's WITH FILL), from the
    // oldest bucket retention keeps: before it there is nothing to count, and no bound.
    if (
      timed &&
      !groups.has('key') &&
      !groups.has('identity') &&
      !groups.has('tags') &&
      !groups.has('tag')
    ) {
      for (const time of groups.has('month') ? months(filled, range.end) : filled) {
        const id = JSON.stringify([time]);
        if (!answer.has(id)) answer.set(id, emptyRow(time));
      }
    }
    if (!timed && answer.size === 0) answer.set('[]', emptyRow(undefined));
    await nameIdentities(deps, ws, answer.values());

    let result = [...answer.values()];
    const orderBy = input.orderBy ?? (timed ? 'time' : undefined);
    if (orderBy) {
      const sign = (input.orderBy ? (input.order ?? 'asc') : 'asc') === 'asc' ? 1 : -1;
      result.sort((a, b) => sign * (Number(a[orderBy] ?? 0) - Number(b[orderBy] ?? 0)));
    }
    if (input.limit !== undefined) result = result.slice(0, input.limit);
    return result;
  },
});

function emptyRow(time: number | undefined): Row {
  const row: Record<string, unknown> = { total: 0 };
  if (time !== undefined) row.time = time;
  for (const name of Object.values(OUTCOME_NAMES)) row[name] = 0;
  row.spentCredits = 0;
  return row as Row;
}

function monthStart(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The months the day slots `days` fall in, up to `end`. */
function* months(days: readonly number[], end: number) {
  if (days.length === 0) return;
  for (let t = monthStart(days[0]!); t <= end;) {
    yield t;
    const date = new Date(t);
    t = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
}

/** An identity's externalId, as Unkey answers it beside its id. */
async function nameIdentities(
  deps: Pick<Services, 'directory'>,
  ws: string,
  rows: Iterable<Row>,
): Promise<void> {
  for (const row of rows) {
    const identity = row.identity as { id: string; externalId: string } | undefined;
    if (!identity) continue;
    identity.externalId = (await deps.directory.identity(ws, identity.id))?.externalId ?? '';
  }
}
