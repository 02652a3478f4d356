import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium, sees } from '../support/chromium';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The dashboard in a real headless Chromium (Debian's, installed by `make test` through scripts/ensure-tool.sh),
 * against a real node: every step is what a person does with the mouse and keyboard. The
 * screenshots of the main pages stay in SCREENSHOTS after the run, for a person to look at.
 */
const SCREENSHOTS = join(tmpdir(), 'keyward-dashboard-screenshots');
const PAGE_SIZE = 20;

let topology: Topology;
let base: string;
let api: Client;
let userDataDir: string;
let context: BrowserContext;
let page: Page;
/** CSP violations and uncaught errors seen in the page: there must be none. */
let problems: string[];

beforeAll(async () => {
  rmSync(SCREENSHOTS, { recursive: true, force: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
  userDataDir = mkdtempSync(join(tmpdir(), 'keyward-chromium-'));
  topology = await startTopology({ nodes: 1 });
  base = topology.nodes[0]!.url;
  api = client(base, topology.rootKey);
  ({ context, page, problems } = await launchChromium(userDataDir));
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await topology?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

async function screenshot(name: string): Promise<void> {
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  // A blank or failed page compresses to a few hundred bytes; a drawn one is far larger.
  expect(statSync(path).size).toBeGreaterThan(15_000);
}

/** Waits until the locator's text contains `text`. */

const sessionEntries = () =>
  page.evaluate<[string, string][]>('Object.entries(window.sessionStorage)');
const localEntries = () => page.evaluate<number>('window.localStorage.length');
const notice = () => page.locator('#notice');
const crumbs = () => page.locator('#crumbs');
const keyRow = (start: string) => page.locator('tbody tr', { hasText: start });
/**
 * A status badge that reads exactly `status`: a row's text alone would not do, as its buttons
 * run together ("Enable" + "Delete" contains "enabled" before the key is enabled).
 */
const showsStatus = (scope: Locator, status: 'enabled' | 'disabled') =>
  sees(scope.locator('.badge'), new RegExp(`^${status}$`));

type Verdict = { valid: boolean; code: string };
const verify = async (key: string, permissions?: string) =>
  (
    await api.post<Verdict>('keys.verifyKey', {
      key,
      ...(permissions === undefined ? {} : { authorization: { permissions } }),
    })
  ).body;

async function signIn(rootKey: string): Promise<void> {
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('Root key').fill(rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

const rbacPage = async () => {
  await page.locator('#pages').getByRole('link', { name: 'Roles & permissions' }).click();
  await page.getByRole('heading', { name: 'Roles & permissions' }).waitFor();
};
const createForm = (what: string) => page.locator('form', { hasText: `Create a ${what}` });
const tableOf = (title: string) =>
  page.locator('section.card', { has: page.getByRole('heading', { name: title, exact: true }) });
const access = () => page.getByRole('region', { name: 'Permissions and roles' });
/** The names a key's page offers to add (its datalist). */
const offered = (kind: 'permission' | 'role') =>
  access()
    .locator(`#${kind}-names option`)
    .evaluateAll((options) => options.map((option) => option.getAttribute('value')));
/** The names on the chips in scope (a key's chips end with their × button). */
const chips = async (scope: Locator) =>
  (await scope.locator('.chip').allTextContents()).map((text) => text.replace(/×$/, ''));

/**
 * Waits until the chips in scope name exactly `names`. A change's notice comes before the page
 * is drawn again: wait for this before typing into the new form.
 */
async function showsChips(scope: Locator, names: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await chips(scope);
  while (JSON.stringify(seen) !== JSON.stringify(names)) {
    if (Date.now() > deadline) throw new Error(`expected chips ${names}, saw ${seen}`);
    await page.waitForTimeout(50);
    seen = await chips(scope);
  }
}

const identitiesPage = async () => {
  await page.locator('#pages').getByRole('link', { name: 'Identities' }).click();
  await page.getByRole('heading', { name: 'Identities', exact: true }).waitFor();
};
const createIdentity = () => page.locator('form', { hasText: 'Create an identity' });
/** The identity's card on its page, or the Identity section of a key's page. */
const identityCard = () => page.getByRole('region', { name: 'Identity' });
const keyLimits = () => page.getByRole('region', { name: 'Named rate limits' });
const limitRow = (scope: Locator, index: number) => scope.locator('.limit-row').nth(index);

type NamedLimit = {
  name: string;
  type: 'fast' | 'consistent';
  limit: number;
  duration: number;
  autoApply: boolean;
};

/** Fills one row of a limits editor. */
async function fillLimit(row: Locator, limit: NamedLimit): Promise<void> {
  await row.getByLabel('Name', { exact: true }).fill(limit.name);
  await row.getByLabel('Type').selectOption(limit.type);
  await row.getByLabel('Limit', { exact: true }).fill(String(limit.limit));
  await row.getByLabel('Per (ms)').fill(String(limit.duration));
  await row.getByLabel('Auto-apply').setChecked(limit.autoApply);
}

/** The cells of the limits table in scope, a row each. */
const limitCells = (scope: Locator) =>
  scope
    .locator('table.limits tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent ?? '')),
    );

/** Waits until the limits table in scope reads exactly `rows`. */
async function showsLimits(scope: Locator, rows: string[][]): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await limitCells(scope);
  while (JSON.stringify(seen) !== JSON.stringify(rows)) {
    if (Date.now() > deadline) {
      throw new Error(`expected limits ${JSON.stringify(rows)}, saw ${JSON.stringify(seen)}`);
    }
    await page.waitForTimeout(50);
    seen = await limitCells(scope);
  }
}

let apiId: string;
let keyStart: string;
let plaintext: string;

test('serves the page under its CSP and signs in with a root key kept in sessionStorage only', async () => {
  const response = await page.goto(`${base}/dashboard`);
  expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await screenshot('sign-in');

  await page.getByLabel('Root key').fill('kwroot_notarealkey');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await sees(notice(), 'UNAUTHORIZED');
  expect(await sessionEntries()).toEqual([]);

  await page.getByLabel('Root key').fill(topology.rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'APIs' }).waitFor();
  expect(await sessionEntries()).toEqual([['keyward.rootKey', topology.rootKey]]);
  expect(await localEntries()).toBe(0);
  expect(await context.cookies()).toEqual([]);
  expect(page.url()).not.toContain(topology.rootKey);
});

test('creates an API, then a rate-limited key whose plaintext is shown once', async () => {
  await page.getByLabel('Name').fill('payments <b>bold</b>');
  await page.getByRole('button', { name: 'Create API' }).click();
  // The name is shown as text: markup in API data never becomes markup in the page.
  await page.getByRole('heading', { name: 'payments <b>bold</b>' }).waitFor();
  await sees(notice(), 'created');
  apiId = decodeURIComponent(/#\/apis\/(.+)$/.exec(page.url())![1]!);
  expect(await page.locator('#app b').count()).toBe(0);

  await page.getByLabel('Name').fill('checkout');
  await page.getByLabel('Prefix').fill('dash');
  await page.getByLabel('Owner id').fill('user_42');
  await page.getByLabel('Credits').fill('100');
  await page.getByLabel('Rate limit').selectOption('consistent');
  await page.getByLabel('Bucket size').fill('3');
  await page.getByLabel('Refill amount').fill('1');
  await page.getByLabel('Refill every (ms)').fill('60000');
  await page.getByRole('button', { name: 'Create key' }).click();

  const secret = page.locator('#new-key');
  await secret.waitFor();
  plaintext = (await secret.textContent()) ?? '';
  expect(plaintext).toMatch(/^dash_[1-9A-HJ-NP-Za-km-z]{16,}0kw10[1-9A-HJ-NP-Za-km-z]{6}$/);
  await sees(page.locator('.reveal'), 'you will not see it again');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(plaintext);
  await screenshot('new-key');

  // Neither the root key's storage nor any other keeps the plaintext.
  expect(JSON.stringify(await sessionEntries())).not.toContain(plaintext);
  expect(await localEntries()).toBe(0);
  await page.getByRole('button', { name: 'Done, hide it' }).click();
  await page.locator('.reveal').waitFor({ state: 'detached' });
  expect(await page.content()).not.toContain(plaintext);

  keyStart = plaintext.slice(0, 'dash_'.length + 4);
  const row = keyRow(keyStart);
  await sees(row, 'checkout');
  await sees(row, 'user_42');
  await showsStatus(row, 'enabled');
  await sees(row, '3 tokens, +1 every 1 min (consistent)');
  await sees(row, '100');
});

test('a key’s detail shows its live bucket and this node’s recent outcomes', async () => {
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await verify(plaintext)).code);
  expect(codes).toEqual(['VALID', 'VALID', 'VALID', 'RATE_LIMITED']);

  await keyRow(keyStart).getByRole('link', { name: keyStart }).click();
  await page.getByRole('heading', { name: 'checkout' }).waitFor();
  const bucket = page.locator('.bucket');
  await sees(bucket, '0 of 3 tokens left');
  await sees(bucket, /Next refill\s*\d.*\(in \d+ s\)/);
  await sees(bucket, '97 left');
  const outcomes = page.locator('table.outcomes tbody tr');
  expect(await outcomes.allTextContents()).toEqual([
    expect.stringContaining('RATE_LIMITED'),
    expect.stringContaining('VALID'),
    expect.stringContaining('VALID'),
    expect.stringContaining('VALID'),
  ]);
  await screenshot('key-detail');

  expect((await verify(plaintext)).code).toBe('RATE_LIMITED');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.locator('table.outcomes tbody tr').nth(4).waitFor();
  expect(await outcomes.count()).toBe(5);
});

test('disables, re-enables and deletes a key', async () => {
  await page.getByRole('button', { name: `Disable ${keyStart}` }).click();
  await showsStatus(page.locator('dd'), 'disabled');
  expect((await verify(plaintext)).code).toBe('DISABLED');

  await page.getByRole('link', { name: 'payments <b>bold</b>' }).click();
  await keyRow(keyStart)
    .getByRole('button', { name: `Enable ${keyStart}` })
    .click();
  await showsStatus(keyRow(keyStart), 'enabled');
  await keyRow(keyStart)
    .getByRole('button', { name: `Disable ${keyStart}` })
    .waitFor();
  expect((await verify(plaintext)).code).not.toBe('DISABLED');

  await keyRow(keyStart)
    .getByRole('button', { name: `Delete ${keyStart}` })
    .click();
  await sees(keyRow(keyStart), 'for good?');
  await keyRow(keyStart).getByRole('button', { name: 'Cancel' }).click();
  await keyRow(keyStart)
    .getByRole('button', { name: `Delete ${keyStart}` })
    .click();
  await keyRow(keyStart).getByRole('button', { name: 'Yes, delete' }).click();
  await sees(page.locator('tbody'), 'No keys yet');
  await sees(notice(), 'deleted');
  expect((await verify(plaintext)).code).toBe('NOT_FOUND');
});

test('pages through APIs and keys', async () => {
  for (let i = 0; i < PAGE_SIZE + 1; i++) {
    await api.post('keys.createKey', { apiId, name: `bulk key ${i}` });
    await api.post('apis.createApi', { name: `bulk api ${i}` });
  }
  await page.reload();
  const pager = page.locator('.pager');
  await sees(pager, `1–20 of ${PAGE_SIZE + 1}`);
  await sees(page.locator('tbody'), 'bulk key 19');
  await page.getByRole('button', { name: 'Next →' }).click();
  await sees(pager, `21 of ${PAGE_SIZE + 1}`);
  await sees(page.locator('tbody'), 'bulk key 20');
  expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
  await screenshot('keys');

  await crumbs().getByRole('link', { name: 'APIs', exact: true }).click();
  await sees(pager, `1–20 of ${PAGE_SIZE + 2}`);
  expect(await page.getByRole('button', { name: '← Previous' }).isDisabled()).toBe(true);
  await screenshot('apis');
  await page.getByRole('button', { name: 'Next →' }).click();
  await sees(pager, `21–22 of ${PAGE_SIZE + 2}`);
  await sees(page.locator('tbody'), 'bulk api 20');
  await page.getByRole('button', { name: '← Previous' }).click();
  await sees(pager, `1–20 of ${PAGE_SIZE + 2}`);
  await sees(page.locator('tbody'), 'payments <b>bold</b>');
});

test('creates permissions and a role on the Roles & permissions page; a taken name is a 409', async () => {
  await rbacPage();
  await sees(tableOf('Permissions').locator('tbody'), 'No permissions yet');
  await sees(tableOf('Roles').locator('tbody'), 'No roles yet');

  for (const [name, description] of [
    ['documents.read', 'Read <i>documents</i>'],
    ['documents.write', ''],
  ] as const) {
    await createForm('permission').getByLabel('Name').fill(name);
    await createForm('permission').getByLabel('Description').fill(description);
    await createForm('permission').getByRole('button', { name: 'Create permission' }).click();
    await sees(notice(), `Permission “${name}” created.`);
    await sees(tableOf('Permissions').locator('tbody tr'), name);
  }
  await sees(tableOf('Permissions').locator('tbody tr'), 'Read <i>documents</i>');
  expect(await page.locator('#app i').count()).toBe(0);

  await createForm('permission').getByLabel('Name').fill('documents.read');
  await createForm('permission').getByRole('button', { name: 'Create permission' }).click();
  await sees(notice(), 'CONFLICT');
  await sees(notice(), 'already exists');
  expect(await tableOf('Permissions').locator('tbody tr').count()).toBe(2);

  const role = createForm('role');
  await role.getByLabel('Name').fill('editor');
  await role.getByLabel('Description').fill('Edits documents');
  await role.getByRole('checkbox', { name: 'documents.read' }).check();
  await role.getByRole('checkbox', { name: 'documents.write' }).check();
  await role.getByRole('button', { name: 'Create role' }).click();
  await sees(notice(), 'Role “editor” created.');
  const editor = tableOf('Roles').locator('tbody tr', { hasText: 'editor' });
  await editor.waitFor();
  await showsChips(editor, ['documents.read', 'documents.write']);
  expect(await role.getByRole('checkbox', { name: 'documents.read' }).isChecked()).toBe(false);
  await screenshot('roles-and-permissions');
});

let rbacKey: { keyId: string; key: string; start: string };

test('gives a key permissions and a role on its page, takes one away, and loses a deleted role', async () => {
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    name: 'rbac key',
    prefix: 'rbac',
  });
  rbacKey = { ...created.body, start: created.body.key.slice(0, 'rbac_'.length + 4) };
  await page.goto(`${base}/dashboard#/keys/${rbacKey.keyId}`);
  await page.getByRole('heading', { name: 'rbac key' }).waitFor();
  await sees(access(), 'No permissions of its own.');
  await sees(access(), 'No roles.');

  await access().getByLabel('Permission', { exact: true }).fill('documents.read');
  await access().getByRole('button', { name: 'Add permission' }).click();
  await sees(notice(), `Permission “documents.read” given to ${rbacKey.start}.`);
  await showsChips(access(), ['documents.read']);
  // The catalogue's names the key does not hold yet are offered.
  expect(await offered('permission')).toEqual(['documents.write']);
  expect(await offered('role')).toEqual(['editor']);
  // A name the catalogue lacks is created, as this root key may.
  await access().getByLabel('Permission', { exact: true }).fill('billing.refund');
  await access().getByRole('button', { name: 'Add permission' }).click();
  await sees(notice(), 'Permission “billing.refund” created and given');
  await showsChips(access(), ['billing.refund', 'documents.read']);
  await access().getByLabel('Role', { exact: true }).fill('editor');
  await access().getByRole('button', { name: 'Add role' }).click();
  await sees(notice(), `Role “editor” given to ${rbacKey.start}.`);
  await sees(access(), 'Through its roles: documents.read, documents.write.');
  await showsChips(access(), ['billing.refund', 'documents.read', 'editor']);
  expect((await verify(rbacKey.key, 'documents.write')).code).toBe('VALID');
  expect((await verify(rbacKey.key, 'billing.refund')).code).toBe('VALID');
  await screenshot('key-permissions');

  await access().getByRole('button', { name: 'Remove permission billing.refund' }).click();
  await sees(notice(), `Permission “billing.refund” taken from ${rbacKey.start}.`);
  await showsChips(access(), ['documents.read', 'editor']);
  expect((await verify(rbacKey.key, 'billing.refund')).code).toBe('INSUFFICIENT_PERMISSIONS');

  await rbacPage();
  const editor = tableOf('Roles').locator('tbody tr', { hasText: 'editor' });
  await editor.getByRole('button', { name: 'Delete role editor' }).click();
  await sees(editor, 'Keys lose it.');
  await editor.getByRole('button', { name: 'Yes, delete' }).click();
  await sees(notice(), 'Role “editor” deleted.');
  await sees(tableOf('Roles').locator('tbody'), 'No roles yet');

  await page.goBack();
  await page.getByRole('heading', { name: 'rbac key' }).waitFor();
  await sees(access(), 'No roles.');
  await showsChips(access(), ['documents.read']);
  expect(await access().getByText('Through its roles').count()).toBe(0);
  expect((await verify(rbacKey.key, 'documents.write')).code).toBe('INSUFFICIENT_PERMISSIONS');
});

test('a root key without rbac permissions sees 403s, and the key’s holdings still', async () => {
  const limited = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['api.*.read_api', 'api.*.read_key', 'rbac.*.add_permission_to_key'],
  });
  await signIn(limited.key);

  await rbacPage();
  await sees(notice(), 'INSUFFICIENT_PERMISSIONS');
  await sees(notice(), 'rbac.*.read_permission');
  await sees(
    tableOf('Permissions').locator('tbody'),
    'Not read (INSUFFICIENT_PERMISSIONS): this root key lacks the permission rbac.*.read_permission.',
  );
  await createForm('permission').getByLabel('Name').fill('documents.delete');
  await createForm('permission').getByRole('button', { name: 'Create permission' }).click();
  await sees(notice(), 'rbac.*.create_permission');
  await screenshot('roles-and-permissions-403');

  await page.goto(`${base}/dashboard#/keys/${rbacKey.keyId}`);
  await sees(access(), 'may not read the workspace’s permissions and roles');
  await showsChips(access(), ['documents.read']);
  // It may give a permission that exists, but not create one, nor take one away.
  await access().getByLabel('Permission', { exact: true }).fill('documents.write');
  await access().getByRole('button', { name: 'Add permission' }).click();
  await sees(notice(), `Permission “documents.write” given to ${rbacKey.start}.`);
  await showsChips(access(), ['documents.read', 'documents.write']);
  await access().getByLabel('Permission', { exact: true }).fill('documents.delete');
  await access().getByRole('button', { name: 'Add permission' }).click();
  await sees(notice(), 'rbac.*.create_permission');
  await access().getByRole('button', { name: 'Remove permission documents.read' }).click();
  await sees(notice(), 'rbac.*.remove_permission_from_key');
  expect(await chips(access())).toEqual(['documents.read', 'documents.write']);

  await signIn(topology.rootKey);
});

