import type { Cluster } from 'ioredis';
import type { RunningNode } from '../../src/node';
import { closeRedis, connectRedis, createCluster } from '../../src/redis/clients';
import { KeyRepair } from '../../src/store/keyRepair';
import { KeyStore } from '../../src/store/keyStore';
import { names } from '../../src/store/names';
import { RatelimitStore } from '../../src/store/ratelimitStore';
import { eventually } from '../support/helpers';
import { inspectWorkspace } from '../support/invariants';
import { allKeys } from '../support/keyspace';
import { startRedisCluster, type TestCluster } from '../support/redisCluster';
import { client, type Client } from '../support/rpc';
import { createTestRootKey, startNodeProcess, startTestNode } from '../support/topology';

/**
 * Writes that span slots (docs/redis.md, "Writes across slots"), on a real Redis Cluster, with
 * the node that makes them SIGKILLed between two of their steps (KEYWARD_FAULT_HALT_AT). At
 * every such point: nothing half created verifies, reads or is listed, a deleted key (identity,
 * API) is found nowhere, a listing answers only what its get reads; and the repair
 * every node runs finishes or undoes what was left, after which the workspace is exactly
 * consistent again.
 */
let cluster: TestCluster;
let admin: Cluster;
let healthy: RunningNode;
let api: Client;
let rootKey: string;
let workspaceId: string;
let apiId: string;

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0);
  admin = createCluster(cluster.nodes, { commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
  await connectRedis(admin);
  ({ key: rootKey, workspaceId } = await createTestRootKey(admin));
  healthy = await startTestNode({ clusterSeeds: cluster.seeds });
  api = client(healthy.url, rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'killed' })).body.apiId;
}, 60_000);

afterAll(async () => {
  await healthy?.close();
  if (admin) await closeRedis(admin);
  await cluster?.stop();
});

/** Sends one request through a node that kills itself at `point`; it must never answer. */
async function halted(point: string, path: string, body: unknown): Promise<void> {
  const node = await startNodeProcess({
    clusterSeeds: cluster.seeds,
    env: { KEYWARD_FAULT_HALT_AT: point },
  });
  try {
    const answer = await client(node.url, rootKey)
      .post(path, body)
      .then(
        (response) => `answered ${response.status}`,
        () => 'no answer',
      );
    expect({ point, answer }).toEqual({ point, answer: 'no answer' });
    // It killed itself: SIGKILL, never a clean exit.
    await eventually(async () => !node.running(), { what: 'the node to die', timeoutMs: 5_000 });
  } finally {
    await node.dispose();
  }
}

/** What any node's repair does, without waiting for a journal entry to age. */
async function repair(): Promise<number> {
  const keys = new KeyStore(admin, () => undefined);
  return new KeyRepair(admin, keys, { intervalMs: 60_000, staleAfterMs: 0 }).sweep();
}

const verify = async (key: string) =>
  (await api.post<{ code: string }>('keys.verifyKey', { key })).body.code;

async function listed(ownerId?: string): Promise<string[]> {
  const page = await api.get<{ keys: { id: string }[]; total: number }>('apis.listKeys', {
    apiId,
    limit: '100',
    ...(ownerId === undefined ? {} : { ownerId }),
  });
  expect(page.status).toBe(200);
  // Every listed key reads.
  for (const { id } of page.body.keys) {
    expect((await api.get('keys.getKey', { keyId: id })).status).toBe(200);
  }
  return page.body.keys.map((key) => key.id);
}

async function consistent(exact: boolean): Promise<void> {
  expect((await inspectWorkspace(admin, workspaceId, { exact })).violations).toEqual([]);
}

let imported = 0;
const plaintexts = (n: number) =>
  Array.from({ length: n }, () => `sk_killed_${String(++imported).padStart(20, '0')}`);

describe.each(['createKeys:journaled', 'createKeys:prepared'])(
  'an import killed at %s',
  (point) => {
    test('verifies nowhere, is listed nowhere, and is undone by the repair', async () => {
      const before = await listed();
      const keys = plaintexts(3);
      await halted(
        point,
        'migrations.createKeys',
        keys.map((plaintext) => ({ apiId, plaintext, ownerId: 'importer' })),
      );
      for (const key of keys) expect(await verify(key)).toBe('NOT_FOUND');
      expect(await listed()).toEqual(before);
      expect(await listed('importer')).toEqual([]);
      await consistent(false);

      expect(await repair()).toBe(1);
      await consistent(true);
      for (const key of keys) expect(await verify(key)).toBe('NOT_FOUND');
      // Nothing of the import is left to refuse it again.
      const again = await api.post('migrations.createKeys', [{ apiId, plaintext: keys[0] }]);
      expect(again.status).toBe(200);
      expect(await verify(keys[0]!)).toBe('VALID');
    });
  },
);

