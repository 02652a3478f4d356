import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { DASHBOARD_CSP } from '../../src/http/dashboardAssets';
import { names } from '../../src/store/names';
import { launchChromium, sees } from '../support/chromium';
import { createKey, eventually } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The dashboard's Usage and Audit log pages in headless Chromium against a real node: keys
 * verified over HTTP with several outcomes, counted and flushed by the node, then read by the
 * page's chart (uPlot's legend) and top-keys tables, for an API, a key and an identity; a
 * rate-limit namespace's limits, by name and by id, and its top identifiers; the audit log of the
 * writes made here, filtered and paged. No CSP violation, no script error.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let topology: Topology;
let base: string;
let api: Client;
let userDataDir: string;
let context: BrowserContext;
let page: Page;
let problems: string[];

let apiId: string;
type Made = { keyId: string; key: string };
/** alpha: 1 valid, 4 rate limited; beta (identity acme-corp): 1 valid, 3 usage exceeded;
 * gamma: 2 disabled; an unknown key: 1 not found. Another API's key: 3 valid. */
let alpha: Made;
let beta: Made;
let gamma: Made;
let other: Made;
/** Standalone limits in NAMESPACE, 2 an hour: ursula 2 passed, 1 limited; victor 1 passed. */
const NAMESPACE = 'dash.ns';

beforeAll(async () => {
  userDataDir = mkdtempSync(join(tmpdir(), 'keyward-chromium-'));
  topology = await startTopology({ nodes: 1, env: { KEYWARD_ANALYTICS_FLUSH_MS: '100' } });
  base = topology.nodes[0]!.url;
  api = client(base, topology.rootKey);
  ({ context, page, problems } = await launchChromium(userDataDir));

  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'usage' })).body.apiId;
  const otherApi = (await api.post<{ apiId: string }>('apis.createApi', { name: 'elsewhere' })).body
    .apiId;
  alpha = await createKey(api, apiId, {
    name: 'alpha',
    ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: HOUR },
  });
  beta = await createKey(api, apiId, { name: 'beta', remaining: 1, externalId: 'acme-corp' });
  gamma = await createKey(api, apiId, { name: 'gamma', enabled: false });
  other = await createKey(api, otherApi, { name: 'other' });

  const verify = async (key: string, times: number) => {
    const codes: string[] = [];
    for (let i = 0; i < times; i++) {
      codes.push((await api.post<{ code: string }>('keys.verifyKey', { key, apiId })).body.code);
    }
    return codes;
  };
  expect(await verify(alpha.key, 5)).toEqual(['VALID', ...Array(4).fill('RATE_LIMITED')]);
  expect(await verify(beta.key, 4)).toEqual(['VALID', ...Array(3).fill('USAGE_EXCEEDED')]);
  expect(await verify(gamma.key, 2)).toEqual(['DISABLED', 'DISABLED']);
  expect(await verify('sk_not_a_key_at_all_000', 1)).toEqual(['NOT_FOUND']);
  for (let i = 0; i < 3; i++) await api.post('keys.verifyKey', { key: other.key });
  const limited: boolean[] = [];
  for (const identifier of ['ursula', 'ursula', 'ursula', 'victor']) {
    const answer = await api.post<{ success: boolean }>('ratelimits.limit', {
      namespace: NAMESPACE,
      identifier,
      limit: 2,
      duration: HOUR,
    });
    limited.push(!answer.body.success);
  }
  expect(limited).toEqual([false, false, true, false]);

  // The node writes its counts every 100 ms here: the page reads them once they are all in.
  await eventually(
    async () =>
      (
        await api.get<{ total: number }[]>('analytics.getVerifications', {
          apiId,
          start: Date.now() - HOUR,
        })
      ).body[0]?.total === 12,
    { what: 'the node to flush its 12 verifications' },
  );
  await eventually(
    async () =>
      (
        await api.get<{ usage: { total: number }[] }>('ratelimits.getUsage', {
          namespaceName: NAMESPACE,
          groupBy: 'identifier',
        })
      ).body.usage.reduce((sum, row) => sum + row.total, 0) === 4,
    { what: 'the node to flush its 4 limits' },
  );
}, 60_000);

