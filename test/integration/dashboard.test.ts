import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The dashboard in a real headless Chromium (Debian's, installed by `make test` through scripts/ensure-tool.sh),
 * against a real node: every step is what a person does with the mouse and keyboard. The
 * screenshots of the main pages stay in SCREENSHOTS after the run, for a person to look at.
 */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(tmpdir(), 'keyward-dashboard-screenshots');
const PAGE_SIZE = 20;

let topology: Topology;
let base: string;
let api: Client;
let userDataDir: string;
let context: BrowserContext;
let page: Page;
/** CSP violations and uncaught errors seen in the page: there must be none. */
const problems: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: run scripts/ensure-tool.sh chromium chromium (make test does)`,
    );
  }
  rmSync(SCREENSHOTS, { recursive: true, force: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
  userDataDir = mkdtempSync(join(tmpdir(), 'keyward-chromium-'));
  topology = await startTopology({ nodes: 1 });
  base = topology.nodes[0]!.url;
  api = client(base, topology.rootKey);
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 800 },
  });
  context.setDefaultTimeout(10_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) problems.push(message.text());
  });
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
async function sees(locator: Locator, text: string | RegExp): Promise<void> {
  try {
    await locator.filter({ hasText: text }).first().waitFor();
  } catch {
    const seen = await locator.allInnerTexts();
    throw new Error(`expected ${String(text)} in ${JSON.stringify(seen)}`);
  }
}

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
