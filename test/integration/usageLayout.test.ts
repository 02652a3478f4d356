/**
 * The layout of usage counts (docs/redis.md, "Usage analytics"): an API's counters spread over
 * the masters of a Redis Cluster and read back whole (and so do a namespace's overrides,
 * "Hash tags"), and the `usage` step of `keyward migrate` moving the previous release's hashes
 * into it, on a single Redis and on a cluster, interrupted and run again without counting
 * anything twice.
 */
import { Cluster } from 'ioredis';
import type { RunningNode } from '../../src/node';
import {
  GRANULARITIES,
  bucketStart,
  expiresAt,
  limitField,
  usageShard,
  verificationField,
} from '../../src/domain/usage';
import {
  closeRedis,
  connectRedis,
  createCluster,
  createRedis,
  type RedisClient,
} from '../../src/redis/clients';
import { scanKeys } from '../../src/store/migration/step';
import { usageCounts } from '../../src/store/migration/usageCounts';
import { names } from '../../src/store/names';
import { UsageStore } from '../../src/store/usageStore';
import { createKey, eventually, hour } from '../support/helpers';
import { startRedisCluster, type TestCluster } from '../support/redisCluster';
import { startRedis, type TestRedis } from '../support/redisServer';
import { client, type Client } from '../support/rpc';
import { createTestRootKey, startTestNode } from '../support/topology';

const DAY = 86_400_000;
const RETENTION = { minute: 48 * hour, hour: 90 * DAY, day: 730 * DAY };
const TIMEOUTS = { commandTimeoutMs: 2000, connectTimeoutMs: 2000 };

type Verdict = { valid: boolean; code: string };
type Counts = { total: number; valid: number; keyId?: string };

/** Where a scenario runs: clients (as an ACL user, when given) and ACL rules on every server. */
interface Target {
  connect(user?: string): Promise<RedisClient>;
  acl(...args: string[]): Promise<void>;
}

/** A user that may do anything but `denied`: a run stopped at that command, as by a crash. */
async function userWithout(target: Target, denied: string): Promise<string> {
  const user = `no${denied}`;
  await target.acl('SETUSER', user, 'on', `>${user}-pw`, '~*', '&*', '+@all', `-${denied}`);
  return user;
}

/** Every name and its value (DUMP), over every master: equal when nothing was written. */
async function keyspace(redis: RedisClient): Promise<Map<string, string>> {
  const dump = new Map<string, string>();
  for await (const batch of scanKeys(redis, '*')) {
    for (const name of batch) {
      const value = await redis.dumpBuffer(name);
      if (value) dump.set(name, value.toString('hex'));
    }
  }
  return dump;
}

