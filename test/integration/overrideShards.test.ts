import type Redis from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import type { AuditEntry } from '../../src/domain/audit';
import { namespacesMigration } from '../../src/store/migration/records';
import { legacy, names } from '../../src/store/names';
import { OVERRIDE_SHARDS, RatelimitStore, overrideShard } from '../../src/store/ratelimitStore';
import { startRedis, type TestRedis } from '../support/redisServer';

/**
 * A namespace's overrides in 16 shards on one Redis, through the store: pages merged in the
 * byte order of ZRANGEBYLEX at every page size, writes refused with nothing written, and
 * namespaces of the previous layout (c62d6b0's names, written by hand) moved when read or
 * migrated, without bringing back an override deleted since.
 */
let server: TestRedis | undefined;
let redis: Redis;
let store: RatelimitStore;
let n = 0;
/** A workspace of its own for each test. */
const freshWorkspace = () => `ws_shards${++n}`;

const AUDIT: AuditEntry = {
  rootKeyId: 'rk_test',
  operation: 'ratelimits.setOverride',
  targetType: 'namespace',
  targetId: 'rlns_test',
  summary: {},
  requestId: 'req_test',
};

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(server.url, { commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
  await connectRedis(redis);
  store = new RatelimitStore(redis, () => undefined);
});

afterAll(async () => {
  if (redis) await closeRedis(redis);
  await server?.dispose();
});

const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function set(ws: string, name: string, identifier: string, limit: number) {
  const namespace = await store.ensureNamespace(ws, name, `rlns_${name}${ws}`, 1000);
  return store.setOverride(ws, namespace, { identifier, limit, duration: 1000 }, 'rlor_x', AUDIT);
}

test('pages merge the shards in byte order, with the exact total, at every page size', async () => {
  const ws = freshWorkspace();
  // U+E000 sorts after a surrogate pair in UTF-16, before it in UTF-8: the order is the bytes'.
  const identifiers = [
    ...Array.from({ length: 37 }, (_, i) => `user_${i}`),
    'user_*',
    'é',
    '\uE000',
    '😀',
    'A',
    'a:b',
  ];
  for (const [i, identifier] of identifiers.entries()) {
    expect(await set(ws, 'merged', identifier, i + 1)).toBe('rlor_x');
  }
  const shards = new Set(identifiers.map(overrideShard));
  expect(shards.size).toBeGreaterThan(8);
  const expected = [...identifiers].sort(bytes);
  expect(expected.indexOf('\uE000')).toBeLessThan(expected.indexOf('😀'));
  const namespace = (await store.namespaceByName(ws, 'merged'))!;
  for (let limit = 1; limit <= identifiers.length + 1; limit++) {
    const listed: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listOverrides(ws, namespace, {
        limit,
        ...(after === undefined ? {} : { after }),
      });
      expect(page.total).toBe(identifiers.length);
      listed.push(...page.overrides.map((override) => override.identifier));
      if (!page.more) break;
      after = page.overrides[page.overrides.length - 1]!.identifier;
    }
    expect({ limit, listed }).toEqual({ limit, listed: expected });
  }
  const loaded = (await store.loadNamespace(ws, 'merged'))!;
  expect(loaded.overrides.map((override) => override.identifier).sort(bytes)).toEqual(expected);
  expect((await store.getOverride(ws, namespace, '😀'))?.limit).toBe(identifiers.indexOf('😀') + 1);
});

test('a write to a namespace that does not exist, or a deletion that finds nothing, writes nothing', async () => {
  const ws = freshWorkspace();
  const ghost = { id: 'rlns_ghost', name: 'ghost' };
  const shardNames = Array.from({ length: OVERRIDE_SHARDS }, (_, shard) => [
    names.overrides(ghost.id, shard),
    names.overrideOrder(ghost.id, shard),
    names.auditOutbox(names.overrideTag(ghost.id, shard)),
  ]).flat();
  const set = await store.setOverride(
    ws,
    ghost,
    { identifier: 'x', limit: 1, duration: 1000 },
    'rlor_ghost',
    AUDIT,
  );
  expect(set).toBeUndefined();
  expect(await store.deleteOverride(ws, ghost, 'x', AUDIT)).toBe(false);
  expect(await redis.exists(...shardNames)).toBe(0);
});

