import { readFileSync } from 'node:fs';
import {
  DASHBOARD_CSP,
  DASHBOARD_MODULES,
  DASHBOARD_VENDORED,
} from '../../src/http/dashboardAssets';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';

/**
 * What the dashboard stands on: its files, served under their CSP, and keyward's own read calls
 * behind it (listApis, getBucket, getRecentVerifications).
 */
let topology: Topology;
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

test('serves the page and each of its modules under the dashboard CSP', async () => {
  const base = topology.nodes[0]!.url;
  const page = await fetch(`${base}/dashboard`);
  expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
  const html = await page.text();
  expect(html).toContain('<script type="module" src="/dashboard/app.js"></script>');
  expect(html).toContain('<link rel="stylesheet" href="/dashboard/uplot.css" />');
  expect(html).not.toMatch(/<script>|style=/);
  const served: string[] = [...DASHBOARD_MODULES, 'uplot.js'];
  for (const file of served) {
    const module = await fetch(`${base}/dashboard/${file}`);
    expect(module.status).toBe(200);
    expect(module.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(module.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    // Every module the page imports is served: a missing one would break the page in silence.
    for (const [, imported] of (await module.text()).matchAll(/from '\.\/([\w-]+\.js)'/g)) {
      expect(served).toContain(imported);
    }
  }
});

test('serves uPlot as its npm package has it, importing nothing', async () => {
  const base = topology.nodes[0]!.url;
  for (const [file, { from, type }] of Object.entries(DASHBOARD_VENDORED)) {
    const asset = await fetch(`${base}/dashboard/${file}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain(type);
    expect(asset.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    const body = await asset.text();
    expect(body).toBe(readFileSync(require.resolve(from), 'utf8'));
    expect(body).not.toMatch(/^\s*import\b|\bimport\(/m);
  }
});

test('apis.listApis pages through the live APIs of the workspace in creation order', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(
      (await api.post<{ apiId: string }>('apis.createApi', { name: `api ${i}` })).body.apiId,
    );
  }
  await api.post('apis.deleteApi', { apiId: ids[2] });
  type Page = { apis: { id: string; name: string }[]; cursor?: string; total: number };
  const first = await api.get<Page>('apis.listApis', { limit: 2 });
  expect(first.body.apis.map((a) => a.id)).toEqual(ids.slice(0, 2));
  const second = await api.get<Page>('apis.listApis', { limit: 2, cursor: first.body.cursor! });
  expect(second.body.apis.map((a) => a.id)).toEqual([ids[3], ids[4]]);
  expect(second.body.cursor).toBeUndefined();
  expect(second.body.total).toBe(4);
  const stranger = client(topology.nodes[0]!.url, (await topology.newRootKey()).key);
  expect((await stranger.get<Page>('apis.listApis', {})).body.apis).toEqual([]);
});

test('keys.getBucket reads the live bucket and credits without spending', async () => {
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'bucket' })).body
    .apiId;
  const { keyId, key } = (
    await api.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      remaining: 10,
      ratelimit: { type: 'fast', limit: 5, refillRate: 1, refillInterval: 60_000 },
    })
  ).body;
  await api.post('keys.verifyKey', { key, ratelimit: { cost: 2 } });
  type Bucket = {
    ratelimit: { type: string; limit: number; remaining: number; reset: number };
    remaining: number;
  };
  const first = await api.get<Bucket>('keys.getBucket', { keyId });
  expect(first.body).toMatchObject({
    ratelimit: { type: 'fast', limit: 5, remaining: 3 },
    remaining: 9,
  });
  const again = await api.get<Bucket>('keys.getBucket', { keyId });
  expect(again.body).toEqual(first.body);
});

test('keys.getRecentVerifications lists this node’s recent outcomes, newest first', async () => {
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'outcomes' })).body
    .apiId;
  const { keyId, key } = (
    await api.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: 60_000 },
    })
  ).body;
  await api.post('keys.verifyKey', { key });
  await api.post('keys.verifyKey', { key });
  const recent = await api.get<{ verifications: { at: number; code: string }[]; scope: string }>(
    'keys.getRecentVerifications',
    { keyId },
  );
  expect(recent.body.scope).toBe('node');
  expect(recent.body.verifications.map((v) => v.code)).toEqual(['RATE_LIMITED', 'VALID']);
});
