import {
  getAnalyticsVerifications,
  OUTCOME_NAMES,
  type AnalyticsInput,
} from '../operations/analytics/getVerifications';
import { getKey } from '../operations/keys/getKey';
import { runOperation } from '../operations/operation';
import { getUsage, type GetUsageInput } from '../operations/ratelimits/getUsage';
import { GRANULARITIES } from '../domain/usage';
import { UsageError, type CommandSpec, type Invocation, type OptionSpec } from './framework';
import { emit, isoTime, table } from './output';
import { operatorCaller, operatorServices, workspaceArgument, workspaceOption } from './services';
import { integerFlag, timeFlag, validateAs } from './validate';

const DAY = 86_400_000;

const rangeOptions: Readonly<Record<string, OptionSpec>> = {
  start: {
    type: 'string',
    value: 'TIME',
    description:
      'from: unix ms, an ISO 8601 date (2026-11-20T10:00:00Z) or a time ago (90m, 36h, 7d); default 24h',
  },
  end: { type: 'string', value: 'TIME', description: 'to, as --start takes it; default now' },
};

const granularityOption: OptionSpec = {
  type: 'string',
  value: 'G',
  description: 'minute, hour (default) or day',
};

/** --start and --end as the operations take them; `start` defaults to a day before now. */
function rangeFlags(invocation: Invocation, command: CommandSpec): { start: number; end?: number } {
  const now = Date.now();
  const start = timeFlag(invocation.string('start'), '--start', command, now) ?? now - DAY;
  const end = timeFlag(invocation.string('end'), '--end', command, now);
  if (end !== undefined && start >= end)
    throw new UsageError('--start: must be before --end', command);
  return { start, ...(end !== undefined ? { end } : {}) };
}

/** `a,b` as a list, as the wire takes a list parameter joined by commas. */
function listFlag(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

type Counts = Record<string, unknown>;

/** The outcomes any row counted, in the order of the answer's fields: the columns worth showing. */
function outcomesSeen(rows: readonly Counts[]): [string, string][] {
  return Object.entries(OUTCOME_NAMES).filter(([, field]) =>
    rows.some((row) => Number(row[field] ?? 0) > 0),
  );
}

/** One table of analytics.getVerifications rows: their groups, the outcomes seen, the total. */
function verificationTable(rows: readonly Counts[]): string[] {
  const groups: [string, (row: Counts) => string][] = [];
  const has = (field: string) => rows.some((row) => row[field] !== undefined);
  if (has('time')) groups.push(['TIME', (row) => isoTime(Number(row.time))]);
  if (has('keyId')) groups.push(['KEY', (row) => String(row.keyId)]);
  if (has('identity')) {
    groups.push([
      'IDENTITY',
      (row) => {
        const identity = row.identity as { id: string; externalId: string };
        return identity.externalId || identity.id;
      },
    ]);
  }
  if (has('tags')) groups.push(['TAGS', (row) => (row.tags as string[]).join(',')]);
  if (has('tag')) groups.push(['TAG', (row) => String(row.tag)]);
  const outcomes = outcomesSeen(rows);
  // The credits the verifications spent (issue 26 part 5): a column once any row spent some.
  const spent = rows.some((row) => Number(row.spentCredits ?? 0) > 0);
  return table(
    [
      ...groups.map(([header]) => header),
      ...outcomes.map(([code]) => code),
      'TOTAL',
      ...(spent ? ['CREDITS'] : []),
    ],
    rows.map((row) => [
      ...groups.map(([, cell]) => cell(row)),
      ...outcomes.map(([, field]) => String(row[field] ?? 0)),
      String(row.total),
      ...(spent ? [String(row.spentCredits ?? 0)] : []),
    ]),
  );
}

const key: CommandSpec = {
  path: ['usage', 'key'],
  brief: "a key's verifications by outcome, per minute, hour or day",
  summary:
    "Prints a key's verifications by outcome in every minute, hour or day of a range (zeros included), from the usage counts of every node, through analytics.getVerifications filtered by the key. Only the outcomes the key saw get a column.",
  options: {
    workspace: workspaceOption,
    ...rangeOptions,
    granularity: granularityOption,
    api: {
      type: 'string',
      value: 'api_…',
      description: "the key's API; needed for a deleted key, whose counts remain",
    },
  },
  args: [{ name: 'keyId', description: 'the key id (key_…)' }],
  notes:
    "Counts reach Redis within KEYWARD_ANALYTICS_FLUSH_MS of a verification. They are read where the nodes write them: KEYWARD_ANALYTICS_REDIS_URL, or the primary. Redis keeps a key's hours and days; a key's minutes need ClickHouse (KEYWARD_CLICKHOUSE_URL), and --granularity minute is refused without it.",
  example: 'keyward usage key --workspace ws_… --start 6h --granularity hour key_…',
  async run(invocation, runtime) {
    const keyId = invocation.args[0] ?? '';
    const granularity = invocation.string('granularity') ?? 'hour';
    if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
      throw new UsageError('--granularity: must be one of minute, hour, day', key);
    }
    const range = rangeFlags(invocation, key);
    const ws = await workspaceArgument(invocation, runtime);
    const services = await operatorServices(runtime, { analytics: true });
    const caller = operatorCaller(ws);
    const apiId =
      invocation.string('api') ?? (await runOperation(getKey, services, caller, { keyId })).apiId;
    const input = validateAs<AnalyticsInput>(
      getAnalyticsVerifications,
      { apiId, keyId: [keyId], ...range, groupBy: [granularity] },
      { apiId: '--api', keyId: '<keyId>', start: '--start', end: '--end' },
      key,
    );
    const usage = await runOperation(getAnalyticsVerifications, services, caller, input);
    emit(invocation, { workspaceId: ws, keyId, apiId, granularity, usage }, () =>
      verificationTable(usage),
    );
    return 0;
  },
};

