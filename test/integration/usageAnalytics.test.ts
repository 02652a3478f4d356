/**
 * Usage analytics against real Redis: counts from several nodes add up to the verifications they
 * answered once flushed, in every granularity, with their retention; a Redis that is away delays
 * the counts and never a verification. The Unkey v1 SDK reads them.
 */
import { Unkey } from '@unkey/api';
import type Redis from 'ioredis';
import {
  GRANULARITIES,
  bucketStart,
  bucketStarts,
  parseSpanField,
  spanExpiresAt,
  spanStart,
  usageShard,
  verificationField,
  limitField,
  type CountRow,
  type Granularity,
} from '../../src/domain/usage';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { names } from '../../src/store/names';
import { UsageStore, usagePart } from '../../src/store/usageStore';
import { createKey, eventually, hour } from '../support/helpers';
import { startRedis, type TestRedis } from '../support/redisServer';
import { client, type Client } from '../support/rpc';
import {
  startProcessTopology,
  startTopology,
  type ProcessTopology,
  type Topology,
} from '../support/topology';

const DAY = 86_400_000;
const RETENTION = { minute: 48 * hour, hour: 90 * DAY, day: 730 * DAY };
const FAST_FLUSH = { KEYWARD_ANALYTICS_FLUSH_MS: '100' };

type Verdict = { valid: boolean; code: string };
type Daily = {
  time: number;
  success: number;
  rateLimited: number;
  usageExceeded: number;
  spentCredits: number;
};

/** The letter of each granularity's span hashes (docs/redis.md, "Usage analytics"). */
const SPAN_LETTER = { minute: 'm', hour: 'h', day: 'd' } as const;

/**
 * Every counter of an API's spans of one granularity, straight from the names, summed over its
 * shards and spans by counter (a verificationField). An API's minutes have no key or identity.
 */
async function counters(
  redis: Redis,
  ws: string,
  apiId: string,
  g: Granularity,
): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const key of await redis.keys(`keyward:usage:{${ws}:v:${apiId}:*}:${SPAN_LETTER[g]}:*`)) {
    // `…:h:<start>:<keyId>:<identityId>`; `…:m:<start>` for the minutes.
    const [keyId = '', identityId = ''] = g === 'minute' ? [] : key.split(':').slice(-2);
    for (const [field, value] of Object.entries(await redis.hgetall(key))) {
      const { outcome, tags } = parseSpanField(field)!;
      const counter = verificationField({ keyId, identityId, outcome, tags });
      sums[counter] = (sums[counter] ?? 0) + Number(value);
    }
  }
  return sums;
}

const total = (sums: Record<string, number>) =>
  Object.entries(sums)
    .filter(([field]) => !field.includes('"CREDITS"'))
    .reduce((sum, [, n]) => sum + n, 0);

