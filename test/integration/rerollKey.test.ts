import type { Redis } from 'ioredis';
import { newId } from '../../src/keys/ids';
import { generateKey } from '../../src/keys/keyMaterial';
import { carriedFields, rerolledExpiry } from '../../src/operations/keys/rerollKey';
import { KeyStore } from '../../src/store/keyStore';
import { invalidation, names } from '../../src/store/names';
import { createKey, eventually, hour, testAudit } from '../support/helpers';
import { adminRedis, closeRedis, diffKeyspace, dumpKeyspace } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * keys.rerollKey (issue 15): a new secret for a key's settings, the old key verifying for
 * `expiration` ms more, on every node. Two nodes, each with its own key cache; what one learns
 * from the other arrives over pub/sub, so every "after" is `eventually`.
 */
let topology: Topology;
let nodes: Client[];
let api: Client;
let apiId: string;
let admin: Redis;

beforeAll(async () => {
  topology = await startTopology({
    nodes: 2,
    env: { KEYWARD_MANAGEMENT_RATE_LIMIT: '100000' },
  });
  nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
  api = nodes[0]!;
  admin = await adminRedis(topology.primary.url);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'reroll' })).body.apiId;
});

afterAll(async () => {
  if (admin) await closeRedis(admin);
  if (topology) await topology.stop();
});

type Rerolled = { keyId: string; key: string };

interface Verdict {
  valid: boolean;
  code: string;
  keyId?: string;
  expires?: number;
  remaining?: number;
  ratelimit?: { limit: number; remaining: number };
  ratelimits?: { name: string; remaining?: number }[];
}

type KeyBody = Record<string, unknown> & {
  id: string;
  expires?: number;
  meta?: Record<string, unknown>;
  remaining?: number;
};

async function reroll(keyId: string, expiration: number, via = api): Promise<Rerolled> {
  const response = await via.post<Rerolled>('keys.rerollKey', { keyId, expiration });
  expect(response.status).toBe(200);
  return response.body;
}

const getKey = async (keyId: string) => (await api.get<KeyBody>('keys.getKey', { keyId })).body;

const verify = async (node: Client, key: string, body: Record<string, unknown> = {}) =>
  (await node.post<Verdict>('keys.verifyKey', { key, ...body })).body;

