/**
 * `make screenshots`: the dashboard's usage and audit pages as PNGs in docs/images/, for the
 * README. jest runs it (for its TypeScript and the tests' fixtures), apart from the suite. It
 * starts a node on Redis servers of its own (test/support/topology.ts: free ports, stopped at the
 * end), makes an API, keys and an identity through the HTTP API, verifies the keys with several
 * outcomes, takes standalone limits in a namespace, and photographs the pages in Debian's
 * headless chromium.
 *
 * A node counts a verification at the Redis clock's minute, so verifications made now fill only
 * the last hour. The week before is written as the nodes' flushes would have written it
 * (UsageStore.write, the same MULTI), from a fixed seed: the pictures differ only by the day
 * they were taken.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { BUCKET_MS, bucketStart, limitField, verificationField } from '../src/domain/usage';
import { closeRedis, connectRedis, createRedis } from '../src/redis/clients';
import { names } from '../src/store/names';
import {
  partTag,
  usagePart,
  UsageStore,
  type UsageIncrement,
  type UsagePart,
} from '../src/store/usageStore';
import { launchChromium } from '../test/support/chromium';
import { createKey, eventually } from '../test/support/helpers';
import { client } from '../test/support/rpc';
import { startTopology } from '../test/support/topology';

const OUT = join(__dirname, '..', 'docs', 'images');
const DAY = BUCKET_MS.day;
const HOUR = BUCKET_MS.hour;
/** Retention as a node's defaults: only the buckets' expiry reads it. */
const RETENTION = { minute: 2 * DAY, hour: 90 * DAY, day: 730 * DAY };