let identityId: string;
const TOKENS = ['tokens', 'consistent (global)', '200', '1 h', 'yes'];

test('creates an identity with a named limit and edits its meta and limits; a taken externalId is a 409, a limit named twice a 400', async () => {
  await identitiesPage();
  // The key created above with owner id user_42 made that identity.
  await sees(page.locator('tbody tr'), 'user_42');

  await createIdentity().getByLabel('External id').fill('acme-corp');
  await createIdentity().getByLabel('Meta (JSON)').fill('{"plan": "pro", "note": "<b>x</b>"}');
  await createIdentity().getByRole('button', { name: '+ Add a limit' }).click();
  await fillLimit(limitRow(createIdentity(), 0), {
    name: 'tokens',
    type: 'consistent',
    limit: 100,
    duration: 3_600_000,
    autoApply: true,
  });
  await createIdentity().getByRole('button', { name: 'Create identity' }).click();
  await page.getByRole('heading', { name: 'acme-corp', exact: true }).waitFor();
  await sees(notice(), 'Identity “acme-corp” created.');
  identityId = decodeURIComponent(/#\/identities\/(.+)$/.exec(page.url())![1]!);
  await sees(identityCard().locator('pre'), '"plan": "pro"');
  await sees(identityCard().locator('pre'), '"note": "<b>x</b>"');
  expect(await page.locator('#app b').count()).toBe(0);
  await showsLimits(identityCard(), [['tokens', 'consistent (global)', '100', '1 h', 'yes']]);

  // Edit: new meta, a changed limit and an added one.
  await identityCard().getByRole('button', { name: 'Edit' }).click();
  const edit = page.locator('form', { hasText: 'Edit acme-corp' });
  await edit.getByLabel('Meta (JSON)').fill('{"plan": "enterprise", "seats": 5}');
  await limitRow(edit, 0).getByLabel('Limit', { exact: true }).fill('200');
  await edit.getByRole('button', { name: '+ Add a limit' }).click();
  await fillLimit(limitRow(edit, 1), {
    name: 'bursts',
    type: 'fast',
    limit: 10,
    duration: 1000,
    autoApply: false,
  });
  await screenshot('identity-edit');
  await edit.getByRole('button', { name: 'Save' }).click();
  await sees(notice(), 'Identity “acme-corp” saved.');
  await showsLimits(identityCard(), [
    TOKENS,
    ['bursts', 'fast (per node)', '10', '1 s', 'no, when named'],
  ]);
  await sees(identityCard().locator('pre'), '"seats": 5');
  await sees(identityCard(), 'no pool: its keys spend only their own');
  // A credit pool, given through the API, is on the card once the page is read again.
  await api.post('identities.updateIdentity', {
    identityId,
    remaining: 250,
    refill: { interval: 'daily', amount: 300 },
  });
  await page.reload();
  await sees(identityCard(), '250, back to 300 daily');
  await api.post('identities.updateIdentity', { identityId, remaining: null });
  await page.reload();
  await sees(identityCard(), 'no pool: its keys spend only their own');
  await screenshot('identity');
  expect((await api.get('identities.getIdentity', { identityId })).body).toEqual({
    id: identityId,
    externalId: 'acme-corp',
    meta: { plan: 'enterprise', seats: 5 },
    ratelimits: [
      { name: 'tokens', type: 'consistent', limit: 200, duration: 3_600_000, autoApply: true },
      { name: 'bursts', type: 'fast', limit: 10, duration: 1000, autoApply: false },
    ],
  });

  // A new external id renames it (its keys stay linked); and back again.
  for (const [from, to] of [
    ['acme-corp', 'acme-inc'],
    ['acme-inc', 'acme-corp'],
  ] as const) {
    await identityCard().getByRole('button', { name: 'Edit' }).click();
    const renaming = page.locator('form', { hasText: `Edit ${from}` });
    await renaming.getByLabel('External id').fill(to);
    await renaming.getByRole('button', { name: 'Save' }).click();
    await sees(notice(), `Identity “${to}” saved.`);
    expect(
      (await api.get<{ externalId: string }>('identities.getIdentity', { identityId })).body
        .externalId,
    ).toBe(to);
  }

  // Edit again: a row removed; Cancel leaves the identity as it is.
  await identityCard().getByRole('button', { name: 'Edit' }).click();
  await limitRow(edit, 1).getByRole('button', { name: 'Remove this limit' }).click();
  await edit.getByRole('button', { name: 'Save' }).click();
  await showsLimits(identityCard(), [TOKENS]);
  await identityCard().getByRole('button', { name: 'Edit' }).click();
  await edit.getByLabel('Meta (JSON)').fill('{}');
  await edit.getByRole('button', { name: 'Cancel' }).click();
  await sees(identityCard().locator('pre'), '"seats": 5');

  await crumbs().getByRole('link', { name: 'Identities' }).click();
  const listed = page.locator('tbody tr', { hasText: 'acme-corp' });
  await showsChips(listed, ['tokens: 200 / 1 h']);
  await screenshot('identities');

  await createIdentity().getByLabel('External id').fill('acme-corp');
  await createIdentity().getByRole('button', { name: 'Create identity' }).click();
  await sees(notice(), 'CONFLICT');
  await sees(notice(), 'Identity with externalId "acme-corp" already exists in this workspace');

  await createIdentity().getByLabel('External id').fill('twice-limited');
  await createIdentity().getByLabel('Meta (JSON)').fill('[1]');
  await createIdentity().getByRole('button', { name: 'Create identity' }).click();
  await sees(notice(), 'Meta: must be a JSON object');
  await createIdentity().getByLabel('Meta (JSON)').fill('');
  for (const index of [0, 1]) {
    await createIdentity().getByRole('button', { name: '+ Add a limit' }).click();
    await fillLimit(limitRow(createIdentity(), index), {
      name: 'twice',
      type: 'fast',
      limit: 1,
      duration: 1000,
      autoApply: false,
    });
  }
  await createIdentity().getByRole('button', { name: 'Create identity' }).click();
  await sees(notice(), 'BAD_REQUEST');
  await sees(notice(), 'ratelimits[1].name: "twice" is named twice');
  expect(await page.locator('tbody tr', { hasText: 'twice-limited' }).count()).toBe(0);
});

let identityKey: { keyId: string; key: string; start: string };

test('links a key to an identity on its page, gives it named limits, and verifies both; a deleted identity leaves the key', async () => {
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    name: 'identity key',
    prefix: 'idk',
    ratelimit: { type: 'fast', limit: 10, refillRate: 10, refillInterval: 60_000 },
  });
  identityKey = { ...created.body, start: created.body.key.slice(0, 'idk_'.length + 4) };
  await page.goto(`${base}/dashboard#/keys/${identityKey.keyId}`);
  await page.getByRole('heading', { name: 'identity key' }).waitFor();
  await sees(identityCard(), 'No identity.');

  await identityCard().getByLabel('External id').fill('acme-corp');
  await identityCard().getByRole('button', { name: 'Link', exact: true }).click();
  await sees(notice(), `Key ${identityKey.start} linked to identity “acme-corp”.`);
  await identityCard().getByRole('link', { name: 'acme-corp' }).waitFor();
  await sees(identityCard(), '{"plan":"enterprise","seats":5}');
  await showsLimits(identityCard(), [TOKENS]);

  await sees(keyLimits(), 'The seed limit (default) applies to every verification: 10 tokens');
  await sees(keyLimits(), 'No named limits.');
  await keyLimits().getByRole('button', { name: 'Edit limits' }).click();
  await keyLimits().getByRole('button', { name: '+ Add a limit' }).click();
  await fillLimit(limitRow(keyLimits(), 0), {
    name: 'requests',
    type: 'consistent',
    limit: 5,
    duration: 60_000,
    autoApply: true,
  });
  await keyLimits().getByRole('button', { name: '+ Add a limit' }).click();
  await fillLimit(limitRow(keyLimits(), 1), {
    name: 'uploads',
    type: 'fast',
    limit: 2,
    duration: 86_400_000,
    autoApply: false,
  });
  await keyLimits().getByRole('button', { name: 'Save limits' }).click();
  await sees(notice(), `Rate limits of ${identityKey.start} saved.`);
  await showsLimits(keyLimits(), [
    ['requests', 'consistent (global)', '5', '1 min', 'yes'],
    ['uploads', 'fast (per node)', '2', '1 d', 'no, when named'],
  ]);
  // The seed limit is as it was, in the record, and the named ones are beside it.
  await sees(page.locator('dd'), '10 tokens, +10 every 1 min (fast)');
  await sees(page.locator('dd'), 'requests: 5 per 1 min; uploads: 2 per 1 d, when named');
  await screenshot('key-identity');

  type Verified = Verdict & {
    identity?: { id: string; externalId: string; meta: Record<string, unknown> };
    ratelimits?: { name: string; limit: number; remaining: number; exceeded: boolean }[];
  };
  const verified = (await api.post<Verified>('keys.verifyKey', { key: identityKey.key })).body;
  expect(verified).toMatchObject({ valid: true, code: 'VALID' });
  expect(verified.identity).toEqual({
    id: identityId,
    externalId: 'acme-corp',
    meta: { plan: 'enterprise', seats: 5 },
  });
  const applied = Object.fromEntries((verified.ratelimits ?? []).map((l) => [l.name, l]));
  expect(applied.requests).toMatchObject({ limit: 5, remaining: 4, exceeded: false });
  expect(applied.tokens).toMatchObject({ limit: 200, remaining: 199, exceeded: false });
  expect(applied.default).toMatchObject({ limit: 10, remaining: 9, exceeded: false });
  expect(applied.uploads).toBeUndefined();

  // Change one, remove the other.
  await keyLimits().getByRole('button', { name: 'Edit limits' }).click();
  await limitRow(keyLimits(), 0).getByLabel('Limit', { exact: true }).fill('3');
  await limitRow(keyLimits(), 1).getByRole('button', { name: 'Remove this limit' }).click();
  await keyLimits().getByRole('button', { name: 'Save limits' }).click();
  await showsLimits(keyLimits(), [['requests', 'consistent (global)', '3', '1 min', 'yes']]);
  const stored = (
    await api.get<{ ratelimit: unknown; ratelimits: unknown }>('keys.getKey', {
      keyId: identityKey.keyId,
    })
  ).body;
  expect(stored.ratelimits).toEqual([
    { name: 'requests', type: 'consistent', limit: 3, duration: 60_000, autoApply: true },
  ]);
  expect(stored.ratelimit).toMatchObject({ type: 'fast', limit: 10, refillRate: 10 });

  // Delete the identity from its page: the key stays, without it.
  await identityCard().getByRole('link', { name: 'acme-corp' }).click();
  await page.getByRole('heading', { name: 'acme-corp', exact: true }).waitFor();
  await identityCard().getByRole('button', { name: 'Delete identity acme-corp' }).click();
  await sees(identityCard(), 'Its keys lose it and its limits.');
  await identityCard().getByRole('button', { name: 'Cancel' }).click();
  await identityCard().getByRole('button', { name: 'Delete identity acme-corp' }).click();
  await identityCard().getByRole('button', { name: 'Yes, delete' }).click();
  await sees(notice(), 'Identity “acme-corp” deleted.');
  await sees(page.locator('tbody tr'), 'user_42');
  expect(await page.locator('tbody tr', { hasText: 'acme-corp' }).count()).toBe(0);

  await page.goto(`${base}/dashboard#/keys/${identityKey.keyId}`);
  await sees(
    identityCard(),
    'No identity, though its external id is “acme-corp”: the identity it was linked to is gone',
  );
  await showsLimits(keyLimits(), [['requests', 'consistent (global)', '3', '1 min', 'yes']]);
  const after = (await api.post<Verified>('keys.verifyKey', { key: identityKey.key })).body;
  expect(after).toMatchObject({ valid: true, code: 'VALID' });
  expect(after.identity).toBeUndefined();
  expect((after.ratelimits ?? []).map((l) => l.name)).toEqual(['default', 'requests']);

  // Linked to an externalId no identity has: the identity is made.
  await identityCard().getByLabel('External id').fill('beta-co');
  await identityCard().getByRole('button', { name: 'Link', exact: true }).click();
  await identityCard().getByRole('link', { name: 'beta-co' }).waitFor();
  await sees(identityCard(), 'No named limits.');
});

