/*
 * keyward dashboard: usage (#/usage). An API's verifications over a range, per hour or per day,
 * stacked by outcome, for the whole API, one key or one identity; and the keys with the most
 * verifications and the most refusals. Everything is read from analytics.getVerifications (the
 * counts every node flushes). Below them, over the same range, a rate-limit namespace's
 * standalone limits (namespaceUsage.js). The scope, the namespace and the range are the page's
 * query, so the API's, a key's and an identity's pages link to their own usage (usageHref).
 */
import {
  ApiError,
  app,
  emptyRow,
  field,
  form,
  get,
  h,
  hashOf,
  keyHref,
  replaceHash,
  run,
  setCrumbs,
  table,
} from './core.js';
import { stackedBars } from './charts.js';
import { namespaceUsage } from './namespaceUsage.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The time ranges offered, each read at a granularity that gives a readable number of bars. */
const RANGES = [
  { id: '24h', label: '24 h', span: DAY, groupBy: 'hour', slot: HOUR },
  { id: '7d', label: '7 d', span: 7 * DAY, groupBy: 'hour', slot: HOUR },
  { id: '30d', label: '30 d', span: 30 * DAY, groupBy: 'day', slot: DAY },
  { id: '90d', label: '90 d', span: 90 * DAY, groupBy: 'day', slot: DAY },
];
const DEFAULT_RANGE = '7d';

/**
 * The outcomes as analytics.getVerifications names them, bottom of the stack first. The first
 * three are always charted; the others when the range counts any.
 */
const OUTCOMES = [
  { field: 'valid', label: 'Valid', color: '#2e9e63', always: true },
  { field: 'rateLimited', label: 'Rate limited', color: '#e3a008', always: true },
  { field: 'usageExceeded', label: 'Usage exceeded', color: '#e8590c', always: true },
  { field: 'disabled', label: 'Disabled', color: '#6b7385' },
  { field: 'expired', label: 'Expired', color: '#9c6644' },
  { field: 'forbidden', label: 'Forbidden', color: '#9b59b6' },
  { field: 'insufficientPermissions', label: 'Insufficient permissions', color: '#5c7cfa' },
  { field: 'notFound', label: 'Not found', color: '#adb5bd' },
  { field: 'limiterUnavailable', label: 'Limiter unavailable', color: '#c92a2a' },
];
const OTHER_REFUSALS = OUTCOMES.slice(3).map(({ field }) => field);

/** Rows per top-keys table, and the keys read to rank them (the busiest, by total). */
const TOP = 10;
const TOP_READ = 1000;

const refused = (row) => row.total - row.valid;
const number = (n) => n.toLocaleString();

/**
 * The keys with the most verifications and with the most refusals (every outcome but valid),
 * from the rows of analytics.getVerifications grouped by key, busiest first; null when none
 * were read (one key's usage has no ranking).
 */
function rank(rows) {
  if (rows === null) return null;
  const counted = rows.filter((row) => row.total > 0);
  return {
    byTotal: counted.slice(0, TOP),
    byRefusals: counted
      .filter((row) => refused(row) > 0)
      .sort((a, b) => refused(b) - refused(a))
      .slice(0, TOP),
    partial: rows.length === TOP_READ,
  };
}

/**
 * The usage page of an API, a key (of that API) or an identity, and of a rate-limit namespace;
 * each value may be left out.
 */
export const usageHref = ({ apiId, keyId, externalId, namespace, range } = {}) =>
  hashOf('#/usage', { apiId, keyId, externalId, namespace, range });

/**
 * The keys' names (or starts) by id, for the tables: read one by one (keys.getKey), as no call
 * reads a list of ids. A key this root key may not read, or deleted since, is shown by its id.
 */
async function keyNames(keyIds) {
  const names = new Map();
  await Promise.all(
    [...new Set(keyIds)]
      .filter((keyId) => keyId !== '')
      .map(async (keyId) => {
        try {
          const key = await get('keys.getKey', { keyId });
          names.set(keyId, key.name || key.start);
        } catch {
          // Shown by its id alone.
        }
      }),
  );
  return names;
}

/** A key's cell: its name and id, linked to its page; a count of no key is the unknown keys'. */
function keyCell(keyId, names) {
  if (keyId === '') return h('td', {}, h('span.muted', {}, 'unknown keys'));
  const name = names.get(keyId);
  return h(
    'td',
    {},
    h('a', { href: keyHref(keyId) }, name ?? h('code', {}, keyId)),
    name === undefined ? null : h('code.muted.key-id', {}, keyId),
  );
}

