/*
 * keyward dashboard: a rate-limit namespace's usage, on the Usage page (usage.js). Its standalone
 * limits (ratelimits.limit and multiLimit, counted by every node) that passed and that were
 * limited, per hour or day of the page's range, stacked; and the identifiers with the most
 * limits. Everything is read from ratelimits.getUsage. No call lists namespaces, so the page
 * names one, by its name or its id.
 */
import { ApiError, emptyRow, field, form, get, h, table } from './core.js';
import { stackedBars } from './charts.js';

/** Read as an id when it has the form of one keyward makes, as the override calls read it. */
const NAMESPACE_ID = /^rlns_[1-9A-HJ-NP-Za-km-z]{22}$/;
/** A name's characters (ratelimits.limit's `namespace`); ids are of them too. */
const NAMESPACE = '[A-Za-z0-9_.:/\\-]{1,128}';
const TOP = 10;

/** Bottom of the stack first. */
const SERIES = [
  { field: 'passed', label: 'Passed', color: '#2e9e63' },
  { field: 'limited', label: 'Limited', color: '#e3a008' },
];

const number = (n) => n.toLocaleString();
const notRead = (error) =>
  error instanceof ApiError ? `Not read (${error.code}): ${error.message}.` : 'Not read.';

/**
 * The namespace's card (a field to name it, its chart) and its top identifiers' table.
 * `namespace` is the one named at first ('' for none); `chosen(name)` is told of each one named
 * since, for the page's address. `show(range)` reads and draws for one of the page's ranges.
 */
export function namespaceUsage({ namespace, chosen }) {
  const input = h('input', {
    value: namespace,
    placeholder: 'name or rlns_… id',
    pattern: NAMESPACE,
    maxLength: 128,
    spellcheck: false,
  });
  let range = null;
  const chooser = form(
    'row',
    [field('Rate-limit namespace', input), h('button.primary', {}, 'Show limits')],
    async () => {
      chosen(input.value.trim());
      await show(range);
    },
  );
  const title = h('h2');
  const body = h('div');
  const card = h(
    'section.card.namespace-usage',
    { 'aria-label': 'Rate limits over time' },
    title,
    chooser,
    body,
  );
  const tops = h('div.sections');

  let shown = 0;
  /** Reads and draws `range` for the namespace in the field; a later call wins over this one. */
  async function show(next) {
    shown += 1;
    const current = shown;
    range = next;
    const name = input.value.trim();
    if (name === '') {
      title.textContent = 'Standalone rate limits';
      body.replaceChildren(
        h(
          'p.muted',
          {},
          'Name a namespace to chart its limits (ratelimits.limit and multiLimit) that passed ' +
            'and that were limited, over the range above.',
        ),
      );
      tops.replaceChildren();
      return;
    }
    const ref = NAMESPACE_ID.test(name) ? { namespaceId: name } : { namespaceName: name };
    const query = { ...ref, start: Date.now() - range.span, granularity: range.groupBy };
    const [series, ranked] = await Promise.allSettled([
      get('ratelimits.getUsage', query),
      get('ratelimits.getUsage', { ...query, groupBy: 'identifier', limit: TOP }),
    ]);
    if (current !== shown) return;
    title.textContent = `Rate limits of namespace “${name}”, per ${range.groupBy}`;
    drawChart(series);
    drawTops(ranked);
    const failed = [series, ranked].find(({ status }) => status === 'rejected');
    if (failed) throw failed.reason;
  }

  function drawChart(answer) {
    if (answer.status === 'rejected') {
      body.replaceChildren(h('p.empty', {}, notRead(answer.reason)));
      return;
    }
    const rows = answer.value.usage;
    const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
    body.replaceChildren(
      h(
        'p.muted.summary',
        {},
        `${number(sum('total'))} limits in the last ${range.label}: ${number(sum('passed'))} ` +
          `passed, ${number(sum('limited'))} limited.`,
      ),
      stackedBars({
        times: rows.map((row) => row.time),
        slot: range.slot,
        label: `Rate limits per ${range.groupBy}, stacked: passed, then limited`,
        range: `last ${range.label}`,
        series: SERIES.map(({ field: key, label, color }) => ({
          label,
          color,
          values: rows.map((row) => row[key]),
        })),
      }),
    );
  }

  function drawTops(answer) {
    const rows = h('tbody');
    if (answer.status === 'rejected') {
      rows.append(emptyRow(4, notRead(answer.reason)));
    } else if (answer.value.usage.length === 0) {
      rows.append(emptyRow(4, 'No limits in this range.'));
    } else {
      rows.append(
        ...answer.value.usage.map((row) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, row.identifier)),
            h('td.number', {}, number(row.total)),
            h('td.number', {}, number(row.passed)),
            h('td.number', {}, number(row.limited)),
          ),
        ),
      );
    }
    tops.replaceChildren(
      table(['Identifier', 'Limits', 'Passed', 'Limited'], rows, { title: 'Top identifiers' }),
    );
  }

  return { elements: [card, tops], show };
}
