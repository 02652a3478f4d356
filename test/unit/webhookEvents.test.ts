import type { WebhookRecord } from '../../src/domain/webhook';
import type { DeliveryJob, WebhookStore } from '../../src/store/webhookStore';
import { WebhookEvents } from '../../src/webhooks/events';

/**
 * What verifications bring about for webhooks, over a fake store: nothing touches the store on
 * the request's path; a workspace without webhooks is read once and then costs nothing; states
 * are coalesced per flush and queued once per marker; a rise above the threshold clears it.
 */

function fakeStore(hooks: Record<string, WebhookRecord[]>) {
  const calls: string[] = [];
  const markers = new Set<string>();
  const queued: DeliveryJob[] = [];
  const store = {
    list: (ws: string) => {
      calls.push(`list ${ws}`);
      return Promise.resolve(hooks[ws] ?? []);
    },
    queueOnce: (marker: string, _ttl: number, job: DeliveryJob) => {
      calls.push(`queue ${marker}`);
      if (markers.has(marker)) return Promise.resolve(false);
      markers.add(marker);
      queued.push(job);
      return Promise.resolve(true);
    },
    clearMarkers: (names: readonly string[]) => {
      for (const name of names) {
        calls.push(`clear ${name}`);
        markers.delete(name);
      }
      return Promise.resolve();
    },
  };
  return { store: store as unknown as WebhookStore, calls, queued };
}

const hook = (over: Partial<WebhookRecord> = {}): WebhookRecord => ({
  id: 'wh_1',
  workspaceId: 'ws_1',
  url: 'https://203.0.113.10/',
  events: ['key.credits.low', 'key.credits.exhausted', 'key.ratelimited', 'key.expiring'],
  creditsThreshold: 2,
  createdAt: 0,
  secret: 'plain.x',
  ...over,
});

const NOW = 1_800_000_000_000;
const events = (store: WebhookStore, cacheMs = 5_000) =>
  new WebhookEvents(store, () => NOW, { flushMs: 1_000, cacheMs, maxPending: 100 });

const types = (jobs: DeliveryJob[]) => jobs.map((job) => job.type);

test('observe never calls the store; the flush queues each state once', async () => {
  const { store, calls, queued } = fakeStore({ ws_1: [hook()] });
  const webhooks = events(store);
  for (const remaining of [3, 2, 1, 0]) {
    webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining }, NOW);
  }
  expect(calls).toEqual([]);
  await webhooks.flush();
  expect(types(queued)).toEqual(['key.credits.low', 'key.credits.exhausted']);
  const body = JSON.parse(queued[0]!.body) as { data: object };
  expect(body.data).toEqual({
    workspaceId: 'ws_1',
    apiId: 'api_1',
    keyId: 'key_1',
    creditsOf: 'key',
    remaining: 0,
    threshold: 2,
  });
  // Still low: the markers hold, nothing more is queued.
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'USAGE_EXCEEDED', remaining: 0 }, NOW);
  await webhooks.flush();
  expect(queued).toHaveLength(2);
  // Above the threshold: both markers go, and the next fall fires low again.
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining: 9 }, NOW);
  await webhooks.flush();
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining: 1 }, NOW);
  await webhooks.flush();
  expect(types(queued)).toEqual(['key.credits.low', 'key.credits.exhausted', 'key.credits.low']);
});

test('a workspace without webhooks is read once, then its verifications are not held', async () => {
  const { store, calls } = fakeStore({});
  const webhooks = events(store);
  webhooks.observe('ws_2', undefined, { keyId: 'key_1', code: 'VALID', remaining: 1 }, NOW);
  expect(webhooks.held).toBe(1);
  await webhooks.flush();
  expect(calls).toEqual(['list ws_2']);
  for (let i = 0; i < 10; i++) {
    webhooks.observe(
      'ws_2',
      undefined,
      { keyId: 'key_1', code: 'RATE_LIMITED', remaining: 0 },
      NOW,
    );
  }
  expect(webhooks.held).toBe(0);
  await webhooks.flush();
  expect(calls).toEqual(['list ws_2']);
});

test('verdicts that can bring nothing about are not held, whatever the workspace', () => {
  const { store } = fakeStore({ ws_1: [hook()] });
  const webhooks = events(store);
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID' }, NOW);
  webhooks.observe('ws_1', 'api_1', { code: 'NOT_FOUND' }, NOW);
  webhooks.observe(
    'ws_1',
    'api_1',
    { keyId: 'key_2', code: 'VALID', expires: NOW + 2 * 86_400_000 },
    NOW,
  );
  expect(webhooks.held).toBe(0);
});