const notRead = (error) =>
  error instanceof ApiError ? `Not read (${error.code}): ${error.message}.` : 'Not read.';

export async function usageView(params) {
  setCrumbs();
  const state = {
    apiId: params.get('apiId') ?? '',
    keyId: params.get('keyId') ?? '',
    externalId: params.get('externalId') ?? '',
    namespace: params.get('namespace') ?? '',
    range: RANGES.some(({ id }) => id === params.get('range'))
      ? params.get('range')
      : DEFAULT_RANGE,
  };
  const { apis } = await get('apis.listApis', { limit: 100 });
  app.append(h('div.heading', {}, h('h1', {}, 'Usage')));
  const limits = namespaceUsage({
    namespace: state.namespace,
    chosen: (namespace) => {
      state.namespace = namespace;
      replaceHash(usageHref(state));
    },
  });
  const selectedRange = () => RANGES.find(({ id }) => id === state.range);
  const rangeButtons = RANGES.map((range) =>
    h(
      'button',
      {
        type: 'button',
        'aria-pressed': String(range.id === state.range),
        onclick: () => {
          state.range = range.id;
          for (const [i, button] of rangeButtons.entries()) {
            button.setAttribute('aria-pressed', String(RANGES[i].id === state.range));
          }
          run(rangeGroup, () => Promise.all([apis.length === 0 ? null : show(), showLimits()]));
        },
      },
      range.label,
    ),
  );
  const rangeGroup = h('fieldset.segmented', {}, h('legend', {}, 'Range'), rangeButtons);
  /** The namespace's chart over the page's range; the address keeps the range. */
  async function showLimits() {
    replaceHash(usageHref(state));
    await limits.show(selectedRange());
  }

  // Standalone limits need no API: without one, the page still charts a namespace.
  if (apis.length === 0) {
    app.append(
      h(
        'section.card.scope',
        {},
        h('p.muted', {}, 'No APIs yet: verifications are counted per API.'),
        rangeGroup,
      ),
      ...limits.elements,
    );
    await showLimits();
    return;
  }
  if (state.apiId === '') state.apiId = apis[0].id;

  const apiSelect = h(
    'select',
    { required: true },
    apis.map((api) => h('option', { value: api.id }, `${api.name} (${api.id})`)),
  );
  // An API past the first hundred, named by the address, is offered too.
  if (!apis.some((api) => api.id === state.apiId)) {
    apiSelect.append(h('option', { value: state.apiId }, state.apiId));
  }
  apiSelect.value = state.apiId;
  const keyInput = h('input', { value: state.keyId, placeholder: 'all keys', spellcheck: false });
  const identityInput = h('input', {
    value: state.externalId,
    placeholder: 'all identities',
    maxLength: 256,
    spellcheck: false,
  });
  const scope = form(
    'row',
    [
      field('API', apiSelect),
      field('Key id', keyInput),
      field('Identity (external id)', identityInput),
      h('button.primary', {}, 'Show'),
    ],
    async () => {
      state.apiId = apiSelect.value;
      state.keyId = keyInput.value.trim();
      state.externalId = identityInput.value.trim();
      await show();
    },
  );

  const chartCard = h('section.card', { 'aria-label': 'Verifications over time' });
  const tops = h('div.sections');
  app.append(h('section.card.scope', {}, scope, rangeGroup), chartCard, tops, ...limits.elements);

  let shown = 0;
  /** Reads and draws the chart and the top keys of `state`; a later call wins over this one. */
  async function show() {
    shown += 1;
    const current = shown;
    replaceHash(usageHref(state));
    const range = selectedRange();
    const scoped = {
      apiId: state.apiId,
      keyId: state.keyId || undefined,
      externalId: state.externalId || undefined,
      start: Date.now() - range.span,
    };
    const [series, ranked] = await Promise.allSettled([
      get('analytics.getVerifications', { ...scoped, groupBy: range.groupBy }),
      state.keyId
        ? Promise.resolve(null)
        : get('analytics.getVerifications', {
            ...scoped,
            groupBy: 'key',
            orderBy: 'total',
            order: 'desc',
            limit: TOP_READ,
          }),
    ]);
    const ranking = ranked.status === 'rejected' ? ranked.reason : rank(ranked.value);
    const names =
      ranking === null || ranking instanceof Error
        ? new Map()
        : await keyNames([...ranking.byTotal, ...ranking.byRefusals].map((row) => row.keyId));
    if (current !== shown) return;
    drawChart(range, series);
    drawTops(ranking, names);
    const failed = [series, ranked].find(({ status }) => status === 'rejected');
    if (failed) throw failed.reason;
  }

  function scopeText() {
    const api = apis.find(({ id }) => id === state.apiId);
    const parts = [api ? `“${api.name}”` : state.apiId];
    if (state.keyId) parts.push(`key ${state.keyId}`);
    if (state.externalId) parts.push(`identity “${state.externalId}”`);
    return parts.join(', ');
  }

  function drawChart(range, answer) {
    const title = h('h2', {}, `Verifications of ${scopeText()}, per ${range.groupBy}`);
    if (answer.status === 'rejected') {
      chartCard.replaceChildren(title, h('p.empty', {}, notRead(answer.reason)));
      return;
    }
    const rows = answer.value;
    const shownOutcomes = OUTCOMES.filter(
      ({ field, always }) => always || rows.some((row) => row[field] > 0),
    );
    const total = rows.reduce((sum, row) => sum + row.total, 0);
    const valid = rows.reduce((sum, row) => sum + row.valid, 0);
    const spent = rows.reduce((sum, row) => sum + (row.spentCredits ?? 0), 0);
    const credits = spent === 1 ? '1 credit' : `${number(spent)} credits`;
    chartCard.replaceChildren(
      title,
      h(
        'p.muted.summary',
        {},
        `${number(total)} verifications in the last ${range.label}: ${number(valid)} valid, ` +
          `${number(total - valid)} refused` +
          (spent > 0 ? `; ${credits} spent.` : '.'),
      ),
      stackedBars({
        times: rows.map((row) => row.time),
        slot: range.slot,
        label: `Verifications per ${range.groupBy}, stacked by outcome`,
        range: `last ${range.label}`,
        series: shownOutcomes.map(({ field, label, color }) => ({
          label,
          color,
          values: rows.map((row) => row[field]),
        })),
      }),
      h(
        'p.muted',
        {},
        'Counts reach this chart once each node has flushed them (every second by default). ' +
          (range.groupBy === 'day' ? 'Days are UTC days.' : 'Hours are in your time zone.'),
      ),
    );
  }

  /** The top keys' tables: `ranking` is null when a key is chosen, an Error when not read. */
  function drawTops(ranking, names) {
    if (ranking === null) {
      tops.replaceChildren();
      return;
    }
    const byTotal = h('tbody');
    const byRefusals = h('tbody');
    if (ranking instanceof Error) {
      byTotal.append(emptyRow(4, notRead(ranking)));
      byRefusals.append(emptyRow(5, notRead(ranking)));
    } else {
      byTotal.append(
        ...ranking.byTotal.map((row) =>
          h(
            'tr',
            {},
            keyCell(row.keyId, names),
            h('td.number', {}, number(row.total)),
            h('td.number', {}, number(row.valid)),
            h('td.number', {}, number(refused(row))),
          ),
        ),
      );
      byRefusals.append(
        ...ranking.byRefusals.map((row) =>
          h(
            'tr',
            {},
            keyCell(row.keyId, names),
            h('td.number', {}, number(refused(row))),
            h('td.number', {}, number(row.rateLimited)),
            h('td.number', {}, number(row.usageExceeded)),
            h('td.number', {}, number(OTHER_REFUSALS.reduce((sum, field) => sum + row[field], 0))),
          ),
        ),
      );
      if (ranking.byTotal.length === 0) {
        byTotal.append(emptyRow(4, 'No verifications in this range.'));
      }
      if (ranking.byRefusals.length === 0) {
        byRefusals.append(emptyRow(5, 'No refusals in this range.'));
      }
    }
    tops.replaceChildren(
      table(['Key', 'Verifications', 'Valid', 'Refused'], byTotal, {
        title: 'Top keys by verifications',
      }),
      table(['Key', 'Refused', 'Rate limited', 'Usage exceeded', 'Other refusals'], byRefusals, {
        title: 'Top keys by refusals',
      }),
    );
    if (ranking.partial) {
      tops.append(
        h('p.muted', {}, `Ranked among the ${number(TOP_READ)} keys with the most verifications.`),
      );
    }
  }

  await Promise.all([show(), showLimits()]);
}
