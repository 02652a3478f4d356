/*
 * keyward dashboard: the audit log (#/audit), the workspace's management writes newest first
 * (auditLogs.list, audit.*.read): who (the root key), what (the operation), the target, a summary
 * and the request id. Filtered by a target id and an operation, kept in the page's query so the
 * API's, a key's and an identity's pages link to their own entries (auditHref); **More** reads on
 * from the cursor.
 */
import {
  ApiError,
  PAGE_SIZE,
  apiHref,
  app,
  dateTime,
  emptyRow,
  field,
  form,
  get,
  h,
  hashOf,
  identityHref,
  keyHref,
  replaceHash,
  run,
  setCrumbs,
  table,
} from './core.js';

/** The entries of one target, one operation, both or neither. */
export const auditHref = ({ targetId, operation } = {}) =>
  hashOf('#/audit', { targetId, operation });

/** The targets that have a page of their own link to it. */
const TARGET_PAGES = { api: apiHref, key: keyHref, identity: identityHref };

function targetCell(target) {
  const page = TARGET_PAGES[target.type];
  const id = h('code', {}, target.id);
  return h(
    'td.target',
    {},
    h('span.muted', {}, target.type),
    page ? h('a', { href: page(target.id) }, id) : id,
  );
}

const text = (value) =>
  typeof value === 'string'
    ? value
    : Array.isArray(value)
      ? value.map(text).join(', ')
      : JSON.stringify(value);

/** A summary's fields, one a line: a string as it is, a list as its items, the rest as JSON. */
function summaryCell(summary) {
  const fields = Object.entries(summary);
  if (fields.length === 0) return h('td', {}, '—');
  return h(
    'td.summary',
    {},
    fields.map(([name, value]) =>
      h('div', {}, h('span.muted', {}, `${name} `), h('code', {}, text(value))),
    ),
  );
}

/** When, and who: the root key (`operator` for the command line) and the request's id. */
function entryRow(entry) {
  return h(
    'tr',
    {},
    h(
      'td.when',
      {},
      h('span', {}, dateTime(entry.time)),
      h('code', { title: 'root key' }, entry.rootKeyId),
      h('code.muted', { title: 'request id' }, entry.requestId),
    ),
    h('td', {}, h('code', {}, entry.operation)),
    targetCell(entry.target),
    summaryCell(entry.summary),
  );
}

export async function auditView(params) {
  setCrumbs();
  const filters = {
    targetId: params.get('targetId') ?? '',
    operation: params.get('operation') ?? '',
  };
  const targetInput = h('input', {
    value: filters.targetId,
    maxLength: 64,
    placeholder: 'key_…, api_…, id_…',
    spellcheck: false,
  });
  const operationInput = h('input', {
    value: filters.operation,
    pattern: '[A-Za-z]{1,32}\\.[A-Za-z]{1,32}',
    placeholder: 'keys.updateKey',
    spellcheck: false,
  });
  const body = h('tbody');
  const status = h('span.muted');
  const more = h(
    'button',
    { type: 'button', onclick: () => run(more, () => read(cursor)) },
    'More',
  );
  let cursor;
  let count = 0;
  let reading = 0;

  /** Reads one page from `from` (the newest when undefined) and adds its entries below. */
  async function read(from) {
    reading += 1;
    const current = reading;
    let page;
    try {
      page = await get('auditLogs.list', {
        limit: PAGE_SIZE,
        cursor: from,
        targetId: filters.targetId || undefined,
        operation: filters.operation || undefined,
      });
    } catch (error) {
      if (current !== reading) return;
      more.hidden = true;
      const message =
        error instanceof ApiError ? `Not read (${error.code}): ${error.message}.` : 'Not read.';
      body.replaceChildren(emptyRow(4, message));
      throw error;
    }
    if (current !== reading) return;
    if (from === undefined) body.replaceChildren();
    body.querySelector('td.empty')?.parentElement.remove();
    body.append(...page.entries.map(entryRow));
    count += page.entries.length;
    cursor = page.cursor;
    more.hidden = cursor === undefined;
    // A filtered page may come back short, or empty, with a cursor: the log goes on further back.
    if (count === 0) {
      body.append(
        emptyRow(
          4,
          cursor === undefined
            ? 'No entries.'
            : 'No matching entries among the newest: More reads further back.',
        ),
      );
    }
    status.textContent =
      `${count} ${count === 1 ? 'entry' : 'entries'}` +
      (cursor === undefined ? ', the whole log' : ' so far');
  }

  const filter = form(
    'row',
    [
      field('Target id', targetInput),
      field('Operation', operationInput),
      h('button.primary', {}, 'Filter'),
    ],
    async () => {
      filters.targetId = targetInput.value.trim();
      filters.operation = operationInput.value.trim();
      replaceHash(auditHref(filters));
      count = 0;
      await read(undefined);
    },
  );
  filter.classList.add('card');
  app.append(
    h('div.heading', {}, h('h1', {}, 'Audit log')),
    h(
      'p.muted.intro',
      {},
      'Every management write, newest first: who made it (the root key), the operation, what it ' +
        'changed and the request id to find it in the node’s logs. Reading it needs audit.*.read.',
    ),
    filter,
    table(['When, root key, request id', 'Operation', 'Target', 'Summary'], body, {
      pager: h('div.pager', {}, status, more),
    }),
  );
  await read(undefined);
}
