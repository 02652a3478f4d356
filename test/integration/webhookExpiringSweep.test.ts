import type { Redis } from 'ioredis';
import { ApiStore } from '../../src/store/apiStore';
import { IdentityStore } from '../../src/store/identityStore';
import { KeyStore } from '../../src/store/keyStore';
import { names } from '../../src/store/names';
import { WebhookStore } from '../../src/store/webhookStore';
import { WebhookEvents } from '../../src/webhooks/events';
import { ExpiringSweep } from '../../src/webhooks/expiringSweep';
import { createKey, eventually, sleep, TEST_VAULT } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';
import { startReceiver, FAST_WEBHOOKS } from '../support/webhookReceiver';

/**
 * The key.expiring sweep (src/webhooks/expiringSweep.ts) on real Redis, against what a real node
 * wrote, with the sweep's clock moved instead of waiting: a key within a day of its expiry is
 * queued once, a later one only once its day comes, a deleted one never, one already noticed by
 * a verification not again; one node a period sweeps. The node's own sweep is left at its
 * default period (10 min), so only the sweeps made here run; its dispatcher delivers.
 */

const HOUR = 3_600_000;
const SETTLE_MS = 500;

let topology: Topology;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let admin: Redis;
let url: string;

beforeAll(async () => {
  receiver = await startReceiver();
  topology = await startTopology({
    nodes: 1,
    localRedis: false,
    env: {
      ...TEST_VAULT,
      ...FAST_WEBHOOKS,
    },
  });
  url = topology.nodes[0]!.url;
  admin = await adminRedis(topology.primary.url);
});
afterAll(async () => {
  if (admin) await closeRedis(admin);
  await topology?.stop();
  await receiver?.close();
});

/** A sweep on the test's clock (`offset` ms ahead of the real one) over the primary. */
function sweeper(clock: { offset: number }, nodeId = 'test-node', everyMs = 60_000) {
  const webhooks = new WebhookStore(admin, 1000);
  const queued: string[] = [];
  const now = () => Date.now() + clock.offset;
  const events = new WebhookEvents(webhooks, now, {
    flushMs: 60_000,
    cacheMs: 0,
    maxPending: 100,
    queued: (type) => queued.push(type),
  });
  const identities = new IdentityStore(admin, () => undefined);
  const sweep = new ExpiringSweep(
    webhooks,
    new ApiStore(admin, () => undefined),
    new KeyStore(admin, () => undefined),
    events,
    now,
    {
      everyMs,
      nodeId,
      pageSize: 1,
      externalId: async (ws, id) => (await identities.byId(ws, id))?.externalId,
    },
  );
  return { sweep, queued };
}

/** Lets the next sweep take the period's lock at once, as the next period would. */
const nextPeriod = () => admin.del(names.webhookExpiringLock);

async function workspace(path: string, events: string[]) {
  const root = await topology.newRootKey();
  const api = client(url, root.key);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'sweep' })).body.apiId;
  const created = await api.post<{ webhookId: string }>('webhooks.createWebhook', {
    url: `${receiver.url}${path}`,
    events,
  });
  expect(created.status).toBe(200);
  return { api, apiId, workspaceId: root.workspaceId, webhookId: created.body.webhookId };
}

test('a key within a day is queued once; a later one when its day comes; deleted and expired ones never', async () => {
  const ws = await workspace('/rules', ['key.expiring']);
  const now = Date.now();
  const soon = { expires: now + 23 * HOUR };
  const later = { expires: now + 3 * 24 * HOUR };
  const a = await createKey(ws.api, ws.apiId, { ...soon, ownerId: 'acme' });
  const b = await createKey(ws.api, ws.apiId, later);
  const deleted = await createKey(ws.api, ws.apiId, soon);
  expect((await ws.api.post('keys.deleteKey', { keyId: deleted.keyId })).status).toBe(200);
  const expired = await createKey(ws.api, ws.apiId, { expires: Date.now() + 300 });
  // More keys than the listing's 16 shards, a page being one key: some shard takes pages.
  for (let i = 0; i < 16; i++) await createKey(ws.api, ws.apiId, {});
  const clock = { offset: 0 };
  const { sweep, queued } = sweeper(clock);
  await sleep(300);

  await nextPeriod();
  // Every live key with an expiry read (a, b and the expired one), one in its last day.
  expect(await sweep.sweep()).toMatchObject({ swept: true, keysRead: 3, expiring: 1 });
  expect(queued).toEqual(['key.expiring']);
  await eventually(() => receiver.on('/rules').length > 0, { what: 'the swept key.expiring' });
  const [first] = receiver.on('/rules');
  expect(first!.event).toMatchObject({
    type: 'key.expiring',
    data: {
      workspaceId: ws.workspaceId,
      apiId: ws.apiId,
      keyId: a.keyId,
      expires: soon.expires,
      identity: { id: expect.stringMatching(/^id_/), externalId: 'acme' },
    },
  });

  // The next period finds the same key in its day again: its marker holds the event back.
  await nextPeriod();
  expect(await sweep.sweep()).toMatchObject({ swept: true, expiring: 1 });
  expect(queued).toHaveLength(1);

  // Two days on: `a` and the short one have expired, `b` is within its last day.
  clock.offset = 2 * 24 * HOUR + HOUR;
  await nextPeriod();
  expect(await sweep.sweep()).toMatchObject({ swept: true, expiring: 1 });
  expect(queued).toHaveLength(2);
  await eventually(() => receiver.on('/rules').length > 1, { what: "b's key.expiring" });
  await sleep(SETTLE_MS);
  expect(receiver.on('/rules').map((request) => request.event.data.keyId)).toEqual([
    a.keyId,
    b.keyId,
  ]);
  expect(receiver.on('/rules').map((r) => r.event.data.keyId)).not.toContain(expired.keyId);
});