test('an import killed once it began committing is committed whole by the repair', async () => {
  const before = await listed();
  const keys = plaintexts(3);
  await halted(
    'createKeys:committing',
    'migrations.createKeys',
    keys.map((plaintext) => ({ apiId, plaintext })),
  );
  for (const key of keys) expect(await verify(key)).toBe('NOT_FOUND');
  expect(await listed()).toEqual(before);
  await consistent(false);

  expect(await repair()).toBe(1);
  await consistent(true);
  // The healthy node remembers them as not found until the commits' messages (`created`) reach
  // it: within the invalidation bound, not at once.
  for (const key of keys) {
    await eventually(async () => (await verify(key)) === 'VALID', {
      what: 'a repaired key to verify',
      timeoutMs: 2_000,
    });
  }
  expect((await listed()).length).toBe(before.length + 3);
  // Each key has its creation entry, relayed from its outbox.
  const entries = await api.get<{ entries: { operation: string }[] }>('auditLogs.list', {
    operation: 'migrations.createKeys',
    limit: '100',
  });
  expect(entries.body.entries.length).toBeGreaterThanOrEqual(3);
});

test('a deletion killed after its first step: the key verifies nowhere, and the repair clears its entries', async () => {
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ownerId: 'doomed',
  });
  const { keyId, key } = created.body;
  // Cached on the healthy node: only the invalidation can take it out.
  expect(await verify(key)).toBe('VALID');
  expect(await verify(key)).toBe('VALID');
  await halted('deleteKey:tombstoned', 'keys.deleteKey', { keyId });
  // The tombstone's message reaches the healthy node within the invalidation bound (100 ms; a
  // loaded test machine gets a second), whatever the dead node left undone.
  await eventually(async () => (await verify(key)) === 'NOT_FOUND', {
    what: 'the deleted key to stop verifying',
    timeoutMs: 1_000,
  });
  expect((await api.get('keys.getKey', { keyId })).status).toBe(404);
  expect(await listed()).not.toContain(keyId);
  expect(await listed('doomed')).toEqual([]);
  await consistent(false);
  expect(await repair()).toBe(1);
  await consistent(true);
  // The repair is idempotent: a second finds nothing, and changes nothing.
  expect(await repair()).toBe(0);
  await consistent(true);
});

test('an owner change killed before the indexes moved: listings by owner stay right', async () => {
  const { keyId } = (
    await api.post<{ keyId: string }>('keys.createKey', { apiId, ownerId: 'before' })
  ).body;
  await halted('updateKey:recorded', 'keys.updateKey', { keyId, ownerId: 'after' });
  expect(await listed('before')).toEqual([]);
  expect((await api.get<{ ownerId: string }>('keys.getKey', { keyId })).body.ownerId).toBe('after');
  await consistent(false);
  expect(await repair()).toBe(1);
  await consistent(true);
  expect(await listed('after')).toEqual([keyId]);
});

test('a reroll killed before the old key changed is undone: the old key stays as it was', async () => {
  const { keyId, key } = (
    await api.post<{ keyId: string; key: string }>('keys.createKey', { apiId })
  ).body;
  const before = await listed();
  await halted('rerollKey:prepared', 'keys.rerollKey', { keyId, expiration: 1000 });
  expect(await listed()).toEqual(before);
  expect(await verify(key)).toBe('VALID');
  expect((await api.get<{ expires?: number }>('keys.getKey', { keyId })).body.expires).toBe(
    undefined,
  );
  expect(await repair()).toBe(1);
  await consistent(true);
  expect(await listed()).toEqual(before);
});

test('a reroll killed after the old key was given its expiry is finished: the new key exists', async () => {
  const { keyId } = (await api.post<{ keyId: string }>('keys.createKey', { apiId, name: 'r' }))
    .body;
  const before = await listed();
  await halted('rerollKey:expired', 'keys.rerollKey', { keyId, expiration: 60_000 });
  expect(await listed()).toEqual(before);
  expect(
    (await api.get<{ expires?: number }>('keys.getKey', { keyId })).body.expires,
  ).toBeGreaterThan(Date.now());
  expect(await repair()).toBe(1);
  await consistent(true);
  const after = await listed();
  const added = after.filter((id) => !before.includes(id));
  expect(added).toHaveLength(1);
  expect((await api.get<{ name: string }>('keys.getKey', { keyId: added[0]! })).body.name).toBe(
    'r',
  );
});

