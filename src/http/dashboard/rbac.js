/*
 * keyward dashboard: roles and permissions. Their own page (#/rbac) lists, creates and deletes
 * them; a key's page has a section on what the key holds, to give or take either.
 */
import {
  ApiError,
  app,
  deleteButton,
  emptyRow,
  field,
  form,
  get,
  h,
  orDash,
  post,
  run,
  setCrumbs,
  setNotice,
  table,
} from './core.js';

/** A permission's name as the API takes it: 3–256 of these characters (a role's name: any). */
const PERMISSION_NAME = '[A-Za-z0-9_.:\\-]{3,256}';

/** The workspace's permissions and roles, oldest first (roles with their permissions' names). */
async function readCatalogue() {
  const reads = await Promise.allSettled([
    get('permissions.listPermissions', {}),
    get('permissions.listRoles', {}),
  ]);
  // The permissions' failure first whichever answered first: the notice names one, always the same.
  for (const read of reads) if (read.status === 'rejected') throw read.reason;
  const [permissions, roles] = reads.map((read) => read.value);
  return { permissions, roles };
}

const chipList = (items) =>
  h(
    'ul.chips',
    {},
    items.map((item) => h('li.chip', {}, item)),
  );

// ---------------------------------------------------------------- the page

export async function rbacView() {
  setCrumbs();
  const permissionRows = h('tbody');
  const roleRows = h('tbody');
  const choices = h('div.choices');
  async function reload() {
    try {
      const { permissions, roles } = await readCatalogue();
      permissionRows.replaceChildren(...permissions.map((p) => permissionRow(p, reload)));
      if (permissions.length === 0) {
        permissionRows.append(emptyRow(4, 'No permissions yet: create one above.'));
      }
      roleRows.replaceChildren(...roles.map((role) => roleRow(role, reload)));
      if (roles.length === 0) roleRows.append(emptyRow(5, 'No roles yet: create one above.'));
      drawChoices(choices, permissions);
    } catch (error) {
      const unread =
        error instanceof ApiError ? `Not read (${error.code}): ${error.message}.` : 'Not read.';
      permissionRows.replaceChildren(emptyRow(4, unread));
      roleRows.replaceChildren(emptyRow(5, unread));
      choices.replaceChildren(h('span.muted', {}, 'Not read.'));
      throw error;
    }
  }
  app.append(
    h('div.heading', {}, h('h1', {}, 'Roles & permissions')),
    h(
      'p.muted.intro',
      {},
      'A key holds permissions of its own and through its roles; a verification that asks for ' +
        'permissions is valid only if the key holds them. Give them to a key on its page.',
    ),
    h('div.columns', {}, createPermissionForm(reload), createRoleForm(choices, reload)),
    table(['Name', 'Description', 'Id', 'Actions'], permissionRows, { title: 'Permissions' }),
    table(['Name', 'Description', 'Permissions', 'Id', 'Actions'], roleRows, { title: 'Roles' }),
  );
  await reload();
}

function permissionRow(permission, reload) {
  const { id, name } = permission;
  const remove = deleteButton(
    `permission ${name}`,
    `Delete ${name}? Keys and roles lose it.`,
    async () => {
      await post('permissions.deletePermission', { permissionId: id });
      setNotice('ok', `Permission “${name}” deleted.`);
      await reload();
    },
  );
  return h(
    'tr',
    {},
    h('td', {}, h('code', {}, name)),
    h('td', {}, orDash(permission.description)),
    h('td', {}, h('code.muted', {}, id)),
    h('td', {}, remove),
  );
}

function roleRow(role, reload) {
  const { id, name } = role;
  const remove = deleteButton(`role ${name}`, `Delete ${name}? Keys lose it.`, async () => {
    await post('permissions.deleteRole', { roleId: id });
    setNotice('ok', `Role “${name}” deleted.`);
    await reload();
  });
  const permissions = role.permissions ?? [];
  return h(
    'tr',
    {},
    h('td', {}, name),
    h('td', {}, orDash(role.description)),
    h('td', {}, permissions.length > 0 ? chipList(permissions) : '—'),
    h('td', {}, h('code.muted', {}, id)),
    h('td', {}, remove),
  );
}

function createPermissionForm(reload) {
  const name = h('input', {
    required: true,
    pattern: PERMISSION_NAME,
    maxLength: 256,
    placeholder: 'documents.read',
  });
  const description = h('input', { minLength: 3, maxLength: 256, placeholder: 'optional' });
  const element = form(
    'stack',
    [
      h('h2', {}, 'Create a permission'),
      h('div.row', {}, field('Name', name), field('Description', description)),
      h('div', {}, h('button.primary', {}, 'Create permission')),
    ],
    async () => {
      const input = withDescription({ name: name.value.trim() }, description);
      await post('permissions.createPermission', input);
      element.reset();
      setNotice('ok', `Permission “${input.name}” created.`);
      await reload();
    },
  );
  element.classList.add('card');
  return element;
}

