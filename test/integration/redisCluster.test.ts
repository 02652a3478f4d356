import type { RunningNode } from '../../src/node';
import { closeRedis, connectRedis, createCluster } from '../../src/redis/clients';
import { startRedisCluster, type TestCluster } from '../support/redisCluster';
import { startRedis, type TestRedis } from '../support/redisServer';
import { client, type Client } from '../support/rpc';
import { createRootKey, revokeRootKey } from '../../src/operations/rootKeys';
import { AuditOutbox, outboxArgument } from '../../src/store/auditOutbox';
import { AuditSweeper } from '../../src/store/auditSweeper';
import { names } from '../../src/store/names';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { eventually, sleep, TEST_VAULT, testAudit } from '../support/helpers';
import { startReceiver, FAST_WEBHOOKS } from '../support/webhookReceiver';
import { createTestRootKey, startTestNode } from '../support/topology';

/**
 * The key store on a real Redis Cluster (three masters, one replica each): the main cases of the
 * suite, and a master failover in the middle of traffic without a wrong answer.
 */
type Verdict = {
  valid: boolean;
  code: string;
  remaining?: number;
  ratelimit?: { remaining: number };
};

let cluster: TestCluster;
let locals: TestRedis[];
let nodes: RunningNode[];
let api: Client[];
let rootKey: string;
let workspaceId: string;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  locals = [await startRedis(), await startRedis()];
  nodes = [];
  for (const local of locals) {
    nodes.push(
      await startTestNode({
        clusterSeeds: cluster.seeds,
        localUrl: local.url,
        // The webhook test's receiver is on loopback; fast polls keep it short.
        env: {
          ...TEST_VAULT,
          ...FAST_WEBHOOKS,
          // Both nodes' sweeps race for the period's lock on the cluster.
          KEYWARD_WEBHOOK_EXPIRING_SWEEP_MS: '200',
        },
      }),
    );
  }
  const admin = createCluster(cluster.nodes, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
  ({ key: rootKey, workspaceId } = await createTestRootKey(admin));
  await closeRedis(admin);
  api = nodes.map((node) => client(node.url, rootKey));
}, 60_000);

afterAll(async () => {
  await Promise.all((nodes ?? []).map((node) => node.close()));
  await Promise.all((locals ?? []).map((local) => local.dispose()));
  await cluster?.stop();
});

test('APIs, keys, verification, listing, updates and deletion work on the cluster', async () => {
  const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'clustered' }))
    .body.apiId;
  const keys = [];
  for (let i = 0; i < 7; i++) {
    keys.push(
      (
        await api[0]!.post<{ keyId: string; key: string }>('keys.createKey', {
          apiId,
          ownerId: i % 2 ? 'odd' : 'even',
          ratelimit: {
            type: i % 2 ? 'fast' : 'consistent',
            limit: 2,
            refillRate: 1,
            refillInterval: 3_600_000,
          },
          ...(i === 0 ? { remaining: 5 } : {}),
        })
      ).body,
    );
  }
  const codes = async (key: string, node = 1) => {
    const out = [];
    for (let i = 0; i < 3; i++)
      out.push((await api[node]!.post<Verdict>('keys.verifyKey', { key })).body.code);
    return out;
  };
  expect(await codes(keys[0]!.key)).toEqual(['VALID', 'VALID', 'RATE_LIMITED']);
  expect(await codes(keys[1]!.key)).toEqual(['VALID', 'VALID', 'RATE_LIMITED']);
  expect((await api[0]!.post<Verdict>('keys.verifyKey', { key: keys[0]!.key })).body.code).toBe(
    'RATE_LIMITED',
  );

  const page = await api[0]!.get<{ keys: { id: string }[]; total: number; cursor?: string }>(
    'apis.listKeys',
    {
      apiId,
      limit: 4,
    },
  );
  expect(page.body.total).toBe(7);
  const next = await api[0]!.get<{ keys: { id: string }[] }>('apis.listKeys', {
    apiId,
    limit: 4,
    cursor: page.body.cursor!,
  });
  expect([...page.body.keys, ...next.body.keys].map((k) => k.id)).toEqual(keys.map((k) => k.keyId));
  expect(
    (await api[0]!.get<{ total: number }>('apis.listKeys', { apiId, ownerId: 'odd' })).body.total,
  ).toBe(3);

  // Invalidation crosses the cluster: a change on node 0 reaches node 1.
  await api[0]!.post('keys.updateKey', { keyId: keys[2]!.keyId, enabled: false });
  await sleep(100);
  expect((await api[1]!.post<Verdict>('keys.verifyKey', { key: keys[2]!.key })).body.code).toBe(
    'DISABLED',
  );
  await api[0]!.post('keys.deleteKey', { keyId: keys[3]!.keyId });
  await sleep(100);
  expect((await api[1]!.post<Verdict>('keys.verifyKey', { key: keys[3]!.key })).body.code).toBe(
    'NOT_FOUND',
  );

  expect((await api[0]!.post('apis.deleteApi', { apiId })).status).toBe(200);
  await sleep(100);
  expect((await api[1]!.post<Verdict>('keys.verifyKey', { key: keys[4]!.key })).body.code).toBe(
    'NOT_FOUND',
  );
});

