import type { Redis } from 'ioredis';
import type { AuditEntry, AuditRecord } from '../../src/domain/audit';
import { NotFoundError } from '../../src/errors';
import { hashKey } from '../../src/keys/keyMaterial';
import type { RunningNode } from '../../src/node';
import { createRootKey, revokeRootKey } from '../../src/operations/rootKeys';
import { AuditLogStore } from '../../src/store/auditLog';
import { AuditOutbox, outboxArgument } from '../../src/store/auditOutbox';
import { AuditSweeper } from '../../src/store/auditSweeper';
import { invalidation, names } from '../../src/store/names';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { createKey, eventually } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { startRedis, type TestRedis } from '../support/redisServer';
import { client, type Client, type RpcResponse } from '../support/rpc';
import {
  startProcessTopology,
  startTestNode,
  startTopology,
  type Topology,
} from '../support/topology';
import { auditLength, auditRaw } from '../support/auditStreams';

/**
 * The audit log of writes outside their workspace's slot (issue 16; docs/decisions.md, "Audit
 * log"): a key's credit changes and root keys append their entry to an outbox under their own
 * tag, in the write's own step, and the node relays it to the workspace's stream; what a node that
 * died left in an outbox, a sweep relays, once.
 */

/** Every entry of a workspace's stream, oldest first. */
async function streamOf(redis: Redis, ws: string): Promise<AuditRecord[]> {
  const page = await new AuditLogStore(redis).list(ws, { limit: 1000 });
  return page.entries.reverse();
}

const operatorEntry = (operation: string, targetId: string, requestId: string): AuditEntry => ({
  rootKeyId: 'operator',
  operation,
  requestId,
  targetType: 'root_key',
  targetId,
  summary: {},
});