async function migrationScenario(target: Target) {
  const redis = await target.connect();
  const store = new UsageStore(redis, RETENTION);
  const ws = `ws_mig${Date.now()}`;
  const apiId = 'api_mig';
  const namespaceId = 'rlns_mig';
  const minute = bucketStart('minute', Date.now());
  const keyIds = Array.from({ length: 40 }, (_, i) => `key_m${i}`);
  const valid = (keyId: string) =>
    verificationField({ keyId, identityId: '', outcome: 'VALID', tags: [] });
  try {
    // What the previous release wrote: a hash per owner and bucket, tagged by workspace.
    for (const g of GRANULARITIES) {
      const start = bucketStart(g, minute);
      const v = names.legacyUsageVerifications(ws, apiId, g, start);
      for (const [i, keyId] of keyIds.entries()) await redis.hincrby(v, valid(keyId), i + 1);
      await redis.hincrby(
        v,
        verificationField({ keyId: '', identityId: '', outcome: 'NOT_FOUND', tags: [] }),
        3,
      );
      await redis.expireat(v, expiresAt(g, start, RETENTION));
      const rl = names.legacyUsageLimits(ws, namespaceId, g, start);
      for (let i = 0; i < 20; i++) {
        await redis.hincrby(rl, limitField(`user_${i}`, true), 2);
        await redis.hincrby(rl, limitField(`user_${i}`, false), 1);
      }
      await redis.expireat(rl, expiresAt(g, start, RETENTION));
    }
    // What a node of the release after it counted into its shard's buckets (this release reads
    // them until they expire), with a shorter retention than the old hashes.
    const short = { minute: hour, hour: DAY, day: 2 * DAY };
    for (const g of GRANULARITIES) {
      const start = bucketStart(g, minute);
      const shardBucket = names.usageVerifications(ws, apiId, usageShard('key_m0'), g, start);
      await redis.hincrby(shardBucket, valid('key_m0'), 10);
      await redis.expireat(shardBucket, expiresAt(g, start, short));
    }
    // A namespace whose name spells an old usage hash: no usage count, left alone.
    const hostile = names.namespace(ws, `x}:usage:v:${apiId}:day:${bucketStart('day', minute)}`);
    await redis.hset(hostile, 'id', 'rlns_hostile');

    const answers = async () => {
      const out: Record<string, unknown> = {};
      for (const g of GRANULARITIES) {
        const [v] = await store.read(ws, 'v', apiId, g, [bucketStart(g, minute)]);
        const [rl] = await store.read(ws, 'rl', namespaceId, g, [bucketStart(g, minute)]);
        out[g] = { v: Object.fromEntries(v!), rl: Object.fromEntries(rl!) };
      }
      const [one] = await store.read(
        ws,
        'v',
        apiId,
        'day',
        [bucketStart('day', minute)],
        [usageShard('key_m5')],
      );
      out.key5 = one!.get(valid('key_m5'));
      return out;
    };
    const before = await answers();
    expect(before.key5).toBe(6);
    expect((before.minute as { v: Record<string, number> }).v[valid('key_m0')]).toBe(11);

    const movingNow = async () => {
      let found = 0;
      for await (const batch of scanKeys(redis, `keyward:{${ws}}:usage:moving:*`)) {
        found += batch.length;
      }
      return found;
    };
    // Stopped after adding hashes into their shards, before deleting them: the renamed hashes
    // are left, with their tokens' markers in the shards; the answers are what they were.
    const noDel = await target.connect(await userWithout(target, 'del'));
    await expect(usageCounts.run(noDel, () => undefined)).rejects.toThrow(/NOPERM|permission/i);
    await closeRedis(noDel);
    expect(await movingNow()).toBeGreaterThan(0);
    expect(await answers()).toEqual(before);
    // Stopped after renaming others, before adding anything (having finished those, whose
    // shards held their markers: nothing added again).
    const noAdd = await target.connect(await userWithout(target, 'hincrby'));
    await expect(usageCounts.run(noAdd, () => undefined)).rejects.toThrow();
    await closeRedis(noAdd);
    expect(await movingNow()).toBeGreaterThan(0);
    // Renamed and not yet added: the readers miss those for now.
    expect(await answers()).not.toEqual(before);

    // Run again: what was left half done finished, the rest moved, nothing counted twice.
    const progress: number[] = [];
    const { moved } = await usageCounts.run(redis, (n) => progress.push(n));
    expect(moved).toBeGreaterThan(0);
    expect(progress).toEqual(Array.from({ length: moved }, (_, i) => i + 1));
    expect(await answers()).toEqual(before);
    let left = 0;
    for await (const batch of scanKeys(redis, `keyward:{${ws}}:usage:*`)) left += batch.length;
    expect(left).toBe(0);
    expect(await redis.hget(hostile, 'id')).toBe('rlns_hostile');
    // Expiries kept: the old hash's where the shard had none, the nodes' where it had one.
    for (const g of GRANULARITIES) {
      const start = bucketStart(g, minute);
      const expected = expiresAt(g, start, RETENTION);
      const moved = names.usageVerifications(ws, apiId, usageShard('key_m5'), g, start);
      expect(
        Math.abs(Number(await redis.call('EXPIRETIME', moved)) - expected),
      ).toBeLessThanOrEqual(1);
      const written = names.usageVerifications(ws, apiId, usageShard('key_m0'), g, start);
      expect(await redis.call('EXPIRETIME', written)).toBe(expiresAt(g, start, short));
    }

    // A third run changes nothing.
    const settled = await keyspace(redis);
    expect(await usageCounts.run(redis, () => undefined)).toEqual({ moved: 0 });
    expect(await keyspace(redis)).toEqual(settled);
  } finally {
    await closeRedis(redis);
  }
}

describe('on a single Redis', () => {
  let server: TestRedis;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.dispose());

  test('the usage step moves the old hashes, interrupted twice, then once more for nothing', async () => {
    const target: Target = {
      async connect(user) {
        const redis = createRedis(
          server.url,
          TIMEOUTS,
          user === undefined ? {} : { username: user, password: `${user}-pw` },
        );
        await connectRedis(redis);
        return redis;
      },
      async acl(...args) {
        const redis = await target.connect();
        await redis.call('ACL', ...args);
        await closeRedis(redis);
      },
    };
    await migrationScenario(target);
  });
});

