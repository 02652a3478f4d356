import type Redis from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { loadScripts } from '../../src/redis/scripts';
import { resultDecoder, SCRIPTS, type ScriptName } from '../../src/redis/scriptTable';
import { startRedis, type TestRedis } from '../support/redisServer';

/**
 * Every script of src/redis/scriptTable.ts against a real Redis, as loaded (includes expanded):
 * it loads under the SHA-1 the node computes, and calls through its registered command reach
 * exactly the outcomes its table lists (plus a value, for scripts that answer one).
 */

/** An audit entry (lua/includes/audit.lua) for the write scripts: capped at 10 entries. */
const AUDIT = JSON.stringify({ max: '10', fields: ['operation', 'test'] });
/** An outbox entry (lua/includes/outbox.lua) for the scripts in another slot than the stream. */
const OUTBOX = JSON.stringify({ ttl: '60000', fields: ['workspaceId', 'ws_1', 'token', 't'] });
/** How many entries a script's calls appended to its test's stream. */
const auditLength = (t: string) => redis.xlen(`${t}:audit`);

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

test('every expanded script loads, under the SHA-1 computed at start-up', async () => {
  const scripts = loadScripts();
  expect(scripts.map((script) => script.name).sort()).toEqual(Object.keys(SCRIPTS).sort());
  for (const script of scripts) {
    expect({ script: script.name, sha1: await redis.script('LOAD', script.lua) }).toEqual({
      script: script.name,
      sha1: script.sha1,
    });
  }
});

/** What a reply that is not a result code stands for in the outcome sets below. */
const VALUE = '(value)';

/**
 * Calls that between them answer every outcome a script has, each script on keys of its own
 * (`t` is its hash tag). Returns the result codes seen: the reply, or the first element of an
 * array reply.
 */