test('rate limits fire per limit; expiring once per expiry; only the events a webhook lists', async () => {
  const { store, queued } = fakeStore({
    ws_1: [hook({ events: ['key.ratelimited', 'key.expiring'] })],
  });
  const webhooks = events(store);
  webhooks.observe(
    'ws_1',
    'api_1',
    {
      keyId: 'key_1',
      code: 'RATE_LIMITED',
      remaining: 0,
      expires: NOW + 3_600_000,
      ratelimits: [
        { name: 'requests', limit: 10, duration: 60_000, exceeded: true, reset: NOW + 1 },
        { name: 'tokens', limit: 99, duration: 60_000, exceeded: false, reset: NOW + 1 },
      ],
    },
    NOW,
  );
  webhooks.observe(
    'ws_1',
    'api_1',
    {
      keyId: 'key_3',
      code: 'RATE_LIMITED',
      ratelimit: { limit: 1, remaining: 0, reset: NOW + 500 },
    },
    NOW,
  );
  await webhooks.flush();
  expect(queued.map((job) => [job.type, JSON.parse(job.body).data])).toEqual([
    [
      'key.ratelimited',
      expect.objectContaining({
        keyId: 'key_1',
        ratelimit: { name: 'requests', limit: 10, windowMs: 60_000 },
      }),
    ],
    ['key.expiring', expect.objectContaining({ keyId: 'key_1', expires: NOW + 3_600_000 })],
    [
      'key.ratelimited',
      expect.objectContaining({
        keyId: 'key_3',
        ratelimit: { name: 'default', limit: 1, windowMs: 500 },
      }),
    ],
  ]);
});

test('a copy older than cacheMs is read again by the flush, not on the request path', async () => {
  const hooks: Record<string, WebhookRecord[]> = {};
  const { store, calls, queued } = fakeStore(hooks);
  const webhooks = events(store, 0);
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining: 0 }, NOW);
  await webhooks.flush();
  // A webhook created on another node meanwhile.
  hooks.ws_1 = [hook()];
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining: 0 }, NOW + 1);
  expect(calls).toEqual(['list ws_1']);
  await webhooks.flush();
  expect(calls).toEqual(['list ws_1', 'list ws_1']);
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', remaining: 0 }, NOW + 2);
  await webhooks.flush();
  expect(types(queued)).toEqual(['key.credits.low', 'key.credits.exhausted']);
});

test('the sweep queues key.expiring under the marker a verification sets: one event per key and expiry', async () => {
  const expiringHook = hook({ id: 'wh_exp', events: ['key.expiring'] });
  const creditsHook = hook({ id: 'wh_credits', events: ['key.credits.low'] });
  const { store, queued, calls } = fakeStore({ ws_1: [expiringHook, creditsHook] });
  const webhooks = events(store);
  const expires = NOW + 3_600_000;
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', expires }, NOW);
  await webhooks.flush();
  const key = { workspaceId: 'ws_1', apiId: 'api_1', keyId: 'key_1', expires };
  await webhooks.queueExpiring([expiringHook, creditsHook], key, NOW + 1_000);
  await webhooks.queueExpiring([expiringHook, creditsHook], { ...key, keyId: 'key_2' }, NOW);
  // The same key with a new expiry is a new state.
  await webhooks.queueExpiring([expiringHook], { ...key, expires: expires + 1 }, NOW);
  expect(queued.map((job) => [job.webhookId, JSON.parse(job.body).data])).toEqual([
    ['wh_exp', { workspaceId: 'ws_1', apiId: 'api_1', keyId: 'key_1', expires }],
    ['wh_exp', { workspaceId: 'ws_1', apiId: 'api_1', keyId: 'key_2', expires }],
    ['wh_exp', { workspaceId: 'ws_1', apiId: 'api_1', keyId: 'key_1', expires: expires + 1 }],
  ]);
  // The webhook that does not want key.expiring was never asked to queue anything.
  expect(calls.filter((call) => call.includes('wh_credits'))).toEqual([]);
});

test("an identity's pool seen by two keys in one flush: the latest count decides, the marker stays", async () => {
  const { store, queued, calls } = fakeStore({ ws_1: [hook({ creditsThreshold: 1 })] });
  const webhooks = events(store);
  const identity = (remaining: number) => ({ id: 'id_1', externalId: 'pooled', remaining });
  // key_1 last saw the pool at 2, then key_2 saw it run down to 0: one flush holds both.
  webhooks.observe('ws_1', 'api_1', { keyId: 'key_1', code: 'VALID', identity: identity(2) }, NOW);
  webhooks.observe(
    'ws_1',
    'api_1',
    { keyId: 'key_2', code: 'VALID', identity: identity(1) },
    NOW + 1,
  );
  webhooks.observe(
    'ws_1',
    'api_1',
    { keyId: 'key_2', code: 'VALID', identity: identity(0) },
    NOW + 2,
  );
  await webhooks.flush();
  expect(types(queued)).toEqual(['key.credits.low', 'key.credits.exhausted']);
  // key_1's older count (2) must not clear what key_2's later one (0) just set.
  expect(calls.filter((call) => call.startsWith('clear'))).toEqual([]);
  webhooks.observe(
    'ws_1',
    'api_1',
    { keyId: 'key_1', code: 'USAGE_EXCEEDED', identity: identity(0) },
    NOW + 3,
  );
  await webhooks.flush();
  expect(queued).toHaveLength(2);
});