describe('identities', () => {
  /** The workspace's listed identity ids; every one reads by its id. */
  async function listedIdentities(): Promise<string[]> {
    const page = await api.get<{ identities: { id: string }[]; total: number }>(
      'identities.listIdentities',
      { limit: '100' },
    );
    expect(page.status).toBe(200);
    for (const { id } of page.body.identities) {
      expect((await api.get('identities.getIdentity', { identityId: id })).status).toBe(200);
    }
    return page.body.identities.map((identity) => identity.id);
  }

  /** How many creation entries of this identity the workspace's audit log holds. */
  const creationEntries = async (identityId: string) =>
    (
      await api.get<{ entries: unknown[] }>('auditLogs.list', {
        operation: 'identities.createIdentity',
        targetId: identityId,
        limit: '100',
      })
    ).body.entries.length;

  const byExternalId = (externalId: string) =>
    api.get<{ id: string }>('identities.getIdentity', { externalId });

  describe.each(['createIdentity:journaled', 'createIdentity:prepared'])(
    'a creation killed at %s',
    (point) => {
      test('is found nowhere, listed nowhere, and undone by the repair', async () => {
        const externalId = `killed_${point.replace(/\W/g, '_')}`;
        const before = await listedIdentities();
        await halted(point, 'identities.createIdentity', { externalId, meta: { a: 1 } });
        expect((await byExternalId(externalId)).status).toBe(404);
        expect(await listedIdentities()).toEqual(before);
        await consistent(false);

        expect(await repair()).toBe(1);
        await consistent(true);
        expect(await repair()).toBe(0);
        // Nothing of it is left to refuse the externalId.
        const again = await api.post('identities.createIdentity', { externalId });
        expect(again.status).toBe(200);
        expect((await byExternalId(externalId)).status).toBe(200);
      });
    },
  );

  test('a creation killed once it claimed its externalId is committed by the repair, with its audit entry', async () => {
    const externalId = 'killed_after_claim';
    const before = await listedIdentities();
    await halted('createIdentity:claimed', 'identities.createIdentity', { externalId });
    // Claimed but pending: no reader shows it.
    expect((await byExternalId(externalId)).status).toBe(404);
    expect(await listedIdentities()).toEqual(before);
    await consistent(false);

    expect(await repair()).toBe(1);
    await consistent(true);
    const found = await byExternalId(externalId);
    expect(found.status).toBe(200);
    expect(await listedIdentities()).toEqual([...before, found.body.id].sort());
    expect(await creationEntries(found.body.id)).toBe(1);
    expect(await repair()).toBe(0);
  });

  test('a creation of the same externalId finishes one a killed node claimed: one identity, one audit entry', async () => {
    const externalId = 'claimed_then_raced';
    await halted('createIdentity:claimed', 'identities.createIdentity', { externalId });
    // The claim decided: the second creation commits the first rather than make another.
    expect((await api.post('identities.createIdentity', { externalId })).status).toBe(409);
    const found = await byExternalId(externalId);
    expect(found.status).toBe(200);
    expect(await repair()).toBe(1);
    await consistent(true);
    expect(await creationEntries(found.body.id)).toBe(1);
  });

  test('a deletion killed after its first step: gone everywhere at once, its externalId free, the repair clears its entries', async () => {
    const externalId = 'doomed_identity';
    const { identityId } = (
      await api.post<{ identityId: string }>('identities.createIdentity', { externalId })
    ).body;
    const { key } = (
      await api.post<{ key: string }>('keys.createKey', { apiId, externalId: externalId })
    ).body;
    const identityOf = async () =>
      (await api.post<{ identity?: { id: string } }>('keys.verifyKey', { key })).body.identity;
    // Cached on the healthy node: only the invalidation can take it out.
    expect((await identityOf())?.id).toBe(identityId);
    expect((await identityOf())?.id).toBe(identityId);
    await halted('deleteIdentity:tombstoned', 'identities.deleteIdentity', { identityId });
    await eventually(async () => (await identityOf()) === undefined, {
      what: 'the deleted identity to leave the key',
      timeoutMs: 1_000,
    });
    expect((await api.get('identities.getIdentity', { identityId })).status).toBe(404);
    expect((await byExternalId(externalId)).status).toBe(404);
    expect(await listedIdentities()).not.toContain(identityId);
    await consistent(false);
    // The externalId entry still names the tombstone: a new creation frees it and takes it.
    const again = await api.post<{ identityId: string }>('identities.createIdentity', {
      externalId,
    });
    expect(again.status).toBe(200);
    expect(await repair()).toBe(1);
    await consistent(true);
    expect((await byExternalId(externalId)).body.id).toBe(again.body.identityId);
    expect(await repair()).toBe(0);
  });
});