test('pages through identities', async () => {
  type Listed = { total: number };
  const before = (await api.get<Listed>('identities.listIdentities', { limit: 1 })).body.total;
  for (let i = 0; i < PAGE_SIZE; i++) {
    await api.post('identities.createIdentity', { externalId: `bulk identity ${i}` });
  }
  const total = before + PAGE_SIZE;
  await identitiesPage();
  const pager = page.locator('.pager');
  await sees(pager, `1–20 of ${total}`);
  await page.getByRole('button', { name: 'Next →' }).click();
  await sees(pager, `21–${total} of ${total}`);
  await sees(page.locator('tbody'), 'bulk identity 19');
  expect(await page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
  await page.getByRole('button', { name: '← Previous' }).click();
  await sees(pager, `1–20 of ${total}`);
  await sees(page.locator('tbody'), 'user_42');
});

test('a root key without identity permissions sees 403s, and may still unlink a key', async () => {
  const limited = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['api.*.read_api', 'api.*.read_key', 'api.*.update_key'],
  });
  await signIn(limited.key);

  await identitiesPage();
  await sees(notice(), 'INSUFFICIENT_PERMISSIONS');
  // The listing reads the default environment: Unkey v1 asks for it by name, or for `*`.
  await sees(notice(), 'identity.default.read_identity');
  await sees(
    page.locator('tbody'),
    'Not read (INSUFFICIENT_PERMISSIONS): this root key lacks the permission identity.default.read_identity.',
  );
  await createIdentity().getByLabel('External id').fill('gamma-co');
  await createIdentity().getByRole('button', { name: 'Create identity' }).click();
  await sees(notice(), 'identity.*.create_identity');
  await screenshot('identities-403');

  await page.goto(`${base}/dashboard#/keys/${identityKey.keyId}`);
  await identityCard().getByRole('link', { name: 'beta-co' }).waitFor();
  await sees(identityCard(), 'This root key may not read the identity');
  // The key's link is the key's: updateKey alone changes it.
  await identityCard().getByRole('button', { name: 'Unlink' }).click();
  await sees(notice(), `Key ${identityKey.start} unlinked.`);
  await sees(identityCard(), 'No identity. Link one by its external id');
  expect((await verify(identityKey.key)).code).toBe('VALID');

  await signIn(topology.rootKey);
});

test('shows an API error from its envelope', async () => {
  await page.goto(`${base}/dashboard#/keys/key_doesnotexist`);
  await sees(notice(), 'NOT_FOUND');
  await sees(notice(), 'key_doesnotexist');
});

test('logs out: the root key leaves sessionStorage', async () => {
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  expect(await sessionEntries()).toEqual([]);
  expect(await localEntries()).toBe(0);
  expect(problems).toEqual([]);
});
