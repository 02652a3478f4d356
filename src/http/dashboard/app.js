/*
 * keyward dashboard: plain browser JavaScript, no framework and no third-party code. The page's
 * CSP allows only this file and app.css, and calls to this node's own /v1 API.
 *
 * Security rules kept throughout:
 * - the root key lives in sessionStorage only, and is sent only as `Authorization: Bearer`;
 * - every text that comes from the API reaches the page as textContent (via h()), never as markup;
 * - a new key's plaintext is shown once, held by nothing but its panel, and gone when dismissed.
 */
'use strict';

(() => {
  const SESSION_KEY = 'keyward.rootKey';
  const PAGE_SIZE = 20;

  const app = document.getElementById('app');
  const crumbs = document.getElementById('crumbs');
  const notice = document.getElementById('notice');
  const logoutButton = document.getElementById('logout');

  // ---------------------------------------------------------------- DOM helpers

  /**
   * h('tag.class1.class2', { property: value, 'attr-name': value, onclick: fn }, ...children):
   * names with a dash are attributes, `on…` are listeners, the rest DOM properties; children are
   * nodes or strings, and strings always become text nodes.
   */
  function h(tag, props, ...children) {
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

  const orDash = (value) =>
    value === undefined || value === null || value === '' ? '—' : String(value);
  const dateTime = (ms) => (typeof ms === 'number' ? new Date(ms).toLocaleString() : '—');
  const decode = (part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const keyHref = (keyId) => `#/keys/${encodeURIComponent(keyId)}`;
  const apiHref = (apiId) => `#/apis/${encodeURIComponent(apiId)}`;

  function duration(ms) {
    const units = [
      [86_400_000, 'd'],
      [3_600_000, 'h'],
      [60_000, 'min'],
      [1_000, 's'],
    ];
    for (const [size, unit] of units) if (ms % size === 0) return `${ms / size} ${unit}`;
    return `${ms} ms`;
  }

  function fromNow(ms) {
    const seconds = Math.max(0, Math.ceil((ms - Date.now()) / 1000));
    if (seconds === 0) return 'now';
    return seconds < 120 ? `in ${seconds} s` : `in ${Math.ceil(seconds / 60)} min`;
  }

  // ---------------------------------------------------------------- API client

  class ApiError extends Error {
    constructor(code, message, requestId) {
      super(message);
      this.code = code;
      this.requestId = requestId;
    }
  }

  const rootKey = () => sessionStorage.getItem(SESSION_KEY);

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
  const get = (operation, query) => call('GET', operation, query);
  const post = (operation, body) => call('POST', operation, body);

  // ---------------------------------------------------------------- notices and busy controls

  function setNotice(kind, ...parts) {
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

  function clearNotice() {
    notice.hidden = true;
    notice.replaceChildren();
  }

  function showError(error) {
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
  async function run(control, action) {
    control.disabled = true;
    try {
      await action();
    } catch (error) {
      showError(error);
    } finally {
      control.disabled = false;
    }
  }

  function form(className, fields, action) {
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

  const field = (label, input) => h('label.field', {}, h('span', {}, label), input);

  function setCrumbs(...items) {
    crumbs.replaceChildren(
      ...items.map(([label, href]) =>
        href ? h('a', { href }, label) : h('span', { 'aria-current': 'page' }, label),
      ),
    );
  }

  /**
   * Previous / Next over a cursor-paginated list. `load(cursor)` draws one page and answers
   * `{ count, total, cursor }`; the cursors of the pages seen so far make Previous possible.
   */
  function pager(load) {
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

  function table(headings, body, pagerElement) {
    const head = h(
      'thead',
      {},
      h(
        'tr',
        {},
        headings.map((title) => h('th', {}, title)),
      ),
    );
    return h('section.card', {}, h('div.scroll', {}, h('table', {}, head, body)), pagerElement);
  }

  const emptyRow = (columns, message) => h('tr', {}, h('td.empty', { colSpan: columns }, message));

  // ---------------------------------------------------------------- session

  function logout() {
    sessionStorage.removeItem(SESSION_KEY);
    render();
  }

  function loginView() {
    setCrumbs();
    const input = h('input', {
      id: 'root-key',
      type: 'password',
      autocomplete: 'off',
      spellcheck: false,
      required: true,
      placeholder: 'kwroot_…',
    });
    app.append(
      h(
        'section.card.login',
        {},
        h('h1', {}, 'Sign in'),
        h(
          'p.muted',
          {},
          'Paste a root key. It stays in this tab’s session storage, is sent to this node only, ' +
            'and is forgotten when you log out or close the tab.',
        ),
        form('stack', [field('Root key', input), h('button.primary', {}, 'Sign in')], async () => {
          sessionStorage.setItem(SESSION_KEY, input.value.trim());
          input.value = '';
          try {
            await get('apis.listApis', { limit: 1 });
          } catch (error) {
            if (error instanceof ApiError && error.code === 'UNAUTHORIZED') throw error;
            render();
            throw error;
          }
          render();
        }),
      ),
    );
    input.focus();
  }

  // ---------------------------------------------------------------- APIs

  async function apisView() {
    setCrumbs(['APIs']);
    const body = h('tbody');
    const list = pager(async (cursor) => {
      const page = await get('apis.listApis', { limit: PAGE_SIZE, cursor });
      body.replaceChildren(
        ...page.apis.map((api) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: apiHref(api.id) }, api.name)),
            h('td', {}, h('code', {}, api.id)),
            h('td', {}, dateTime(api.createdAt)),
          ),
        ),
      );
      if (page.apis.length === 0) body.append(emptyRow(3, 'No APIs yet: create one above.'));
      return { count: page.apis.length, total: page.total, cursor: page.cursor };
    });
    const name = h('input', { required: true, maxLength: 256, placeholder: 'payments' });
    app.append(
      h('div.heading', {}, h('h1', {}, 'APIs')),
      h(
        'section.card',
        {},
        h('h2', {}, 'Create an API'),
        form('row', [field('Name', name), h('button.primary', {}, 'Create API')], async () => {
          const created = await post('apis.createApi', { name: name.value.trim() });
          navigate(apiHref(created.apiId), `API “${created.name}” created.`);
        }),
      ),
      table(['Name', 'Id', 'Created'], body, list.element),
    );
    await list.go(0);
  }

  // ---------------------------------------------------------------- keys of an API

  async function apiView(apiId) {
    const api = await get('apis.getApi', { apiId });
    setCrumbs(['APIs', '#/'], [api.name]);
    const reveal = h('div');
    const body = h('tbody');
    const list = pager(async (cursor) => {
      const page = await get('apis.listKeys', { apiId, limit: PAGE_SIZE, cursor });
      body.replaceChildren(...page.keys.map((key) => keyRow(key, () => list.reload())));
      if (page.keys.length === 0) body.append(emptyRow(7, 'No keys yet: create one above.'));
      return { count: page.keys.length, total: page.total, cursor: page.cursor };
    });
    app.append(
      h('div.heading', {}, h('h1', {}, api.name), h('code.muted', {}, api.id)),
      reveal,
      createKeyForm(apiId, async (created) => {
        showPlaintext(reveal, created);
        await list.reload();
      }),
      table(
        ['Key', 'Name', 'Owner', 'Status', 'Rate limit', 'Credits', 'Actions'],
        body,
        list.element,
      ),
    );
    await list.go(0);
  }

  function keyRow(key, changed) {
    return h(
      'tr',
      {},
      h('td', {}, h('a', { href: keyHref(key.id) }, h('code', {}, key.start))),
      h('td', {}, orDash(key.name)),
      h('td', {}, orDash(key.ownerId)),
      h('td', {}, statusBadge(key.enabled)),
      h('td', {}, rateLimitText(key.ratelimit)),
      h('td', {}, creditsText(key)),
      h('td', {}, keyActions(key, changed, changed)),
    );
  }

  const statusBadge = (enabled) =>
    enabled ? h('span.badge.ok', {}, 'enabled') : h('span.badge.bad', {}, 'disabled');

  function rateLimitText(ratelimit) {
    if (!ratelimit) return 'none';
    const { limit, refillRate, refillInterval, type } = ratelimit;
    return `${limit} tokens, +${refillRate} every ${duration(refillInterval)} (${type})`;
  }

  function creditsText(key) {
    if (key.remaining === undefined) return 'unlimited';
    const refill = key.refill ? `, back to ${key.refill.amount} ${key.refill.interval}` : '';
    return `${key.remaining}${refill}`;
  }

  /** Disable or enable, and delete after a confirmation; `changed`/`deleted` run on success. */
  function keyActions(key, changed, deleted) {
    const verb = key.enabled ? 'Disable' : 'Enable';
    const toggle = h(
      'button',
      {
        type: 'button',
        'aria-label': `${verb} ${key.start}`,
        onclick: () =>
          run(toggle, async () => {
            await post('keys.updateKey', { keyId: key.id, enabled: !key.enabled });
            setNotice('ok', `Key ${key.start} ${key.enabled ? 'disabled' : 'enabled'}.`);
            await changed();
          }),
      },
      verb,
    );
    const remove = h(
      'button.danger',
      { type: 'button', 'aria-label': `Delete ${key.start}`, onclick: () => confirm() },
      'Delete',
    );
    const actions = h('span.actions', {}, toggle, remove);
    function confirm() {
      const yes = h(
        'button.danger',
        {
          type: 'button',
          onclick: () =>
            run(yes, async () => {
              await post('keys.deleteKey', { keyId: key.id });
              setNotice('ok', `Key ${key.start} deleted.`);
              await deleted();
            }),
        },
        'Yes, delete',
      );
      const no = h(
        'button',
        { type: 'button', onclick: () => actions.replaceChildren(toggle, remove) },
        'Cancel',
      );
      actions.replaceChildren(h('span.confirm', {}, `Delete ${key.start} for good?`), yes, no);
      no.focus();
    }
    return actions;
  }

  function createKeyForm(apiId, created) {
    const number = (props) => h('input', { type: 'number', min: 1, max: 1_000_000_000, ...props });
    const name = h('input', { maxLength: 256, placeholder: 'checkout service' });
    const prefix = h('input', {
      maxLength: 16,
      pattern: '[A-Za-z0-9_\\-]{1,16}',
      placeholder: 'sk',
    });
    const ownerId = h('input', { maxLength: 256, placeholder: 'user_123' });
    const type = h(
      'select',
      {},
      h('option', { value: '' }, 'none'),
      h('option', { value: 'fast' }, 'fast (per node)'),
      h('option', { value: 'consistent' }, 'consistent (global)'),
    );
    const limit = number({ defaultValue: '10', required: true });
    const refillRate = number({ defaultValue: '10', required: true });
    const refillInterval = number({ defaultValue: '1000', max: 2_592_000_000, required: true });
    const remaining = number({ placeholder: 'unlimited' });
    const bucket = h(
      'fieldset.row',
      { disabled: true },
      field('Bucket size', limit),
      field('Refill amount', refillRate),
      field('Refill every (ms)', refillInterval),
    );
    type.addEventListener('change', () => {
      bucket.disabled = type.value === '';
    });
    const element = form(
      'stack',
      [
        h('h2', {}, 'Create a key'),
        h(
          'div.row',
          {},
          field('Name', name),
          field('Prefix', prefix),
          field('Owner id', ownerId),
          field('Credits', remaining),
        ),
        h('div.row', {}, field('Rate limit', type), bucket),
        h('div', {}, h('button.primary', {}, 'Create key')),
      ],
      async () => {
        const input = { apiId };
        if (name.value.trim()) input.name = name.value.trim();
        if (prefix.value.trim()) input.prefix = prefix.value.trim();
        if (ownerId.value.trim()) input.ownerId = ownerId.value.trim();
        if (remaining.value !== '') input.remaining = Number(remaining.value);
        if (type.value) {
          input.ratelimit = {
            type: type.value,
            limit: Number(limit.value),
            refillRate: Number(refillRate.value),
            refillInterval: Number(refillInterval.value),
          };
        }
        const answer = await post('keys.createKey', input);
        element.reset();
        bucket.disabled = true;
        await created(answer);
      },
    );
    element.classList.add('card');
    return element;
  }

  /** The one and only sight of a new key: its plaintext is dropped when the panel is dismissed. */
  function showPlaintext(container, answer) {
    const secret = h('code.secret', { id: 'new-key' }, answer.key);
    const copy = h(
      'button.primary',
      {
        type: 'button',
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(secret.textContent);
            copy.textContent = 'Copied';
          } catch {
            window.getSelection().selectAllChildren(secret);
            setNotice(
              'error',
              'The browser refused to copy: the key is selected, copy it by hand.',
            );
          }
        },
      },
      'Copy',
    );
    const dismiss = h(
      'button',
      {
        type: 'button',
        onclick: () => {
          secret.textContent = '';
          container.replaceChildren();
        },
      },
      'Done, hide it',
    );
    container.replaceChildren(
      h(
        'section.card.reveal',
        { 'aria-label': 'New key' },
        h('h2', {}, 'New key created'),
        h(
          'p',
          {},
          h('strong', {}, 'Copy it now: you will not see it again. '),
          'keyward keeps only its hash.',
        ),
        h('div.secret-row', {}, secret, copy),
        h('div.row', {}, dismiss, h('a', { href: keyHref(answer.keyId) }, 'Open the key')),
      ),
    );
    copy.focus();
  }

  // ---------------------------------------------------------------- one key

  async function keyView(keyId) {
    const title = h('h1', {}, 'Key');
    const stamp = h('span.muted');
    const content = h('div');
    const refresh = h('button', { type: 'button', onclick: () => run(refresh, load) }, 'Refresh');
    let apiName;
    async function load() {
      const [key, bucket, recent] = await Promise.all([
        get('keys.getKey', { keyId }),
        get('keys.getBucket', { keyId }),
        get('keys.getVerifications', { keyId }),
      ]);
      if (apiName === undefined) {
        apiName = (await get('apis.getApi', { apiId: key.apiId })).name;
        setCrumbs(['APIs', '#/'], [apiName, apiHref(key.apiId)], [key.start]);
      }
      title.textContent = key.name || key.start;
      const gone = () => navigate(apiHref(key.apiId), `Key ${key.start} deleted.`);
      content.replaceChildren(
        h(
          'div.columns',
          {},
          h(
            'section.card',
            {},
            h('h2', {}, 'Record'),
            recordList(key),
            keyActions(key, load, gone),
          ),
          h('section.card.bucket', {}, h('h2', {}, 'Live bucket'), bucketView(bucket)),
        ),
        h(
          'section.card',
          {},
          h('h2', {}, 'Recent verifications'),
          h(
            'p.muted',
            {},
            `The last outcomes this node (${window.location.host}) saw, newest first. ` +
              'Other nodes keep their own.',
          ),
          outcomesTable(recent.verifications),
        ),
      );
      stamp.textContent = `as of ${new Date().toLocaleTimeString()}`;
    }
    app.append(h('div.heading', {}, title, h('span.grow'), stamp, refresh), content);
    await load();
  }

  function definitions(pairs) {
    return h(
      'dl',
      {},
      pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
    );
  }

  function recordList(key) {
    return definitions([
      ['Id', h('code', {}, key.id)],
      ['Start', h('code', {}, key.start)],
      ['API', h('code', {}, key.apiId)],
      ['Name', orDash(key.name)],
      ['Owner', orDash(key.ownerId)],
      ['Status', statusBadge(key.enabled)],
      ['Rate limit', rateLimitText(key.ratelimit)],
      ['Credits', creditsText(key)],
      ['Expires', key.expires === undefined ? 'never' : dateTime(key.expires)],
      ['Created', dateTime(key.createdAt)],
      ['Updated', dateTime(key.updatedAt)],
      ['Meta', key.meta ? h('code', {}, JSON.stringify(key.meta)) : '—'],
    ]);
  }

  function bucketView(bucket) {
    const parts = [];
    const ratelimit = bucket.ratelimit;
    if (ratelimit) {
      const full = ratelimit.remaining >= ratelimit.limit;
      parts.push(
        h(
          'p.tokens',
          {},
          h('strong', {}, String(ratelimit.remaining)),
          ` of ${ratelimit.limit} tokens left`,
        ),
        h('meter', {
          min: 0,
          max: ratelimit.limit,
          low: ratelimit.limit / 4,
          optimum: ratelimit.limit,
          value: ratelimit.remaining,
          'aria-label': 'tokens left',
        }),
        definitions([
          ['Type', ratelimit.type],
          [
            'Next refill',
            full
              ? 'the bucket is full'
              : `${new Date(ratelimit.reset).toLocaleTimeString()} (${fromNow(ratelimit.reset)})`,
          ],
          ['Credits', bucket.remaining === undefined ? 'unlimited' : `${bucket.remaining} left`],
        ]),
      );
    } else {
      parts.push(
        h('p.muted', {}, 'This key has no rate limit.'),
        definitions([
          ['Credits', bucket.remaining === undefined ? 'unlimited' : `${bucket.remaining} left`],
        ]),
      );
    }
    return parts;
  }

  function outcomesTable(verifications) {
    if (verifications.length === 0) {
      return h('p.empty', {}, 'No verification of this key on this node yet.');
    }
    const tone = (code) =>
      code === 'VALID'
        ? 'ok'
        : code === 'RATE_LIMITED' || code === 'USAGE_EXCEEDED'
          ? 'warn'
          : 'bad';
    return h(
      'table.outcomes',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'When'), h('th', {}, 'Outcome'))),
      h(
        'tbody',
        {},
        verifications.map((v) =>
          h(
            'tr',
            {},
            h('td', {}, dateTime(v.at)),
            h('td', {}, h(`span.badge.${tone(v.code)}`, {}, v.code)),
          ),
        ),
      ),
    );
  }

  // ---------------------------------------------------------------- routing

  let generation = 0;
  /** A notice for the next view, which clears the current one. */
  let flash = null;

  function navigate(hash, message) {
    flash = message;
    if (window.location.hash === hash) render();
    else window.location.hash = hash;
  }

  /** Draws the view of the current hash: #/ (APIs), #/apis/<apiId>, #/keys/<keyId>. */
  function render() {
    generation += 1;
    const current = generation;
    clearNotice();
    if (flash !== null) setNotice('ok', flash);
    flash = null;
    app.replaceChildren();
    const signedIn = rootKey() !== null;
    logoutButton.hidden = !signedIn;
    if (!signedIn) {
      loginView();
      return;
    }
    const hash = window.location.hash;
    const api = /^#\/apis\/([^/]+)$/.exec(hash);
    const key = /^#\/keys\/([^/]+)$/.exec(hash);
    const view = api ? apiView(decode(api[1])) : key ? keyView(decode(key[1])) : apisView();
    view.catch((error) => {
      if (current === generation) showError(error);
    });
  }

  logoutButton.addEventListener('click', () => {
    logout();
    setNotice('ok', 'Logged out: the root key is gone from this tab.');
  });
  window.addEventListener('hashchange', render);
  render();
})();