describe('creating a namespace (its id entry, then its record)', () => {
  /** The namespace ids whose entries name `name` in this workspace, believed or not. */
  async function idEntries(name: string): Promise<string[]> {
    const ids: string[] = [];
    for (const entry of await allKeys(admin, names.namespaceName(workspaceId, '*'))) {
      if ((await admin.get(entry)) === name) ids.push(/\{(rlns_[^}]+)\}/.exec(entry)![1]!);
    }
    return ids;
  }

  const override = (ref: Record<string, string>) =>
    api.get<{ limit?: number }>('ratelimits.getOverride', { ...ref, identifier: 'user_1' });

  test('killed after the id entry: the id reads as not found, and the name is created with another', async () => {
    const name = 'halted.ns';
    await halted('ensureNamespace:idWritten', 'ratelimits.limit', {
      namespace: name,
      identifier: 'user_1',
      limit: 1,
      duration: 1000,
    });
    const [dangling, ...more] = await idEntries(name);
    expect(dangling).toMatch(/^rlns_/);
    expect(more).toEqual([]);
    expect(await admin.exists(names.namespace(workspaceId, name))).toBe(0);
    expect((await override({ namespaceId: dangling! })).status).toBe(404);
    expect((await override({ namespaceName: name })).status).toBe(404);

    const set = await api.post<{ overrideId: string }>('ratelimits.setOverride', {
      namespaceName: name,
      identifier: 'user_1',
      limit: 7,
      duration: 1000,
    });
    expect(set.status).toBe(200);
    const id = (await admin.hget(names.namespace(workspaceId, name), 'id'))!;
    expect(id).not.toBe(dangling);
    expect((await override({ namespaceId: id })).body.limit).toBe(7);
    expect((await override({ namespaceName: name })).body.limit).toBe(7);
    // The dead creation's entry never counts, even now that the name exists.
    expect((await override({ namespaceId: dangling! })).status).toBe(404);
  });

  test('two creations of one name race: one id wins everywhere, the loser leaves no entry', async () => {
    const store = new RatelimitStore(admin, () => undefined);
    const name = 'raced.ns';
    const [a, b] = await Promise.all([
      store.ensureNamespace(workspaceId, name, 'rlns_raceA', 1000),
      store.ensureNamespace(workspaceId, name, 'rlns_raceB', 1000),
    ]);
    expect(a).toEqual(b);
    expect(['rlns_raceA', 'rlns_raceB']).toContain(a.id);
    expect(await idEntries(name)).toEqual([a.id]);
    expect(await store.namespaceById(workspaceId, a.id)).toEqual(a);
    const loser = a.id === 'rlns_raceA' ? 'rlns_raceB' : 'rlns_raceA';
    expect(await store.namespaceById(workspaceId, loser)).toBeUndefined();
  });
});

