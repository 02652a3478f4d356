/*
 * keyward dashboard: the APIs, the keys of an API, and one key's page.
 *
 * A new key's plaintext is shown once, held by nothing but its panel, and gone when dismissed.
 * A recoverable key's plaintext is shown again only on a confirmed Reveal (an audited decryption),
 * held the same way, and gone on Hide, Refresh or leaving the page.
 */
import {
  apiHref,
  app,
  creditsText,
  dateTime,
  definitions,
  deleteButton,
  duration,
  emptyRow,
  field,
  form,
  fromNow,
  get,
  h,
  keyHref,
  navigate,
  orDash,
  PAGE_SIZE,
  pager,
  post,
  related,
  run,
  setCrumbs,
  setNotice,
  table,
} from './core.js';
import { auditHref } from './audit.js';
import { keyIdentitySection } from './identities.js';
import { limitsEditor, limitsTable } from './limits.js';
import { keyAccessSection } from './rbac.js';
import { usageHref } from './usage.js';

// ---------------------------------------------------------------- APIs

export async function apisView() {
  setCrumbs();
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
    table(['Name', 'Id', 'Created'], body, { pager: list.element }),
  );
  await list.go(0);
}

// ---------------------------------------------------------------- keys of an API

export async function apiView(apiId) {
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
    h(
      'div.heading',
      {},
      h('h1', {}, api.name),
      h('code.muted', {}, api.id),
      h('span.grow'),
      related(['Usage', usageHref({ apiId })], ['Audit log', auditHref({ targetId: apiId })]),
    ),
    reveal,
    createKeyForm(apiId, async (created) => {
      showPlaintext(reveal, created);
      await list.reload();
    }),
    table(['Key', 'Name', 'Owner', 'Status', 'Rate limit', 'Credits', 'Actions'], body, {
      pager: list.element,
    }),
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
    h('td', {}, limitsText(key)),
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

/** The seed limit and the named ones, as a key's row and page show them. */
function limitsText(key) {
  const named = (key.ratelimits ?? []).map(
    (limit) =>
      `${limit.name}: ${limit.limit} per ${duration(limit.duration)}` +
      `${limit.autoApply ? '' : ', when named'}`,
  );
  if (named.length === 0) return rateLimitText(key.ratelimit);
  return [...(key.ratelimit ? [rateLimitText(key.ratelimit)] : []), ...named].join('; ');
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
  const remove = deleteButton(key.start, `Delete ${key.start} for good?`, async () => {
    await post('keys.deleteKey', { keyId: key.id });
    setNotice('ok', `Key ${key.start} deleted.`);
    await deleted();
  });
  return h('span.actions', {}, toggle, remove);
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

/**
 * Copies the plaintext in `secret` to the clipboard; where the browser refuses (no secure
 * context), selects it for a copy by hand instead.
 */
function copyButton(secret) {
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
          setNotice('error', 'The browser refused to copy: the key is selected, copy it by hand.');
        }
      },
    },
    'Copy',
  );
  return copy;
}

