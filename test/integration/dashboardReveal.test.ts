import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningNode } from '../../src/node';
import { launchChromium, sees } from '../support/chromium';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * A recoverable key's Reveal on the dashboard, in a real headless Chromium against a node with a
 * vault (and one without, for the 412): it asks first, shows the plaintext createKey answered,
 * keeps it in no storage and no address, drops it on Hide and on leaving the page, and is
 * audited each time. A key that is not recoverable has no Reveal.
 */
let topology: Topology;
let bare: RunningNode;
let base: string;
let api: Client;
let userDataDir: string;
let context: BrowserContext;
let page: Page;
let problems: string[];
let apiId: string;
let sealed: { keyId: string; key: string };
let plain: { keyId: string; key: string };

beforeAll(async () => {
  userDataDir = mkdtempSync(join(tmpdir(), 'keyward-chromium-'));
  topology = await startTopology({
    nodes: 1,
    env: { KEYWARD_VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}` },
  });
  bare = await topology.addNode({ env: { KEYWARD_VAULT_KEYS: '' } });
  base = topology.nodes[0]!.url;
  api = client(base, topology.rootKey);
  ({ context, page, problems } = await launchChromium(userDataDir));
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'vaulted' })).body.apiId;
  const create = async (body: Record<string, unknown>) =>
    (await api.post<{ keyId: string; key: string }>('keys.createKey', { apiId, ...body })).body;
  sealed = await create({ name: 'recoverable one', recoverable: true });
  plain = await create({ name: 'plain one' });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await topology?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

const notice = () => page.locator('#notice');
const recover = () => page.getByRole('region', { name: 'Recoverable key' });
const revealed = () => page.locator('#revealed-key');
const storages = () =>
  page.evaluate<string>(
    'JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])',
  );

async function signIn(url: string, rootKey: string): Promise<void> {
  await page.goto(`${url}/dashboard`);
  const logout = page.getByRole('button', { name: 'Log out' });
  if (await logout.isVisible()) await logout.click();
  await page.getByLabel('Root key').fill(rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await logout.waitFor();
}

async function openKey(url: string, keyId: string, name: string): Promise<void> {
  await page.goto(`${url}/dashboard#/keys/${keyId}`);
  await page.getByRole('heading', { name }).waitFor();
}

/** The decryptions of `keyId` on the audit log. */
async function decryptions(keyId: string): Promise<number> {
  const answer = await api.get<{ entries: { summary?: Record<string, unknown> }[] }>(
    'auditLogs.list',
    { targetId: keyId, operation: 'keys.getKey' },
  );
  return answer.body.entries.length;
}

test('a recoverable key’s page reveals its plaintext after a confirmation, once, kept nowhere', async () => {
  await signIn(base, topology.rootKey);
  await openKey(base, sealed.keyId, 'recoverable one');
  await sees(page.locator('dl'), 'yes: its plaintext can be revealed');

  // Reveal asks first; Cancel decrypts nothing.
  await recover().getByRole('button', { name: 'Reveal' }).click();
  await sees(recover(), 'audit log');
  await recover().getByRole('button', { name: 'Cancel' }).click();
  await recover().getByRole('button', { name: 'Reveal' }).waitFor();
  expect(await decryptions(sealed.keyId)).toBe(0);

  await recover().getByRole('button', { name: 'Reveal' }).click();
  await recover()
    .getByRole('button', { name: 'Show the key — this is recorded in the audit log' })
    .click();
  await revealed().waitFor();
  expect(await revealed().textContent()).toBe(sealed.key);
  expect(await decryptions(sealed.keyId)).toBe(1);
  await recover().getByRole('button', { name: 'Copy' }).click();
  await recover().getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(sealed.key);
  expect(await storages()).not.toContain(sealed.key);
  expect(page.url()).not.toContain(sealed.key);
  expect(await context.cookies()).toEqual([]);

  // Hide drops it from the page.
  await recover().getByRole('button', { name: 'Hide' }).click();
  await revealed().waitFor({ state: 'detached' });
  expect(await page.content()).not.toContain(sealed.key);
  await recover().getByRole('button', { name: 'Reveal' }).waitFor();

  // So does leaving the page: its API's page, then back, shows Reveal again, not the key.
  await recover().getByRole('button', { name: 'Reveal' }).click();
  await recover()
    .getByRole('button', { name: 'Show the key — this is recorded in the audit log' })
    .click();
  await revealed().waitFor();
  expect(await decryptions(sealed.keyId)).toBe(2);
  await page.locator('#crumbs').getByRole('link', { name: 'vaulted' }).click();
  await page.getByRole('heading', { name: 'vaulted' }).waitFor();
  expect(await page.content()).not.toContain(sealed.key);
  await page.goBack();
  await page.getByRole('heading', { name: 'recoverable one' }).waitFor();
  await recover().getByRole('button', { name: 'Reveal' }).waitFor();
  expect(await page.content()).not.toContain(sealed.key);
  expect(await storages()).not.toContain(sealed.key);
});

test('a key that is not recoverable has no Reveal', async () => {
  await openKey(base, plain.keyId, 'plain one');
  await sees(page.locator('dl'), 'Recoverable');
  // Never verified: its last use (issue 26 part 4) says so.
  await sees(page.locator('dl'), /Last used\s*never/);
  await page.getByRole('heading', { name: 'Live bucket' }).waitFor();
  expect(await recover().count()).toBe(0);
  expect(await page.getByRole('button', { name: 'Reveal' }).count()).toBe(0);
});

test('without decrypt_key the Reveal shows the 403; on a node without a vault, the 412', async () => {
  const reader = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['api.*.read_api', 'api.*.read_key'],
  });
  const reveal = async () => {
    await recover().getByRole('button', { name: 'Reveal' }).click();
    await recover()
      .getByRole('button', { name: 'Show the key — this is recorded in the audit log' })
      .click();
  };
  await signIn(base, reader.key);
  await openKey(base, sealed.keyId, 'recoverable one');
  await reveal();
  await sees(notice(), 'INSUFFICIENT_PERMISSIONS');
  await sees(notice(), 'decrypt_key');
  expect(await revealed().count()).toBe(0);

  // Another origin, so another sign-in: the node without KEYWARD_VAULT_KEYS.
  await signIn(bare.url, topology.rootKey);
  await openKey(bare.url, sealed.keyId, 'recoverable one');
  await reveal();
  await sees(notice(), 'PRECONDITION_FAILED');
  await sees(notice(), 'KEYWARD_VAULT_KEYS');
  expect(await revealed().count()).toBe(0);
  expect(await decryptions(sealed.keyId)).toBe(2);
  expect(problems).toEqual([]);
});