describe('APIs', () => {
  /** The workspace's listed API ids, and its `total`; every listed one reads. */
  async function listedApis(): Promise<{ ids: string[]; total: number }> {
    const page = await api.get<{ apis: { id: string }[]; total: number }>('apis.listApis', {
      limit: '100',
    });
    expect(page.status).toBe(200);
    for (const { id } of page.body.apis) {
      expect((await api.get('apis.getApi', { apiId: id })).status).toBe(200);
    }
    return { ids: page.body.apis.map((found) => found.id), total: page.body.total };
  }

  /** The ids of the workspace's API records in Redis, whatever their state. */
  const records = async () => new Set((await inspectWorkspace(admin, workspaceId)).apis.keys());

  const auditEntries = async (operation: string, targetId: string) =>
    (
      await api.get<{ entries: unknown[] }>('auditLogs.list', {
        operation,
        targetId,
        limit: '100',
      })
    ).body.entries.length;

  test('a creation killed before its record: nothing of it exists, the repair clears its entry', async () => {
    const before = await listedApis();
    const recordsBefore = await records();
    await halted('createApi:journaled', 'apis.createApi', { name: 'never' });
    expect(await listedApis()).toEqual(before);
    expect(await records()).toEqual(recordsBefore);
    await consistent(false);
    expect(await repair()).toBe(1);
    await consistent(true);
    expect(await listedApis()).toEqual(before);
    expect(await repair()).toBe(0);
  });

  test('a creation killed after its record: not listed until the repair indexes it, with its one audit entry', async () => {
    const before = await listedApis();
    const recordsBefore = await records();
    await halted('createApi:written', 'apis.createApi', { name: 'half made' });
    const [created] = [...(await records())].filter((id) => !recordsBefore.has(id));
    expect(created).toBeDefined();
    const apiId = created as string;
    // Past its point of no return: it reads whole, but the listing does not show it yet.
    expect((await api.get('apis.getApi', { apiId })).body).toMatchObject({ name: 'half made' });
    expect(await listedApis()).toEqual(before);
    await consistent(false);

    expect(await repair()).toBe(1);
    await consistent(true);
    const after = await listedApis();
    expect(after.ids).toEqual([...before.ids, apiId].sort());
    expect(after.total).toBe(before.total + 1);
    expect(await auditEntries('apis.createApi', apiId)).toBe(1);
    // Its keys take sequence numbers from the record as any API's do.
    const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId })).body;
    expect(await verify(key)).toBe('VALID');
    expect(await repair()).toBe(0);
  });

  test('a deletion killed after its mark: its keys verify nowhere at once, it is listed nowhere, the repair unindexes it and deleteApi again finishes it', async () => {
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'doomed' })).body
      .apiId;
    const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId })).body;
    // Cached on the healthy node: only the invalidation can take it out.
    expect(await verify(key)).toBe('VALID');
    expect(await verify(key)).toBe('VALID');
    const before = await listedApis();
    await halted('deleteApi:tombstoned', 'apis.deleteApi', { apiId });
    await eventually(async () => (await verify(key)) === 'NOT_FOUND', {
      what: "the deleted API's key to stop verifying",
      timeoutMs: 1_000,
    });
    expect((await api.get('apis.getApi', { apiId })).status).toBe(404);
    expect((await api.post('keys.createKey', { apiId })).status).toBe(404);
    // Still in the index until the repair: skipped by the listing, counted in its total.
    const during = await listedApis();
    expect(during.ids).toEqual(before.ids.filter((id) => id !== apiId));
    expect(during.total).toBe(before.total);
    await consistent(false);

    expect(await repair()).toBe(1);
    await consistent(true);
    expect((await listedApis()).total).toBe(before.total - 1);
    expect(await auditEntries('apis.deleteApi', apiId)).toBe(1);
    // The purge it never reached is what a second call does.
    expect((await api.post('apis.deleteApi', { apiId })).status).toBe(200);
    expect((await api.post('apis.deleteApi', { apiId })).status).toBe(404);
    expect(await verify(key)).toBe('NOT_FOUND');
    await consistent(true);
    expect(await repair()).toBe(0);
  });
});