describe('counts across two nodes', () => {
  let topology: Topology;
  let nodeA: Client;
  let nodeB: Client;
  let admin: Redis;
  let apiId: string;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 2, env: FAST_FLUSH });
    nodeA = client(topology.nodes[0]!.url, topology.rootKey);
    nodeB = client(topology.nodes[1]!.url, topology.rootKey);
    admin = createRedis(topology.primary.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    await connectRedis(admin);
    apiId = (await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'usage' })).body.apiId;
  });
  afterAll(async () => {
    await closeRedis(admin);
    await topology.stop();
  });

  test('every outcome is counted once, per key, with its tags and credits, in every granularity', async () => {
    const credited = await createKey(nodeA, apiId, { remaining: 3 });
    const limited = await createKey(nodeA, apiId, {
      ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: hour },
    });
    const disabled = await createKey(nodeA, apiId, { enabled: false });
    const verify = async (node: Client, key: string, body: object = {}) =>
      (await node.post<Verdict>('keys.verifyKey', { key, apiId, ...body })).body.code;

    const codes = [
      await verify(nodeA, credited.key, { tags: ['path=/a'] }),
      await verify(nodeA, credited.key, { tags: ['path=/a'] }),
      await verify(nodeB, credited.key, { tags: ['path=/b', 'path=/b'] }),
      await verify(nodeB, credited.key),
      await verify(nodeA, limited.key),
      await verify(nodeB, limited.key),
      await verify(nodeB, limited.key),
      await verify(nodeB, disabled.key),
      await verify(nodeA, 'sk_not_a_key_at_all_000'),
    ];
    expect(codes).toEqual([
      'VALID',
      'VALID',
      'VALID',
      'USAGE_EXCEEDED',
      'VALID',
      'RATE_LIMITED',
      'RATE_LIMITED',
      'DISABLED',
      'NOT_FOUND',
    ]);

    // After a flush of each node, the counts add up to the verifications answered, exactly.
    await eventually(
      async () => total(await counters(admin, topology.workspaceId, apiId, 'day')) >= 9,
      {
        what: 'both nodes to flush',
      },
    );
    for (const g of ['hour', 'day'] as const) {
      expect(await counters(admin, topology.workspaceId, apiId, g)).toEqual({
        [`["${credited.keyId}","","VALID","path=/a"]`]: 2,
        [`["${credited.keyId}","","VALID","path=/b"]`]: 1,
        [`["${credited.keyId}","","CREDITS","path=/a"]`]: 2,
        [`["${credited.keyId}","","CREDITS","path=/b"]`]: 1,
        [`["${credited.keyId}","","USAGE_EXCEEDED"]`]: 1,
        [`["${limited.keyId}","","VALID"]`]: 1,
        [`["${limited.keyId}","","RATE_LIMITED"]`]: 2,
        [`["${disabled.keyId}","","DISABLED"]`]: 1,
        ['["","","NOT_FOUND"]']: 1,
      });
    }
    // Minutes are the API's, summed over its keys (docs/decisions.md, "Per-key minutes").
    expect(await counters(admin, topology.workspaceId, apiId, 'minute')).toEqual({
      ['["","","VALID","path=/a"]']: 2,
      ['["","","VALID","path=/b"]']: 1,
      ['["","","CREDITS","path=/a"]']: 2,
      ['["","","CREDITS","path=/b"]']: 1,
      ['["","","USAGE_EXCEEDED"]']: 1,
      ['["","","VALID"]']: 1,
      ['["","","RATE_LIMITED"]']: 2,
      ['["","","DISABLED"]']: 1,
      ['["","","NOT_FOUND"]']: 1,
    });

    // keys.getVerifications: Unkey v1's daily view, from both nodes' counts.
    const today = bucketStart('day', Date.now());
    const daily = await nodeB.get<{ verifications: Daily[] }>('keys.getVerifications', {
      keyId: credited.keyId,
    });
    expect(daily.status).toBe(200);
    expect(daily.body.verifications).toEqual([
      { time: today, success: 3, rateLimited: 0, usageExceeded: 1, spentCredits: 3 },
    ]);
    // analytics.getVerifications carries the credits spent beside the counts too.
    const byKey = await nodeA.get<{ keyId: string; valid: number; spentCredits: number }[]>(
      'analytics.getVerifications',
      { apiId, start: Date.now() - hour, groupBy: 'key' },
    );
    expect(
      Object.fromEntries(byKey.body.map((row) => [row.keyId, [row.valid, row.spentCredits]])),
    ).toMatchObject({ [credited.keyId]: [3, 3], [limited.keyId]: [1, 0] });

    // The v1 SDK reads the same.
    const unkey = new Unkey({
      baseUrl: topology.nodes[0]!.url,
      rootKey: topology.rootKey,
      retry: { attempts: 0, backoff: () => 0 },
    });
    const { result, error } = await unkey.keys.getVerifications({ keyId: limited.keyId });
    expect(error).toBeUndefined();
    expect(result?.verifications).toEqual([
      { time: today, success: 1, rateLimited: 2, usageExceeded: 0, spentCredits: 0 },
    ]);

    // Each node's last outcomes moved to keys.getRecentVerifications.
    const recent = await nodeB.get<{ verifications: { code: string }[] }>(
      'keys.getRecentVerifications',
      { keyId: limited.keyId },
    );
    expect(recent.body.verifications.map((v) => v.code)).toEqual(['RATE_LIMITED', 'RATE_LIMITED']);
  });

  test('keys.getVerifications by ownerId sums the owner’s keys; neither id is a 400', async () => {
    const first = await createKey(nodeA, apiId, { ownerId: 'olga' });
    const second = await createKey(nodeA, apiId, { ownerId: 'olga' });
    for (const { key } of [first, second, second]) {
      await nodeA.post('keys.verifyKey', { key });
    }
    await eventually(
      async () => {
        const answer = await nodeA.get<{ verifications: Daily[] }>('keys.getVerifications', {
          ownerId: 'olga',
        });
        return answer.body.verifications[0]?.success === 3;
      },
      { what: 'the owner’s three verifications' },
    );
    // Days not begun are never read: an end far ahead costs no more than retention's days.
    const farEnd = await nodeA.get<{ verifications: Daily[] }>('keys.getVerifications', {
      ownerId: 'olga',
      start: 0,
      end: 8_000_000_000_000_000,
    });
    expect(farEnd.body.verifications).toEqual([expect.objectContaining({ success: 3 })]);
    expect((await nodeA.get('keys.getVerifications', {})).status).toBe(400);
    expect((await nodeA.get('keys.getVerifications', { ownerId: 'nobody' })).status).toBe(404);
  });

  test('standalone limits are counted per namespace and identifier, passed or not', async () => {
    for (let i = 0; i < 3; i++) {
      await nodeA.post('ratelimits.limit', {
        namespace: 'usage.ns',
        identifier: 'ursula',
        limit: 2,
        duration: 60_000,
      });
    }
    await nodeB.post('ratelimits.multiLimit', [
      { namespace: 'usage.ns', identifier: 'victor', limit: 1, duration: 60_000 },
    ]);
    const sums = async () => {
      const found: Record<string, number> = {};
      for (const key of await admin.keys(`keyward:usage:{${topology.workspaceId}:rl:*}:day:*`)) {
        for (const [field, n] of Object.entries(await admin.hgetall(key))) {
          found[field] = (found[field] ?? 0) + Number(n);
        }
      }
      return found;
    };
    await eventually(async () => Object.keys(await sums()).length === 3, { what: 'limit counts' });
    expect(await sums()).toEqual({
      '["ursula","passed"]': 2,
      '["ursula","blocked"]': 1,
      '["victor","passed"]': 1,
    });
  });
});

