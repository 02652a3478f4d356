import { verifySignature } from '../../src/webhooks/signature';
import { runCommand, runCommandJson } from '../support/cliProcess';
import { createKey, eventually, sleep, TEST_VAULT } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import {
  startProcessTopology,
  startTopology,
  type ProcessTopology,
  type Topology,
} from '../support/topology';
import { startReceiver, type Received, FAST_WEBHOOKS } from '../support/webhookReceiver';

/**
 * Usage webhooks (docs/webhooks.md) on real Redis and nodes, with a real receiver on loopback:
 * each event once, signed; a receiver that fails then recovers gets it through retries, each
 * attempt listed; a node SIGKILLed mid-delivery leaves it to another; private targets refused.
 * Retries and polls are fast here (KEYWARD_WEBHOOK_*_MS); nothing asserts a duration.
 */

const FAST = {
  ...TEST_VAULT,
  ...FAST_WEBHOOKS,
  KEYWARD_WEBHOOK_TIMEOUT_MS: '3000',
};

/** A few flushes and polls: long enough for a second event to show up, were there one. */
const SETTLE_MS = 600;

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A fresh workspace with an API, a webhook on `path` of the receiver, and a client. */
async function workspace(
  deployment: Pick<Topology, 'newRootKey'>,
  url: string,
  receiver: Receiver,
  path: string,
  hook: { events: string[]; creditsThreshold?: number },
) {
  const root = await deployment.newRootKey();
  const api = client(url, root.key);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: path })).body.apiId;
  const created = await api.post<{ webhookId: string; secret: string }>('webhooks.createWebhook', {
    url: `${receiver.url}${path}`,
    ...hook,
  });
  expect(created.status).toBe(200);
  return { api, apiId, rootKey: root.key, workspaceId: root.workspaceId, ...created.body };
}

const ofType = (requests: Received[], type: string) =>
  requests.filter((request) => request.event.type === type);

