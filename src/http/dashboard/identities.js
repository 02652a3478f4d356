/*
 * keyward dashboard: identities. Their own page (#/identities) lists and creates them, and one
 * identity's page (#/identities/<id>) shows, edits and deletes it; a key's page has a section on
 * the identity it belongs to, to link it to another by externalId or unlink it.
 *
 * An identity is an externalId, unique in the workspace, with meta and named rate limits shared
 * by every key linked to it.
 */
import {
  ApiError,
  app,
  creditsText,
  definitions,
  deleteButton,
  emptyRow,
  field,
  form,
  get,
  h,
  identityHref,
  navigate,
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
import { limitSummary, limitsEditor, limitsTable } from './limits.js';
import { usageHref } from './usage.js';

const externalIdInput = (props) =>
  h('input', { required: true, maxLength: 256, placeholder: 'user_123', ...props });

/** A field for meta as JSON: empty, or an object. */
function metaInput(meta) {
  const empty = meta === undefined || Object.keys(meta).length === 0;
  return h('textarea', {
    rows: 4,
    spellcheck: false,
    placeholder: '{"plan": "pro"}',
    value: empty ? '' : JSON.stringify(meta, null, 2),
  });
}

/** The meta a field holds: undefined when empty; an error naming the field unless an object. */
function readMeta(input) {
  const text = input.value.trim();
  if (text === '') return undefined;
  let meta;
  try {
    meta = JSON.parse(text);
  } catch (error) {
    throw new Error(`Meta: not JSON (${error.message}).`);
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    throw new Error('Meta: must be a JSON object, such as {"plan": "pro"}.');
  }
  return meta;
}

const metaView = (meta) =>
  Object.keys(meta ?? {}).length === 0
    ? h('p.muted', {}, 'No meta.')
    : h('pre.json', {}, JSON.stringify(meta, null, 2));

const notRead = (error) =>
  error instanceof ApiError ? `Not read (${error.code}): ${error.message}.` : 'Not read.';

// ---------------------------------------------------------------- the list

export async function identitiesView() {
  setCrumbs();
  const body = h('tbody');
  const list = pager(async (cursor) => {
    let page;
    try {
      page = await get('identities.listIdentities', { limit: PAGE_SIZE, cursor });
    } catch (error) {
      body.replaceChildren(emptyRow(3, notRead(error)));
      throw error;
    }
    body.replaceChildren(...page.identities.map(identityRow));
    if (page.identities.length === 0) {
      body.append(emptyRow(3, 'No identities yet: create one above, or link a key to one.'));
    }
    return { count: page.identities.length, total: page.total, cursor: page.cursor };
  });
  app.append(
    h('div.heading', {}, h('h1', {}, 'Identities')),
    h(
      'p.muted.intro',
      {},
      'An identity is a user or a customer of yours, by its external id: its meta and named rate ' +
        'limits are shared by every key linked to it. A key names its identity on its page.',
    ),
    createIdentityForm(),
    table(['External id', 'Rate limits', 'Id'], body, { pager: list.element }),
  );
  await list.go(0);
}

function identityRow(identity) {
  return h(
    'tr',
    {},
    h('td', {}, h('a', { href: identityHref(identity.id) }, identity.externalId)),
    h(
      'td',
      {},
      identity.ratelimits.length > 0
        ? h(
            'ul.chips',
            {},
            identity.ratelimits.map((limit) => h('li.chip', {}, limitSummary(limit))),
          )
        : '—',
    ),
    h('td', {}, h('code.muted', {}, identity.id)),
  );
}

function createIdentityForm() {
  const externalId = externalIdInput({ minLength: 3 });
  const meta = metaInput();
  const limits = limitsEditor([]);
  const element = form(
    'stack',
    [
      h('h2', {}, 'Create an identity'),
      h('div.row', {}, field('External id', externalId), field('Meta (JSON)', meta)),
      limits.element,
      h('div', {}, h('button.primary', {}, 'Create identity')),
    ],
    async () => {
      const input = { externalId: externalId.value.trim() };
      const given = readMeta(meta);
      if (given !== undefined) input.meta = given;
      const ratelimits = limits.value();
      if (ratelimits.length > 0) input.ratelimits = ratelimits;
      const created = await post('identities.createIdentity', input);
      navigate(identityHref(created.identityId), `Identity “${input.externalId}” created.`);
    },
  );
  element.classList.add('card');
  return element;
}

// ---------------------------------------------------------------- one identity

export async function identityView(identityId) {
  const identity = await get('identities.getIdentity', { identityId });
  setCrumbs(['Identities', '#/identities'], [identity.externalId]);
  const content = h('div.sections');
  app.append(
    h(
      'div.heading',
      {},
      h('h1', {}, identity.externalId),
      h('code.muted', {}, identity.id),
      h('span.grow'),
      related(
        ['Usage', usageHref({ externalId: identity.externalId })],
        ['Audit log', auditHref({ targetId: identity.id })],
      ),
    ),
    content,
  );
  showIdentity(content, identity);
}

function showIdentity(content, identity) {
  const { id, externalId } = identity;
  const edit = h(
    'button',
    { type: 'button', onclick: () => editIdentity(content, identity) },
    'Edit',
  );
  const remove = deleteButton(
    `identity ${externalId}`,
    `Delete ${externalId}? Its keys lose it and its limits.`,
    async () => {
      await post('identities.deleteIdentity', { identityId: id });
      navigate('#/identities', `Identity “${externalId}” deleted.`);
    },
  );
  content.replaceChildren(
    h(
      'section.card',
      { 'aria-label': 'Identity' },
      definitions([
        ['External id', externalId],
        ['Id', h('code', {}, id)],
        // A pool every key of the identity spends from with its own credits (README).
        ['Credits', creditsText(identity, 'no pool: its keys spend only their own')],
      ]),
      h('h2', {}, 'Meta'),
      metaView(identity.meta),
      h('h2', {}, 'Rate limits'),
      h(
        'p.muted',
        {},
        'Shared by every key linked to this identity: one bucket each, whichever key spends it. ' +
          'A key’s own limit of the same name wins over it.',
      ),
      limitsTable(identity.ratelimits, 'No named limits.'),
      h('div.actions', {}, edit, remove),
    ),
  );
}

/** Meta and limits in a form; both replace the identity's whole meta and list of limits. */
function editIdentity(content, identity) {
  // A new externalId renames the identity; its keys stay linked (identities.updateIdentity).
  const name = externalIdInput({ value: identity.externalId, minLength: 3 });
  const meta = metaInput(identity.meta);
  const limits = limitsEditor(identity.ratelimits);
  const cancel = h(
    'button',
    { type: 'button', onclick: () => showIdentity(content, identity) },
    'Cancel',
  );
  const element = form(
    'stack',
    [
      h('h2', {}, `Edit ${identity.externalId}`),
      field('External id', name),
      field('Meta (JSON)', meta),
      limits.element,
      h('div.row', {}, h('button.primary', {}, 'Save'), cancel),
    ],
    async () => {
      const renamed = name.value.trim();
      const updated = await post('identities.updateIdentity', {
        identityId: identity.id,
        meta: readMeta(meta) ?? {},
        ratelimits: limits.value(),
        ...(renamed !== identity.externalId ? { newExternalId: renamed } : {}),
      });
      setNotice('ok', `Identity “${updated.externalId}” saved.`);
      showIdentity(content, updated);
    },
  );
  element.classList.add('card');
  content.replaceChildren(element);
  meta.focus();
}

// ---------------------------------------------------------------- a key's identity

/**
 * A section of a key's page (keys.js): the identity the key belongs to, with its meta and the
 * limits its keys share, and a field to link the key to another by externalId (made when
 * missing, as keys.updateKey does) or a button to unlink it. A root key that may not read the
 * identity still sees the key's link to it.
 */
export async function keyIdentitySection(key, page) {
  const identity = key.identity;
  let shared = null;
  if (identity) {
    try {
      const read = await get('identities.getIdentity', { identityId: identity.id });
      shared = limitsTable(read.ratelimits, 'No named limits.');
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'INSUFFICIENT_PERMISSIONS') throw error;
      shared = h('p.muted', {}, `This root key may not read the identity (${error.message}).`);
    }
  }
  const externalId = externalIdInput({ value: key.ownerId ?? '' });
  const link = form(
    'row',
    [field('External id', externalId), h('button', {}, identity ? 'Change' : 'Link')],
    async () => {
      const name = externalId.value.trim();
      await post('keys.updateKey', { keyId: key.id, externalId: name });
      setNotice('ok', `Key ${key.start} linked to identity “${name}”.`);
      await page.reload();
    },
  );
  const unlink = h(
    'button',
    {
      type: 'button',
      onclick: () =>
        run(unlink, async () => {
          await post('keys.updateKey', { keyId: key.id, externalId: null });
          setNotice('ok', `Key ${key.start} unlinked.`);
          await page.reload();
        }),
    },
    'Unlink',
  );
  return h(
    'section.card',
    { 'aria-label': 'Identity' },
    h('h2', {}, 'Identity'),
    identity
      ? [
          definitions([
            ['External id', h('a', { href: identityHref(identity.id) }, identity.externalId)],
            ['Id', h('code', {}, identity.id)],
            [
              'Meta',
              Object.keys(identity.meta).length > 0
                ? h('code', {}, JSON.stringify(identity.meta))
                : '—',
            ],
          ]),
          h('h3', {}, 'Its rate limits, shared by its keys'),
          shared,
        ]
      : h(
          'p.muted',
          {},
          key.ownerId
            ? `No identity, though its external id is “${key.ownerId}”: the identity it was ` +
                'linked to is gone (or was never made). Link it again to link the identity of ' +
                'that id, made if missing.'
            : 'No identity. Link one by its external id: a missing one is made.',
        ),
    h('div.row.link-identity', {}, link, identity || key.ownerId ? unlink : null),
    h(
      'p.muted',
      {},
      'The external id is the key’s owner id: unlinking clears it; linking to one that does not ' +
        'exist yet makes that identity.',
    ),
  );
}