describe('analytics.getVerifications', () => {
  let topology: Topology;
  let unkey: Unkey;
  let apiId: string;
  let acme: { keyId: string; key: string };
  let plain: { keyId: string; key: string };
  const start = Date.now() - hour;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 2, env: FAST_FLUSH });
    const nodeA = client(topology.nodes[0]!.url, topology.rootKey);
    const nodeB = client(topology.nodes[1]!.url, topology.rootKey);
    unkey = new Unkey({
      baseUrl: topology.nodes[0]!.url,
      rootKey: topology.rootKey,
      retry: { attempts: 0, backoff: () => 0 },
    });
    apiId = (await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'stats' })).body.apiId;
    acme = await createKey(nodeA, apiId, { externalId: 'acme' });
    plain = await createKey(nodeA, apiId, { enabled: false });
    for (let i = 0; i < 3; i++) await nodeA.post('keys.verifyKey', { key: acme.key, tags: ['a'] });
    for (let i = 0; i < 2; i++) {
      await nodeB.post('keys.verifyKey', { key: plain.key, tags: ['b', 'a'] });
    }
    await eventually(
      async () => {
        const { result } = await unkey.analytics.getVerifications({ apiId, start });
        return result?.[0]?.total === 5;
      },
      { what: 'both nodes to flush' },
    );
  });
  afterAll(() => topology.stop());

  const read = async (query: Record<string, unknown>) => {
    const { result, error } = await unkey.analytics.getVerifications({
      apiId,
      start,
      ...query,
    } as Parameters<typeof unkey.analytics.getVerifications>[0]);
    expect(error).toBeUndefined();
    return result!;
  };

  test('without a group, the range summed by outcome', async () => {
    expect(await read({})).toEqual([
      expect.objectContaining({ total: 5, valid: 3, disabled: 2, rateLimited: 0, spentCredits: 0 }),
    ]);
  });

  test('by key, ordered by total, limited', async () => {
    const byKey = await read({ groupBy: 'key', orderBy: 'total', order: 'desc' });
    expect(byKey.map((row) => [row.keyId, row.total])).toEqual([
      [acme.keyId, 3],
      [plain.keyId, 2],
    ]);
    expect(await read({ groupBy: 'key', orderBy: 'total', order: 'desc', limit: 1 })).toHaveLength(
      1,
    );
    expect(await read({ keyId: [plain.keyId, 'key_other'] })).toEqual([
      expect.objectContaining({ total: 2, disabled: 2 }),
    ]);
  });

  test('by identity, and filtered by externalId', async () => {
    const byIdentity = await read({ groupBy: 'identity' });
    expect(byIdentity).toEqual([
      expect.objectContaining({
        total: 3,
        identity: { id: expect.stringMatching(/^id_/), externalId: 'acme' },
      }),
    ]);
    expect(await read({ externalId: 'acme' })).toEqual([expect.objectContaining({ total: 3 })]);
  });

  test('by tag and by tags, and filtered by tags', async () => {
    const byTag = await read({ groupBy: 'tag', orderBy: 'total', order: 'desc' });
    expect(byTag.map((row) => [row.tag, row.total])).toEqual([
      ['a', 5],
      ['b', 2],
    ]);
    const byTags = await read({ groupBy: 'tags', orderBy: 'total' });
    expect(byTags.map((row) => [row.tags, row.total])).toEqual([
      [['a', 'b'], 2],
      [['a'], 3],
    ]);
    expect(await read({ tag: 'b' })).toEqual([expect.objectContaining({ total: 2 })]);
  });

  test('by hour: every hour of the range, zeros included, in time order', async () => {
    const hours = await read({ groupBy: 'hour' });
    expect(hours.length).toBeGreaterThanOrEqual(2);
    expect(hours.reduce((sum, row) => sum + row.total, 0)).toBe(5);
    expect(hours.map((row) => row.time)).toEqual(
      [...hours.map((row) => row.time!)].sort((a, b) => a - b),
    );
  });

  test('by minute from the epoch: filled from the oldest minute retention keeps, not from 1970', async () => {
    const minutes = await read({ start: 0, groupBy: 'minute' });
    // 48 hours of minutes, and the one under way.
    expect(minutes).toHaveLength(48 * 60 + 1);
    expect(minutes.reduce((sum, row) => sum + row.total, 0)).toBe(5);
    const months = await read({ start: 0, groupBy: 'month' });
    expect(months.length).toBeLessThanOrEqual(26);
    expect(months.reduce((sum, row) => sum + row.total, 0)).toBe(5);
  });

  test("by minute: the API's minutes by outcome and tags; a key's or an identity's minutes are a 400 on Redis", async () => {
    const byTag = await read({ groupBy: ['minute', 'tag'] });
    expect(byTag.reduce((sum, row) => sum + row.total, 0)).toBe(5 + 2);
    expect(await read({ groupBy: 'minute', tag: 'b' })).toEqual(
      expect.arrayContaining([expect.objectContaining({ total: 2, disabled: 2 })]),
    );
    // Redis keeps a key's hours, not its minutes (docs/decisions.md, "Per-key minutes").
    for (const query of [
      { groupBy: ['minute', 'key'] },
      { groupBy: ['minute'], keyId: [acme.keyId] },
      { groupBy: ['minute', 'identity'] },
      { groupBy: ['minute'], externalId: 'acme' },
    ]) {
      const { error } = await unkey.analytics.getVerifications({
        apiId,
        start,
        ...query,
      } as Parameters<typeof unkey.analytics.getVerifications>[0]);
      expect({ query, code: error?.code }).toEqual({ query, code: 'BAD_REQUEST' });
      expect(error?.message).toMatch(
        /only in ClickHouse \(KEYWARD_CLICKHOUSE_URL\).*group by hour/,
      );
    }
    // The same questions by hour are answered.
    expect((await read({ groupBy: ['hour', 'key'] })).length).toBeGreaterThan(0);
  });

  test('a start after its end, or tag with tags, is a 400', async () => {
    const answer = await unkey.analytics.getVerifications({ apiId, start: 2, end: 1 });
    expect(answer.error?.code).toBe('BAD_REQUEST');
    const both = await unkey.analytics.getVerifications({ apiId, start, groupBy: ['tag', 'tags'] });
    expect(both.error?.code).toBe('BAD_REQUEST');
  });
});