describe('on a Redis Cluster of three masters', () => {
  let cluster: TestCluster;
  let local: TestRedis;
  let node: RunningNode;
  let admin: Cluster;
  let api: Client;
  let workspaceId: string;

  beforeAll(async () => {
    cluster = await startRedisCluster(3, 0);
    local = await startRedis();
    node = await startTestNode({
      clusterSeeds: cluster.seeds,
      localUrl: local.url,
      env: { KEYWARD_ANALYTICS_FLUSH_MS: '100' },
    });
    admin = createCluster(cluster.nodes, TIMEOUTS);
    const created = await createTestRootKey(admin);
    workspaceId = created.workspaceId;
    api = client(node.url, created.key);
  }, 60_000);

  afterAll(async () => {
    await node?.close();
    if (admin) await closeRedis(admin);
    await local?.dispose();
    await cluster?.stop();
  });

  const target = (): Target => ({
    async connect(user) {
      const redis = createCluster(
        cluster.nodes,
        TIMEOUTS,
        user === undefined ? {} : { username: user, password: `${user}-pw` },
      );
      await connectRedis(redis);
      return redis;
    },
    async acl(...args) {
      for (const { port } of cluster.nodes) await cluster.cli(port, 'ACL', ...args);
    },
  });

  test("one API's counters land on every master, and read back as they were counted", async () => {
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'busy' })).body
      .apiId;
    const keys: { keyId: string; key: string }[] = [];
    for (let i = 0; i < 160; i += 16) {
      keys.push(...(await Promise.all(Array.from({ length: 16 }, () => createKey(api, apiId)))));
    }
    // Key i is verified 1 + i % 3 times; identifier i limited 1 + i % 2 times.
    const times = (i: number) => 1 + (i % 3);
    for (let round = 0; round < 3; round++) {
      const codes = await Promise.all(
        keys
          .filter((_, i) => round < times(i))
          .map(async ({ key }) => (await api.post<Verdict>('keys.verifyKey', { key })).body.code),
      );
      expect(new Set(codes)).toEqual(new Set(['VALID']));
    }
    const expected = keys.reduce((sum, _, i) => sum + times(i), 0);
    for (let i = 0; i < 48; i++) {
      for (let n = 0; n <= i % 2; n++) {
        await api.post('ratelimits.limit', {
          namespace: 'layout.ns',
          identifier: `user_${i}`,
          limit: 10,
          duration: 60_000,
        });
      }
    }
    const start = Date.now() - hour;
    await eventually(
      async () => {
        const answer = await api.get<Counts[]>('analytics.getVerifications', { apiId, start });
        // Limit counts flush on their own schedule; both must be in before reading either.
        const limits = await api.get<{ usage: { passed: number }[] }>('ratelimits.getUsage', {
          namespaceName: 'layout.ns',
          groupBy: 'identifier',
          limit: 1000,
        });
        const passed = (limits.body.usage ?? []).reduce((sum, row) => sum + row.passed, 0);
        return answer.body[0]?.total === expected && passed === 48 + 24;
      },
      { what: 'the node to flush its verification and limit counts' },
    );

    // Every master holds some of the API's counters, none holds them all: each key's days of
    // the month are a hash of one counter.
    const perMaster: number[] = [];
    for (const master of admin.nodes('master')) {
      let counters = 0;
      let cursor = '0';
      do {
        const [next, found] = await master.scan(
          cursor,
          'MATCH',
          `keyward:usage:{${workspaceId}:v:${apiId}:*}:d:*`,
          'COUNT',
          1000,
        );
        for (const name of found) counters += await master.hlen(name);
        cursor = next;
      } while (cursor !== '0');
      perMaster.push(counters);
    }
    expect(perMaster).toHaveLength(3);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(keys.length);
    expect(Math.min(...perMaster)).toBeGreaterThan(0);
    expect(Math.max(...perMaster)).toBeLessThan(keys.length);

    // The readers answer what was counted: the API's, each key's, each identifier's.
    const byKey = await api.get<Counts[]>('analytics.getVerifications', {
      apiId,
      start,
      groupBy: 'key',
    });
    expect(Object.fromEntries(byKey.body.map((row) => [row.keyId, row.valid]))).toEqual(
      Object.fromEntries(keys.map(({ keyId }, i) => [keyId, times(i)])),
    );
    for (const i of [0, 1, 2, 77]) {
      const daily = await api.get<{ verifications: { success: number }[] }>(
        'keys.getVerifications',
        { keyId: keys[i]!.keyId },
      );
      expect(daily.body.verifications.map((day) => day.success)).toEqual([times(i)]);
      const filtered = await api.get<Counts[]>('analytics.getVerifications', {
        apiId,
        start,
        keyId: keys[i]!.keyId,
      });
      expect(filtered.body[0]!.total).toBe(times(i));
    }
    const byIdentifier = await api.get<{ usage: { identifier: string; passed: number }[] }>(
      'ratelimits.getUsage',
      { namespaceName: 'layout.ns', groupBy: 'identifier', limit: 1000 },
    );
    expect(byIdentifier.body.usage).toHaveLength(48);
    for (const row of byIdentifier.body.usage) {
      expect(row.passed).toBe(1 + (Number(row.identifier.slice(5)) % 2));
    }
    const one = await api.get<{ usage: { total: number }[] }>('ratelimits.getUsage', {
      namespaceName: 'layout.ns',
      identifier: 'user_7',
    });
    expect(one.body.usage.reduce((sum, row) => sum + row.total, 0)).toBe(2);
  });

  test('the usage step moves the old hashes, interrupted twice, then once more for nothing', async () => {
    await migrationScenario(target());
  });

  test("one namespace's overrides land on every master, and list and decide as they were set", async () => {
    const namespaceName = 'layout.overrides';
    const identifiers = Array.from({ length: 96 }, (_, i) => `user_${i}`);
    for (let i = 0; i < identifiers.length; i += 16) {
      const answers = await Promise.all(
        identifiers.slice(i, i + 16).map((identifier, j) =>
          api.post('ratelimits.setOverride', {
            namespaceName,
            identifier,
            limit: 100 + i + j,
            duration: 60_000,
          }),
        ),
      );
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]));
    }
    const namespaceId = (await admin.hget(names.namespace(workspaceId, namespaceName), 'id'))!;
    expect(namespaceId).toMatch(/^rlns_/);

    // Every master holds some of the namespace's overrides, none holds them all.
    const perMaster: number[] = [];
    for (const master of admin.nodes('master')) {
      let overrides = 0;
      let cursor = '0';
      do {
        const [next, found] = await master.scan(
          cursor,
          'MATCH',
          `keyward:overrides:{${namespaceId}.*}`,
          'COUNT',
          1000,
        );
        for (const name of found) overrides += await master.hlen(name);
        cursor = next;
      } while (cursor !== '0');
      perMaster.push(overrides);
    }
    expect(perMaster).toHaveLength(3);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(identifiers.length);
    expect(Math.min(...perMaster)).toBeGreaterThan(0);
    expect(Math.max(...perMaster)).toBeLessThan(identifiers.length);

    // Pages merge the shards in identifier order, with the exact total on each.
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get<{
        overrides: { identifier: string }[];
        total: number;
        cursor?: string;
      }>('ratelimits.listOverrides', {
        namespaceName,
        limit: '25',
        ...(cursor === undefined ? {} : { cursor }),
      });
      expect(page.body.total).toBe(identifiers.length);
      listed.push(...page.body.overrides.map((override) => override.identifier));
      cursor = page.body.cursor;
    } while (cursor !== undefined);
    expect(listed).toEqual([...identifiers].sort());

    // A node loads the namespace whole: each identifier is decided by its own override.
    for (const i of [0, 17, 95]) {
      const decided = await api.post<{ limit: number }>('ratelimits.limit', {
        namespace: namespaceName,
        identifier: identifiers[i],
        limit: 1,
        duration: 1000,
      });
      expect(decided.body.limit).toBe(100 + i);
    }
    // And each write's audit entry reached the workspace's log through its shard's outbox.
    await eventually(
      async () => {
        let entries = 0;
        let after: string | undefined;
        do {
          const page = await api.get<{ entries: unknown[]; cursor?: string }>('auditLogs.list', {
            operation: 'ratelimits.setOverride',
            ...(after === undefined ? {} : { cursor: after }),
          });
          entries += page.body.entries.length;
          after = page.body.cursor;
        } while (after !== undefined);
        return entries === identifiers.length;
      },
      { what: 'the override writes in the audit log' },
    );
  });
});