afterAll(async () => {
  await context?.close();
  await topology?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

/** Polls `read` until it answers `expected` (as JSON), or fails with what it saw last. */
async function reads<T>(read: () => Promise<T>, expected: T): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = await read();
  while (JSON.stringify(seen) !== JSON.stringify(expected)) {
    if (Date.now() > deadline) {
      throw new Error(`expected ${JSON.stringify(expected)}, saw ${JSON.stringify(seen)}`);
    }
    await page.waitForTimeout(50);
    seen = await read();
  }
}

const notice = () => page.locator('#notice');
const chart = () => page.getByRole('region', { name: 'Verifications over time' });
const tableOf = (title: string) =>
  page.locator('section.card', { has: page.getByRole('heading', { name: title, exact: true }) });

const limitsChart = () => page.getByRole('region', { name: 'Rate limits over time' });

/** uPlot's legend, label → value: each series' total over the range while no bar is hovered. */
const legend = (of: () => Locator = chart) =>
  of()
    .locator('.u-legend tr.u-series')
    .evaluateAll((rows) =>
      Object.fromEntries(
        rows.map((row) => [
          row.querySelector('.u-label')?.textContent ?? '',
          row.querySelector('.u-value')?.textContent ?? '',
        ]),
      ),
    );

/** A table's rows, a cell's text each, for the card titled `title`. */
const cells = (title: string) =>
  tableOf(title)
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.innerText.trim())),
    );

const keyText = (name: string, made: Made) => `${name}\n${made.keyId}`;

