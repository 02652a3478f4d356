import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, sees } from '../support/chromium';
import { createKey, eventually, TEST_VAULT } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';
import { startReceiver, FAST_WEBHOOKS } from '../support/webhookReceiver';

/**
 * The dashboard's Webhooks pages in headless Chromium against a real node and a receiver on
 * loopback: the list, a creation with its secret shown once, a webhook's delivery attempts (one
 * failed, one delivered), and a deletion. No CSP violation, no script error.
 */
let topology: Topology;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let base: string;
let api: Client;
let userDataDir: string;
let context: BrowserContext;
let page: Page;
let problems: string[];

beforeAll(async () => {
  userDataDir = mkdtempSync(join(tmpdir(), 'keyward-chromium-'));
  // The first request fails: the deliveries page shows a failed attempt, then the delivered one.
  receiver = await startReceiver((_path, count) => (count === 1 ? 500 : 200));
  topology = await startTopology({
    nodes: 1,
    localRedis: false,
    env: {
      ...TEST_VAULT,
      ...FAST_WEBHOOKS,
    },
  });
  base = topology.nodes[0]!.url;
  api = client(base, topology.rootKey);
  ({ context, page, problems } = await launchChromium(userDataDir));
});

afterAll(async () => {
  await context?.close();
  await topology?.stop();
  await receiver?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

test('lists webhooks, creates one showing its secret once, shows its deliveries, deletes it', async () => {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Root key').fill(topology.rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
  await page.locator('#pages').getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
  await sees(page.locator('tbody'), 'No webhooks.');

  await page.getByLabel('URL').fill(`${receiver.url}/dash`);
  await page.getByLabel('key.credits.exhausted').check();
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await sees(page.locator('#notice'), /signing secret, shown only now: whsec_/);
  const secret = await page.locator('#notice code.secret').innerText();
  const { webhooks } = (
    await api.get<{ webhooks: { webhookId: string }[] }>('webhooks.listWebhooks', {})
  ).body;
  expect(webhooks).toHaveLength(1);
  const webhookId = webhooks[0]!.webhookId;
  await sees(page.locator('tbody tr'), `${receiver.url}/dash`);
  // Never shown again: not in the list.
  expect(await page.locator('tbody').innerText()).not.toContain(secret);

  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'dash' })).body.apiId;
  const { key } = await createKey(api, apiId, { remaining: 1 });
  await api.post('keys.verifyKey', { key });
  await eventually(() => receiver.received.length === 2, {
    what: 'a failed, then a delivered attempt',
  });

  await page.getByRole('link', { name: webhookId }).click();
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  const rows = page.locator('tbody tr');
  await sees(rows.nth(0), 'delivered');
  await sees(rows.nth(1), 'failed');
  await sees(rows.nth(1), '500');
  await sees(rows.nth(0), 'key.credits.exhausted');

  await page.locator('#crumbs').getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('button', { name: `Delete ${webhookId}` }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await sees(page.locator('#notice'), `Webhook ${webhookId} deleted.`);
  await sees(page.locator('tbody'), 'No webhooks.');
  expect(problems).toEqual([]);
});