/** Every request's signature verifies with the secret, and its event id is in the header. */
function expectSigned(requests: Received[], secret: string) {
  for (const request of requests) {
    const header = String(request.headers['keyward-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, request.body, header, Math.floor(Date.now() / 1000))).toBe(true);
    expect(verifySignature(`${secret}x`, request.body, header, Math.floor(Date.now() / 1000))).toBe(
      false,
    );
    expect(request.headers['keyward-event-id']).toBe(request.event.id);
  }
}

describe('webhooks on one node', () => {
  let topology: Topology;
  let receiver: Receiver;
  let url: string;

  beforeAll(async () => {
    // /flaky answers 500 twice, then 200.
    receiver = await startReceiver((path, count) => (path === '/flaky' && count <= 2 ? 500 : 200));
    // The key.expiring sweep every 200 ms: the expiring tests see it run several times.
    topology = await startTopology({
      nodes: 1,
      localRedis: false,
      env: { ...FAST, KEYWARD_WEBHOOK_EXPIRING_SWEEP_MS: '200' },
    });
    url = topology.nodes[0]!.url;
  });
  afterAll(async () => {
    await topology?.stop();
    await receiver?.close();
  });

  test('the four operations in v2: its envelope, its strict bodies, the same webhook', async () => {
    const root = await topology.newRootKey();
    const v2 = async (method: string, body: unknown) => {
      const response = await fetch(`${url}/v2/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${root.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as { data?: unknown } };
    };
    const created = await v2('webhooks.createWebhook', {
      url: `${receiver.url}/v2`,
      events: ['key.ratelimited'],
    });
    expect(created).toMatchObject({
      status: 200,
      body: { data: { webhookId: expect.stringMatching(/^wh_/), secret: expect.any(String) } },
    });
    const { webhookId } = created.body.data as { webhookId: string };
    expect((await v2('webhooks.listWebhooks', {})).body.data).toEqual([
      {
        webhookId,
        url: `${receiver.url}/v2`,
        events: ['key.ratelimited'],
        createdAt: expect.any(Number),
      },
    ]);
    expect((await v2('webhooks.listDeliveries', { webhookId })).body.data).toEqual([]);
    // v2 bodies refuse what they do not know.
    expect((await v2('webhooks.listDeliveries', { webhookId, page: 2 })).status).toBe(400);
    expect((await v2('webhooks.deleteWebhook', { webhookId })).body).toMatchObject({ data: {} });
    expect((await v2('webhooks.deleteWebhook', { webhookId })).status).toBe(404);
  });

  test('listWebhooks shows a webhook without its secret; deleteWebhook takes it away', async () => {
    const ws = await workspace(topology, url, receiver, '/listed', {
      events: ['key.expiring'],
    });
    expect(ws.secret).toMatch(/^whsec_/);
    const listed = await ws.api.get('webhooks.listWebhooks', {});
    expect(listed.body).toEqual({
      webhooks: [
        {
          webhookId: ws.webhookId,
          url: `${receiver.url}/listed`,
          events: ['key.expiring'],
          createdAt: expect.any(Number),
        },
      ],
    });
    expect(JSON.stringify(listed.body)).not.toContain(ws.secret);
    const audit = await ws.api.get<{ entries: { operation: string; summary: object }[] }>(
      'auditLogs.list',
      { targetId: ws.webhookId },
    );
    expect(audit.body.entries.map((entry) => entry.operation)).toEqual(['webhooks.createWebhook']);
    expect(JSON.stringify(audit.body)).not.toContain(ws.secret);
    expect((await ws.api.post('webhooks.deleteWebhook', { webhookId: ws.webhookId })).status).toBe(
      200,
    );
    expect((await ws.api.get('webhooks.listWebhooks', {})).body).toEqual({ webhooks: [] });
    const again = await ws.api.post('webhooks.deleteWebhook', { webhookId: ws.webhookId });
    expect(again.status).toBe(404);
    const missing = await ws.api.get('webhooks.listDeliveries', { webhookId: ws.webhookId });
    expect(missing.status).toBe(404);
    // key.credits.low needs its threshold.
    const noThreshold = await ws.api.post('webhooks.createWebhook', {
      url: `${receiver.url}/x`,
      events: ['key.credits.low'],
    });
    expect(noThreshold.status).toBe(400);
  });

  test('credits low and exhausted fire once each, signed; low again only after they rose above', async () => {
    const ws = await workspace(topology, url, receiver, '/credits', {
      events: ['key.credits.low', 'key.credits.exhausted'],
      creditsThreshold: 2,
    });
    const { keyId, key } = await createKey(ws.api, ws.apiId, { remaining: 4 });
    const verify = () =>
      ws.api.post<{ code: string; remaining?: number }>('keys.verifyKey', { key });
    const remaining: (number | undefined)[] = [];
    for (let i = 0; i < 6; i++) remaining.push((await verify()).body.remaining);
    expect(remaining).toEqual([3, 2, 1, 0, 0, 0]);
    const hooked = () => receiver.on('/credits');
    await eventually(() => ofType(hooked(), 'key.credits.exhausted').length > 0, {
      what: 'key.credits.exhausted',
    });
    await eventually(() => ofType(hooked(), 'key.credits.low').length > 0, {
      what: 'key.credits.low',
    });
    await sleep(SETTLE_MS);
    expect(ofType(hooked(), 'key.credits.low')).toHaveLength(1);
    expect(ofType(hooked(), 'key.credits.exhausted')).toHaveLength(1);
    const [low] = ofType(hooked(), 'key.credits.low');
    expect(low!.event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'key.credits.low',
      createdAt: expect.any(Number),
      data: {
        workspaceId: ws.workspaceId,
        apiId: ws.apiId,
        keyId,
        creditsOf: 'key',
        // The fewest credits the node saw in the flush that noticed it: here all six verifications
        // may fall in one flush interval.
        remaining: expect.any(Number),
        threshold: 2,
      },
    });
    expect(low!.event.data.remaining).toBeLessThanOrEqual(2);
    expectSigned(hooked(), ws.secret);

    // Risen above the threshold, then down to it again: a second low (and no second exhausted,
    // since the credits never reached 0 again).
    const set = (value: number) => ws.api.post('keys.updateRemaining', { keyId, op: 'set', value });
    expect((await set(10)).status).toBe(200);
    expect((await verify()).body.remaining).toBe(9);
    await sleep(SETTLE_MS); // the flush that lets the low state fire again
    expect((await set(2)).status).toBe(200);
    expect((await verify()).body.remaining).toBe(1);
    await eventually(() => ofType(hooked(), 'key.credits.low').length === 2, {
      what: 'a second key.credits.low',
    });
    await sleep(SETTLE_MS);
    expect(ofType(hooked(), 'key.credits.low')).toHaveLength(2);
    expect(ofType(hooked(), 'key.credits.exhausted')).toHaveLength(1);
    const deliveries = await ws.api.get<{ deliveries: { outcome: string; status: number }[] }>(
      'webhooks.listDeliveries',
      { webhookId: ws.webhookId },
    );
    expect(deliveries.body.deliveries).toHaveLength(3);
    for (const attempt of deliveries.body.deliveries) {
      expect(attempt).toMatchObject({ outcome: 'delivered', status: 200, attempt: 1 });
    }
  });

  test("an identity's pool running low and out fires once for all its keys", async () => {
    const ws = await workspace(topology, url, receiver, '/pool', {
      events: ['key.credits.low', 'key.credits.exhausted'],
      creditsThreshold: 1,
    });
    const created = await ws.api.post<{ identityId: string }>('identities.createIdentity', {
      externalId: 'pooled',
      remaining: 3,
    });
    const keys = [
      await createKey(ws.api, ws.apiId, { externalId: 'pooled' }),
      await createKey(ws.api, ws.apiId, { externalId: 'pooled' }),
    ];
    const pools: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const verdict = await ws.api.post<{ identity?: { remaining?: number } }>('keys.verifyKey', {
        key: keys[i % 2]!.key,
      });
      pools.push(verdict.body.identity?.remaining);
    }
    expect(pools).toEqual([2, 1, 0, 0]);
    const hooked = () => receiver.on('/pool');
    await eventually(() => ofType(hooked(), 'key.credits.exhausted').length > 0, {
      what: "the pool's key.credits.exhausted",
    });
    await sleep(SETTLE_MS);
    // Once each, whichever of its keys the nodes saw spend it.
    expect(ofType(hooked(), 'key.credits.low')).toHaveLength(1);
    expect(ofType(hooked(), 'key.credits.exhausted')).toHaveLength(1);
    expect(ofType(hooked(), 'key.credits.exhausted')[0]!.event.data).toMatchObject({
      creditsOf: 'identity',
      remaining: 0,
      identity: { id: created.body.identityId, externalId: 'pooled' },
    });
    expectSigned(hooked(), ws.secret);
  });

  test('key.ratelimited fires at most once per key and limit in a window', async () => {
    const ws = await workspace(topology, url, receiver, '/limited', {
      events: ['key.ratelimited'],
    });
    const { keyId, key } = await createKey(ws.api, ws.apiId, {
      ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: 60_000 },
    });
    const codes: string[] = [];
    for (let i = 0; i < 4; i++) {
      codes.push((await ws.api.post<{ code: string }>('keys.verifyKey', { key })).body.code);
    }
    expect(codes).toEqual(['VALID', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
    await eventually(() => receiver.on('/limited').length > 0, { what: 'key.ratelimited' });
    await sleep(SETTLE_MS);
    const events = receiver.on('/limited');
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toMatchObject({
      type: 'key.ratelimited',
      data: { keyId, apiId: ws.apiId, ratelimit: { name: 'default', limit: 1 } },
    });
  });

  test('key.expiring fires once for a key nobody verifies, found by the sweep', async () => {
    const ws = await workspace(topology, url, receiver, '/swept', {
      events: ['key.expiring'],
    });
    const expires = Date.now() + 23 * 3_600_000;
    const { keyId } = await createKey(ws.api, ws.apiId, { expires });
    await createKey(ws.api, ws.apiId, { expires: Date.now() + 3 * 86_400_000 });
    await eventually(() => receiver.on('/swept').length > 0, { what: 'the swept key.expiring' });
    // Several more sweeps: each finds the key in its day again, and queues nothing.
    await sleep(SETTLE_MS + 400);
    const events = receiver.on('/swept');
    expectSigned(events, ws.secret);
    expect(events.map((request) => request.event)).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: 'key.expiring',
        createdAt: expect.any(Number),
        data: { workspaceId: ws.workspaceId, apiId: ws.apiId, keyId, expires },
      },
    ]);
  });

  test('key.expiring fires once for a key that expires within 24 h, verified and swept', async () => {
    const ws = await workspace(topology, url, receiver, '/expiring', {
      events: ['key.expiring'],
    });
    const expires = Date.now() + 3_600_000;
    const { keyId, key } = await createKey(ws.api, ws.apiId, { expires });
    const later = await createKey(ws.api, ws.apiId, { expires: Date.now() + 3 * 86_400_000 });
    for (const plaintext of [key, key, later.key]) {
      expect((await ws.api.post('keys.verifyKey', { key: plaintext })).body.code).toBe('VALID');
    }
    await eventually(() => receiver.on('/expiring').length > 0, { what: 'key.expiring' });
    await sleep(SETTLE_MS);
    const events = receiver.on('/expiring');
    expect(events.map((request) => request.event.data)).toEqual([
      { workspaceId: ws.workspaceId, apiId: ws.apiId, keyId, expires },
    ]);
  });

  test('a receiver that answers 500 gets the event once it recovers; every attempt is listed', async () => {
    const ws = await workspace(topology, url, receiver, '/flaky', {
      events: ['key.credits.exhausted'],
    });
    const { key } = await createKey(ws.api, ws.apiId, { remaining: 1 });
    expect((await ws.api.post('keys.verifyKey', { key })).body.remaining).toBe(0);
    await eventually(() => receiver.on('/flaky').length >= 3, { what: 'the third attempt' });
    const requests = receiver.on('/flaky');
    // The same event, byte for byte, each time: a receiver drops repeats by its id.
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    expectSigned(requests, ws.secret);
    type Attempt = { eventId: string; attempt: number; status: number; outcome: string };
    let attempts: Attempt[] = [];
    await eventually(async () => {
      attempts = (
        await ws.api.get<{ deliveries: Attempt[] }>('webhooks.listDeliveries', {
          webhookId: ws.webhookId,
        })
      ).body.deliveries;
      return attempts.length === 3;
    });
    expect(attempts.map(({ attempt, status, outcome }) => [attempt, status, outcome])).toEqual([
      [3, 200, 'delivered'],
      [2, 500, 'failed'],
      [1, 500, 'failed'],
    ]);
    expect(new Set(attempts.map((attempt) => attempt.eventId))).toEqual(
      new Set([requests[0]!.event.id]),
    );
    await sleep(SETTLE_MS);
    expect(receiver.on('/flaky')).toHaveLength(3);
    // Counted on the node's /metrics (the failures are this test's alone).
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^keyward_webhook_delivery_attempts_total\{outcome="failed"\} 2$/m);
    expect(metrics).toMatch(
      /^keyward_webhook_delivery_attempts_total\{outcome="delivered"\} \d+$/m,
    );
    expect(metrics).toMatch(
      /^keyward_webhook_events_queued_total\{type="key.credits.exhausted"\} \d+$/m,
    );
  });
});

describe('webhook targets', () => {
  let topology: Topology;
  let api: Client;

  beforeAll(async () => {
    // KEYWARD_WEBHOOK_ALLOW_PRIVATE unset: the production rule.
    topology = await startTopology({ nodes: 1, localRedis: false, env: TEST_VAULT });
    api = client(topology.nodes[0]!.url, topology.rootKey);
  });
  afterAll(async () => {
    await topology?.stop();
  });

  test.each([
    'http://127.0.0.1:9/hook',
    'http://localhost:9/hook',
    'http://[::1]:9/hook',
    'http://[::ffff:127.0.0.1]:9/hook',
    'http://[::ffff:7f00:1]:9/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/hook',
    'http://192.168.0.1/hook',
    'http://[fe80::1]/hook',
    'http://[fd00::1]/hook',
  ])('%s is refused with a 400', async (target) => {
    const refused = await api.post<{ error: { code: string; message: string } }>(
      'webhooks.createWebhook',
      { url: target, events: ['key.expiring'] },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('BAD_REQUEST');
    expect(refused.body.error.message).toMatch(/^url: .*private/);
  });

  test('a public address is taken; so is any scheme but http(s) refused', async () => {
    const taken = await api.post('webhooks.createWebhook', {
      url: 'https://203.0.113.10/hook',
      events: ['key.expiring'],
    });
    expect(taken.status).toBe(200);
    const ftp = await api.post('webhooks.createWebhook', {
      url: 'ftp://203.0.113.10/hook',
      events: ['key.expiring'],
    });
    expect(ftp.status).toBe(400);
  });
});

describe('the command line', () => {
  let topology: Topology;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 1, localRedis: false, env: TEST_VAULT });
  });
  afterAll(async () => {
    await topology?.stop();
  });

  test('without a vault there are no webhooks: their secrets are never stored in plaintext', async () => {
    const created = await runCommand(
      [
        'webhooks',
        'create',
        '--workspace',
        topology.workspaceId,
        '--url',
        'https://203.0.113.10/keyward',
        '--events',
        'key.credits.exhausted',
      ],
      { KEYWARD_REDIS_URL: topology.primary.url },
    );
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain('webhooks need KEYWARD_VAULT_KEYS');
  });

  test('keyward webhooks create, list, deliveries and delete run the operations', async () => {
    const env = { KEYWARD_REDIS_URL: topology.primary.url, ...TEST_VAULT };
    const ws = topology.workspaceId;
    const created = await runCommandJson<{ webhookId: string; secret: string }>(
      [
        'webhooks',
        'create',
        '--workspace',
        ws,
        '--url',
        'https://203.0.113.10/cli',
        '--events',
        'key.credits.low,key.expiring',
        '--threshold',
        '5',
      ],
      env,
    );
    expect(created).toEqual({
      webhookId: expect.stringMatching(/^wh_/),
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await runCommand(['webhooks', 'list', '--workspace', ws], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(created.webhookId);
    expect(listed.stdout).toContain('key.credits.low,key.expiring');
    expect(listed.stdout).not.toContain(created.secret);
    const attempts = await runCommand(
      ['webhooks', 'deliveries', '--workspace', ws, created.webhookId],
      env,
    );
    expect(attempts.stdout).toContain(`no delivery attempts for ${created.webhookId}`);
    // The operation's own checks: the private-address rule, the threshold low needs.
    const loopback = await runCommand(
      [
        'webhooks',
        'create',
        '--workspace',
        ws,
        '--url',
        'http://127.0.0.1/x',
        '--events',
        'key.expiring',
      ],
      env,
    );
    expect(loopback.code).not.toBe(0);
    expect(loopback.stderr).toMatch(/private/);
    const deleted = await runCommand(
      ['webhooks', 'delete', '--workspace', ws, created.webhookId],
      env,
    );
    expect(deleted.stdout).toContain(`deleted webhook ${created.webhookId}`);
    const again = await runCommand(
      ['webhooks', 'delete', '--workspace', ws, created.webhookId],
      env,
    );
    expect(again.code).toBe(1);
  });
});

describe('a node killed mid-delivery', () => {
  let topology: ProcessTopology;
  let receiver: Receiver;

  beforeAll(async () => {
    // The first request hangs (the node delivering it is killed meanwhile); the next gets 200.
    receiver = await startReceiver((_path, count) => (count === 1 ? 'hang' : 200));
    topology = await startProcessTopology({ nodes: 1, localRedis: false, env: FAST });
  });
  afterAll(async () => {
    await topology?.stop();
    await receiver?.close();
  });

  test('loses no event: another node delivers it once the lease runs out', async () => {
    const first = topology.nodes[0]!;
    const ws = await workspace(topology, first.url, receiver, '/killed', {
      events: ['key.credits.exhausted'],
    });
    const { key } = await createKey(ws.api, ws.apiId, { remaining: 1 });
    expect((await ws.api.post('keys.verifyKey', { key })).body.remaining).toBe(0);
    await eventually(() => receiver.received.length === 1, { what: 'the hanging delivery' });
    // A receiver that holds its request holds no verification.
    for (let i = 0; i < 5; i++) {
      expect((await ws.api.post('keys.verifyKey', { key })).body.code).toBe('USAGE_EXCEEDED');
    }
    await first.stop('SIGKILL');
    const second = await topology.addNode();
    await eventually(() => receiver.received.length === 2, {
      what: 'the delivery by the other node',
      timeoutMs: 15_000,
    });
    const [hung, delivered] = receiver.received;
    expect(delivered!.body).toBe(hung!.body);
    // The dead node recorded nothing; the attempt that delivered it is listed.
    const listed = await client(second.url, ws.rootKey).get<{ deliveries: object[] }>(
      'webhooks.listDeliveries',
      { webhookId: ws.webhookId },
    );
    expect(listed.body.deliveries).toEqual([
      expect.objectContaining({ eventId: hung!.event.id, outcome: 'delivered', status: 200 }),
    ]);
  });
});