async function signIn(rootKey: string): Promise<void> {
  const logout = page.getByRole('button', { name: 'Log out' });
  if (await logout.isVisible()) await logout.click();
  await page.getByLabel('Root key').fill(rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await logout.waitFor();
}

test('serves uPlot from the node under the unchanged CSP', async () => {
  const response = await page.goto(`${base}/dashboard`);
  expect(response?.headers()['content-security-policy']).toBe(DASHBOARD_CSP);
  expect(DASHBOARD_CSP).toContain("script-src 'self'; style-src 'self';");
  for (const [file, type] of [
    ['uplot.js', 'application/javascript'],
    ['uplot.css', 'text/css'],
  ]) {
    const asset = await fetch(`${base}/dashboard/${file}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain(type);
    expect(asset.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
  }
  await signIn(topology.rootKey);
});

test('charts an API’s verifications stacked by outcome, and ranks its keys', async () => {
  await page.locator('#pages').getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage', exact: true }).waitFor();
  await page.getByLabel('API').selectOption(apiId);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await sees(chart().locator('h2'), 'Verifications of “usage”, per hour');
  await chart().locator('canvas').first().waitFor();
  // beta's one VALID spent its one credit (issue 26 part 5).
  await sees(chart(), '12 verifications in the last 7 d: 2 valid, 10 refused; 1 credit spent.');
  await reads(legend, {
    Time: 'last 7 d',
    Valid: '2',
    'Rate limited': '4',
    'Usage exceeded': '3',
    Disabled: '2',
    'Not found': '1',
  });
  expect(page.url()).toContain(`#/usage?apiId=${apiId}&range=7d`);

  // The other API's key is not in this API's counts.
  await reads(
    () => cells('Top keys by verifications'),
    [
      [keyText('alpha', alpha), '5', '1', '4'],
      [keyText('beta', beta), '4', '1', '3'],
      [keyText('gamma', gamma), '2', '0', '2'],
      ['unknown keys', '1', '0', '1'],
    ],
  );
  expect(await cells('Top keys by refusals')).toEqual([
    [keyText('alpha', alpha), '4', '4', '0', '0'],
    [keyText('beta', beta), '3', '0', '3', '0'],
    [keyText('gamma', gamma), '2', '0', '0', '2'],
    ['unknown keys', '1', '0', '0', '1'],
  ]);
  await tableOf('Top keys by refusals').getByRole('link', { name: 'beta' }).click();
  await page.getByRole('heading', { name: 'beta' }).waitFor();
  await page.goBack();
  await chart().locator('canvas').first().waitFor();
});

test('the range picker asks for days over 30 days, and the address keeps the range', async () => {
  const before = Date.now();
  const asked = page.waitForRequest((request) =>
    request.url().includes('/v1/analytics.getVerifications?'),
  );
  await page.getByRole('button', { name: '30 d' }).click();
  const query = new URL((await asked).url()).searchParams;
  const after = Date.now();
  expect(query.get('groupBy')).toBe('day');
  expect(query.get('apiId')).toBe(apiId);
  const start = Number(query.get('start'));
  expect(start).toBeGreaterThanOrEqual(before - 30 * DAY);
  expect(start).toBeLessThanOrEqual(after - 30 * DAY);
  await sees(chart().locator('h2'), 'per day');
  await chart().locator('canvas').first().waitFor();
  expect(await page.getByRole('button', { name: '30 d' }).getAttribute('aria-pressed')).toBe(
    'true',
  );
  expect(await page.getByRole('button', { name: '7 d' }).getAttribute('aria-pressed')).toBe(
    'false',
  );
  await reads(legend, {
    Time: 'last 30 d',
    Valid: '2',
    'Rate limited': '4',
    'Usage exceeded': '3',
    Disabled: '2',
    'Not found': '1',
  });
  expect(page.url()).toContain('range=30d');

  // The address alone draws the same page.
  await page.reload();
  await sees(chart().locator('h2'), 'Verifications of “usage”, per day');
  expect(await page.getByRole('button', { name: '30 d' }).getAttribute('aria-pressed')).toBe(
    'true',
  );
});

test('a key’s page links to its usage: its outcomes alone, without the top keys', async () => {
  await page.goto(`${base}/dashboard#/keys/${alpha.keyId}`);
  await page.getByRole('heading', { name: 'alpha' }).waitFor();
  await page
    .getByRole('navigation', { name: 'Related pages' })
    .getByRole('link', { name: 'Usage' })
    .click();
  await sees(chart().locator('h2'), `Verifications of “usage”, key ${alpha.keyId}, per hour`);
  await chart().locator('canvas').first().waitFor();
  expect(await page.getByLabel('Key id').inputValue()).toBe(alpha.keyId);
  await reads(legend, { Time: 'last 7 d', Valid: '1', 'Rate limited': '4', 'Usage exceeded': '0' });
  expect(await tableOf('Top keys by verifications').count()).toBe(0);
});

test('an identity’s page links to its usage: the keys of that identity', async () => {
  const identity = (
    await api.get<{ id: string }>('identities.getIdentity', { externalId: 'acme-corp' })
  ).body;
  await page.goto(`${base}/dashboard#/identities/${identity.id}`);
  await page.getByRole('heading', { name: 'acme-corp', exact: true }).waitFor();
  await page
    .getByRole('navigation', { name: 'Related pages' })
    .getByRole('link', { name: 'Usage' })
    .click();
  await sees(chart().locator('h2'), 'Verifications of “usage”, identity “acme-corp”, per hour');
  await chart().locator('canvas').first().waitFor();
  await reads(legend, { Time: 'last 7 d', Valid: '1', 'Rate limited': '0', 'Usage exceeded': '3' });
  await reads(() => cells('Top keys by verifications'), [[keyText('beta', beta), '4', '1', '3']]);

  // An identity nobody has is the API's answer, shown as such.
  await page.getByLabel('Identity (external id)').fill('nobody-at-all');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await sees(notice(), 'NOT_FOUND');
  await sees(chart(), 'Not read (NOT_FOUND)');
});

test('charts a rate-limit namespace’s limits, passed and limited, and its top identifiers', async () => {
  await page.goto(`${base}/dashboard#/usage?apiId=${apiId}&range=7d`);
  await sees(limitsChart().locator('h2'), 'Standalone rate limits');
  await sees(limitsChart(), 'Name a namespace to chart its limits');
  expect(await tableOf('Top identifiers').count()).toBe(0);

  await page.getByLabel('Rate-limit namespace').fill(NAMESPACE);
  await page.getByRole('button', { name: 'Show limits' }).click();
  await sees(limitsChart().locator('h2'), `Rate limits of namespace “${NAMESPACE}”, per hour`);
  await limitsChart().locator('canvas').first().waitFor();
  await sees(limitsChart(), '4 limits in the last 7 d: 3 passed, 1 limited.');
  await reads(() => legend(limitsChart), { Time: 'last 7 d', Passed: '3', Limited: '1' });
  await reads(
    () => cells('Top identifiers'),
    [
      ['ursula', '3', '2', '1'],
      ['victor', '1', '1', '0'],
    ],
  );
  expect(page.url()).toContain(`namespace=${NAMESPACE}`);
  // The verifications' chart is still the API's.
  await reads(legend, {
    Time: 'last 7 d',
    Valid: '2',
    'Rate limited': '4',
    'Usage exceeded': '3',
    Disabled: '2',
    'Not found': '1',
  });

  // The page's range is the namespace's too: days over 30 days.
  const asked = page.waitForRequest(
    (request) =>
      request.url().includes('/v1/ratelimits.getUsage?') && !request.url().includes('groupBy'),
  );
  await page.getByRole('button', { name: '30 d' }).click();
  const query = new URL((await asked).url()).searchParams;
  expect([query.get('namespaceName'), query.get('granularity')]).toEqual([NAMESPACE, 'day']);
  await sees(limitsChart().locator('h2'), `Rate limits of namespace “${NAMESPACE}”, per day`);
  await reads(() => legend(limitsChart), { Time: 'last 30 d', Passed: '3', Limited: '1' });

  // By its id, from the address alone.
  const primary = await adminRedis(topology.primary.url);
  const namespaceId = await primary
    .hget(names.namespace(topology.workspaceId, NAMESPACE), 'id')
    .finally(() => closeRedis(primary));
  expect(namespaceId).toMatch(/^rlns_/);
  const byId = page.waitForRequest((request) =>
    request.url().includes(`/v1/ratelimits.getUsage?namespaceId=${namespaceId}`),
  );
  await page.goto(`${base}/dashboard#/usage?apiId=${apiId}&namespace=${namespaceId}&range=24h`);
  await byId;
  expect(await page.getByLabel('Rate-limit namespace').inputValue()).toBe(namespaceId);
  await reads(() => legend(limitsChart), { Time: 'last 24 h', Passed: '3', Limited: '1' });

  // A namespace nobody has used is the API's 404, shown as such.
  await page.getByLabel('Rate-limit namespace').fill('never.used');
  await page.getByRole('button', { name: 'Show limits' }).click();
  await sees(notice(), 'NOT_FOUND');
  await sees(limitsChart(), 'Not read (NOT_FOUND)');
  await sees(tableOf('Top identifiers'), 'Not read (NOT_FOUND)');

  // A workspace without APIs still charts a namespace; this workspace's is not one of its own.
  const elsewhere = await topology.newRootKey();
  await signIn(elsewhere.key);
  await page.goto(`${base}/dashboard#/usage?namespace=${NAMESPACE}`);
  await sees(page.locator('.scope'), 'No APIs yet: verifications are counted per API.');
  await sees(limitsChart(), 'Not read (NOT_FOUND)');
  expect(await chart().count()).toBe(0);
  await signIn(topology.rootKey);
});

test('the audit log lists this test’s writes newest first, filters them and reads more', async () => {
  // 21 more writes: the first page (20) cannot hold them all.
  for (let i = 0; i < 21; i++) {
    await api.post('keys.updateKey', { keyId: gamma.keyId, name: `gamma ${i}` });
  }
  await page.locator('#pages').getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log' }).waitFor();
  const rows = page.locator('tbody tr');
  await sees(rows.first(), 'keys.updateKey');
  expect(await rows.count()).toBe(20);
  await sees(page.locator('.pager'), '20 entries so far');
  // Newest first: the last rename comes first.
  const first = (
    await api.get<{ entries: { id: string; requestId: string }[] }>('auditLogs.list', { limit: 1 })
  ).body.entries[0]!;
  await sees(rows.first(), first.requestId);

  await page.getByRole('button', { name: 'More' }).click();
  // The writes of this file: 2 APIs, 4 keys, the identity beta made, 21 renames; and, oldest,
  // the operator's creation of the root key the workspace was born with.
  await sees(page.locator('.pager'), '29 entries, the whole log');
  expect(await rows.count()).toBe(29);
  expect(await page.getByRole('button', { name: 'More' }).isHidden()).toBe(true);
  await sees(rows.last(), 'rootKeys.createRootKey');
  await sees(rows.nth(27), 'apis.createApi');

  // By target: alpha's one write, its creation.
  await page.getByLabel('Target id').fill(alpha.keyId);
  await page.getByRole('button', { name: 'Filter' }).click();
  await sees(page.locator('.pager'), '1 entry, the whole log');
  await sees(rows.first(), 'keys.createKey');
  await sees(rows.first(), alpha.keyId);
  expect(page.url()).toContain(`#/audit?targetId=${alpha.keyId}`);

  // By operation: the API's creations.
  await page.getByLabel('Target id').fill('');
  await page.getByLabel('Operation').fill('apis.createApi');
  await page.getByRole('button', { name: 'Filter' }).click();
  await sees(page.locator('.pager'), '2 entries, the whole log');
  await sees(rows.nth(0), 'elsewhere');
  await sees(rows.nth(1), apiId);

  // A key's page links to its entries.
  await page.goto(`${base}/dashboard#/keys/${beta.keyId}`);
  await page.getByRole('heading', { name: 'beta' }).waitFor();
  await page
    .getByRole('navigation', { name: 'Related pages' })
    .getByRole('link', { name: 'Audit log' })
    .click();
  await sees(page.locator('.pager'), '1 entry, the whole log');
  expect(await page.getByLabel('Target id').inputValue()).toBe(beta.keyId);
});

test('a root key without audit.*.read sees the 403 on the audit page', async () => {
  const limited = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['api.*.read_api', 'api.*.read_key'],
  });
  await signIn(limited.key);
  await page.locator('#pages').getByRole('link', { name: 'Audit log' }).click();
  await sees(notice(), 'INSUFFICIENT_PERMISSIONS');
  await sees(page.locator('tbody'), 'Not read (INSUFFICIENT_PERMISSIONS)');
  await sees(page.locator('tbody'), 'audit.*.read');
  // Its usage page still draws: analytics needs read_api alone.
  await page.locator('#pages').getByRole('link', { name: 'Usage' }).click();
  await chart().locator('canvas').first().waitFor();
  await signIn(topology.rootKey);
  expect(problems).toEqual([]);
});