/** The one and only sight of a new key: its plaintext is dropped when the panel is dismissed. */
function showPlaintext(container, answer) {
  const secret = h('code.secret', { id: 'new-key' }, answer.key);
  const copy = copyButton(secret);
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

/**
 * A key's page, below its heading: these sections, in order. Each is `async (key, page) => node`
 * and reads what else it needs itself, alongside the others; `page.reload()` reads and draws
 * them all again, `page.gone()` leaves for the key's API once the key is deleted. A new section
 * is one function and one entry here.
 */
const KEY_SECTIONS = [
  recordAndBucket,
  keyIdentitySection,
  namedLimitsSection,
  keyAccessSection,
  recentOutcomes,
];

export async function keyView(keyId) {
  const title = h('h1', {}, 'Key');
  const stamp = h('span.muted');
  const content = h('div.sections');
  const refresh = h('button', { type: 'button', onclick: () => run(refresh, load) }, 'Refresh');
  const links = h('span');
  let apiName;
  async function load() {
    const key = await get('keys.getKey', { keyId });
    const page = {
      reload: load,
      gone: () => navigate(apiHref(key.apiId), `Key ${key.start} deleted.`),
    };
    const [sections, api] = await Promise.all([
      Promise.all(KEY_SECTIONS.map((section) => section(key, page))),
      apiName === undefined ? get('apis.getApi', { apiId: key.apiId }) : undefined,
    ]);
    if (api) {
      apiName = api.name;
      setCrumbs(['APIs', '#/'], [apiName, apiHref(key.apiId)], [key.start]);
    }
    title.textContent = key.name || key.start;
    links.replaceChildren(
      related(
        ['Usage', usageHref({ apiId: key.apiId, keyId })],
        ['Audit log', auditHref({ targetId: keyId })],
      ),
    );
    content.replaceChildren(...sections);
    stamp.textContent = `as of ${new Date().toLocaleTimeString()}`;
  }
  app.append(h('div.heading', {}, title, h('span.grow'), links, stamp, refresh), content);
  await load();
}

async function recordAndBucket(key, page) {
  const bucket = await get('keys.getBucket', { keyId: key.id });
  return h(
    'div.columns',
    {},
    h(
      'section.card',
      {},
      h('h2', {}, 'Record'),
      recordList(key),
      keyActions(key, page.reload, page.gone),
      key.recoverable ? revealControl(key) : null,
    ),
    h('section.card.bucket', {}, h('h2', {}, 'Live bucket'), bucketView(bucket)),
  );
}

/**
 * Reveal, for a recoverable key: a confirmation first, since every decryption is on the audit
 * log, then keys.getKey with `decrypt` and the plaintext shown in this panel alone. It is kept in
 * no storage and no address; Hide, Refresh (the page draws a new control) and leaving the page
 * drop it. A 403 (no decrypt_key) or 412 (no vault on this node) is shown as any error.
 */
function revealControl(key) {
  const holder = h('section.recover', { 'aria-label': 'Recoverable key' });
  function closed() {
    const reveal = h('button', { type: 'button', onclick: ask }, 'Reveal');
    holder.replaceChildren(
      h('p.muted', {}, 'This key is recoverable: its plaintext can be shown again.'),
      h('div.actions', {}, reveal),
    );
  }
  function ask() {
    const show = h(
      'button.danger',
      { type: 'button', onclick: () => run(show, decrypt) },
      'Show the key — this is recorded in the audit log',
    );
    const cancel = h('button', { type: 'button', onclick: closed }, 'Cancel');
    holder.replaceChildren(
      h('p.confirm', {}, 'Anyone who can read the audit log will see that you revealed it.'),
      h('div.actions', {}, show, cancel),
    );
    cancel.focus();
  }
  async function decrypt() {
    const answer = await get('keys.getKey', { keyId: key.id, decrypt: true });
    if (typeof answer.plaintext !== 'string') {
      // The record said recoverable; a node that answers no plaintext has nothing to show.
      closed();
      setNotice('error', `The node answered key ${key.start} without its plaintext.`);
      return;
    }
    const secret = h('code.secret', { id: 'revealed-key' }, answer.plaintext);
    const hide = h('button', { type: 'button', onclick: forget }, 'Hide');
    holder.replaceChildren(
      h('p', {}, h('strong', {}, 'The key: '), 'revealed now, on the audit log.'),
      h('div.secret-row', {}, secret, copyButton(secret), hide),
    );
    // Leaving for another page drops the text even if something still holds this panel.
    window.addEventListener('hashchange', forget, { once: true });
    function forget() {
      window.removeEventListener('hashchange', forget);
      secret.textContent = '';
      if (holder.isConnected) closed();
    }
  }
  closed();
  return holder;
}

/**
 * The key's named limits, and its seed limit as the record shows it. Edit puts the named ones in
 * rows; Save replaces them all (keys.updateKey `ratelimits`, null when none are left), leaving the
 * seed limit as it is.
 */
async function namedLimitsSection(key, page) {
  const limits = key.ratelimits ?? [];
  const content = h('div.holding');
  function show() {
    const edit = h('button', { type: 'button', onclick: editLimits }, 'Edit limits');
    content.replaceChildren(limitsTable(limits, 'No named limits.'), h('div', {}, edit));
  }
  function editLimits() {
    const editor = limitsEditor(limits, null);
    const cancel = h('button', { type: 'button', onclick: show }, 'Cancel');
    content.replaceChildren(
      form(
        'stack',
        [editor.element, h('div.row', {}, h('button.primary', {}, 'Save limits'), cancel)],
        async () => {
          const ratelimits = editor.value();
          await post('keys.updateKey', {
            keyId: key.id,
            ratelimits: ratelimits.length > 0 ? ratelimits : null,
          });
          setNotice('ok', `Rate limits of ${key.start} saved.`);
          await page.reload();
        },
      ),
    );
  }
  show();
  return h(
    'section.card',
    { 'aria-label': 'Named rate limits' },
    h('h2', {}, 'Named rate limits'),
    h(
      'p.muted',
      {},
      key.ratelimit
        ? `The seed limit (default) applies to every verification: ${rateLimitText(key.ratelimit)}. `
        : 'No seed limit (default). ',
      'A named limit applies to every verification if auto-applied, else when a verification ' +
        'names it; the key’s limit of a name wins over its identity’s.',
    ),
    content,
  );
}

async function recentOutcomes(key) {
  const recent = await get('keys.getRecentVerifications', { keyId: key.id });
  return h(
    'section.card',
    {},
    h('h2', {}, 'Recent verifications'),
    h(
      'p.muted',
      {},
      recent.scope === 'every-node'
        ? 'The last verifications of every node, newest first (from ClickHouse).'
        : `The last outcomes this node (${window.location.host}) saw, newest first. ` +
            'Other nodes keep their own.',
    ),
    outcomesTable(recent.verifications, recent.scope === 'every-node'),
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
    ['Rate limits', limitsText(key)],
    ['Credits', creditsText(key)],
    ['Expires', key.expires === undefined ? 'never' : dateTime(key.expires)],
    ['Recoverable', key.recoverable ? 'yes: its plaintext can be revealed' : 'no'],
    ['Created', dateTime(key.createdAt)],
    ['Updated', dateTime(key.updatedAt)],
    // As accurate as the nodes' usage flush (README, "Last use"): never on the request's path.
    ['Last used', key.lastUsedAt === undefined ? 'never' : dateTime(key.lastUsedAt)],
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

function outcomesTable(verifications, everyNode) {
  if (verifications.length === 0) {
    return h(
      'p.empty',
      {},
      everyNode
        ? 'No verification of this key yet.'
        : 'No verification of this key on this node yet.',
    );
  }
  const tone = (code) =>
    code === 'VALID' ? 'ok' : code === 'RATE_LIMITED' || code === 'USAGE_EXCEEDED' ? 'warn' : 'bad';
  // The address column only when some row has one (KEYWARD_LOG_CLIENT_IP).
  const withIp = verifications.some((v) => v.ip !== undefined);
  const headings = everyNode
    ? ['When', 'Outcome', 'Region', 'Tags', ...(withIp ? ['Client'] : [])]
    : ['When', 'Outcome'];
  return h(
    'table.outcomes',
    {},
    h('thead', {}, h('tr', {}, ...headings.map((text) => h('th', {}, text)))),
    h(
      'tbody',
      {},
      verifications.map((v) =>
        h(
          'tr',
          {},
          h('td', {}, dateTime(v.at)),
          h('td', {}, h(`span.badge.${tone(v.code)}`, {}, v.code)),
          ...(everyNode
            ? [
                h('td', {}, h('code', {}, v.region ?? '')),
                h('td', {}, (v.tags ?? []).join(', ') || '—'),
                ...(withIp ? [h('td', {}, h('code', {}, v.ip ?? '—'))] : []),
              ]
            : []),
        ),
      ),
    ),
  );
}