test('credits, standalone rate limits, overrides and import work on the cluster', async () => {
  const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'more' })).body
    .apiId;
  const { key } = (await api[0]!.post<{ key: string }>('keys.createKey', { apiId, remaining: 1 }))
    .body;
  expect((await api[1]!.post<Verdict>('keys.verifyKey', { key })).body).toMatchObject({
    code: 'VALID',
    remaining: 0,
  });
  expect((await api[1]!.post<Verdict>('keys.verifyKey', { key })).body.code).toBe('USAGE_EXCEEDED');

  await api[0]!.post('ratelimits.setOverride', {
    namespaceName: 'c',
    identifier: 'vip',
    limit: 3,
    duration: 60_000,
  });
  await sleep(100);
  const outcomes = [];
  for (let i = 0; i < 4; i++) {
    outcomes.push(
      (
        await api[i % 2]!.post<{ success: boolean }>('ratelimits.limit', {
          namespace: 'c',
          identifier: 'vip',
          limit: 1,
          duration: 60_000,
        })
      ).body.success,
    );
  }
  expect(outcomes).toEqual([true, true, true, false]);

  const imported = await api[0]!.post<{ keyIds: string[] }>('migrations.createKeys', [
    { apiId, plaintext: 'cluster_import_1' },
    { apiId, plaintext: 'cluster_import_2' },
  ]);
  expect(imported.status).toBe(200);
  expect(
    (await api[1]!.post<Verdict>('keys.verifyKey', { key: 'cluster_import_2' })).body.code,
  ).toBe('VALID');
});

test('credit changes and root keys reach the audit log through outboxes in their own slots', async () => {
  type Entry = { operation: string; rootKeyId: string; requestId: string; target: { id: string } };
  const log = async () =>
    (await api[1]!.get<{ entries: Entry[] }>('auditLogs.list', { limit: 100 })).body.entries;
  const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'audited' })).body
    .apiId;
  const { keyId } = (
    await api[0]!.post<{ keyId: string }>('keys.createKey', { apiId, remaining: 5 })
  ).body;
  const changed = await api[0]!.post('keys.updateRemaining', { keyId, op: 'decrement', value: 2 });
  expect(changed.status).toBe(200);
  expect((await log())[0]).toMatchObject({
    operation: 'keys.updateRemaining',
    requestId: changed.headers.get('x-request-id'),
    target: { id: keyId },
  });
  // The workspace was born with the root key of beforeAll.
  expect((await log()).at(-1)).toMatchObject({
    operation: 'rootKeys.createRootKey',
    rootKeyId: 'operator',
  });

  const admin = createCluster(cluster.nodes, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
  try {
    await connectRedis(admin);
    const store = new RootKeyStore(admin);
    const revoked = await createRootKey(store, { workspaceId });
    await revokeRootKey(store, workspaceId, revoked.keyId);
    expect((await log()).slice(0, 2).map((e) => [e.operation, e.target.id])).toEqual([
      ['rootKeys.revokeRootKey', revoked.keyId],
      ['rootKeys.createRootKey', revoked.keyId],
    ]);

    // A change whose node died before its relay: a sweep on the cluster relays it.
    const outbox = new AuditOutbox(admin);
    await outbox.register(names.auditOutbox(keyId));
    const entry = { ...testAudit(keyId), requestId: 'req_cluster_cut' };
    await admin.updateCreditsV2(
      names.credits(keyId),
      names.auditOutbox(keyId),
      'increment',
      1,
      '',
      '',
      '',
      '',
      '',
      outboxArgument(workspaceId, entry),
    );
    await new AuditSweeper(outbox, { intervalMs: 1000, graceMs: 1000 }).sweep();
    expect((await log())[0]).toMatchObject({ requestId: 'req_cluster_cut', target: { id: keyId } });
  } finally {
    await closeRedis(admin);
  }
});