const api: CommandSpec = {
  path: ['usage', 'api'],
  brief: "an API's verifications by outcome, grouped by time, key, identity or tags",
  summary:
    "Prints an API's verifications by outcome over a range, from the usage counts of every node, as analytics.getVerifications answers them: summed over the range, or grouped (--group-by), ordered and limited. Only the outcomes counted get a column.",
  options: {
    workspace: workspaceOption,
    ...rangeOptions,
    'group-by': {
      type: 'string',
      value: 'LIST',
      description: 'key, identity, tags, tag, minute, hour, day or month; several joined by commas',
    },
    'order-by': {
      type: 'string',
      value: 'FIELD',
      description: 'total, time or an outcome (valid, rateLimited, usageExceeded, …)',
    },
    order: { type: 'string', value: 'asc|desc', description: 'with --order-by; default asc' },
    limit: { type: 'string', value: 'N', description: 'rows to show, 1 to 100000' },
    key: { type: 'string', value: 'LIST', description: 'only these key ids, joined by commas' },
    'external-id': { type: 'string', value: 'ID', description: "only this identity's keys" },
    tag: { type: 'string', value: 'LIST', description: 'only verifications with all these tags' },
  },
  args: [{ name: 'apiId', description: 'the API id (api_…)' }],
  example:
    'keyward usage api --workspace ws_… --group-by key --order-by rateLimited --order desc --limit 10 api_…',
  async run(invocation, runtime) {
    const raw: Record<string, unknown> = {
      apiId: invocation.args[0] ?? '',
      ...rangeFlags(invocation, api),
    };
    const optional: [string, unknown][] = [
      ['groupBy', listFlag(invocation.string('group-by'))],
      ['orderBy', invocation.string('order-by')],
      ['order', invocation.string('order')],
      ['limit', integerFlag(invocation.string('limit'), '--limit', api)],
      ['keyId', listFlag(invocation.string('key'))],
      ['externalId', invocation.string('external-id')],
      ['tag', listFlag(invocation.string('tag'))],
    ];
    for (const [field, value] of optional) if (value !== undefined) raw[field] = value;
    const input = validateAs<AnalyticsInput>(
      getAnalyticsVerifications,
      raw,
      {
        apiId: '<apiId>',
        start: '--start',
        end: '--end',
        groupBy: '--group-by',
        orderBy: '--order-by',
        order: '--order',
        limit: '--limit',
        keyId: '--key',
        externalId: '--external-id',
        tag: '--tag',
      },
      api,
    );
    const ws = await workspaceArgument(invocation, runtime);
    const usage = await runOperation(
      getAnalyticsVerifications,
      await operatorServices(runtime, { analytics: true }),
      operatorCaller(ws),
      input,
    );
    emit(invocation, { workspaceId: ws, apiId: input.apiId, usage }, () =>
      usage.length === 0
        ? [`no verifications of ${input.apiId} in the range`]
        : verificationTable(usage),
    );
    return 0;
  },
};