describe('what the new key carries over', () => {
  test('every setting: name, meta, environment, identity, limits, credits, permissions, roles', async () => {
    const old = await createKey(api, apiId, {
      prefix: 'sk_live',
      name: 'rotated',
      externalId: 'reroll_corp',
      meta: { plan: 'pro', seats: [1, 2] },
      environment: 'production',
      ratelimit: { type: 'fast', limit: 10, refillRate: 10, refillInterval: hour },
      ratelimits: [{ name: 'tokens', limit: 5, duration: hour, type: 'consistent' }],
      remaining: 10,
      refill: { interval: 'monthly', amount: 100, refillDay: 3 },
      permissions: ['reroll.read'],
      roles: ['reroll editor'],
    });
    // Two spent: the new key starts with what is left.
    for (let i = 0; i < 2; i++) expect((await verify(api, old.key)).code).toBe('VALID');

    const before = Date.now();
    const fresh = await reroll(old.keyId, hour);
    const after = Date.now();
    expect(fresh.keyId).toMatch(/^key_/);
    expect(fresh.keyId).not.toBe(old.keyId);
    expect(fresh.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{16,}0kw10[1-9A-HJ-NP-Za-km-z]{6}$/);

    const [was, now] = [await getKey(old.keyId), await getKey(fresh.keyId)];
    // All but what is the key's own: id, start, times, expiry, and when its credits were set.
    const settings = (key: KeyBody) => {
      const own = ['id', 'start', 'createdAt', 'updatedAt', 'expires'];
      const rest = Object.fromEntries(Object.entries(key).filter(([name]) => !own.includes(name)));
      return { ...rest, refill: { ...(key.refill as object), lastRefillAt: 0 } };
    };
    expect(settings(now)).toEqual(settings(was));
    expect(now).toMatchObject({
      name: 'rotated',
      ownerId: 'reroll_corp',
      meta: { plan: 'pro', seats: [1, 2] },
      environment: 'production',
      identity: { externalId: 'reroll_corp' },
      ratelimit: { type: 'fast', limit: 10 },
      ratelimits: [{ name: 'tokens', limit: 5, duration: hour, type: 'consistent' }],
      remaining: 8,
      refill: { interval: 'monthly', amount: 100, refillDay: 3 },
      permissions: ['reroll.read'],
      roles: ['reroll editor'],
      enabled: true,
    });
    expect(now.start).toBe(fresh.key.slice(0, 'sk_live_'.length + 4));
    // The old key had no expiry, and the new one has none; the old one now ends after `hour`.
    expect(now.expires).toBeUndefined();
    expect(was.expires).toBeGreaterThanOrEqual(before + hour - 1_000);
    expect(was.expires).toBeLessThanOrEqual(after + hour + 1_000);

    // The identity has both keys.
    const owned = await api.get<{ keys: { id: string }[] }>('apis.listKeys', {
      apiId,
      externalId: 'reroll_corp',
    });
    expect(owned.body.keys.map((k) => k.id).sort()).toEqual([old.keyId, fresh.keyId].sort());

    // The new key verifies with all of it, on the other node too.
    const verdict = await verify(nodes[1]!, fresh.key, {
      authorization: { permissions: { and: ['reroll.read'] } },
      ratelimits: [{ name: 'tokens' }],
    });
    expect(verdict).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId: fresh.keyId,
      name: 'rotated',
      ownerId: 'reroll_corp',
      meta: { plan: 'pro', seats: [1, 2] },
      environment: 'production',
      identity: { externalId: 'reroll_corp' },
      remaining: 7,
    });
    expect(verdict.ratelimits?.find((s) => s.name === 'tokens')?.remaining).toBe(4);
  });

  test('the prefix is the old key’s; a key without one gets none', async () => {
    const bare = await createKey(api, apiId);
    const fresh = await reroll(bare.keyId, hour);
    expect(fresh.key).not.toContain('_');
    expect((await getKey(fresh.keyId)).start).toBe(fresh.key.slice(0, 4));
    // An imported key shows the prefix its importer gave.
    const imported = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
      { apiId, plaintext: 'legacy_abcdef0123456789', prefix: 'legacy' },
    ]);
    expect(imported.status).toBe(200);
    const rerolled = await reroll(imported.body.keyIds[0]!, hour);
    expect(rerolled.key).toMatch(/^legacy_[1-9A-HJ-NP-Za-km-z]{16,}0kw10[1-9A-HJ-NP-Za-km-z]{6}$/);
  });

  test('a disabled key gives a disabled key; an expiry sooner than the grace period stays', async () => {
    const expires = Date.now() + 60_000;
    const old = await createKey(api, apiId, { enabled: false, expires });
    const fresh = await reroll(old.keyId, hour);
    expect(await getKey(fresh.keyId)).toMatchObject({ enabled: false, expires });
    expect((await getKey(old.keyId)).expires).toBe(expires);
    expect((await verify(api, fresh.key)).code).toBe('DISABLED');
  });
});