test('webhooks: created, queued once, claimed and delivered through slots of their own', async () => {
  // The first attempt fails: the retry is queued and claimed again on the cluster.
  const receiver = await startReceiver((_path, count) => (count === 1 ? 503 : 200));
  try {
    const created = await api[0]!.post<{ webhookId: string }>('webhooks.createWebhook', {
      url: `${receiver.url}/cluster`,
      events: ['key.credits.exhausted'],
    });
    expect(created.status).toBe(200);
    const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'hooked' })).body
      .apiId;
    const { key } = (await api[0]!.post<{ key: string }>('keys.createKey', { apiId, remaining: 1 }))
      .body;
    // Both nodes see the key reach 0: one event, whichever noticed it first.
    expect((await api[0]!.post<Verdict>('keys.verifyKey', { key })).body.remaining).toBe(0);
    expect((await api[1]!.post<Verdict>('keys.verifyKey', { key })).body.code).toBe(
      'USAGE_EXCEEDED',
    );
    await eventually(() => receiver.received.length === 2, { what: 'the retried delivery' });
    await sleep(300);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    const listed = await api[1]!.get<{ webhooks: unknown[] }>('webhooks.listWebhooks', {});
    expect(listed.body.webhooks).toHaveLength(1);
    const attempts = await api[1]!.get<{ deliveries: { outcome: string }[] }>(
      'webhooks.listDeliveries',
      { webhookId: created.body.webhookId },
    );
    expect(attempts.body.deliveries.map((attempt) => attempt.outcome)).toEqual([
      'delivered',
      'failed',
    ]);
    const deleted = await api[1]!.post('webhooks.deleteWebhook', {
      webhookId: created.body.webhookId,
    });
    expect(deleted.status).toBe(200);
  } finally {
    await receiver.close();
  }
});

test('key.expiring: the sweep finds a key nobody verifies, once, on the cluster', async () => {
  const receiver = await startReceiver();
  try {
    const created = await api[0]!.post<{ webhookId: string }>('webhooks.createWebhook', {
      url: `${receiver.url}/expiring`,
      events: ['key.expiring'],
    });
    expect(created.status).toBe(200);
    const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'expiring' }))
      .body.apiId;
    const expires = Date.now() + 23 * 3_600_000;
    const { keyId } = (await api[0]!.post<{ keyId: string }>('keys.createKey', { apiId, expires }))
      .body;
    await eventually(() => receiver.received.length > 0, { what: 'the swept key.expiring' });
    await sleep(600);
    expect(receiver.received.map((request) => request.event.data)).toEqual([
      { workspaceId, apiId, keyId, expires },
    ]);
    await api[1]!.post('webhooks.deleteWebhook', { webhookId: created.body.webhookId });
  } finally {
    await receiver.close();
  }
});

test('a master fails over in the middle of traffic: no wrong answer, no over-admission', async () => {
  const apiId = (await api[0]!.post<{ apiId: string }>('apis.createApi', { name: 'failover' })).body
    .apiId;
  const created = await api[0]!.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ratelimit: { type: 'consistent', limit: 60, refillRate: 1, refillInterval: 3_600_000 },
  });
  const { keyId, key } = created.body;
  const slot = Number(
    await cluster.cli(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', `keyward:bucket:{${keyId}}`),
  );
  for (const node of api) await node.post('keys.verifyKey', { key, ratelimit: { cost: 0 } });

  const answers: { status: number; code: string }[] = [];
  const deadline = Date.now() + 4000;
  const traffic = Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      while (Date.now() < deadline) {
        const response = await api[worker % 2]!.post<Verdict>('keys.verifyKey', { key });
        answers.push({ status: response.status, code: response.body.code });
        await sleep(10);
      }
    }),
  );
  await sleep(500);
  const moved = await cluster.failoverSlot(slot);
  expect(moved.newMaster).not.toBe(moved.oldMaster);
  await traffic;

  expect(answers.length).toBeGreaterThan(50);
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(['VALID', 'RATE_LIMITED', 'LIMITER_UNAVAILABLE']).toContain(answer.code);
  }
  expect(answers.filter((a) => a.code === 'VALID').length).toBeLessThanOrEqual(60);
  // The cluster serves the moved slots: management and verification work afterwards.
  expect((await api[0]!.post('keys.createKey', { apiId })).status).toBe(200);
  const after = await api[1]!.post<Verdict>('keys.verifyKey', { key, ratelimit: { cost: 0 } });
  expect(after.status).toBe(200);
  const admitted = answers.filter((a) => a.code === 'VALID').length;
  expect(60 - after.body.ratelimit!.remaining).toBeGreaterThanOrEqual(admitted);
}, 60_000);