describe('through a node', () => {
  let topology: Topology;
  let primary: Redis;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 1 });
    primary = await adminRedis(topology.primary.url);
  });
  afterAll(async () => {
    if (primary) await closeRedis(primary);
    if (topology) await topology.stop();
  });

  /** A workspace of its own: a client, its root key's id and the length of its stream. */
  async function workspace() {
    const root = await topology.newRootKey();
    const rootKeyId = (await primary.hget(names.rootKey(hashKey(root.key)), 'id')) as string;
    const api = client(topology.nodes[0]!.url, root.key);
    const apiId = (await api.post('apis.createApi', { name: 'credits' })).body.apiId as string;
    return {
      ...root,
      rootKeyId,
      api,
      apiId,
      length: () => auditLength(primary, root.workspaceId),
    };
  }

  async function newest(api: Client) {
    const page = await api.get<{ entries: Record<string, unknown>[] }>('auditLogs.list', {
      limit: 1,
    });
    expect(page.status).toBe(200);
    return page.body.entries[0];
  }

  test('updateRemaining on a key with credits: set, increment, decrement leave one entry each', async () => {
    const ws = await workspace();
    const { keyId } = await createKey(ws.api, ws.apiId, { remaining: 10 });
    const changes: [string, number, number][] = [
      ['set', 5, 5],
      ['increment', 3, 8],
      ['decrement', 2, 6],
    ];
    for (const [op, value, remaining] of changes) {
      const before = await ws.length();
      const started = Date.now();
      const response = await ws.api.post('keys.updateRemaining', { keyId, op, value });
      expect(response.status).toBe(200);
      expect(response.body.remaining).toBe(remaining);
      expect(await ws.length()).toBe(before + 1);
      const entry = await newest(ws.api);
      expect(entry).toMatchObject({
        rootKeyId: ws.rootKeyId,
        operation: 'keys.updateRemaining',
        requestId: response.headers.get('x-request-id'),
        target: { type: 'key', id: keyId },
        summary: { op, value },
      });
      expect(entry!.time).toBeGreaterThanOrEqual(started - 1000);
      expect(entry!.time).toBeLessThanOrEqual(Date.now() + 1000);
      // Relayed before the answer: nothing waits in the key's outbox.
      expect(await primary.xlen(names.auditOutbox(keyId))).toBe(0);
    }
  });

  test('updateKey credit changes leave one entry each: a new remaining, a refill, unlimited', async () => {
    const ws = await workspace();
    const { keyId } = await createKey(ws.api, ws.apiId, { remaining: 10 });
    const changes: [Record<string, unknown>, string[]][] = [
      [{ remaining: 20 }, ['remaining']],
      [{ refill: { interval: 'daily', amount: 5 } }, ['refill']],
      [{ remaining: null }, ['remaining']],
    ];
    for (const [change, fields] of changes) {
      const before = await ws.length();
      const response = await ws.api.post('keys.updateKey', { keyId, ...change });
      expect(response.status).toBe(200);
      expect(await ws.length()).toBe(before + 1);
      expect(await newest(ws.api)).toMatchObject({
        operation: 'keys.updateKey',
        requestId: response.headers.get('x-request-id'),
        target: { type: 'key', id: keyId },
        summary: { apiId: ws.apiId, fields },
      });
    }
  });

  test('a refused credit change (400, 403, 404, 412) leaves no entry and nothing in an outbox', async () => {
    const ws = await workspace();
    const { keyId } = await createKey(ws.api, ws.apiId, { remaining: 2 });
    const unlimited = await createKey(ws.api, ws.apiId);
    const narrow = client(
      topology.nodes[0]!.url,
      (await topology.newRootKey({ workspaceId: ws.workspaceId, permissions: ['api.*.read_key'] }))
        .key,
    );
    const before = await ws.length();
    const refused: [number, Promise<RpcResponse>][] = [
      [400, ws.api.post('keys.updateRemaining', { keyId, op: 'decrement', value: 3 })],
      [400, ws.api.post('keys.updateRemaining', { keyId, op: 'add', value: 1 })],
      [400, ws.api.post('keys.updateKey', { keyId, remaining: -1 })],
      [403, narrow.post('keys.updateRemaining', { keyId, op: 'set', value: 1 })],
      [
        404,
        ws.api.post('keys.updateRemaining', {
          keyId: 'key_1ChFjUG4o6VLuzbLGABNDC',
          op: 'set',
          value: 1,
        }),
      ],
      [
        412,
        ws.api.post('keys.updateRemaining', { keyId: unlimited.keyId, op: 'increment', value: 1 }),
      ],
    ];
    for (const [status, call] of refused) expect((await call).status).toBe(status);
    expect(await ws.length()).toBe(before);
    expect(await primary.xlen(names.auditOutbox(keyId))).toBe(0);
    const got = await ws.api.get<{ remaining: number }>('keys.getKey', { keyId });
    expect(got.body.remaining).toBe(2);
  });

  test('root keys: create and revoke leave one entry each, by the operator, never the key or its hash', async () => {
    const store = new RootKeyStore(primary);
    const ops = await createRootKey(store, { name: 'ops' });
    const ws = ops.workspaceId;
    const ci = await createRootKey(store, { workspaceId: ws, permissions: ['api.*.read_key'] });
    await revokeRootKey(store, ws, ci.keyId);
    // Refused: a revocation of what is gone, or never was, writes no entry.
    await expect(revokeRootKey(store, ws, ci.keyId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(revokeRootKey(store, ws, 'rk_1ChFjUG4o6VLuzbLGABNDC')).rejects.toThrow(
      'not found',
    );

    const entries = await streamOf(primary, ws);
    expect(
      entries.map(({ rootKeyId, operation, targetType, targetId, summary }) => ({
        rootKeyId,
        operation,
        targetType,
        targetId,
        summary,
      })),
    ).toEqual([
      {
        rootKeyId: 'operator',
        operation: 'rootKeys.createRootKey',
        targetType: 'root_key',
        targetId: ops.keyId,
        summary: { name: 'ops', permissions: ['*'], newWorkspace: true },
      },
      {
        rootKeyId: 'operator',
        operation: 'rootKeys.createRootKey',
        targetType: 'root_key',
        targetId: ci.keyId,
        summary: { permissions: ['api.*.read_key'] },
      },
      {
        rootKeyId: 'operator',
        operation: 'rootKeys.revokeRootKey',
        targetType: 'root_key',
        targetId: ci.keyId,
        summary: {},
      },
    ]);
    for (const entry of entries) expect(entry.requestId).toMatch(/^req_/);
    expect(new Set(entries.map((e) => e.requestId)).size).toBe(3);

    const raw = JSON.stringify(await auditRaw(primary, ws));
    for (const secret of [ops.key, ci.key]) {
      expect(raw).not.toContain(secret);
      expect(raw).not.toContain(hashKey(secret));
    }
    for (const secret of [ops.key, ci.key]) {
      expect(await primary.xlen(names.auditOutbox(hashKey(secret)))).toBe(0);
    }
    // The node reads them like any other entry.
    const read = await client(topology.nodes[0]!.url, ops.key).get<{
      entries: { operation: string }[];
    }>('auditLogs.list', { operation: 'rootKeys.revokeRootKey' });
    expect(read.body.entries).toHaveLength(1);
  });

  test('a revocation interrupted after its record step, run again, leaves one entry', async () => {
    const store = new RootKeyStore(primary);
    const { workspaceId: ws } = await topology.newRootKey();
    const doomed = await createRootKey(store, { workspaceId: ws });
    const hash = hashKey(doomed.key);
    // The record's step alone: the record is gone, its entry waits in the outbox, the index stays.
    const outbox = names.auditOutbox(hash);
    await new AuditOutbox(primary).register(outbox);
    await primary.revokeRootKeyV1(
      names.rootKey(hash),
      outbox,
      names.invalidationChannel,
      invalidation.rootKey(hash),
      outboxArgument(ws, operatorEntry('rootKeys.revokeRootKey', doomed.keyId, 'req_cut')),
    );
    expect(await primary.hget(names.rootKeyIds(ws), doomed.keyId)).toBe(hash);

    await revokeRootKey(store, ws, doomed.keyId);
    expect(await primary.hget(names.rootKeyIds(ws), doomed.keyId)).toBeNull();
    const revocations = (await streamOf(primary, ws)).filter(
      (e) => e.operation === 'rootKeys.revokeRootKey',
    );
    expect(revocations.map((e) => [e.targetId, e.requestId])).toEqual([[doomed.keyId, 'req_cut']]);
  });
});

