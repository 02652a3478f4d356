/*
 * keyward dashboard, the parts every page shares: DOM helpers, the API client, notices, forms,
 * tables, the session and navigation. The pages are modules of their own (keys.js,
 * identities.js, rbac.js, with limits.js shared by the first two; usage.js, with its chart in
 * charts.js; audit.js; webhooks.js); app.js routes between them.
 *
 * Security rules kept throughout:
 * - the root key lives in sessionStorage only, and is sent only as `Authorization: Bearer`;
 * - every text that comes from the API reaches the page as textContent (via h()), never as markup.
 */

const SESSION_KEY = 'keyward.rootKey';
export const PAGE_SIZE = 20;

export const app = document.getElementById('app');
const crumbs = document.getElementById('crumbs');
const notice = document.getElementById('notice');

// ---------------------------------------------------------------- DOM helpers

/**
 * h('tag.class1.class2', { property: value, 'attr-name': value, onclick: fn }, ...children):
 * names with a dash are attributes, `on…` are listeners, the rest DOM properties; children are
 * nodes or strings, and strings always become text nodes.
 */
export function h(tag, props, ...children) {
  const [name, ...classes] = tag.split('.');
  const node = document.createElement(name);
  if (classes.length > 0) node.className = classes.join(' ');
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key.includes('-')) node.setAttribute(key, String(value));
    else node[key] = value;
  }
  for (const child of children.flat(Infinity)) {
    if (child !== undefined && child !== null && child !== false) node.append(child);
  }
  return node;
}

export const orDash = (value) =>
  value === undefined || value === null || value === '' ? '—' : String(value);
export const dateTime = (ms) => (typeof ms === 'number' ? new Date(ms).toLocaleString() : '—');
export const decode = (part) => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};
export const keyHref = (keyId) => `#/keys/${encodeURIComponent(keyId)}`;
export const apiHref = (apiId) => `#/apis/${encodeURIComponent(apiId)}`;
export const identityHref = (identityId) => `#/identities/${encodeURIComponent(identityId)}`;

export function duration(ms) {
  const units = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) if (ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

export function fromNow(ms) {
  const seconds = Math.max(0, Math.ceil((ms - Date.now()) / 1000));
  if (seconds === 0) return 'now';
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.ceil(seconds / 60)} min`;
}

// ---------------------------------------------------------------- API client

export class ApiError extends Error {
  constructor(code, message, requestId) {
    super(message);
    this.code = code;
    this.requestId = requestId;
  }
}

export const rootKey = () => sessionStorage.getItem(SESSION_KEY);
export const setRootKey = (key) => sessionStorage.setItem(SESSION_KEY, key);

/** Calls this node's /v1 API; an answer other than 2xx throws an ApiError from its envelope. */
async function call(method, operation, input) {
  const headers = { Authorization: `Bearer ${rootKey()}` };
  const init = { method, headers, cache: 'no-store', credentials: 'omit' };
  let url = `/v1/${operation}`;
  if (method === 'GET') {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(input)) {
      if (value !== undefined) query.set(name, String(value));
    }
    url += `?${query}`;
  } else {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(input);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new ApiError('NETWORK_ERROR', `the node did not answer (${error.message})`);
  }
  const body = await response.json().catch(() => null);
  if (response.ok && body !== null) return body;
  const error = body && body.error;
  if (error && typeof error.code === 'string') {
    throw new ApiError(error.code, String(error.message), error.requestId);
  }
  throw new ApiError(`HTTP_${response.status}`, response.statusText || 'unexpected answer');
}
export const get = (operation, query) => call('GET', operation, query);
export const post = (operation, body) => call('POST', operation, body);

// ---------------------------------------------------------------- session and navigation

/** Draws the page for the current hash: app.js sets it, the pages only ask for it. */
let draw = () => {};
export const onDraw = (render) => {
  draw = render;
};

/** A notice for the next view, which clears the current one. */
let flash = null;
export function takeFlash() {
  const message = flash;
  flash = null;
  return message;
}

export function navigate(hash, message) {
  flash = message;
  if (window.location.hash === hash) draw();
  else window.location.hash = hash;
}

/**
 * A page's address with a query, `#/usage?apiId=…`: the values left undefined or empty are left
 * out. A page whose filters are in its query can be linked to, reloaded and bookmarked as shown.
 */
export function hashOf(path, values) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  }
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** Changes the address without drawing the page again, for a page that redrew itself in place. */
export const replaceHash = (hash) => window.history.replaceState(null, '', hash);

export function logout() {
  sessionStorage.removeItem(SESSION_KEY);
  draw();
}

// ---------------------------------------------------------------- notices and busy controls

export function setNotice(kind, ...parts) {
  notice.className = `notice ${kind}`;
  notice.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  const dismiss = h(
    'button.quiet',
    { type: 'button', onclick: clearNotice, 'aria-label': 'Dismiss' },
    '×',
  );
  notice.replaceChildren(h('span', {}, ...parts), dismiss);
  notice.hidden = false;
}