/** A fixed-seed generator (mulberry32): the same history every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function shoot(page: Page, name: string): Promise<void> {
  const path = join(OUT, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  // A blank or failed page compresses to a few hundred bytes; a drawn one is far larger.
  expect(statSync(path).size).toBeGreaterThan(30_000);
}

test('photographs the usage and audit pages into docs/images', async () => {
  mkdirSync(OUT, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), 'keyward-screenshots-'));
  const topology = await startTopology({
    nodes: 1,
    env: { KEYWARD_ANALYTICS_FLUSH_MS: '100' },
  });
  const history = createRedis(topology.primary.url, {
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  try {
    const base = topology.nodes[0]!.url;
    const api = client(base, topology.rootKey);
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'payments' })).body
      .apiId;
    const hourly = { type: 'consistent', limit: 40, refillRate: 40, refillInterval: HOUR };
    const checkout = await createKey(api, apiId, {
      name: 'checkout',
      prefix: 'pay',
      externalId: 'acme-corp',
      ratelimit: hourly,
    });
    const mobile = await createKey(api, apiId, {
      name: 'mobile app',
      prefix: 'pay',
      externalId: 'acme-corp',
      remaining: 25,
    });
    const partner = await createKey(api, apiId, {
      name: 'partner sync',
      prefix: 'pay',
      ratelimit: { type: 'fast', limit: 5, refillRate: 5, refillInterval: 60_000 },
    });
    const reports = await createKey(api, apiId, { name: 'reports', prefix: 'pay' });
    await api.post('keys.updateKey', { keyId: reports.keyId, enabled: false });
    await api.post('keys.updateKey', { keyId: mobile.keyId, meta: { platform: 'ios' } });
    await api.post('permissions.createPermission', { name: 'payments.refund' });
    await api.post('keys.addPermissions', {
      keyId: checkout.keyId,
      permissions: [{ name: 'payments.refund' }],
    });

    // The last hour: real verifications, every outcome the keys above can give.
    let answered = 0;
    const verify = async (key: string, times: number) => {
      for (let i = 0; i < times; i++) {
        await api.post('keys.verifyKey', { key, apiId });
        answered += 1;
      }
    };
    await verify(checkout.key, 30);
    await verify(mobile.key, 32);
    await verify(partner.key, 9);
    await verify(reports.key, 3);
    await verify('pay_notakeyatall000000000', 2);
    // And a namespace's standalone limits: 10 an hour per tenant.
    const NAMESPACE = 'exports';
    const limits: Record<string, number> = { 'tenant-acme': 14, 'tenant-globex': 6 };
    let limited = 0;
    for (const [identifier, times] of Object.entries(limits)) {
      for (let i = 0; i < times; i++) {
        await api.post('ratelimits.limit', {
          namespace: NAMESPACE,
          identifier,
          limit: 10,
          duration: HOUR,
        });
        limited += 1;
      }
    }

    // The week before, hour by hour, with a working day's rhythm.
    await connectRedis(history);
    const store = new UsageStore(history, RETENTION);
    const next = random(16);
    const now = Date.now();
    // Grouped as a node's flush groups them: a part (an owner's shard) per MULTI.
    const parts = new Map<string, { part: UsagePart; increments: UsageIncrement[] }>();
    const push = (part: UsagePart, increment: UsageIncrement) => {
      const tag = partTag(part);
      if (!parts.has(tag)) parts.set(tag, { part, increments: [] });
      parts.get(tag)!.increments.push(increment);
    };
    const add = (at: number, keyId: string, identityId: string, outcome: string, n: number) => {
      if (n <= 0) return;
      push(usagePart(topology.workspaceId, 'v', apiId, keyId), {
        minute: bucketStart('minute', at),
        field: verificationField({ keyId, identityId, outcome, tags: [] }),
        count: n,
      });
    };
    // No answer carries a namespace's id: its record has it.
    const namespaceId = await history.hget(names.namespace(topology.workspaceId, NAMESPACE), 'id');
    const limit = (at: number, identifier: string, passed: boolean, n: number) => {
      if (n <= 0) return;
      push(usagePart(topology.workspaceId, 'rl', namespaceId!, identifier), {
        minute: bucketStart('minute', at),
        field: limitField(identifier, passed),
        count: n,
      });
    };
    const identityId = (
      await api.get<{ id: string }>('identities.getIdentity', { externalId: 'acme-corp' })
    ).body.id;
    for (let at = bucketStart('hour', now) - 7 * DAY; at < bucketStart('hour', now); at += HOUR) {
      const hourOfDay = new Date(at).getUTCHours();
      const busy = Math.max(0, Math.sin(((hourOfDay - 6) / 24) * 2 * Math.PI)) + 0.15;
      const checkoutCalls = Math.round(busy * (30 + next() * 20));
      add(at, checkout.keyId, identityId, 'VALID', Math.min(checkoutCalls, 40));
      add(at, checkout.keyId, identityId, 'RATE_LIMITED', checkoutCalls - 40);
      add(at, mobile.keyId, identityId, 'VALID', Math.round(busy * (12 + next() * 10)));
      add(at, mobile.keyId, identityId, 'USAGE_EXCEEDED', next() < busy / 3 ? 2 : 0);
      add(at, partner.keyId, '', 'VALID', Math.round(5 + next() * 6));
      add(at, partner.keyId, '', 'RATE_LIMITED', next() < 0.25 ? Math.round(next() * 6) : 0);
      add(at, '', '', 'NOT_FOUND', next() < 0.08 ? 1 : 0);
      for (const [identifier, scale] of [
        ['tenant-acme', 14],
        ['tenant-globex', 8],
        ['tenant-initech', 4],
      ] as const) {
        const calls = Math.round(busy * scale * (0.6 + next() * 0.8));
        limit(at, identifier, true, Math.min(calls, 10));
        limit(at, identifier, false, calls - 10);
      }
    }
    for (const { part, increments } of parts.values()) {
      await store.write(part, increments, 'screenshots', 1);
    }

    await eventually(
      async () =>
        (
          await api.get<{ total: number }[]>('analytics.getVerifications', {
            apiId,
            start: bucketStart('hour', now),
          })
        ).body[0]?.total === answered,
      { what: 'the node to flush its counts' },
    );
    await eventually(
      async () =>
        (
          await api.get<{ usage: { total: number }[] }>('ratelimits.getUsage', {
            namespaceName: NAMESPACE,
            start: bucketStart('hour', now),
            groupBy: 'identifier',
          })
        ).body.usage.reduce((sum, row) => sum + row.total, 0) === limited,
      { what: 'the node to flush its limits' },
    );

    const { context, page, problems } = await launchChromium(userDataDir);
    try {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${base}/dashboard`);
      await page.getByLabel('Root key').fill(topology.rootKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'APIs' }).waitFor();

      await page.goto(`${base}/dashboard#/usage?apiId=${apiId}&namespace=${NAMESPACE}&range=7d`);
      await page.locator('.chart canvas').first().waitFor();
      await page.locator('tbody tr a').first().waitFor();
      await page
        .getByRole('region', { name: 'Rate limits over time' })
        .locator('canvas')
        .first()
        .waitFor();
      await page.locator('tbody tr td code', { hasText: 'tenant-acme' }).waitFor();
      await shoot(page, 'dashboard-usage');

      await page.goto(`${base}/dashboard#/usage?apiId=${apiId}&externalId=acme-corp&range=24h`);
      await page.getByRole('heading', { name: /identity “acme-corp”, per hour/ }).waitFor();
      await page.locator('.chart canvas').first().waitFor();
      await shoot(page, 'dashboard-usage-identity');

      await page.goto(`${base}/dashboard#/audit`);
      await page.locator('tbody tr code').first().waitFor();
      await shoot(page, 'dashboard-audit');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  } finally {
    await closeRedis(history);
    await topology.stop();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}, 120_000);