describe('buckets and retention in Redis', () => {
  let redis: TestRedis;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    admin = createRedis(redis.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    await connectRedis(admin);
  });
  afterAll(async () => {
    await closeRedis(admin);
    await redis.dispose();
  });

  test("a flush writes the API's minute, the key's hour and day at once, in names redis-cli reads", async () => {
    const store = new UsageStore(admin, RETENTION);
    // 23:59 of yesterday, counted at an injected time: the minute's, hour's and day's spans
    // start apart (and the month's too on the first of a month).
    const minute = spanStart('day', Date.now()) - 60_000;
    const hourStart = spanStart('hour', minute);
    const dayStart = spanStart('day', minute);
    const monthStart = spanStart('month', minute);
    const dayOfMonth = (dayStart - monthStart) / DAY;
    const counter = { keyId: 'key_1', identityId: 'id_1', tags: [] };
    const part = usagePart('ws_t', 'v', 'api_t', 'key_1');
    await store.write(
      part,
      [
        { minute, field: verificationField({ ...counter, outcome: 'VALID' }), count: 4 },
        {
          minute,
          field: verificationField({ ...counter, outcome: 'CREDITS', tags: ['path=/a'] }),
          count: 2,
        },
      ],
      'n',
      1,
    );
    // key_1 is in shard 14, whose tag ends in edb (src/store/names.ts).
    expect(part.shard).toBe(14);
    const tag = 'keyward:usage:{ws_t:v:api_t:edb}';
    const hashes = {
      // The API's minutes of the hour: no key, no identity.
      [`${tag}:m:${hourStart}`]: { '59': '4', '59:CREDITS:["path=/a"]': '2' },
      // The key's (and identity's) hours of the day, and days of the month.
      [`${tag}:h:${dayStart}:key_1:id_1`]: { '23': '4', '23:CREDITS:["path=/a"]': '2' },
      [`${tag}:d:${monthStart}:key_1:id_1`]: {
        [String(dayOfMonth)]: '4',
        [`${dayOfMonth}:CREDITS:["path=/a"]`]: '2',
      },
      // Which subjects have hours that day, and days that month.
      [`${tag}:hk:${dayStart}`]: { 'key_1:id_1': '1' },
      [`${tag}:dk:${monthStart}`]: { 'key_1:id_1': '1' },
    };
    for (const [name, fields] of Object.entries(hashes)) {
      expect({ name, fields: await admin.hgetall(name) }).toEqual({ name, fields });
    }
    const expiries = [
      [`${tag}:m:${hourStart}`, spanExpiresAt('minute', hourStart, RETENTION)],
      [`${tag}:h:${dayStart}:key_1:id_1`, spanExpiresAt('hour', dayStart, RETENTION)],
      [`${tag}:hk:${dayStart}`, spanExpiresAt('hour', dayStart, RETENTION)],
      [`${tag}:d:${monthStart}:key_1:id_1`, spanExpiresAt('day', monthStart, RETENTION)],
      [`${tag}:dk:${monthStart}`, spanExpiresAt('day', monthStart, RETENTION)],
    ] as const;
    for (const [name, at] of expiries) {
      expect({ name, at: await admin.call('EXPIRETIME', name) }).toEqual({ name, at });
    }
    // Nothing in the previous release's per-bucket hashes.
    for (const g of GRANULARITIES) {
      expect(await admin.exists(`${tag}:${g}:${bucketStart(g, minute)}`)).toBe(0);
    }
    expect(await store.landed(part, 'n', 1)).toBe(true);
    expect(await store.landed(part, 'n', 2)).toBe(false);
    // Each part has a marker of its own: another shard of the API has not seen flush 1.
    expect(await store.landed(usagePart('ws_t', 'v', 'api_t', 'key_3'), 'n', 1)).toBe(false);
  });

  test("a busy key's span hashes stay listpacks: a day of every minute, four outcomes and tags", async () => {
    const store = new UsageStore(admin, RETENTION);
    const day = spanStart('day', Date.now());
    const part = usagePart('ws_l', 'v', 'api_l', 'key_busy');
    const field = (outcome: string, tags: string[] = []) =>
      verificationField({ keyId: 'key_busy', identityId: 'id_busy', outcome, tags });
    for (let minute = day; minute < day + DAY; minute += 60_000) {
      await store.write(
        part,
        [
          { minute, field: field('VALID'), count: 3 },
          { minute, field: field('RATE_LIMITED'), count: 1 },
          { minute, field: field('VALID', ['path=/a']), count: 1 },
          { minute, field: field('CREDITS', ['path=/a']), count: 1 },
        ],
        'n',
        minute,
      );
    }
    const tag = `keyward:usage:{${names.usageTag('ws_l', 'v', 'api_l', part.shard)}}`;
    const hours = `${tag}:h:${day}:key_busy:id_busy`;
    expect(await admin.hlen(hours)).toBe(24 * 4);
    expect(await admin.hget(hours, '5')).toBe(String(3 * 60));
    expect(await admin.object('ENCODING', hours)).toBe('listpack');
    const days = `${tag}:d:${spanStart('month', day)}:key_busy:id_busy`;
    expect(await admin.object('ENCODING', days)).toBe('listpack');
    // The API's minutes of an hour: 60 × 4 counters, within the 512 of hash-max-listpack-entries.
    expect(await admin.object('ENCODING', `${tag}:m:${day + 5 * hour}`)).toBe('listpack');
    // A key's day of hours, with four counters an hour, in well under 2 KB.
    expect(Number(await admin.memory('USAGE', hours))).toBeLessThan(2048);
    const rows = await store.readVerifications('ws_l', 'api_l', 'hour', [day + 5 * hour]);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          keyId: 'key_busy',
          identityId: 'id_busy',
          outcome: 'VALID',
          tags: [],
          count: 180,
        }),
        expect.objectContaining({ outcome: 'RATE_LIMITED', count: 60 }),
        expect.objectContaining({ outcome: 'VALID', tags: ['path=/a'], count: 60 }),
        expect.objectContaining({ outcome: 'CREDITS', tags: ['path=/a'], count: 60 }),
      ]),
    );
    expect(rows).toHaveLength(4);
  });

  test('one flush of many keys of a shard lists every one of them, and each is read back', async () => {
    const store = new UsageStore(admin, RETENTION);
    const minute = bucketStart('minute', Date.now());
    const keyIds = Array.from({ length: 64 }, (_, i) => `key_many${i}`);
    const parts = new Map<number, string[]>();
    for (const keyId of keyIds)
      parts.set(usageShard(keyId), [...(parts.get(usageShard(keyId)) ?? []), keyId]);
    for (const [, ids] of parts) {
      await store.write(
        usagePart('ws_m', 'v', 'api_m', ids[0]!),
        ids.map((keyId) => ({
          minute,
          field: verificationField({ keyId, identityId: '', outcome: 'VALID', tags: [] }),
          count: 1,
        })),
        'n',
        1,
      );
    }
    for (const g of ['hour', 'day'] as const) {
      const rows = await store.readVerifications('ws_m', 'api_m', g, [bucketStart(g, minute)]);
      expect(rows.map((row) => row.keyId).sort()).toEqual([...keyIds].sort());
    }
  });

  test('a span already past its retention is not kept', async () => {
    const store = new UsageStore(admin, RETENTION);
    const minute = bucketStart('minute', Date.now() - 3 * DAY);
    const part = usagePart('ws_r', 'v', 'api_r', 'k');
    await store.write(part, [{ minute, field: '["k","","VALID"]', count: 1 }], 'n', 1);
    expect(
      await admin.exists(
        names.usageApiMinutes('ws_r', 'api_r', part.shard, spanStart('hour', minute)),
      ),
    ).toBe(0);
    expect(
      await admin.exists(
        names.usageKeySpan('ws_r', 'api_r', part.shard, 'day', spanStart('day', minute), 'k:'),
      ),
    ).toBe(1);
  });

  test('a read sums the spans, the previous layouts’ buckets and hash; a key’s read, its shard alone', async () => {
    const store = new UsageStore(admin, RETENTION);
    const day = bucketStart('day', Date.now());
    const fieldOf = (keyId: string) =>
      verificationField({ keyId, identityId: '', outcome: 'VALID', tags: [] });
    const keys = ['key_a', 'key_b', 'key_c', 'key_d'];
    expect(new Set(keys.map(usageShard)).size).toBeGreaterThan(1);
    for (const keyId of keys) {
      await store.write(
        usagePart('ws_s', 'v', 'api_s', keyId),
        [{ minute: day, field: fieldOf(keyId), count: 2 }],
        'n',
        1,
      );
    }
    // Counted by the release before, in its shard's bucket of the day.
    await admin.hset(
      names.usageVerifications('ws_s', 'api_s', usageShard('key_a'), 'day', day),
      fieldOf('key_a'),
      '3',
    );
    // Counted by the release before that: one hash of the workspace's tag.
    const legacy = `keyward:{ws_s}:usage:v:api_s:day:${day}`;
    await admin.hset(legacy, fieldOf('key_a'), '5', fieldOf('key_old'), '1');
    const byCounter = (rows: CountRow[]) =>
      Object.fromEntries(rows.map((row) => [verificationField(row), row.count]));
    expect(byCounter(await store.readVerifications('ws_s', 'api_s', 'day', [day]))).toEqual({
      [fieldOf('key_a')]: 10,
      [fieldOf('key_b')]: 2,
      [fieldOf('key_c')]: 2,
      [fieldOf('key_d')]: 2,
      [fieldOf('key_old')]: 1,
    });
    // The first hour of the day, and its first minute: the API's, summed over its keys.
    expect(byCounter(await store.readVerifications('ws_s', 'api_s', 'hour', [day]))).toEqual(
      Object.fromEntries(keys.map((keyId) => [fieldOf(keyId), 2])),
    );
    expect(byCounter(await store.readVerifications('ws_s', 'api_s', 'minute', [day]))).toEqual({
      [fieldOf('')]: 8,
    });
    const one = await store.readVerifications(
      'ws_s',
      'api_s',
      'day',
      [day],
      [usageShard('key_b')],
      new Set(['key_b']),
    );
    // key_b's own hash; the old hash holds every key, and comes along (the caller keeps its own).
    expect(byCounter(one)).toEqual({
      [fieldOf('key_a')]: 5,
      [fieldOf('key_b')]: 2,
      [fieldOf('key_old')]: 1,
    });
  });

  test('a read of a namespace’s minutes reads only the hours something was counted in', async () => {
    const store = new UsageStore(admin, RETENTION);
    const now = Date.now();
    const minute = bucketStart('minute', now);
    for (const identifier of ['ursula', 'victor']) {
      await store.write(
        usagePart('ws_p', 'rl', 'rlns_p', identifier),
        [{ minute, field: limitField(identifier, true), count: 1 }],
        'n',
        1,
      );
    }
    const starts = bucketStarts('minute', now - 48 * hour, now, now, RETENTION);
    await admin.config('RESETSTAT');
    const sums = await store.read('ws_p', 'rl', 'rlns_p', 'minute', starts);
    expect(sums[starts.indexOf(minute)]!.size).toBe(2);
    expect(sums.reduce((n, sum) => n + sum.size, 0)).toBe(2);
    const calls = (command: string) =>
      admin
        .info('commandstats')
        .then((info) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0));
    // The hour's minutes in 17 slots (16 shards and the old hash), not 2,881 minutes in each.
    expect(await calls('hgetall')).toBeLessThanOrEqual(60 * 17);
    expect(await calls('exists')).toBeLessThanOrEqual(50 * 17);
  });
});