export function clearNotice() {
  notice.hidden = true;
  notice.replaceChildren();
}

export function showError(error) {
  if (!(error instanceof ApiError)) {
    setNotice('error', String((error && error.message) || error));
  } else if (error.code === 'UNAUTHORIZED') {
    logout();
    setNotice('error', h('strong', {}, error.code), ' ', error.message);
  } else {
    const id = error.requestId ? h('span.muted', {}, ` (${error.requestId})`) : null;
    setNotice('error', h('strong', {}, error.code), ' ', error.message, id);
  }
}

/** Runs an action with its control (a button, or a form's fieldset) disabled meanwhile. */
export async function run(control, action) {
  control.disabled = true;
  try {
    await action();
  } catch (error) {
    showError(error);
  } finally {
    control.disabled = false;
  }
}

export function form(className, fields, action) {
  const fieldset = h('fieldset', {}, fields);
  return h(
    `form.${className}`,
    {
      onsubmit: (event) => {
        event.preventDefault();
        run(fieldset, action);
      },
    },
    fieldset,
  );
}

export const field = (label, input) => h('label.field', {}, h('span', {}, label), input);

/**
 * A Delete button that asks first (“<question>” Yes, delete / Cancel); `action` runs on yes.
 * `name` completes its accessible name: “Delete <name>”.
 */
export function deleteButton(name, question, action) {
  const holder = h('span.actions');
  const ask = h(
    'button.danger',
    { type: 'button', 'aria-label': `Delete ${name}`, onclick: () => confirm() },
    'Delete',
  );
  function confirm() {
    const yes = h(
      'button.danger',
      { type: 'button', onclick: () => run(yes, action) },
      'Yes, delete',
    );
    const no = h(
      'button',
      { type: 'button', onclick: () => holder.replaceChildren(ask) },
      'Cancel',
    );
    holder.replaceChildren(h('span.confirm', {}, question), yes, no);
    no.focus();
  }
  holder.append(ask);
  return holder;
}

/** Links beside a page's heading to other pages about the same thing: `[label, href]` each. */
export const related = (...links) =>
  h(
    'nav.related',
    { 'aria-label': 'Related pages' },
    links.map(([label, href]) => h('a', { href }, label)),
  );

export function setCrumbs(...items) {
  crumbs.replaceChildren(
    ...items.map(([label, href]) =>
      href ? h('a', { href }, label) : h('span', { 'aria-current': 'page' }, label),
    ),
  );
}

// ---------------------------------------------------------------- lists

/**
 * Previous / Next over a cursor-paginated list. `load(cursor)` draws one page and answers
 * `{ count, total, cursor }`; the cursors of the pages seen so far make Previous possible.
 */
export function pager(load) {
  const cursors = [undefined];
  let index = 0;
  const status = h('span.muted');
  const previous = h('button', { type: 'button', onclick: () => go(index - 1) }, '← Previous');
  const next = h('button', { type: 'button', onclick: () => go(index + 1) }, 'Next →');
  async function go(to) {
    previous.disabled = next.disabled = true;
    try {
      const page = await load(cursors[to]);
      if (page.count === 0 && to > 0) return go(to - 1);
      index = to;
      cursors[to + 1] = page.cursor;
      const first = index * PAGE_SIZE + 1;
      const last = index * PAGE_SIZE + page.count;
      status.textContent =
        page.count === 0
          ? 'none'
          : `${first === last ? first : `${first}–${last}`} of ${page.total}`;
      next.disabled = page.cursor === undefined;
    } catch (error) {
      showError(error);
    }
    previous.disabled = index === 0;
  }
  return { element: h('div.pager', {}, previous, status, next), go, reload: () => go(index) };
}

/** A card with a table: an optional title above it, an optional pager below. */
export function table(headings, body, { title, pager: pagerElement } = {}) {
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      headings.map((heading) => h('th', {}, heading)),
    ),
  );
  return h(
    'section.card',
    {},
    title ? h('h2', {}, title) : null,
    h('div.scroll', {}, h('table', {}, head, body)),
    pagerElement,
  );
}

export const emptyRow = (columns, message) =>
  h('tr', {}, h('td.empty', { colSpan: columns }, message));

/**
 * Usage credits as a key or an identity's pool holds them (`remaining`, `refill`): the count and
 * its refill, or `none` when there are none.
 */
export function creditsText(holder, none = 'unlimited') {
  if (holder.remaining === undefined) return none;
  const refill = holder.refill ? `, back to ${holder.refill.amount} ${holder.refill.interval}` : '';
  return `${holder.remaining}${refill}`;
}

export function definitions(pairs) {
  return h(
    'dl',
    {},
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}