test('a node killed amid credit changes: after a sweep, each change that happened has one entry', async () => {
  const processes = await startProcessTopology({ nodes: 1, localRedis: false });
  const admin = await adminRedis(processes.primary.url);
  try {
    const api = client(processes.nodes[0]!.url, processes.rootKey);
    const apiId = (await api.post('apis.createApi', { name: 'killed' })).body.apiId as string;
    const { keyId } = await createKey(api, apiId, { remaining: 1 });
    // Four writers, each adding 1 in a tight loop; SIGKILL lands amid their steps.
    let stop = false;
    const writer = async () => {
      while (!stop) {
        try {
          await api.post('keys.updateRemaining', { keyId, op: 'increment', value: 1 });
        } catch {
          return;
        }
      }
    };
    const writers = Promise.all([writer(), writer(), writer(), writer()]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await processes.nodes[0]!.stop('SIGKILL');
    stop = true;
    await writers;

    await new AuditSweeper(new AuditOutbox(admin), { intervalMs: 1000, graceMs: 1000 }).sweep();
    const increments = Number(await admin.hget(names.credits(keyId), 'remaining')) - 1;
    expect(increments).toBeGreaterThan(0);
    const entries = (await streamOf(admin, processes.workspaceId)).filter(
      (e) => e.operation === 'keys.updateRemaining',
    );
    expect(entries).toHaveLength(increments);
    expect(new Set(entries.map((e) => e.requestId)).size).toBe(increments);
    expect(await admin.xlen(names.auditOutbox(keyId))).toBe(0);
  } finally {
    await closeRedis(admin);
    await processes.stop();
  }
});

describe('an entry whose relay never ran', () => {
  let server: TestRedis;
  let redis: Redis;
  const ws = 'ws_1ChFjYcXVVm7ah74PHsyRc';
  const keyId = 'key_1ChFjUG4o6VLuzbLGABNDC';
  const outbox = names.auditOutbox(keyId);
  const stream = () => streamOf(redis, ws);

  beforeAll(async () => {
    server = await startRedis();
    redis = await adminRedis(server.url);
  });
  afterAll(async () => {
    if (redis) await closeRedis(redis);
    await server?.dispose();
  });
  beforeEach(() => redis.flushall());

  /** The credit change's own step, as the store runs it, without the relay that follows. */
  async function changeWithoutRelay(requestId: string): Promise<string> {
    await new AuditOutbox(redis).register(outbox);
    const entry: AuditEntry = {
      rootKeyId: 'rk_1ChFjYcXULbXC1rfiTfwp5',
      operation: 'keys.updateRemaining',
      requestId,
      targetType: 'key',
      targetId: keyId,
      summary: { op: 'increment', value: 1 },
    };
    const remaining = await redis.updateCreditsV2(
      names.credits(keyId),
      outbox,
      'increment',
      1,
      '',
      '',
      '',
      '',
      '',
      outboxArgument(ws, entry),
    );
    expect(remaining).toBeGreaterThan(0);
    const entries = await redis.xrange(outbox, '-', '+');
    return entries[entries.length - 1]![0];
  }

  const sweeper = () =>
    new AuditSweeper(new AuditOutbox(redis), { intervalMs: 1000, graceMs: 1000 });

  test('a sweep relays it once, with the time and request id of its write', async () => {
    const id = await changeWithoutRelay('req_died');
    expect(await stream()).toEqual([]);

    await sweeper().sweep();
    const [entry, ...more] = await stream();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      rootKeyId: 'rk_1ChFjYcXULbXC1rfiTfwp5',
      operation: 'keys.updateRemaining',
      requestId: 'req_died',
      targetType: 'key',
      targetId: keyId,
      summary: { op: 'increment', value: 1 },
      time: Number(id.split('-')[0]),
    });
    expect(await redis.xlen(outbox)).toBe(0);

    // Swept again, by this node and by two others at once: still one entry.
    await Promise.all([sweeper().sweep(), sweeper().sweep(), sweeper().sweep()]);
    expect(await stream()).toHaveLength(1);
  });

  test('a relay run twice (its node died before deleting the entry) appends once', async () => {
    await changeWithoutRelay('req_twice');
    const [[id, values]] = (await redis.xrange(outbox, '-', '+')) as [[string, string[]]];
    const relay = new AuditOutbox(redis);
    expect(await relay.relayEntry(id, values)).toBe(true);
    expect(await relay.relayEntry(id, values)).toBe(false);
    expect(await relay.relay(outbox)).toBe(1);
    expect((await stream()).map((e) => e.requestId)).toEqual(['req_twice']);
    expect(await redis.xlen(outbox)).toBe(0);
  });

  test('the next write to the same outbox relays what an earlier one left, in order', async () => {
    await changeWithoutRelay('req_first');
    await changeWithoutRelay('req_second');
    expect(await new AuditOutbox(redis).relay(outbox)).toBe(2);
    expect((await stream()).map((e) => e.requestId)).toEqual(['req_first', 'req_second']);
  });

  test('a node relays it when it starts', async () => {
    await changeWithoutRelay('req_before_start');
    let node: RunningNode | undefined;
    try {
      node = await startTestNode({ primaryUrl: server.url });
      await eventually(async () => (await stream()).length === 1, { what: 'the relayed entry' });
      expect((await stream()).map((e) => e.requestId)).toEqual(['req_before_start']);
    } finally {
      await node?.close();
    }
  });

  test('an outbox leaves the registry only once seen empty for the grace, its score unmoved', async () => {
    let now = 0;
    const sweep = new AuditSweeper(new AuditOutbox(redis), {
      intervalMs: 1000,
      graceMs: 1000,
      now: () => now,
    });
    const registered = async () => (await redis.zscore(names.auditOutboxes, outbox)) !== null;
    await changeWithoutRelay('req_registry');

    // Found with an entry: relayed, not yet seen empty.
    await sweep.sweep();
    expect(await registered()).toBe(true);
    now = 500;
    await sweep.sweep();
    // Registered again by a write under way: the grace starts over.
    await new AuditOutbox(redis).register(outbox);
    now = 1500;
    await sweep.sweep();
    expect(await registered()).toBe(true);
    now = 2400;
    await sweep.sweep();
    expect(await registered()).toBe(true);
    now = 2500;
    await sweep.sweep();
    expect(await registered()).toBe(false);
    expect((await stream()).map((e) => e.requestId)).toEqual(['req_registry']);
  });
});