const reach: Record<ScriptName, (t: string) => Promise<(number | string)[]>> = {
  tokenBucket: async (t) => {
    const [bucket, credits] = [`${t}:bucket`, `${t}:credits`];
    const admitted = await redis.tokenBucketV1(bucket, credits, 10, 1, 1000, 1);
    const refused = await redis.tokenBucketV1(bucket, credits, 10, 1, 1000, 11);
    // No bucket; a "set remaining" of 3 (nonce 1), then a cost of 5.
    const noCredits = await redis.tokenBucketV1Buffer(
      bucket,
      credits,
      '',
      '',
      '',
      0,
      '',
      '1',
      5,
      '',
      '',
      1,
      3,
      1000,
    );
    expect(noCredits[4]).toBe(3);
    return [admitted[0]!, refused[0]!, noCredits[0]!];
  },
  multiBucket: async (t) => {
    const [credits, a, b] = [`${t}:credits`, `${t}:a`, `${t}:b`];
    const noCredits = ['0', 0, '', '', '', '', ''];
    const call = (costA: number, costB: number, credit: (string | number)[] = noCredits) =>
      redis.multiBucketV1(3, credits, a, b, '', ...credit, 2, 5, 5, 1000, costA, 3, 3, 1000, costB);
    const admitted = await call(1, 1);
    // b holds 2 of its 3: a cost of 3 refuses the call, and a keeps its 4 of 5.
    const refused = await call(1, 3);
    expect(refused.slice(3)).toEqual([4, expect.any(Number), 0, 2, expect.any(Number), 1]);
    // A "set remaining" of 1 (nonce 1), then a cost of 2: out of credits, no bucket charged.
    const outOfCredits = await call(1, 1, ['1', 2, '', '', 1, 1, 1000]);
    expect([outOfCredits[2], outOfCredits[3], outOfCredits[6]]).toEqual([1, 4, 2]);
    return [admitted[0]!, refused[0]!, outOfCredits[0]!];
  },
  leaseGrant: async (t) => {
    const bucket = `${t}:bucket`;
    const grant = (cost: number, want: number, held = '', unused = 0, topUpAt = '') =>
      redis.leaseGrantV1(
        bucket,
        10,
        1,
        1000,
        cost,
        5000,
        'eu',
        'l1',
        want,
        4,
        3000,
        held,
        unused,
        topUpAt === '' ? '0' : '1',
        topUpAt,
      );
    // Of a full bucket of 10: 1 for the verification, then a lease of at most 4.
    const admitted = await grant(1, 8);
    expect(admitted).toEqual([1, 5, 6000, 5000, 4, 8000, 1]);
    const refused = await grant(6, 0);
    expect(refused.slice(0, 2)).toEqual([0, 5]);
    // A top-up at a version the lease is not at: refused, nothing changes.
    const stale = await grant(0, 2, 'l1', 4, '7');
    expect(stale).toEqual([2, 5, 6000, 5000, 0, 0, 1]);
    return [admitted[0]!, refused[0]!, stale[0]!];
  },
  leaseSpend: async (t) => {
    const lease = `${t}:lease`;
    const spend = (cost: number, now: number) => redis.leaseSpendV1(lease, cost, now, 500);
    const none = await spend(1, 1000);
    await redis.leaseInstallV1(lease, 7, 3, 2000, 100, 60000, 1000, '', 1);
    const spent = await spend(1, 1000);
    expect(spent).toEqual([1, 2, 1100, 1000, 7, 3, 1000, 1, 3000]);
    // Within 500 ms of its end: closed, with its 2 unspent to give back.
    const closed = await spend(1, 2600);
    expect(closed).toEqual([2, 2, 1100, 2600, 7, 3, 1000, 1, 3000]);
    await redis.leaseInstallV1(lease, 8, 3, 2000, 100, 60000, 3000, '', 1);
    const expired = await spend(1, 5000);
    return [spent[0]!, closed[0]!, none[0]!, expired[0]!];
  },
  leaseInstall: async (t) => {
    const lease = `${t}:lease`;
    const installed = await redis.leaseInstallV1(lease, 1, 5, 2000, 0, 60000, 1000, '', 1);
    const occupied = await redis.leaseInstallV1(lease, 2, 5, 2000, 0, 60000, 1500, '', 1);
    // A top-up of lease 1 at version 1: 3 more tokens, version 2, a new life from 1500.
    expect(await redis.leaseInstallV1(lease, 1, 3, 2000, 0, 60000, 1500, 1, '')).toBe(1);
    expect(await redis.hmget(lease, 'tokens', 'version', 'expiresAt')).toEqual(['8', '2', '3500']);
    // Another top-up asked at version 1: not applied.
    expect(await redis.leaseInstallV1(lease, 1, 3, 2000, 0, 60000, 1500, 1, '')).toBe(0);
    // Once the lease has ended, a new one replaces it.
    expect(await redis.leaseInstallV1(lease, 3, 5, 2000, 0, 60000, 4000, '', 1)).toBe(1);
    return [installed, occupied];
  },
  updateCredits: async (t) => {
    const [credits, outbox] = [`${t}:credits`, `${t}:outbox`];
    const update = (op: string, value: number, entry = OUTBOX) =>
      redis.updateCreditsV2(credits, outbox, op, value, '', '', 2, 7, 1000, entry);
    // A malformed entry fails the script before it writes anything.
    await expect(update('set', 1, '{}')).rejects.toThrow('outbox entry');
    expect(await redis.exists(credits, outbox)).toBe(0);
    // A "set remaining" of 7 (nonce 2, at 1000) is applied before the increment.
    const incremented = await update('increment', 1);
    expect(incremented).toBe(8);
    expect(await redis.hgetall(credits)).toEqual({
      remaining: '8',
      lastRefillAt: '1000',
      appliedReset: '2',
    });
    const negative = await update('decrement', 9);
    // One entry, for the one change; the outbox expires on its own.
    expect(await redis.xlen(outbox)).toBe(1);
    expect(await redis.pttl(outbox)).toBeGreaterThan(0);
    // decrementToZero (v2's decrement) stops at zero where decrement refuses.
    expect(await update('decrementToZero', 9)).toBe(0);
    expect(await redis.hget(credits, 'remaining')).toBe('0');
    return [incremented, negative];
  },
  revokeRootKey: async (t) => {
    const [record, outbox] = [`${t}:rootkey`, `${t}:outbox`];
    const revoke = () => redis.revokeRootKeyV1(record, outbox, `${t}:ch`, 'm', OUTBOX);
    await redis.hset(record, 'id', 'rk_1');
    await expect(redis.revokeRootKeyV1(record, outbox, `${t}:ch`, 'm', '[]')).rejects.toThrow(
      'outbox entry',
    );
    expect(await redis.exists(record)).toBe(1);
    const deleted = await revoke();
    const missing = await revoke();
    expect(await redis.exists(record)).toBe(0);
    expect(await redis.xlen(outbox)).toBe(1);
    return [deleted, missing];
  },
  relayAudit: async (t) => {
    const relay = (entry = AUDIT) => redis.relayAuditV1(`${t}:audit`, `${t}:marker`, 60_000, entry);
    await expect(relay('{}')).rejects.toThrow('audit entry');
    expect(await redis.exists(`${t}:marker`)).toBe(0);
    const appended = await relay();
    const again = await relay();
    expect(await auditLength(t)).toBe(1);
    expect(await redis.pttl(`${t}:marker`)).toBeGreaterThan(0);
    return [appended, again];
  },
  takeOutboxEntry: async (t) => {
    const outbox = `${t}:outbox`;
    const first = await redis.xadd(outbox, '*', 'a', '1');
    const second = await redis.xadd(outbox, '*', 'b', '2');
    const one = await redis.takeOutboxEntryV1(outbox, first!);
    expect(await redis.exists(outbox)).toBe(1);
    const none = await redis.takeOutboxEntryV1(outbox, second!);
    // An empty outbox goes: Redis would keep an empty stream for good.
    expect(await redis.exists(outbox)).toBe(0);
    expect([one, none]).toEqual([1, 0]);
    return [one];
  },
  forgetAuditOutbox: async (t) => {
    const registry = `${t}:registry`;
    await redis.zincrby(registry, 1, 'outbox');
    const moved = await redis.forgetAuditOutboxV1(registry, 'outbox', '2');
    const removed = await redis.forgetAuditOutboxV1(registry, 'outbox', '1');
    const gone = await redis.forgetAuditOutboxV1(registry, 'outbox', '1');
    expect(await redis.exists(registry)).toBe(0);
    return [moved, removed, gone];
  },
  putKey: async (t) => {
    const [record, perms, roles] = [`${t}:key`, `${t}:key:perms`, `${t}:key:roles`];
    const put = (...fields: string[]) =>
      redis.putKeyV1(record, perms, roles, 2, 1, 'p1', 'p2', 'r1', ...fields);
    const written = await put('id', 'key_1', 'pending', '1');
    // A record there (live, pending or a tombstone) is never overwritten.
    const exists = await put('id', 'key_2');
    expect(await redis.hgetall(record)).toEqual({ id: 'key_1', pending: '1' });
    expect((await redis.smembers(perms)).sort()).toEqual(['p1', 'p2']);
    expect(await redis.smembers(roles)).toEqual(['r1']);
    return [written, exists];
  },
  commitKey: async (t) => {
    const [record, outbox] = [`${t}:key`, `${t}:outbox`];
    const commit = () => redis.commitKeyV1(record, outbox, `${t}:ch`, 'm', OUTBOX);
    const gone = await commit();
    await redis.hset(record, 'id', 'key_1', 'pending', '1');
    // A malformed entry fails the script before it writes anything.
    await expect(redis.commitKeyV1(record, outbox, `${t}:ch`, 'm', '{}')).rejects.toThrow('outbox');
    expect(await redis.hget(record, 'pending')).toBe('1');
    const committed = await commit();
    const before = await commit();
    expect(await redis.hexists(record, 'pending')).toBe(0);
    // The value it answers is the id of the one entry it appended.
    expect((await redis.xrange(outbox, '-', '+')).map(([id]) => id)).toEqual([committed]);
    await redis.hset(record, 'deletedAt', '1');
    expect(await commit()).toBe('-1');
    return [gone, committed, before];
  },
  discardPendingKey: async (t) => {
    const [record, perms, roles] = [`${t}:key`, `${t}:key:perms`, `${t}:key:roles`];
    const discard = () => redis.discardPendingKeyV1(record, perms, roles);
    const absent = await discard();
    await redis.hset(record, 'id', 'key_1');
    const kept = await discard();
    await redis.hset(record, 'pending', '1');
    await redis.sadd(perms, 'p1');
    const discarded = await discard();
    expect(await redis.exists(record, perms, roles)).toBe(0);
    return [absent, kept, discarded];
  },
  nextKeySeq: async (t) => {
    const api = `${t}:api`;
    const noApi = await redis.nextKeySeqV2(api, 1, 'ws_1');
    await redis.hset(api, 'id', 'api_1', 'workspaceId', 'ws_1', 'keySeq', '4');
    // Another workspace's API takes no number: ids are not tagged by workspace any more.
    expect(await redis.nextKeySeqV2(api, 1, 'ws_2')).toBe(-1);
    const last = await redis.nextKeySeqV2(api, 3, 'ws_1');
    expect(last).toBe(7);
    await redis.hset(api, 'deletedAt', '1');
    expect(await redis.nextKeySeqV2(api, 1, 'ws_1')).toBe(-1);
    return [noApi, last];
  },
  updateKey: async (t) => {
    const [record, outbox] = [`${t}:key`, `${t}:outbox`];
    const update = (version: string, entry = OUTBOX) =>
      redis.updateKeyV3(record, outbox, version, `${t}:ch`, 'm', entry, '1', 'name', 'n', 'meta');
    const missing = await update('1');
    await redis.hset(record, 'id', 'key_1', 'version', '1', 'meta', '{}', 'pending', '1');
    // A pending record is no key yet.
    expect(await update('1')).toBe(-1);
    await redis.hdel(record, 'pending');
    const moved = await update('2');
    const updated = await update('1');
    expect(await redis.hgetall(record)).toEqual({ id: 'key_1', version: '2', name: 'n' });
    expect(await redis.xlen(outbox)).toBe(1);
    // No entry: a reroll's old key, whose entry goes with the new key.
    expect(await update('2', '')).toBe(1);
    expect(await redis.xlen(outbox)).toBe(1);
    return [missing, moved, updated];
  },
  rewrapSealed: async (t) => {
    const record = `${t}:key`;
    const rewrap = (from: string, to: string) => redis.rewrapSealedV1(record, from, to);
    // No record: nothing is created.
    const absent = await rewrap('old', 'new');
    expect(await redis.exists(record)).toBe(0);
    await redis.hset(record, 'id', 'key_1', 'sealed', 'old', 'pending', '1');
    // A pending creation is no key yet.
    expect(await rewrap('old', 'new')).toBe(0);
    await redis.hdel(record, 'pending');
    // Another sealed form than the one read: a stale read never overwrites a newer value.
    expect(await rewrap('other', 'new')).toBe(0);
    const written = await rewrap('old', 'new');
    expect(await redis.hgetall(record)).toEqual({ id: 'key_1', sealed: 'new' });
    // Run again with the same read: the record moved on, nothing is written.
    expect(await rewrap('old', 'newer')).toBe(0);
    await redis.hset(record, 'deletedAt', '1');
    expect(await rewrap('new', 'newer')).toBe(0);
    expect(await redis.hget(record, 'sealed')).toBe('new');
    return [absent, written];
  },
  tombstoneKey: async (t) => {
    const keys = [`${t}:key`, `${t}:perms`, `${t}:roles`, `${t}:credits`, `${t}:outbox`] as const;
    const remove = (version: string) =>
      redis.tombstoneKeyV1(...keys, version, `${t}:ch`, 'm', OUTBOX, '1000', '60000');
    const missing = await remove('1');
    await redis.hset(
      keys[0],
      'id',
      'key_1',
      'hash',
      'h1',
      'apiId',
      'api_1',
      'version',
      '1',
      'name',
      'n',
    );
    await redis.sadd(keys[1], 'p1');
    await redis.hset(keys[3], 'remaining', '3');
    const moved = await remove('2');
    const deleted = await remove('1');
    expect(await redis.hgetall(keys[0])).toEqual({
      id: 'key_1',
      hash: 'h1',
      apiId: 'api_1',
      deletedAt: '1000',
    });
    expect(await redis.pttl(keys[0])).toBeGreaterThan(0);
    expect(await redis.exists(keys[1], keys[2], keys[3])).toBe(0);
    // A tombstone is no key: deleting it again finds none.
    expect(await remove('1')).toBe(-1);
    expect(await redis.xlen(keys[4])).toBe(1);
    return [missing, moved, deleted];
  },
  dropLegacyKey: async (t) => {
    const keys = [
      `${t}:key`,
      `${t}:perms`,
      `${t}:roles`,
      `${t}:hashes`,
      `${t}:apikeys`,
      `${t}:owner`,
    ] as const;
    await redis.hset(keys[0], 'id', 'key_1');
    await redis.hset(keys[3], 'h1', 'key_1', 'h2', 'key_2');
    await redis.zadd(keys[4], 1, 'key_1', 2, 'key_2');
    await redis.zadd(keys[5], 1, 'key_1');
    const dropped = await redis.dropLegacyKeyV1(...keys, 'key_1', 'h1');
    expect(await redis.exists(keys[0], keys[5])).toBe(0);
    expect(await redis.hgetall(keys[3])).toEqual({ h2: 'key_2' });
    expect(await redis.zrange(keys[4], 0, -1)).toEqual(['key_2']);
    // Again: nothing left to drop, and nothing of another key is touched.
    expect(await redis.dropLegacyKeyV1(...keys, 'key_1', 'h2')).toBe(1);
    expect(await redis.hgetall(keys[3])).toEqual({ h2: 'key_2' });
    return [dropped];
  },
  queueWebhookEvent: async (t) => {
    const [marker, due, jobs] = [`${t}:once`, `${t}:due`, `${t}:jobs`];
    const queued = await redis.queueWebhookEventV1(marker, due, jobs, 60_000, 'evt_1', '{"a":1}');
    // The same state noticed again (another node, a later flush): nothing more is queued.
    const already = await redis.queueWebhookEventV1(marker, due, jobs, 60_000, 'evt_2', '{}');
    expect(await redis.hgetall(jobs)).toEqual({ evt_1: '{"a":1}' });
    expect(await redis.zrange(due, 0, -1)).toEqual(['evt_1']);
    expect(await redis.pttl(marker)).toBeGreaterThan(0);
    return [queued, already];
  },
  rewrapWebhookSecret: async (t) => {
    const hook = `${t}:webhook`;
    const rewrap = (from: string, to: string) => redis.rewrapWebhookSecretV1(hook, from, to);
    // No webhook (deleted since the read): nothing is created.
    const kept = await rewrap('old', 'new');
    expect(await redis.exists(hook)).toBe(0);
    await redis.hset(hook, 'id', 'wh_1', 'secret', 'old');
    // Another sealed form than the one read is never overwritten.
    expect(await rewrap('other', 'new')).toBe(0);
    const written = await rewrap('old', 'new');
    expect(await redis.hgetall(hook)).toEqual({ id: 'wh_1', secret: 'new' });
    return [kept, written];
  },
  claimWebhookDeliveries: async (t) => {
    const [due, jobs] = [`${t}:due`, `${t}:jobs`];
    await redis.hset(jobs, 'evt_1', '{"a":1}');
    await redis.zadd(due, 0, 'evt_1', 1, 'evt_gone', 8_000_000_000_000, 'evt_later');
    const claimed = await redis.claimWebhookDeliveriesV1(due, jobs, 60_000, 10);
    expect(JSON.parse(claimed)).toEqual([['evt_1', '{"a":1}']]);
    // Leased: not due again until the lease ends; the id without a job is gone.
    expect(await redis.claimWebhookDeliveriesV1(due, jobs, 60_000, 10)).toBe('[]');
    expect(await redis.zrange(due, 0, -1)).toEqual(['evt_1', 'evt_later']);
    expect(Number(await redis.zscore(due, 'evt_1'))).toBeGreaterThan(Date.now());
    return [claimed];
  },
  deleteIfEqual: async (t) => {
    await redis.set(`${t}:s`, 'a');
    const kept = await redis.deleteIfEqualV1(`${t}:s`, 'b');
    const deleted = await redis.deleteIfEqualV1(`${t}:s`, 'a');
    return [kept, deleted];
  },
  tombstoneApi: async (t) => {
    const [record, outbox] = [`${t}:api`, `${t}:outbox`];
    const tombstone = (ws = 'ws_1') =>
      redis.tombstoneApiV3(record, outbox, ws, 1000, `${t}:ch`, 'm', OUTBOX);
    const missing = await tombstone();
    await redis.hset(record, 'id', 'api_1', 'workspaceId', 'ws_1');
    expect(await tombstone('ws_2')).toBe(-1);
    const marked = await tombstone();
    expect(await redis.hget(record, 'deletedAt')).toBe('1000');
    // Marked once: a repeated call (a resumed deletion) appends nothing.
    const again = await tombstone();
    expect(await redis.xlen(outbox)).toBe(1);
    // A removed API is no API: its deletion is not resumed.
    await redis.hset(record, 'removedAt', '2000');
    expect(await tombstone()).toBe(-1);
    return [missing, marked, again];
  },
  ensureNamespace: async (t) => {
    const created = await redis.ensureNamespaceV2(`${t}:ns`, 'ns_1', 'name', 1000);
    // The record decides: a later id for the same name gets the first.
    expect(await redis.ensureNamespaceV2(`${t}:ns`, 'ns_2', 'name', 2000)).toBe('ns_1');
    expect(await redis.hgetall(`${t}:ns`)).toEqual({ id: 'ns_1', name: 'name', createdAt: '1000' });
    return [created];
  },
  setOverride: async (t) => {
    const [overrides, order, outbox] = [`${t}:o`, `${t}:order`, `${t}:outbox`];
    const set = (identifier: string, newId: string, json: string, entry = OUTBOX) =>
      redis.setOverrideV3(overrides, order, outbox, identifier, newId, json, 'c', 'm', entry);
    // A malformed entry fails the script before anything is written.
    await expect(set('x', 'ovr_0', '{}', '{}')).rejects.toThrow('outbox entry');
    expect(await redis.exists(overrides, order, outbox)).toBe(0);
    const written = await set('user_*', 'ovr_1', '{"limit":1,"duration":1000}');
    // A replaced override keeps its id.
    expect(await set('user_*', 'ovr_2', '{"limit":2,"duration":1000}')).toBe('ovr_1');
    expect(JSON.parse((await redis.hget(overrides, 'user_*'))!)).toEqual({
      id: 'ovr_1',
      limit: 2,
      duration: 1000,
    });
    expect(await redis.zrange(order, 0, -1)).toEqual(['user_*']);
    // One entry per write, in the outbox, which expires on its own.
    expect(await redis.xlen(outbox)).toBe(2);
    expect(await redis.pttl(outbox)).toBeGreaterThan(0);
    return [written];
  },
  deleteOverride: async (t) => {
    const [overrides, order, outbox] = [`${t}:o`, `${t}:order`, `${t}:outbox`];
    await redis.hset(overrides, 'user_*', '{"id":"ovr_1","limit":1,"duration":1000}');
    await redis.zadd(order, 0, 'user_*');
    const remove = (entry = OUTBOX) =>
      redis.deleteOverrideV2(overrides, order, outbox, 'user_*', 'c', 'm', entry);
    await expect(remove('[]')).rejects.toThrow('outbox entry');
    expect(await redis.exists(overrides, order)).toBe(2);
    const deleted = await remove();
    expect(await redis.exists(overrides, order)).toBe(0);
    const missing = await remove();
    // Only the deletion that found the override appended.
    expect(await redis.xlen(outbox)).toBe(1);
    return [deleted, missing];
  },
  dropLegacyNamespace: async (t) => {
    const keys = [`${t}:ns`, `${t}:id`, `${t}:o`, `${t}:order`] as const;
    await redis.hset(`${t}:ns`, 'id', 'ns_1');
    await redis.set(`${t}:id`, 'name');
    await redis.hset(`${t}:o`, 'a', '{"limit":1}', 'b', '{"limit":2}');
    await redis.zadd(`${t}:order`, 0, 'a', 0, 'b');
    const drop = (copied: Record<string, string>) =>
      redis.dropLegacyNamespaceV1(...keys, JSON.stringify(copied));
    // Changed, added or deleted since the copy: nothing removed.
    const changed = await drop({ a: '{"limit":1}', b: '{"limit":3}' });
    expect(await drop({ a: '{"limit":1}' })).toBe(0);
    expect(await drop({ a: '{"limit":1}', b: '{"limit":2}', c: '{}' })).toBe(0);
    expect(await redis.exists(...keys)).toBe(4);
    const dropped = await drop({ a: '{"limit":1}', b: '{"limit":2}' });
    expect(await redis.exists(...keys)).toBe(0);
    // Nothing left and nothing copied: removed (what remains of the record goes).
    await redis.hset(`${t}:ns`, 'id', 'ns_1');
    expect(await drop({})).toBe(1);
    expect(await redis.exists(`${t}:ns`)).toBe(0);
    return [changed, dropped];
  },
  putRecordWithMembers: async (t) => {
    const [record, members] = [`${t}:role`, `${t}:role:perms`];
    const put = (id: string, ...ids: string[]) =>
      redis.putRecordWithMembersV1(record, members, ids.length, ...ids, 'id', id, 'name', 'r');
    const written = await put('role_1', 'perm_a', 'perm_b');
    // A record there (live, pending or a tombstone) is never overwritten, nor its members.
    await redis.srem(members, 'perm_b');
    const exists = await put('role_2', 'perm_b', 'perm_c');
    expect(await redis.hgetall(record)).toEqual({ id: 'role_1', name: 'r' });
    expect(await redis.smembers(members)).toEqual(['perm_a']);
    expect(await put('role_3')).toBe(-1);
    await redis.del(record, members);
    expect(await put('role_4')).toBe(1);
    expect(await redis.exists(members)).toBe(0);
    return [written, exists];
  },
  releaseName: async (t) => {
    const index = `${t}:names`;
    await redis.hset(index, 'admin', 'role_1', 'reader', 'role_2');
    // Only the name's own id releases it.
    const notHeld = await redis.releaseNameV1(index, 'admin', 'role_9', `${t}:ch`, 'm');
    const released = await redis.releaseNameV1(index, 'admin', 'role_1', `${t}:ch`, 'm');
    expect(await redis.hgetall(index)).toEqual({ reader: 'role_2' });
    expect(await redis.releaseNameV1(index, 'admin', 'role_1', `${t}:ch`, 'm')).toBe(0);
    return [released, notHeld];
  },
  tombstoneRbacEntry: async (t) => {
    const [record, members, outbox] = [`${t}:role`, `${t}:role:perms`, `${t}:outbox`];
    const tombstone = (entry = OUTBOX) =>
      redis.tombstoneRbacEntryV1(record, members, outbox, 'ws_1', entry, '1000', '60000');
    const missing = await tombstone();
    // A pending record (its creation's node died after the claim) gets its creation's entry first.
    await redis.hset(record, 'id', 'role_1', 'workspaceId', 'ws_1', 'name', 'admin');
    await redis.hset(record, 'description', 'd', 'pending', '1', 'pendingAudit', OUTBOX);
    await redis.sadd(members, 'perm_a');
    await expect(tombstone('[]')).rejects.toThrow('outbox entry');
    expect(await redis.hget(record, 'pending')).toBe('1');
    expect(await redis.hset(`${t}:other`, 'id', 'role_2', 'workspaceId', 'ws_2')).toBe(2);
    expect(
      await redis.tombstoneRbacEntryV1(`${t}:other`, members, outbox, 'ws_1', OUTBOX, '1', '1'),
    ).toBe(-1);
    const deleted = await tombstone();
    expect(await redis.hgetall(record)).toEqual({
      id: 'role_1',
      workspaceId: 'ws_1',
      name: 'admin',
      deletedAt: '1000',
    });
    expect(await redis.pttl(record)).toBeGreaterThan(0);
    expect(await redis.exists(members)).toBe(0);
    expect(await redis.xlen(outbox)).toBe(2);
    // A tombstone is deleted once: nothing more appended.
    expect(await tombstone()).toBe(-1);
    expect(await redis.xlen(outbox)).toBe(2);
    return [deleted, missing];
  },
  setRolePermissions: async (t) => {
    const [record, members, outbox] = [`${t}:role`, `${t}:role:perms`, `${t}:outbox`];
    const set = (...ids: string[]) =>
      redis.setRolePermissionsV1(record, members, outbox, 'ws_1', `${t}:ch`, 'm', OUTBOX, ...ids);
    const missing = await set('perm_a');
    expect(await redis.exists(members)).toBe(0);
    await redis.hset(record, 'id', 'role_1', 'workspaceId', 'ws_1', 'pending', '1');
    await redis.hset(record, 'pendingAudit', OUTBOX);
    await redis.sadd(members, 'perm_old');
    const replaced = await set('perm_a', 'perm_b');
    expect((await redis.smembers(members)).sort()).toEqual(['perm_a', 'perm_b']);
    // The creation's entry, committed first, then the write's.
    expect(await redis.hget(record, 'pending')).toBeNull();
    expect(await redis.xlen(outbox)).toBe(2);
    expect(await set()).toBe(1);
    expect(await redis.exists(members)).toBe(0);
    await redis.hset(record, 'deletedAt', '1');
    expect(await set('perm_c')).toBe(-1);
    expect(await redis.exists(members)).toBe(0);
    return [replaced, missing];
  },
  putRecord: async (t) => {
    const record = `${t}:identity`;
    const written = await redis.putRecordV1(record, 'id', 'id_1', 'pending', '1');
    // A record there (live, pending or a tombstone) is never overwritten.
    const exists = await redis.putRecordV1(record, 'id', 'id_2');
    expect(await redis.hgetall(record)).toEqual({ id: 'id_1', pending: '1' });
    return [written, exists];
  },
  commitIdentity: async (t) => {
    const [record, outbox] = [`${t}:identity`, `${t}:outbox`];
    const commit = () => redis.commitIdentityV1(record, outbox, `${t}:ch`, 'm');
    const gone = await commit();
    // A malformed entry fails the script before it writes anything.
    await redis.hset(record, 'id', 'id_1', 'pending', '1', 'pendingAudit', '{}');
    await expect(commit()).rejects.toThrow('outbox');
    expect(await redis.hget(record, 'pending')).toBe('1');
    await redis.hset(record, 'pendingAudit', OUTBOX);
    const committed = await commit();
    const before = await commit();
    // The entry went from the record to the outbox, once.
    expect(await redis.hgetall(record)).toEqual({ id: 'id_1' });
    expect(await redis.xlen(outbox)).toBe(1);
    await redis.hset(record, 'deletedAt', '1');
    expect(await commit()).toBe(-1);
    return [gone, committed, before];
  },
  discardPendingIdentity: async (t) => {
    const record = `${t}:identity`;
    const discard = () => redis.discardPendingIdentityV1(record);
    const absent = await discard();
    await redis.hset(record, 'id', 'id_1');
    const kept = await discard();
    await redis.hset(record, 'pending', '1');
    const discarded = await discard();
    expect(await redis.exists(record)).toBe(0);
    return [absent, kept, discarded];
  },
  touchKey: async (t) => {
    const [record, lastUsed] = [`${t}:key_1`, `${t}:lastused`];
    const touch = (at: number) => redis.touchKeyV1(record, lastUsed, at, 60_000);
    // No record: nothing is written.
    const missing = await touch(1000);
    expect(await redis.exists(record, lastUsed)).toBe(0);
    await redis.hset(record, 'id', 'key_1', 'pending', '1');
    expect(await touch(1000)).toBe(-1);
    await redis.hdel(record, 'pending');
    const set = await touch(2000);
    // An older time arriving later never moves it back.
    const kept = await touch(1500);
    expect(await redis.get(lastUsed)).toBe('2000');
    expect(await touch(2500)).toBe(1);
    expect(await redis.get(lastUsed)).toBe('2500');
    expect(await redis.pttl(lastUsed)).toBeGreaterThan(50_000);
    // The record itself is never written.
    expect(await redis.hgetall(record)).toEqual({ id: 'key_1' });
    await redis.hset(record, 'deletedAt', '3000');
    expect(await touch(4000)).toBe(-1);
    expect(await redis.get(lastUsed)).toBe('2500');
    return [missing, set, kept];
  },
  renameIdentity: async (t) => {
    const [record, outbox] = [`${t}:id_1`, `${t}:outbox`];
    const call = (mode: string, from = 'old', to = 'new', ws = 'ws_1', ...fields: string[]) =>
      redis.renameIdentityV1(record, outbox, mode, ws, 'c', 'm', from, to, OUTBOX, ...fields);
    const missing = await call('mark');
    expect(await redis.exists(record)).toBe(0);
    await redis.hset(record, 'id', 'id_1', 'workspaceId', 'ws_1', 'externalId', 'old');
    // Another workspace's record, or one named otherwise by now, is not marked.
    expect(await call('mark', 'old', 'new', 'ws_2')).toBe(-1);
    const otherwise = await call('mark', 'older');
    // Not marked for `new`: no commit.
    expect(await call('commit')).toBe(0);
    const marked = await call('mark');
    expect(await redis.hget(record, 'renamingTo')).toBe('new');
    // A commit of another target, or from another name, changes nothing.
    expect(await call('commit', 'old', 'other')).toBe(0);
    expect(await call('commit', 'older', 'new')).toBe(0);
    expect(await redis.xlen(outbox)).toBe(0);
    // A malformed audit entry fails the commit before it writes anything.
    await expect(
      redis.renameIdentityV1(record, outbox, 'commit', 'ws_1', 'c', 'm', 'old', 'new', '{}'),
    ).rejects.toThrow('outbox entry');
    expect(await redis.hget(record, 'externalId')).toBe('old');
    await redis.hset(record, 'ratelimits', '[]');
    const committed = await call(
      'commit',
      'old',
      'new',
      'ws_1',
      '1',
      'meta',
      '{"a":1}',
      'ratelimits',
    );
    expect(await redis.hgetall(record)).toEqual({
      id: 'id_1',
      workspaceId: 'ws_1',
      externalId: 'new',
      meta: '{"a":1}',
    });
    expect(await redis.xlen(outbox)).toBe(1);
    // unmark forgets only a mark of its own target.
    await redis.hset(record, 'renamingTo', 'x');
    expect(await call('unmark', 'new', 'y')).toBe(1);
    expect(await redis.hget(record, 'renamingTo')).toBe('x');
    expect(await call('unmark', 'new', 'x')).toBe(1);
    expect(await redis.hexists(record, 'renamingTo')).toBe(0);
    await expect(call('rename')).rejects.toThrow('unknown mode');
    return [missing, otherwise, marked, committed];
  },
  updateIdentity: async (t) => {
    const [record, outbox, credits] = [`${t}:id_1`, `${t}:outbox`, `${t}:credits`];
    const update = (ws = 'ws_1', pool: [string, string, string] = ['', '', '']) =>
      redis.updateIdentityV4(
        record,
        outbox,
        credits,
        ws,
        'c',
        'm',
        OUTBOX,
        ...pool,
        1,
        'meta',
        '{"a":1}',
        'ratelimits',
      );
    const missing = await update();
    // A record deleted under an update is not brought back as a fragment.
    expect(await redis.exists(record)).toBe(0);
    await redis.hset(
      record,
      'id',
      'id_1',
      'workspaceId',
      'ws_1',
      'ratelimits',
      '[]',
      'pending',
      '1',
    );
    // Neither a pending record nor another workspace's is changed.
    expect(await update()).toBe(-1);
    await redis.hdel(record, 'pending');
    expect(await update('ws_2')).toBe(-1);
    const updated = await update();
    expect(await redis.hgetall(record)).toEqual({
      id: 'id_1',
      workspaceId: 'ws_1',
      meta: '{"a":1}',
    });
    // The pool in the same step: set counted from a time, its creation value marked applied…
    expect(await redis.exists(credits)).toBe(0);
    expect(await update('ws_1', ['set', '40', '1000'])).toBe(1);
    expect(await redis.hgetall(credits)).toEqual({
      remaining: '40',
      lastRefillAt: '1000',
      appliedReset: '1',
    });
    // … and dropped; a refused update touches no pool.
    expect(await update('ws_2', ['delete', '', ''])).toBe(-1);
    expect(await redis.exists(credits)).toBe(1);
    expect(await update('ws_1', ['delete', '', ''])).toBe(1);
    expect(await redis.exists(credits)).toBe(0);
    await redis.hset(record, 'deletedAt', '1');
    expect(await update('ws_1', ['set', '5', '1'])).toBe(-1);
    expect(await redis.exists(credits)).toBe(0);
    expect(await redis.xlen(outbox)).toBe(3);
    return [missing, updated];
  },
  tombstoneIdentity: async (t) => {
    const [record, outbox] = [`${t}:id_1`, `${t}:outbox`];
    const remove = (ws = 'ws_1') =>
      redis.tombstoneIdentityV1(record, outbox, ws, 'c', 'm', OUTBOX, '1700000000000', '60000');
    const missing = await remove();
    await redis.hset(
      record,
      'id',
      'id_1',
      'workspaceId',
      'ws_1',
      'externalId',
      'user_1',
      'meta',
      '{}',
    );
    expect(await remove('ws_2')).toBe(-1);
    const deleted = await remove();
    // What the rest of the deletion needs stays, for an hour at most.
    expect(await redis.hgetall(record)).toEqual({
      id: 'id_1',
      workspaceId: 'ws_1',
      externalId: 'user_1',
      deletedAt: '1700000000000',
    });
    expect(await redis.pttl(record)).toBeGreaterThan(0);
    expect(await remove()).toBe(-1);
    expect(await redis.xlen(outbox)).toBe(1);
    return [missing, deleted];
  },
  dropLegacyIdentity: async (t) => {
    const [record, names, order] = [`${t}:identity:id_1`, `${t}:names`, `${t}:order`];
    await redis.hset(record, 'id', 'id_1', 'externalId', 'user_1');
    await redis.hset(names, 'user_1', 'id_1', 'user_2', 'id_2');
    await redis.zadd(order, 0, 'id_1', 0, 'id_2');
    const dropped = await redis.dropLegacyIdentityV1(record, names, order, 'id_1', 'user_1');
    expect(await redis.exists(record)).toBe(0);
    expect(await redis.hgetall(names)).toEqual({ user_2: 'id_2' });
    expect(await redis.zrange(order, 0, -1)).toEqual(['id_2']);
    // An entry that names another identity since is left to it.
    await redis.hset(names, 'user_2', 'id_3');
    await redis.dropLegacyIdentityV1(record, names, order, 'id_2', 'user_2');
    expect(await redis.hgetall(names)).toEqual({ user_2: 'id_3' });
    return [dropped];
  },
};

test.each(Object.keys(SCRIPTS) as ScriptName[])(
  '%s: calls reach exactly the outcomes of its table',
  async (name) => {
    const spec = SCRIPTS[name];
    // Outcomes as strings: the decoders' types differ per script, the sets compared do not.
    const decode = resultDecoder(name) as (code: number | string) => string | undefined;
    const seen = new Set(
      (await reach[name](`test:{${name}}`)).map((code) => decode(code) ?? VALUE),
    );
    const listed = new Set<string>(Object.values(spec.codes));
    if ('value' in spec) listed.add(VALUE);
    expect([...seen].sort()).toEqual([...listed].sort());
  },
);