/** A namespace as c62d6b0 wrote it, under its workspace's tag. */
async function writeLegacy(ws: string, name: string, id: string, overrides: string[]) {
  await redis.hset(legacy.namespace(ws, name), 'id', id, 'name', name, 'createdAt', '500');
  await redis.set(legacy.namespaceName(ws, id), name);
  for (const [i, identifier] of overrides.entries()) {
    await redis.hset(
      legacy.overrides(ws, id),
      identifier,
      JSON.stringify({ id: `rlor_old${i}`, limit: 50 + i, duration: 1000 }),
    );
    await redis.zadd(legacy.overrideOrder(ws, id), 0, identifier);
  }
}

const legacyNames = (ws: string, name: string, id: string) => [
  legacy.namespace(ws, name),
  legacy.namespaceName(ws, id),
  legacy.overrides(ws, id),
  legacy.overrideOrder(ws, id),
];

describe('namespaces of the previous layout', () => {
  beforeEach(async () => {
    await redis.del(names.namespacesMigrated);
  });

  test('are moved when read by name, with every override, keeping their ids', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'old', 'rlns_old', ['user_1', 'user_*', 'z']);
    const loaded = (await store.loadNamespace(ws, 'old'))!;
    expect(loaded.id).toBe('rlns_old');
    expect(loaded.overrides.map((override) => [override.identifier, override.id]).sort()).toEqual([
      ['user_*', 'rlor_old1'],
      ['user_1', 'rlor_old0'],
      ['z', 'rlor_old2'],
    ]);
    expect(await redis.exists(...legacyNames(ws, 'old', 'rlns_old'))).toBe(0);
    expect(await redis.hgetall(names.namespace(ws, 'old'))).toEqual({
      id: 'rlns_old',
      name: 'old',
      createdAt: '500',
    });
    expect(await store.namespaceById(ws, 'rlns_old')).toEqual({ id: 'rlns_old', name: 'old' });
    // A replaced override keeps the id the previous release gave it.
    expect(await set(ws, 'old', 'z', 9)).toBe('rlor_old2');
  });

  test('are moved when read by id', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'byid', 'rlns_byid', ['a']);
    expect(await store.namespaceById(ws, 'rlns_byid')).toEqual({ id: 'rlns_byid', name: 'byid' });
    expect(await redis.exists(...legacyNames(ws, 'byid', 'rlns_byid'))).toBe(0);
    expect(await store.namespaceById(ws, 'rlns_other')).toBeUndefined();
  });

  test('ensureNamespace finds one before creating: a name never gets a second id', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'kept', 'rlns_kept', []);
    expect(await store.ensureNamespace(ws, 'kept', 'rlns_fresh', 2000)).toEqual({
      id: 'rlns_kept',
      name: 'kept',
    });
    expect(await redis.exists(names.namespaceName(ws, 'rlns_fresh'))).toBe(0);
  });

  test('whose name this release created meanwhile give it the overrides it lacks, never over its own', async () => {
    const ws = freshWorkspace();
    const current = await store.ensureNamespace(ws, 'both', 'rlns_new', 2000);
    await store.setOverride(
      ws,
      current,
      { identifier: 'shared', limit: 1, duration: 1000 },
      'rlor_new',
      AUDIT,
    );
    await writeLegacy(ws, 'both', 'rlns_prev', ['shared', 'only_old']);
    expect(await store.moveLegacyNamespace(ws, 'both')).toEqual(current);
    const loaded = (await store.loadNamespace(ws, 'both'))!;
    expect(
      Object.fromEntries(loaded.overrides.map((override) => [override.identifier, override.limit])),
    ).toEqual({ shared: 1, only_old: 51 });
    expect(await store.namespaceById(ws, 'rlns_prev')).toBeUndefined();
    expect(await redis.exists(...legacyNames(ws, 'both', 'rlns_prev'))).toBe(0);
    expect(await redis.exists(names.namespaceName(ws, 'rlns_prev'))).toBe(0);
  });

  test('a move cut short and finished by migrate does not bring back an override deleted meanwhile', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'cut', 'rlns_cut', ['gone', 'stays']);
    // What a move killed after its record leaves: both layouts hold the namespace.
    await redis.set(names.namespaceName(ws, 'rlns_cut'), 'cut');
    for (const identifier of ['gone', 'stays']) {
      const shard = overrideShard(identifier);
      const json = (await redis.hget(legacy.overrides(ws, 'rlns_cut'), identifier))!;
      await redis.hset(names.overrides('rlns_cut', shard), identifier, json);
      await redis.zadd(names.overrideOrder('rlns_cut', shard), 0, identifier);
    }
    await redis.hset(names.namespace(ws, 'cut'), 'id', 'rlns_cut', 'name', 'cut', 'createdAt', 1);
    const namespace = (await store.namespaceByName(ws, 'cut'))!;
    expect(await store.deleteOverride(ws, namespace, 'gone', AUDIT)).toBe(true);

    const migration = namespacesMigration(store);
    expect(await migration.run(redis, () => undefined)).toEqual({ moved: 1 });
    expect(await redis.exists(...legacyNames(ws, 'cut', 'rlns_cut'))).toBe(0);
    const loaded = (await store.loadNamespace(ws, 'cut'))!;
    expect(loaded.overrides.map((override) => override.identifier)).toEqual(['stays']);
  });

  test('an override an old node changes while a move runs is moved too, the old names then go', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'busy', 'rlns_busy', ['changed', 'deleted', 'kept']);
    const late = (limit: number) => JSON.stringify({ id: 'rlor_late', limit, duration: 1000 });
    let wrote = false;
    // Sent on the store's own connection before its removal of the old names, so Redis runs
    // them first: a node of the previous release writing between the move's read and that step.
    const moving = new RatelimitStore(
      redis,
      () => undefined,
      undefined,
      (point) => {
        if (point !== 'moveNamespace:recorded' || wrote) return;
        wrote = true;
        const old = legacy.overrides(ws, 'rlns_busy');
        void redis.hset(old, 'changed', late(77), 'added', late(88));
        void redis.zadd(legacy.overrideOrder(ws, 'rlns_busy'), 0, 'added');
        void redis.hdel(old, 'deleted');
      },
    );
    const loaded = (await moving.loadNamespace(ws, 'busy'))!;
    expect(wrote).toBe(true);
    expect(
      Object.fromEntries(loaded.overrides.map((override) => [override.identifier, override.limit])),
    ).toEqual({ changed: 77, added: 88, kept: 52 });
    expect(await redis.exists(...legacyNames(ws, 'busy', 'rlns_busy'))).toBe(0);
    const page = await moving.listOverrides(ws, loaded, { limit: 10 });
    expect(page.overrides.map((override) => override.identifier)).toEqual([
      'added',
      'changed',
      'kept',
    ]);
    expect(page.total).toBe(3);
  });

  test('are no longer looked for once migrate found none left', async () => {
    const ws = freshWorkspace();
    await writeLegacy(ws, 'late', 'rlns_late', []);
    const migration = namespacesMigration(store);
    const first = await migration.run(redis, () => undefined);
    expect(first.moved).toBeGreaterThanOrEqual(1);
    expect(await migration.run(redis, () => undefined)).toEqual({ moved: 0 });
    expect(await redis.exists(names.namespacesMigrated)).toBe(1);
    // Written by hand after the marker: a node no longer reads the old names.
    await writeLegacy(ws, 'after', 'rlns_after', []);
    const fresh = new RatelimitStore(redis, () => undefined);
    expect(await fresh.namespaceByName(ws, 'after')).toBeUndefined();
    expect(await fresh.namespaceById(ws, 'rlns_after')).toBeUndefined();
    await redis.del(...legacyNames(ws, 'after', 'rlns_after'));
  });
});
