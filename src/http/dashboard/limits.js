/*
 * keyward dashboard: named rate limits (`ratelimits`), shown and edited the same way on a key's
 * page (keys.js) and an identity's (identities.js). A limit is a bucket of `limit` tokens refilled
 * whole every `duration` ms; `autoApply` ones are spent by every verification, the others when a
 * verification names them.
 */
import { duration, field, h } from './core.js';

/** A limit's name as the API takes it: 1–64 of these characters. */
const LIMIT_NAME = '[A-Za-z0-9_.:/\\-]{1,64}';
const LIMIT_MAX = 1_000_000_000;
const DURATION_MAX = 2_592_000_000;

const typeText = (type) => (type === 'fast' ? 'fast (per node)' : 'consistent (global)');

/** The limits in a table (name, type, limit, duration, auto-apply), or `none` when there are none. */
export function limitsTable(limits, none) {
  if (limits.length === 0) return h('p.muted', {}, none);
  return h(
    'div.scroll',
    {},
    h(
      'table.limits',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Type', 'Limit', 'Per', 'Auto-apply'].map((heading) => h('th', {}, heading)),
        ),
      ),
      h(
        'tbody',
        {},
        limits.map((limit) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, limit.name)),
            h('td', {}, typeText(limit.type)),
            h('td', {}, String(limit.limit)),
            h('td', {}, duration(limit.duration)),
            h('td', {}, limit.autoApply ? 'yes' : 'no, when named'),
          ),
        ),
      ),
    ),
  );
}

/** One limit as a line of text, for a list's cell: `tokens: 100 / 1 h`. */
export const limitSummary = (limit) =>
  `${limit.name}: ${limit.limit} / ${duration(limit.duration)}`;

/**
 * Rows to edit a list of named limits, one per limit, each with its Remove, and a button to add
 * one, under `legend` if any; for a form (its inputs are checked on submit). `value()` answers the
 * rows as the API takes them, in order.
 */
export function limitsEditor(limits, legend = 'Named rate limits') {
  const rows = h('div.limit-rows');
  const readers = new Map();
  const none = h('p.muted', {}, 'No named limits.');
  const add = h(
    'button',
    { type: 'button', onclick: () => addRow({}).querySelector('input').focus() },
    '+ Add a limit',
  );
  function changed() {
    none.hidden = readers.size > 0;
  }
  function addRow(limit) {
    const number = (props) => h('input', { type: 'number', min: 1, required: true, ...props });
    const name = h('input', {
      required: true,
      pattern: LIMIT_NAME,
      maxLength: 64,
      placeholder: 'requests',
      value: limit.name ?? '',
    });
    const type = h(
      'select',
      {},
      h('option', { value: 'consistent' }, typeText('consistent')),
      h('option', { value: 'fast' }, typeText('fast')),
    );
    type.value = limit.type ?? 'consistent';
    const size = number({ max: LIMIT_MAX, placeholder: '100', value: limit.limit ?? '' });
    const every = number({ max: DURATION_MAX, placeholder: '60000', value: limit.duration ?? '' });
    const autoApply = h('input', { type: 'checkbox', checked: limit.autoApply === true });
    const row = h(
      'div.row.limit-row',
      {},
      field('Name', name),
      field('Type', type),
      field('Limit', size),
      field('Per (ms)', every),
      h('label.choice', {}, autoApply, 'Auto-apply'),
    );
    const remove = h(
      'button.quiet',
      {
        type: 'button',
        'aria-label': 'Remove this limit',
        onclick: () => {
          readers.delete(row);
          row.remove();
          changed();
        },
      },
      'Remove',
    );
    row.append(remove);
    readers.set(row, () => ({
      name: name.value.trim(),
      type: type.value,
      limit: Number(size.value),
      duration: Number(every.value),
      autoApply: autoApply.checked,
    }));
    rows.append(row);
    changed();
    return row;
  }
  for (const limit of limits) addRow(limit);
  changed();
  return {
    element: h(
      'fieldset.limits-editor',
      {},
      legend ? h('legend', {}, legend) : null,
      none,
      rows,
      h('div', {}, add),
    ),
    value: () => [...rows.children].map((row) => readers.get(row)()),
  };
}