describe('an analytics Redis that is away', () => {
  let topology: Topology;
  let analytics: TestRedis;
  let node: Client;
  let admin: Redis;

  beforeAll(async () => {
    analytics = await startRedis();
    topology = await startTopology({
      nodes: 1,
      env: { ...FAST_FLUSH, KEYWARD_ANALYTICS_REDIS_URL: analytics.url },
    });
    node = client(topology.nodes[0]!.url, topology.rootKey);
    admin = createRedis(analytics.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    await connectRedis(admin);
  });
  afterAll(async () => {
    await closeRedis(admin);
    await topology.stop();
    await analytics.dispose();
  });

  test('delays the counts and never a verification; nothing is lost or counted twice', async () => {
    const apiId = (await node.post<{ apiId: string }>('apis.createApi', { name: 'away' })).body
      .apiId;
    const { key } = await createKey(node, apiId);
    await node.post('keys.verifyKey', { key });
    await eventually(
      async () => total(await counters(admin, topology.workspaceId, apiId, 'day')) === 1,
      { what: 'the first count' },
    );
    // The counts go to the analytics Redis, not the primary.
    await analytics.stop();
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const answer = await node.post<Verdict>('keys.verifyKey', { key });
      expect(answer.body.code).toBe('VALID');
      expect(Date.now() - started).toBeLessThan(500);
    }
    await analytics.restart();
    // A restarted (empty) Redis: the five counts that waited arrive once, the first is gone with it.
    const fresh = createRedis(analytics.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    await connectRedis(fresh);
    try {
      await eventually(
        async () => total(await counters(fresh, topology.workspaceId, apiId, 'day')) >= 5,
        { what: 'the counts that waited', timeoutMs: 15_000 },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(total(await counters(fresh, topology.workspaceId, apiId, 'day'))).toBe(5);
    } finally {
      await closeRedis(fresh);
    }
  });
});

describe('a node that counts nothing, with an analytics Redis of its own', () => {
  let topology: Topology;
  let analytics: TestRedis;

  beforeAll(async () => {
    analytics = await startRedis();
    topology = await startTopology({
      nodes: 1,
      env: { KEYWARD_ANALYTICS: 'off', KEYWARD_ANALYTICS_REDIS_URL: analytics.url },
    });
  });
  afterAll(async () => {
    await topology.stop();
    await analytics.dispose();
  });

  test('reads the counts stored there, not the primary’s', async () => {
    const node = client(topology.nodes[0]!.url, topology.rootKey);
    const apiId = (await node.post<{ apiId: string }>('apis.createApi', { name: 'off' })).body
      .apiId;
    const { keyId } = await createKey(node, apiId);
    const minute = bucketStart('minute', Date.now());
    const field = verificationField({ keyId, identityId: '', outcome: 'VALID', tags: [] });
    // What other nodes counted before: 3 in the analytics Redis, and 7 the primary must not show.
    for (const [url, count] of [
      [analytics.url, 3],
      [topology.primary.url, 7],
    ] as const) {
      const redis = createRedis(url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
      await connectRedis(redis);
      try {
        const part = usagePart(topology.workspaceId, 'v', apiId, keyId);
        await new UsageStore(redis, RETENTION).write(part, [{ minute, field, count }], 'n', 1);
      } finally {
        await closeRedis(redis);
      }
    }
    const read = await node.get<{ total: number; valid: number }[]>('analytics.getVerifications', {
      apiId,
      start: Date.now() - hour,
    });
    expect(read.status).toBe(200);
    expect(read.body.map(({ total, valid }) => ({ total, valid }))).toEqual([
      { total: 3, valid: 3 },
    ]);
  });
});

describe('a node as a process (npm run build first)', () => {
  let topology: ProcessTopology;
  let admin: Redis;

  beforeAll(async () => {
    // The longest flush interval allowed: a SIGTERM lands well inside it.
    topology = await startProcessTopology({
      nodes: 0,
      localRedis: false,
      env: { KEYWARD_ANALYTICS_FLUSH_MS: '1000' },
    });
    admin = createRedis(topology.primary.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    await connectRedis(admin);
  });
  afterAll(async () => {
    await closeRedis(admin);
    await topology.stop();
  });

  test('SIGTERM mid-interval: the counts pending are written before the process exits', async () => {
    const node = await topology.addNode({ name: 'sigterm' });
    const api = client(node.url, topology.rootKey);
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'term' })).body
      .apiId;
    const { key } = await createKey(api, apiId);
    // Let one flush pass, so the verifications below are counted after it, mid-interval.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const answered = await Promise.all(
      Array.from({ length: 40 }, () => api.post<Verdict>('keys.verifyKey', { key })),
    );
    expect(answered.every((a) => a.body.code === 'VALID')).toBe(true);
    expect(await node.stop('SIGTERM')).toBe(0);
    expect(total(await counters(admin, topology.workspaceId, apiId, 'minute'))).toBe(40);
  });

  test('SIGKILL loses at most what the last interval counted', async () => {
    const node = await topology.addNode({ name: 'sigkill' });
    const api = client(node.url, topology.rootKey);
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'kill' })).body
      .apiId;
    const { key } = await createKey(api, apiId);
    for (let i = 0; i < 10; i++) await api.post('keys.verifyKey', { key });
    // A flush has passed: those ten are in Redis.
    await eventually(
      async () => total(await counters(admin, topology.workspaceId, apiId, 'day')) === 10,
      { what: 'the first flush' },
    );
    for (let i = 0; i < 5; i++) await api.post('keys.verifyKey', { key });
    await node.stop('SIGKILL');
    const counted = total(await counters(admin, topology.workspaceId, apiId, 'day'));
    expect(counted).toBeGreaterThanOrEqual(10);
    expect(counted).toBeLessThanOrEqual(15);
  });
});