const ratelimit: CommandSpec = {
  path: ['usage', 'ratelimit'],
  brief: "a namespace's standalone limits, passed and refused",
  summary:
    "Prints how many standalone limits (ratelimits.limit, multiLimit, v2's ratelimit.limit) of a namespace passed and how many were refused, in every minute, hour or day of a range (zeros included), or per identifier with --by-identifier, through ratelimits.getUsage.",
  options: {
    workspace: workspaceOption,
    ...rangeOptions,
    granularity: granularityOption,
    identifier: { type: 'string', value: 'ID', description: 'only this identifier' },
    'by-identifier': {
      type: 'boolean',
      description: 'one row per identifier over the range, most limits first',
    },
    limit: {
      type: 'string',
      value: 'N',
      description: 'with --by-identifier: rows, 1 to 1000 (default 100)',
    },
  },
  args: [{ name: 'namespace', description: "the namespace's name" }],
  example: 'keyward usage ratelimit --workspace ws_… --by-identifier --start 7d email.outbound',
  async run(invocation, runtime) {
    const raw: Record<string, unknown> = {
      namespaceName: invocation.args[0] ?? '',
      ...rangeFlags(invocation, ratelimit),
    };
    const optional: [string, unknown][] = [
      ['granularity', invocation.string('granularity')],
      ['identifier', invocation.string('identifier')],
      ['groupBy', invocation.flag('by-identifier') ? 'identifier' : undefined],
      ['limit', integerFlag(invocation.string('limit'), '--limit', ratelimit)],
    ];
    for (const [field, value] of optional) if (value !== undefined) raw[field] = value;
    if (raw.limit !== undefined && raw.groupBy === undefined) {
      throw new UsageError('--limit: only with --by-identifier', ratelimit);
    }
    const input = validateAs<GetUsageInput>(
      getUsage,
      raw,
      {
        namespaceName: '<namespace>',
        start: '--start',
        end: '--end',
        granularity: '--granularity',
        identifier: '--identifier',
        groupBy: '--by-identifier',
        limit: '--limit',
      },
      ratelimit,
    );
    const ws = await workspaceArgument(invocation, runtime);
    const { usage } = await runOperation(
      getUsage,
      await operatorServices(runtime, { analytics: true }),
      operatorCaller(ws),
      input,
    );
    const byIdentifier = input.groupBy === 'identifier';
    emit(invocation, { workspaceId: ws, namespace: input.namespaceName, usage }, () =>
      byIdentifier && usage.length === 0
        ? [`no limits in ${input.namespaceName!} in the range`]
        : table(
            [byIdentifier ? 'IDENTIFIER' : 'TIME', 'PASSED', 'LIMITED', 'TOTAL'],
            usage.map((row) => [
              byIdentifier ? row.identifier! : isoTime(row.time!),
              String(row.passed),
              String(row.limited),
              String(row.total),
            ]),
          ),
    );
    return 0;
  },
};

export const usageCommands: readonly CommandSpec[] = [key, api, ratelimit];
