import type Redis from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { AuditLogStore, auditEntryId, auditShard, auditShardCap } from '../../src/store/auditLog';
import { AuditOutbox, outboxFields } from '../../src/store/auditOutbox';
import { names } from '../../src/store/names';
import { startRedis, type TestRedis } from '../support/redisServer';

/**
 * A workspace's audit log is its own stream and 16 shards that relayed entries spread over; a
 * page merges them newest first. Entries are written here with chosen stream ids, so that ties
 * (one millisecond, one sequence number, several streams) and every page boundary are exercised.
 */

let server: TestRedis | undefined;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url, { commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
  await connectRedis(redis);
});

afterAll(async () => {
  if (redis) await closeRedis(redis);
  await server?.dispose();
});

const WORKSPACE = 16;

/** Appends an entry with this stream id to a shard (0–15) or the workspace's stream (16). */
async function write(ws: string, rank: number, streamId: string, operation: string) {
  const stream = rank === WORKSPACE ? names.audit(ws) : names.auditShard(ws, rank);
  await redis.xadd(stream, streamId, 'operation', operation, 'targetId', `t_${rank}`);
  return auditEntryId(streamId, rank);
}

/** Every entry id, reading pages of `limit` from the newest, following the cursors. */
async function readAll(
  store: AuditLogStore,
  ws: string,
  query: { limit: number; operation?: string } = { limit: 1 },
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await store.list(ws, { ...query, ...(cursor ? { cursor } : {}) });
    ids.push(...page.entries.map((entry) => entry.id));
    if (page.cursor === undefined) return ids;
    cursor = page.cursor;
  }
  throw new Error('the cursors never ended');
}

test('pages of any size list every entry of every stream once, newest first, ties by stream', async () => {
  const ws = 'ws_merge';
  const written: { id: string; at: [number, number, number] }[] = [];
  // Streams 0, 3, 9, 15 and the workspace's own; several entries share an id across streams.
  const plan: [number, string][] = [
    [WORKSPACE, '1000-0'],
    [0, '1000-0'],
    [3, '1000-0'],
    [3, '1000-1'],
    [9, '999-5'],
    [WORKSPACE, '1001-0'],
    [15, '1001-0'],
    [0, '1002-0'],
    [9, '1003-0'],
    [15, '1003-0'],
    [WORKSPACE, '1004-0'],
  ];
  for (const [rank, streamId] of plan) {
    const [ms, seq] = streamId.split('-').map(Number) as [number, number];
    written.push({ id: await write(ws, rank, streamId, 'keys.createKey'), at: [ms, seq, rank] });
  }
  const expected = [...written]
    .sort((a, b) => b.at[0] - a.at[0] || b.at[1] - a.at[1] || b.at[2] - a.at[2])
    .map((entry) => entry.id);
  expect(expected.slice(0, 4)).toEqual(['1004-0', '1003-0-15', '1003-0-9', '1002-0-0']);

  const store = new AuditLogStore(redis);
  for (const limit of [1, 2, 3, 4, 5, 11, 100]) {
    expect({ limit, ids: await readAll(store, ws, { limit }) }).toEqual({ limit, ids: expected });
  }
  // A bare stream id (the previous release's cursors) is a position in the workspace's stream.
  const afterTie = await store.list(ws, { limit: 3, cursor: '1000-0' });
  expect(afterTie.entries.map((entry) => entry.id)).toEqual(['1000-0-3', '1000-0-0', '999-5-9']);
  expect(afterTie.cursor).toBeUndefined();
  // A cursor past every id Redis can hold (20 digits, as the schema allows) starts at the newest.
  const past = await store.list(ws, {
    limit: 2,
    cursor: '99999999999999999999-99999999999999999999',
  });
  expect(past.entries.map((entry) => entry.id)).toEqual(expected.slice(0, 2));
  // A cursor on one of several equal ids goes on with the lower-ranked streams of that id.
  const midTie = await store.list(ws, { limit: 10, cursor: '1000-0-3' });
  expect(midTie.entries.map((entry) => entry.id)).toEqual(['1000-0-0', '999-5-9']);
});

test('a filtered page reads on through the shards, and a short page says where to go on', async () => {
  const ws = 'ws_filtered';
  const matching: string[] = [];
  for (let i = 0; i < 60; i++) {
    const rank = (i * 7) % 17;
    const operation = i % 25 === 0 ? 'keys.deleteKey' : 'keys.updateKey';
    const id = await write(ws, rank, `${2000 + i}-0`, operation);
    if (operation === 'keys.deleteKey') matching.unshift(id);
  }
  const store = new AuditLogStore(redis);
  // Each page reads at most 20 entries per entry asked for: pages of 1 come back short at times.
  const ids = await readAll(store, ws, { limit: 1, operation: 'keys.deleteKey' });
  expect(ids).toEqual(matching);
  const whole = await store.list(ws, { limit: 100, operation: 'keys.deleteKey' });
  expect(whole.entries.map((entry) => entry.id)).toEqual(matching);
  expect(whole.cursor).toBeUndefined();
});

test('the relay appends an entry to the shard of its target, once, capped at a sixteenth', async () => {
  const ws = 'ws_relay';
  const maxEntries = 64;
  const outbox = new AuditOutbox(redis, maxEntries);
  const targets: string[] = [];
  // Two writes each of 20 keys, relayed as fast as they come (many in one millisecond).
  for (let i = 0; i < 40; i++) {
    const targetId = `key_${i % 20}`;
    const fields = outboxFields(ws, {
      rootKeyId: 'rk_1',
      operation: 'keys.updateKey',
      targetType: 'key',
      targetId,
      summary: {},
      requestId: `req_${i}`,
    });
    targets.push(targetId);
    const id = `${3000 + i}-0`;
    expect(await outbox.relayEntry(id, fields)).toBe(true);
    // Relayed again (a node that died before taking it from its outbox): nothing appended.
    expect(await outbox.relayEntry(id, fields)).toBe(false);
  }
  const shards = new Map<number, number>();
  for (const target of targets) {
    shards.set(auditShard(target), (shards.get(auditShard(target)) ?? 0) + 1);
  }
  expect(shards.size).toBeGreaterThan(8);
  for (let shard = 0; shard < 16; shard++) {
    const length = await redis.xlen(names.auditShard(ws, shard));
    expect({ shard, length }).toEqual({
      shard,
      length: Math.min(shards.get(shard) ?? 0, auditShardCap(maxEntries)),
    });
  }
  expect(await redis.xlen(names.audit(ws))).toBe(0);
  // One target's entries are in one stream, in the order of their writes.
  const store = new AuditLogStore(redis, maxEntries);
  for (let k = 0; k < 20; k++) {
    const page = await store.list(ws, { limit: 10, targetId: `key_${k}` });
    expect(page.entries.map((entry) => entry.requestId)).toEqual([`req_${k + 20}`, `req_${k}`]);
  }
});