describe('the old and the new key', () => {
  test('have a bucket and credits each: the new key starts from what the old had left', async () => {
    const old = await createKey(api, apiId, {
      ratelimit: { type: 'consistent', limit: 2, refillRate: 2, refillInterval: hour },
      remaining: 3,
    });
    expect(await verify(api, old.key)).toMatchObject({
      code: 'VALID',
      remaining: 2,
      ratelimit: { limit: 2, remaining: 1 },
    });
    const fresh = await reroll(old.keyId, hour);
    // The new key: a full bucket of its own, and the 2 credits left, as its own.
    expect(await verify(api, fresh.key)).toMatchObject({
      code: 'VALID',
      remaining: 1,
      ratelimit: { limit: 2, remaining: 1 },
    });
    // The old key spends from its own bucket and credits during the grace period.
    expect(await verify(nodes[1]!, old.key)).toMatchObject({
      code: 'VALID',
      remaining: 1,
      ratelimit: { limit: 2, remaining: 0 },
    });
    expect(await verify(api, old.key)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(await verify(api, fresh.key)).toMatchObject({ code: 'VALID', remaining: 0 });
    expect((await getKey(old.keyId)).remaining).toBe(1);
    expect((await getKey(fresh.keyId)).remaining).toBe(0);
  });
});

describe('the grace period, seen from two nodes', () => {
  test('the old key verifies on node 2 until `expiration` has passed, then is EXPIRED', async () => {
    const old = await createKey(api, apiId);
    // Node 2 caches the old key, with no expiry.
    expect((await verify(nodes[1]!, old.key)).code).toBe('VALID');
    const started = Date.now();
    const fresh = await reroll(old.keyId, 300);
    const right = await verify(nodes[1]!, old.key);
    // Within the grace period it is still VALID (later, the check below covers it).
    if (Date.now() < started + 250) expect(right.code).toBe('VALID');
    for (const node of nodes) {
      await eventually(async () => (await verify(node, old.key)).code === 'EXPIRED', {
        what: 'the old key to be EXPIRED on each node',
      });
      expect((await verify(node, fresh.key)).code).toBe('VALID');
    }
  });

  test('node 2 learns the old key’s new expiry and keeps verifying it meanwhile', async () => {
    const old = await createKey(api, apiId);
    expect((await verify(nodes[1]!, old.key)).expires).toBeUndefined();
    await reroll(old.keyId, hour);
    const { expires } = await getKey(old.keyId);
    await eventually(async () => (await verify(nodes[1]!, old.key)).expires === expires, {
      what: 'node 2 to answer the old key with its new expiry',
    });
    expect(await verify(nodes[1]!, old.key)).toMatchObject({ valid: true, code: 'VALID' });
  });

  test('expiration 0 refuses the old key at once on both nodes (EXPIRED, not NOT_FOUND)', async () => {
    const old = await createKey(api, apiId);
    for (const node of nodes) expect((await verify(node, old.key)).code).toBe('VALID');
    const fresh = await reroll(old.keyId, 0, nodes[1]!);
    for (const node of nodes) {
      await eventually(async () => (await verify(node, old.key)).code === 'EXPIRED', {
        what: 'the old key to be EXPIRED on each node',
      });
      expect((await verify(node, fresh.key)).code).toBe('VALID');
    }
    // It is still there to read, expired.
    const was = await getKey(old.keyId);
    expect(was.expires).toBeLessThanOrEqual(Date.now() + 1_000);
  });
});

describe('concurrent writes', () => {
  test('an update of the old key between the read and the write is read again, not lost', async () => {
    const old = await createKey(api, apiId, { meta: { v: 0 } });
    const store = new KeyStore(admin, () => undefined);
    const material = generateKey('sk');
    const rerolled = {
      keyId: newId('key'),
      hash: material.hash,
      start: material.start,
      createdAt: Date.now(),
    };
    const seen: unknown[] = [];
    const outcome = await store.reroll(
      topology.workspaceId,
      old.keyId,
      rerolled,
      async (current) => {
        seen.push(current.meta);
        if (seen.length === 1) {
          const updated = await api.post('keys.updateKey', { keyId: old.keyId, meta: { v: 1 } });
          expect(updated.status).toBe(200);
        }
        return {
          fields: carriedFields(current, undefined),
          expires: rerolledExpiry(current.expires, rerolled.createdAt, hour),
        };
      },
      testAudit(old.keyId),
    );
    expect(outcome).toBe('rerolled');
    expect(seen).toEqual([{ v: 0 }, { v: 1 }]);
    expect((await getKey(rerolled.keyId)).meta).toEqual({ v: 1 });
    expect((await getKey(old.keyId)).meta).toEqual({ v: 1 });
  });

  test('updateKey and rerollKey racing: one happened first, the other saw it', async () => {
    const far = Date.now() + 30 * 24 * hour;
    for (let round = 0; round < 8; round++) {
      const old = await createKey(api, apiId, { meta: { v: 0 } });
      const [updated, rerolled] = await Promise.all([
        nodes[round % 2]!.post('keys.updateKey', {
          keyId: old.keyId,
          meta: { v: 1 },
          expires: far,
        }),
        nodes[(round + 1) % 2]!.post<Rerolled>('keys.rerollKey', {
          keyId: old.keyId,
          expiration: hour,
        }),
      ]);
      expect([updated.status, rerolled.status]).toEqual([200, 200]);
      const [was, now] = [await getKey(old.keyId), await getKey(rerolled.body.keyId)];
      // The update is never lost on the old key.
      expect(was.meta).toEqual({ v: 1 });
      if (now.meta?.v === 1) {
        // The update came first: the new key has it all, the old key ends with the grace period.
        expect(now.expires).toBe(far);
        expect(was.expires).toBeLessThan(far);
      } else {
        // The reroll came first: the new key has none of it, and the update set the old expiry.
        expect(now.meta).toEqual({ v: 0 });
        expect(now.expires).toBeUndefined();
        expect(was.expires).toBe(far);
      }
    }
  });
});

describe('refusals: 4xx in the envelope, nothing written', () => {
  const refused = async (body: unknown, status: number, message?: RegExp) => {
    const before = await dumpKeyspace(admin);
    const response = await api.post<{ error: { code: string; message: string } }>(
      'keys.rerollKey',
      body as Record<string, unknown>,
    );
    expect(response.status).toBe(status);
    if (message) expect(response.body.error.message).toMatch(message);
    expect(diffKeyspace(before, await dumpKeyspace(admin))).toEqual([]);
  };

  test('a negative, fractional or too large expiration, or none, is 400', async () => {
    const { keyId } = await createKey(api, apiId);
    await refused({ keyId, expiration: -1 }, 400, /^expiration: must be >= 0/);
    await refused({ keyId, expiration: 4_102_444_800_001 }, 400, /^expiration: must be <= /);
    await refused({ keyId, expiration: 1.5 }, 400, /^expiration: must be integer/);
    await refused({ keyId, expiration: '1000' }, 400, /^expiration: must be integer/);
    await refused({ keyId }, 400, /expiration/);
    await refused({ expiration: 0 }, 400, /keyId/);
  });

  test('an unknown key, or a key of a deleted API, is 404', async () => {
    await refused({ keyId: 'key_unknown', expiration: 0 }, 404, /not found/);
    const gone = await api.post<{ apiId: string }>('apis.createApi', { name: 'gone' });
    const { keyId } = await createKey(api, gone.body.apiId);
    // Its deletion started: the API is tombstoned, its keys not yet purged.
    const ws = topology.workspaceId;
    await admin.hset(names.api(gone.body.apiId), 'deletedAt', String(Date.now()));
    await admin.publish(names.invalidationChannel, invalidation.api(ws, gone.body.apiId));
    await eventually(async () => (await api.get('keys.getKey', { keyId })).status === 404, {
      what: 'the node to see the API deleted',
    });
    await refused({ keyId, expiration: 0 }, 404, /not found/);
  });

  test('another workspace’s key is 404', async () => {
    const { keyId } = await createKey(api, apiId);
    const stranger = client(topology.nodes[0]!.url, (await topology.newRootKey()).key);
    const before = await dumpKeyspace(admin);
    const response = await stranger.post('keys.rerollKey', { keyId, expiration: 0 });
    expect(response.status).toBe(404);
    expect(diffKeyspace(before, await dumpKeyspace(admin))).toEqual([]);
  });
});