describe('permissions and roles', () => {
  const kinds = [
    {
      kind: 'permission',
      names: names.permissionNames,
      record: names.permission,
      pattern: 'keyward:perm:*',
    },
    { kind: 'role', names: names.roleNames, record: names.role, pattern: 'keyward:role:*' },
  ] as const;

  /**
   * The index of names and the records agree: every entry names a record of the workspace that
   * is committed (unless not `exact`: a pending one is a write under way), and every record of
   * the workspace the index does not name is a tombstone (unless not `exact`: a write under way).
   */
  async function rbacConsistent(exact: boolean): Promise<void> {
    const problems: string[] = [];
    for (const { kind, names: index, record: recordName, pattern } of kinds) {
      const entries = await admin.hgetall(index(workspaceId));
      const named = new Set(Object.values(entries));
      for (const [name, id] of Object.entries(entries)) {
        const record = await admin.hgetall(recordName(id));
        if (record.name !== name || record.deletedAt !== undefined) {
          problems.push(`${kind} ${name} → ${id}: no record`);
        } else if (exact && record.pending !== undefined) problems.push(`${kind} ${id}: pending`);
      }
      for (const found of await allKeys(admin, pattern)) {
        const id = /\{([^}]+)\}$/.exec(found)?.[1];
        if (id === undefined) continue;
        const record = await admin.hgetall(found);
        if (record.workspaceId !== workspaceId || named.has(id)) continue;
        // A creation before its claim, and a deletion after its release, are named nowhere.
        if (record.deletedAt === undefined && exact) {
          problems.push(`${kind} ${id}: not named, not deleted`);
        }
      }
    }
    expect(problems).toEqual([]);
  }

  const role = (name: string) => api.get<{ id: string }>('permissions.getRole', { name });
  const roleNames = async () =>
    (await api.get<{ name: string }[]>('permissions.listRoles', {})).body.map((r) => r.name);
  const entries = async (operation: string, targetId: string) =>
    (await api.get<{ entries: unknown[] }>('auditLogs.list', { operation, targetId, limit: '100' }))
      .body.entries.length;

  beforeAll(async () => {
    for (const name of ['docs.read', 'docs.write']) {
      expect((await api.post('permissions.createPermission', { name })).status).toBe(200);
    }
  });

  describe.each(['createRbac:journaled', 'createRbac:prepared'])(
    'a creation killed at %s',
    (point) => {
      test('is found nowhere, listed nowhere, and undone by the repair', async () => {
        const name = `killed ${point}`;
        const before = await roleNames();
        await halted(point, 'permissions.createRole', { name, permissions: ['docs.read'] });
        expect((await role(name)).status).toBe(404);
        expect(await roleNames()).toEqual(before);
        await rbacConsistent(false);

        expect(await repair()).toBe(1);
        await rbacConsistent(true);
        expect(await repair()).toBe(0);
        // Nothing of it is left to refuse the name.
        expect((await api.post('permissions.createRole', { name })).status).toBe(200);
        expect((await role(name)).status).toBe(200);
      });
    },
  );

  test('a creation killed once it claimed its name exists from then on; the repair commits it with its audit entry', async () => {
    const name = 'claimed editor';
    await halted('createRbac:claimed', 'permissions.createRole', {
      name,
      permissions: ['docs.read', 'docs.write'],
    });
    // Past its point of no return: it reads, lists and grants as a role.
    const found = await role(name);
    expect(found.status).toBe(200);
    expect(await roleNames()).toContain(name);
    const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId, roles: [name] }))
      .body;
    const checked = await api.post<{ code: string }>('keys.verifyKey', {
      key,
      authorization: { permissions: 'docs.write' },
    });
    expect(checked.body.code).toBe('VALID');
    // And it holds its name: a second creation is refused.
    expect((await api.post('permissions.createRole', { name })).status).toBe(409);
    expect(await entries('permissions.createRole', found.body.id)).toBe(0);
    await rbacConsistent(false);

    expect(await repair()).toBe(1);
    await rbacConsistent(true);
    expect(await entries('permissions.createRole', found.body.id)).toBe(1);
    expect(await repair()).toBe(0);
  });

  test('a deletion killed after it released the name: no key holds the role from then on, the name is free, the repair tombstones it', async () => {
    const name = 'doomed role';
    const created = await api.post<{ roleId: string }>('permissions.createRole', {
      name,
      permissions: ['docs.write'],
    });
    const roleId = created.body.roleId;
    const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId, roles: [name] }))
      .body;
    const canWrite = async () =>
      (
        await api.post<{ code: string }>('keys.verifyKey', {
          key,
          authorization: { permissions: 'docs.write' },
        })
      ).body.code;
    // Cached on the healthy node: only the invalidation can take it out.
    expect(await canWrite()).toBe('VALID');
    expect(await canWrite()).toBe('VALID');
    await halted('deleteRbac:released', 'permissions.deleteRole', { roleId });
    await eventually(async () => (await canWrite()) === 'INSUFFICIENT_PERMISSIONS', {
      what: 'the deleted role to stop granting',
      timeoutMs: 1_000,
    });
    expect((await api.get('permissions.getRole', { roleId })).status).toBe(404);
    expect(await roleNames()).not.toContain(name);
    await rbacConsistent(false);
    // The name is free at once: a new role takes it.
    const again = await api.post<{ roleId: string }>('permissions.createRole', { name });
    expect(again.status).toBe(200);

    expect(await repair()).toBe(1);
    await rbacConsistent(true);
    expect(await admin.hget(names.role(roleId), 'deletedAt')).not.toBeNull();
    expect(await admin.exists(names.rolePermissions(roleId))).toBe(0);
    expect(await entries('permissions.deleteRole', roleId)).toBe(1);
    expect((await role(name)).body.id).toBe(again.body.roleId);
    expect(await repair()).toBe(0);
  });
});