/** `choices` holds a checkbox per permission (drawChoices): the role gets the ticked ones. */
function createRoleForm(choices, reload) {
  const name = h('input', { required: true, minLength: 3, maxLength: 256, placeholder: 'editor' });
  const description = h('input', { minLength: 3, maxLength: 256, placeholder: 'optional' });
  const element = form(
    'stack',
    [
      h('h2', {}, 'Create a role'),
      h('div.row', {}, field('Name', name), field('Description', description)),
      h('fieldset.pick', {}, h('legend', {}, 'Its permissions'), choices),
      h('div', {}, h('button.primary', {}, 'Create role')),
    ],
    async () => {
      const permissions = [...choices.querySelectorAll('input:checked')].map((box) => box.value);
      const input = withDescription({ name: name.value.trim(), permissions }, description);
      await post('permissions.createRole', input);
      element.reset();
      setNotice('ok', `Role “${input.name}” created.`);
      await reload();
    },
  );
  element.classList.add('card');
  return element;
}

function withDescription(input, description) {
  const text = description.value.trim();
  return text ? { ...input, description: text } : input;
}

/** A checkbox per permission; the ones ticked before stay ticked. */
function drawChoices(choices, permissions) {
  const ticked = new Set([...choices.querySelectorAll('input:checked')].map((box) => box.value));
  choices.replaceChildren(
    ...permissions.map(({ name }) =>
      h(
        'label.choice',
        {},
        h('input', { type: 'checkbox', value: name, checked: ticked.has(name) }),
        name,
      ),
    ),
  );
  if (permissions.length === 0) {
    choices.append(h('span.muted', {}, 'None yet: create permissions first, or leave it empty.'));
  }
}

// ---------------------------------------------------------------- a key's permissions and roles

const KINDS = {
  permissions: {
    label: 'Permission',
    title: 'Permissions',
    none: 'No permissions of its own.',
    add: 'keys.addPermissions',
    remove: 'keys.removePermissions',
  },
  roles: {
    label: 'Role',
    title: 'Roles',
    none: 'No roles.',
    add: 'keys.addRoles',
    remove: 'keys.removeRoles',
  },
};

/**
 * A section of a key's page (keys.js): the permissions and roles the key holds, each with a ×
 * to take it away, and a field to give one, by name (the catalogue's names are offered; a new
 * name is created, if the root key may). A root key that may not read the catalogue still sees
 * what the key holds, and may type names.
 */
export async function keyAccessSection(key, page) {
  let catalogue = null;
  let unread = null;
  try {
    catalogue = await readCatalogue();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'INSUFFICIENT_PERMISSIONS') throw error;
    unread = h(
      'p.muted',
      {},
      `This root key may not read the workspace’s permissions and roles (${error.message}): ` +
        'type a name to give one.',
    );
  }
  const names = (list) => (catalogue ? catalogue[list].map((entry) => entry.name) : null);
  return h(
    'section.card',
    { 'aria-label': 'Permissions and roles' },
    h('h2', {}, 'Permissions and roles'),
    unread,
    h(
      'div.columns',
      {},
      holdings(key, 'permissions', names('permissions'), page),
      holdings(key, 'roles', names('roles'), page, viaRoles(key, catalogue)),
    ),
  );
}

/**
 * What the key holds of one kind, then `note` if any, and a form to give it one more; `known` is
 * the catalogue's names of that kind (null when unread).
 */
function holdings(key, kind, known, page, note = null) {
  const { label, title, none, add } = KINDS[kind];
  const held = key[kind] ?? [];
  const input = h('input', {
    required: true,
    maxLength: 256,
    placeholder: kind === 'permissions' ? 'documents.read' : 'editor',
    ...(kind === 'permissions' ? { pattern: PERMISSION_NAME } : { minLength: 3 }),
  });
  const listId = `${label.toLowerCase()}-names`;
  input.setAttribute('list', listId);
  const offered = (known ?? []).filter((name) => !held.includes(name));
  const adder = form(
    'row',
    [
      field(label, input),
      h(
        'datalist',
        { id: listId },
        offered.map((name) => h('option', { value: name })),
      ),
      h('button', {}, `Add ${label.toLowerCase()}`),
    ],
    async () => {
      const name = input.value.trim();
      await post(add, { keyId: key.id, [kind]: [{ name, create: true }] });
      const created = known !== null && !known.includes(name) ? 'created and ' : '';
      setNotice('ok', `${label} “${name}” ${created}given to ${key.start}.`);
      await page.reload();
    },
  );
  return h(
    'div.holding',
    {},
    h('h3', {}, title),
    held.length > 0
      ? chipList(held.map((name) => [name, takeButton(key, kind, name, page)]))
      : h('p.muted', {}, none),
    note,
    adder,
  );
}

function takeButton(key, kind, name, page) {
  const { label, remove } = KINDS[kind];
  const button = h(
    'button.quiet',
    {
      type: 'button',
      'aria-label': `Remove ${label.toLowerCase()} ${name}`,
      onclick: () =>
        run(button, async () => {
          await post(remove, { keyId: key.id, [kind]: [{ name }] });
          setNotice('ok', `${label} “${name}” taken from ${key.start}.`);
          await page.reload();
        }),
    },
    '×',
  );
  return button;
}

/** The permissions the key holds through its roles, when the catalogue says which. */
function viaRoles(key, catalogue) {
  if (!catalogue || !key.roles) return null;
  const held = new Set(key.roles);
  const through = new Set(
    catalogue.roles.filter((role) => held.has(role.name)).flatMap((role) => role.permissions ?? []),
  );
  if (through.size === 0) return null;
  return h('p.muted', {}, `Through its roles: ${[...through].sort().join(', ')}.`);
}