test('a key verified in its last day and then swept gets one event', async () => {
  const ws = await workspace('/verified', ['key.expiring']);
  const expires = Date.now() + 20 * HOUR;
  const { key, keyId } = await createKey(ws.api, ws.apiId, { expires });
  expect((await ws.api.post('keys.verifyKey', { key })).body.code).toBe('VALID');
  await eventually(() => receiver.on('/verified').length > 0, {
    what: 'the verified key.expiring',
  });
  const { sweep, queued } = sweeper({ offset: 0 });
  await nextPeriod();
  expect(await sweep.sweep()).toMatchObject({ swept: true });
  expect(queued).toEqual([]);
  // A changed expiry is a new state: it fires again, once.
  const moved = expires + HOUR;
  expect((await ws.api.post('keys.updateKey', { keyId, expires: moved })).status).toBe(200);
  await nextPeriod();
  await sweep.sweep();
  await nextPeriod();
  await sweep.sweep();
  expect(queued).toEqual(['key.expiring']);
  await eventually(() => receiver.on('/verified').length > 1, { what: 'the moved expiry' });
  await sleep(SETTLE_MS);
  expect(receiver.on('/verified').map((request) => request.event.data.expires)).toEqual([
    expires,
    moved,
  ]);
});

test('only workspaces with a webhook wanting key.expiring are walked', async () => {
  const other = await workspace('/other', ['key.ratelimited']);
  await createKey(other.api, other.apiId, { expires: Date.now() + HOUR });
  const gone = await workspace('/gone', ['key.expiring']);
  await createKey(gone.api, gone.apiId, { expires: Date.now() + HOUR });
  expect(
    (await gone.api.post('webhooks.deleteWebhook', { webhookId: gone.webhookId })).status,
  ).toBe(200);
  // The deleted webhook's workspace stays listed until a sweep reads it, not walked, and takes
  // it out of the set; the workspace that never wanted key.expiring was never in it.
  expect(await admin.sismember(names.webhookExpiringWorkspaces, gone.workspaceId)).toBe(1);
  expect(await admin.sismember(names.webhookExpiringWorkspaces, other.workspaceId)).toBe(0);
  const { sweep, queued } = sweeper({ offset: 0 });
  await nextPeriod();
  expect((await sweep.sweep()).forgotten).toBeGreaterThanOrEqual(1);
  expect(queued).toEqual([]);
  expect(await admin.sismember(names.webhookExpiringWorkspaces, gone.workspaceId)).toBe(0);
  // A new webhook wanting key.expiring puts the workspace back.
  expect(
    (
      await gone.api.post('webhooks.createWebhook', {
        url: `${receiver.url}/gone`,
        events: ['key.expiring'],
      })
    ).status,
  ).toBe(200);
  expect(await admin.sismember(names.webhookExpiringWorkspaces, gone.workspaceId)).toBe(1);
  await sleep(SETTLE_MS);
  expect(receiver.on('/other')).toEqual([]);
  expect(receiver.on('/gone')).toEqual([]);
});

test('a workspace that has a webhook wanting key.expiring is never taken out of the set', async () => {
  const ws = await workspace('/kept', ['key.expiring']);
  const webhooks = new WebhookStore(admin, 1000);
  // As a sweep that read the webhooks just before this one was written: the removal reads them
  // again and puts the workspace back.
  expect(await webhooks.forgetExpiringWorkspace(ws.workspaceId)).toBe(false);
  expect(await admin.sismember(names.webhookExpiringWorkspaces, ws.workspaceId)).toBe(1);
});

test('one node a period sweeps: the others find the lock taken', async () => {
  await nextPeriod();
  const outcomes = await Promise.all(
    ['node-a', 'node-b', 'node-c'].map((id) => sweeper({ offset: 0 }, id, 5_000).sweep.sweep()),
  );
  expect(outcomes.filter((outcome) => outcome.swept)).toHaveLength(1);
  const holder = await admin.get(names.webhookExpiringLock);
  expect(['node-a', 'node-b', 'node-c']).toContain(holder);
  expect(await admin.pttl(names.webhookExpiringLock)).toBeGreaterThan(0);
  // Nine tenths of the period: the holder's own next tick finds it free.
  expect(await admin.pttl(names.webhookExpiringLock)).toBeLessThanOrEqual(4_500);
});

test('webhooks created before the set of their workspaces existed are found by a one-time backfill', async () => {
  const ws = await workspace('/backfilled', ['key.expiring']);
  const { keyId } = await createKey(ws.api, ws.apiId, { expires: Date.now() + 2 * HOUR });
  // As a Redis written by the previous release: webhooks, but no set and no mark.
  await admin.del(names.webhookExpiringWorkspaces, names.webhookExpiringBackfilled);
  const { sweep, queued } = sweeper({ offset: 0 });
  await nextPeriod();
  const outcome = await sweep.sweep();
  expect(queued).toEqual(['key.expiring']);
  expect(outcome.workspaces).toBeGreaterThanOrEqual(1);
  // Every workspace with such a webhook is back (the earlier tests' too), the others are not.
  expect(await admin.sismember(names.webhookExpiringWorkspaces, ws.workspaceId)).toBe(1);
  expect(Number(await admin.get(names.webhookExpiringBackfilled))).toBeGreaterThan(0);
  await eventually(() => receiver.on('/backfilled').length > 0, { what: 'the backfilled event' });
  expect(receiver.on('/backfilled').map((request) => request.event.data.keyId)).toEqual([keyId]);
  // Done once: a set emptied by hand stays empty.
  await admin.del(names.webhookExpiringWorkspaces);
  await nextPeriod();
  expect(await sweep.sweep()).toMatchObject({ swept: true, workspaces: 0 });
});
