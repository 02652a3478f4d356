import type { Redis } from 'ioredis';
import { hashKey } from '../../src/keys/keyMaterial';
import { closeRedis } from '../../src/redis/clients';
import { names } from '../../src/store/names';
import { AuditOutbox } from '../../src/store/auditOutbox';
import { AUDIT_SHARDS, auditShard } from '../../src/store/auditLog';
import { AuditSweeper } from '../../src/store/auditSweeper';
import { KeyRepair } from '../../src/store/keyRepair';
import { KeyStore } from '../../src/store/keyStore';
import { adminRedis } from '../support/keyspace';
import { client, type Client, type RpcResponse } from '../support/rpc';
import { startProcessTopology, startTopology, type Topology } from '../support/topology';
import { auditLength, auditRaw } from '../support/auditStreams';

/**
 * The audit log (issue 16): every management write appends one entry to its workspace's stream
 * in the same script or MULTI as the write; a refused write appends none; auditLogs.list reads it.
 * Credit changes and root keys, in other slots, go through an outbox: auditOutbox.test.ts.
 */
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

interface Entry {
  id: string;
  time: number;
  rootKeyId: string;
  operation: string;
  requestId: string;
  target: { type: string; id: string };
  summary: Record<string, unknown>;
}

/** A workspace of its own, its root key's id and a client. */
async function workspace(permissions?: string[]) {
  const root = await topology.newRootKey(permissions ? { permissions } : {});
  const rootKeyId = (await primary.hget(names.rootKey(hashKey(root.key)), 'id')) as string;
  return {
    ...root,
    rootKeyId,
    api: client(topology.nodes[0]!.url, root.key),
    length: () => auditLength(primary, root.workspaceId),
  };
}

async function entries(api: Client, query: Record<string, string> = {}): Promise<Entry[]> {
  const page = await api.get<{ entries: Entry[] }>('auditLogs.list', { limit: '100', ...query });
  expect(page.status).toBe(200);
  return page.body.entries;
}

/** Runs a write that must succeed and returns the one entry it appended. */
async function audited(
  ws: Awaited<ReturnType<typeof workspace>>,
  write: () => Promise<RpcResponse>,
): Promise<{ entry: Entry; response: RpcResponse }> {
  const before = await ws.length();
  const started = Date.now();
  const response = await write();
  expect(response.status).toBe(200);
  expect(await ws.length()).toBe(before + 1);
  const [entry] = await entries(ws.api, { limit: '1' });
  expect(entry!.rootKeyId).toBe(ws.rootKeyId);
  expect(entry!.requestId).toBe(response.headers.get('x-request-id'));
  expect(entry!.time).toBeGreaterThanOrEqual(started - 1000);
  expect(entry!.time).toBeLessThanOrEqual(Date.now() + 1000);
  return { entry: entry!, response };
}

test('every key, API and identity write leaves exactly one entry: who, what, target, request id, time', async () => {
  const ws = await workspace();
  const { api } = ws;
  const created = await audited(ws, () => api.post('apis.createApi', { name: 'audited' }));
  const apiId = created.response.body.apiId as string;
  expect(created.entry).toMatchObject({
    operation: 'apis.createApi',
    target: { type: 'api', id: apiId },
    summary: { name: 'audited' },
  });

  const key = await audited(ws, () =>
    api.post('keys.createKey', { apiId, name: 'k', meta: { plan: 'secret-plan' } }),
  );
  const keyId = key.response.body.keyId as string;
  const plaintext = key.response.body.key as string;
  expect(key.entry).toMatchObject({
    operation: 'keys.createKey',
    target: { type: 'key', id: keyId },
    summary: { apiId, fields: ['meta', 'name'] },
  });

  const steps: [string, () => Promise<RpcResponse>, Partial<Entry>][] = [
    [
      'keys.updateKey',
      () => api.post('keys.updateKey', { keyId, name: 'renamed', enabled: false }),
      { target: { type: 'key', id: keyId }, summary: { apiId, fields: ['enabled', 'name'] } },
    ],
    [
      'keys.updateRemaining',
      () => api.post('keys.updateRemaining', { keyId, op: 'set', value: 5 }),
      { target: { type: 'key', id: keyId }, summary: { op: 'set', value: 5 } },
    ],
    [
      'identities.createIdentity',
      () => api.post('identities.createIdentity', { externalId: 'user_audit', meta: { a: 1 } }),
      {
        target: { type: 'identity', id: expect.any(String) },
        summary: { externalId: 'user_audit', fields: ['meta'] },
      },
    ],
    [
      'identities.updateIdentity',
      () => api.post('identities.updateIdentity', { externalId: 'user_audit', meta: { a: 2 } }),
      { summary: { externalId: 'user_audit', fields: ['meta'] } },
    ],
    [
      'identities.deleteIdentity',
      () => api.post('identities.deleteIdentity', { externalId: 'user_audit' }),
      { summary: { externalId: 'user_audit' } },
    ],
  ];
  for (const [operation, write, expected] of steps) {
    const { entry } = await audited(ws, write);
    expect(entry).toMatchObject({ operation, ...expected });
  }

  const rerolled = await audited(ws, () => api.post('keys.rerollKey', { keyId, expiration: 0 }));
  expect(rerolled.entry).toMatchObject({
    operation: 'keys.rerollKey',
    target: { type: 'key', id: keyId },
    summary: { apiId, newKeyId: rerolled.response.body.keyId },
  });
  const newKey = rerolled.response.body.key as string;
  const deleted = await audited(ws, () => api.post('keys.deleteKey', { keyId }));
  expect(deleted.entry).toMatchObject({ operation: 'keys.deleteKey', target: { id: keyId } });

  // An import: one entry per key, in one step with the keys.
  const before = await ws.length();
  const imported = await api.post('migrations.createKeys', [
    { apiId, plaintext: 'sk_imported_audit_1' },
    { apiId, plaintext: 'sk_imported_audit_2' },
  ]);
  expect(imported.status).toBe(200);
  expect(await ws.length()).toBe(before + 2);
  const importedIds = (imported.body as unknown as { keyIds: string[] }).keyIds;
  expect(
    (await entries(api, { operation: 'migrations.createKeys' })).map((e) => e.target.id).sort(),
  ).toEqual([...importedIds].sort());

  // A key created with an externalId makes its identity: two entries, the identity's first.
  const owned = await api.post('keys.createKey', { apiId, externalId: 'user_owner' });
  const [keyEntry, identityEntry] = await entries(api, { limit: '2' });
  expect(keyEntry).toMatchObject({ operation: 'keys.createKey', target: { id: owned.body.keyId } });
  expect(identityEntry).toMatchObject({
    operation: 'keys.createKey',
    target: { type: 'identity' },
    summary: { externalId: 'user_owner' },
  });

  // deleteApi: the API's entry, then one per key it purges.
  const left = await ws.length();
  expect((await api.post('apis.deleteApi', { apiId })).status).toBe(200);
  // Four keys are left: the rerolled one, two imported and the owned one.
  const purge = await entries(api, { limit: '5' });
  expect(await ws.length()).toBe(left + 1 + 4);
  expect(purge.every((e) => e.operation === 'apis.deleteApi')).toBe(true);
  expect(purge[4]!.target).toEqual({ type: 'api', id: apiId });

  // No secret anywhere in the stream: neither key's plaintext nor its hash, nor the root key's.
  const raw = JSON.stringify(await auditRaw(primary, ws.workspaceId));
  for (const secret of [plaintext, newKey, ws.key, 'sk_imported_audit_1']) {
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(hashKey(secret));
  }
  expect(raw).not.toContain('secret-plan');
});

test('a refused write (400, 403, 404, 409) leaves no entry', async () => {
  const ws = await workspace();
  const { api } = ws;
  const apiId = (await api.post('apis.createApi', { name: 'refusals' })).body.apiId as string;
  const keyId = (await api.post('keys.createKey', { apiId })).body.keyId as string;
  expect((await api.post('identities.createIdentity', { externalId: 'taken' })).status).toBe(200);
  const narrow = client(
    topology.nodes[0]!.url,
    (await topology.newRootKey({ workspaceId: ws.workspaceId, permissions: ['api.*.read_key'] }))
      .key,
  );
  const before = await ws.length();
  const refused: [number, Promise<RpcResponse>][] = [
    [400, api.post('keys.createKey', { apiId, byteLength: 1 })],
    [400, api.post('keys.updateKey', { keyId, meta: 'not an object' })],
    [403, narrow.post('keys.deleteKey', { keyId })],
    [403, narrow.post('apis.createApi', { name: 'no' })],
    [404, api.post('keys.deleteKey', { keyId: 'key_1ChFjUG4o6VLuzbLGABNDC' })],
    [404, api.post('keys.createKey', { apiId: 'api_1ChFjUFmm4aKezRcXb7fjz' })],
    [404, api.post('apis.deleteApi', { apiId: 'api_1ChFjUFmm4aKezRcXb7fjz' })],
    [404, api.post('identities.updateIdentity', { externalId: 'nobody', meta: {} })],
    [409, api.post('identities.createIdentity', { externalId: 'taken' })],
    [
      409,
      api.post('migrations.createKeys', [
        { apiId, plaintext: 'sk_dup' },
        { apiId, plaintext: 'sk_dup' },
      ]),
    ],
  ];
  for (const [status, call] of refused) expect((await call).status).toBe(status);
  expect(await ws.length()).toBe(before);
});

test('every permission, role, key-link and override write leaves exactly one entry', async () => {
  const ws = await workspace();
  const { api } = ws;
  const apiId = (await api.post('apis.createApi', { name: 'rbac' })).body.apiId as string;
  const keyId = (await api.post('keys.createKey', { apiId })).body.keyId as string;

  const permission = await audited(ws, () =>
    api.post('permissions.createPermission', { name: 'docs.read' }),
  );
  const permissionId = permission.response.body.permissionId as string;
  expect(permission.entry).toMatchObject({
    operation: 'permissions.createPermission',
    target: { type: 'permission', id: permissionId },
    summary: { name: 'docs.read', slug: 'docs.read' },
  });
  const role = await audited(ws, () =>
    api.post('permissions.createRole', { name: 'reader', permissions: ['docs.read'] }),
  );
  const roleId = role.response.body.roleId as string;
  expect(role.entry).toMatchObject({
    operation: 'permissions.createRole',
    target: { type: 'role', id: roleId },
    summary: { name: 'reader', permissionIds: [permissionId] },
  });
  const set = await audited(ws, () =>
    api.post('permissions.setRolePermissions', { roleId, permissions: [] }),
  );
  expect(set.entry).toMatchObject({
    operation: 'permissions.setRolePermissions',
    target: { type: 'role', id: roleId },
    summary: { name: 'reader', permissionIds: [] },
  });

  const byId = [{ id: permissionId }];
  const links: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['keys.addPermissions', { permissions: byId }, { permissionIds: [permissionId] }],
    ['keys.removePermissions', { permissions: byId }, { permissionIds: [permissionId] }],
    ['keys.setPermissions', { permissions: byId }, { permissionIds: [permissionId] }],
    ['keys.addRoles', { roles: [{ id: roleId }] }, { roleIds: [roleId] }],
    ['keys.removeRoles', { roles: [{ id: roleId }] }, { roleIds: [roleId] }],
    ['keys.setRoles', { roles: [{ id: roleId }] }, { roleIds: [roleId] }],
  ];
  for (const [operation, body, summary] of links) {
    const { entry } = await audited(ws, () => api.post(operation, { keyId, ...body }));
    expect(entry).toMatchObject({
      operation,
      target: { type: 'key', id: keyId },
      summary: { apiId, ...summary },
    });
  }

  const override = { namespaceName: 'email', identifier: 'user_*', limit: 5, duration: 60000 };
  const setOverride = await audited(ws, () => api.post('ratelimits.setOverride', override));
  expect(setOverride.entry).toMatchObject({
    operation: 'ratelimits.setOverride',
    target: { type: 'namespace', id: expect.any(String) },
    summary: { namespace: 'email', identifier: 'user_*', limit: 5, duration: 60000 },
  });
  // Replacing it is a write of its own, on the same target.
  const replaced = await audited(ws, () =>
    api.post('ratelimits.setOverride', { ...override, limit: 6 }),
  );
  expect(replaced.entry.target).toEqual(setOverride.entry.target);
  const deleted = await audited(ws, () =>
    api.post('ratelimits.deleteOverride', { namespaceName: 'email', identifier: 'user_*' }),
  );
  expect(deleted.entry).toMatchObject({
    operation: 'ratelimits.deleteOverride',
    target: setOverride.entry.target,
    summary: { namespace: 'email', identifier: 'user_*' },
  });

  const deleteRole = await audited(ws, () => api.post('permissions.deleteRole', { roleId }));
  expect(deleteRole.entry).toMatchObject({
    operation: 'permissions.deleteRole',
    target: { type: 'role', id: roleId },
  });
  const deletePermission = await audited(ws, () =>
    api.post('permissions.deletePermission', { name: 'docs.read' }),
  );
  expect(deletePermission.entry).toMatchObject({
    operation: 'permissions.deletePermission',
    target: { type: 'permission', id: permissionId },
    summary: { name: 'docs.read' },
  });
});

test('permissions and roles a key write creates get their own entries; the key entry names what it holds', async () => {
  const ws = await workspace();
  const { api } = ws;
  const apiId = (await api.post('apis.createApi', { name: 'born' })).body.apiId as string;
  const before = await ws.length();
  const created = await api.post('keys.createKey', {
    apiId,
    permissions: ['born.read'],
    roles: ['born role'],
  });
  expect(created.status).toBe(200);
  const keyId = created.body.keyId as string;
  // The permission and the role it made, then the key.
  expect(await ws.length()).toBe(before + 3);
  const [key, ...made] = await entries(api, { limit: '3' });
  expect(made.map((e) => [e.operation, e.target.type, e.summary.name]).sort()).toEqual([
    ['keys.createKey', 'permission', 'born.read'],
    ['keys.createKey', 'role', 'born role'],
  ]);
  const ids = Object.fromEntries(made.map((e) => [e.target.type, e.target.id]));
  expect(key).toMatchObject({
    operation: 'keys.createKey',
    target: { type: 'key', id: keyId },
    summary: { apiId, permissionIds: [ids.permission], roleIds: [ids.role] },
  });

  // updateKey with permissions: a permission it makes, the key's links, then its record.
  const update = await api.post('keys.updateKey', { keyId, permissions: ['born.write'] });
  expect(update.status).toBe(200);
  const [record, link, permission] = await entries(api, { limit: '3' });
  expect(permission).toMatchObject({
    operation: 'keys.updateKey',
    target: { type: 'permission' },
    summary: { name: 'born.write' },
  });
  expect(link).toMatchObject({
    operation: 'keys.updateKey',
    target: { type: 'key', id: keyId },
    summary: { permissionIds: [permission!.target.id] },
  });
  expect(record).toMatchObject({
    operation: 'keys.updateKey',
    target: { type: 'key', id: keyId },
    summary: { fields: ['permissions'] },
  });
  expect(await ws.length()).toBe(before + 6);
});

test('a refused permission, role, key-link or override write leaves no entry', async () => {
  const ws = await workspace();
  const { api } = ws;
  const apiId = (await api.post('apis.createApi', { name: 'refused rbac' })).body.apiId as string;
  const keyId = (await api.post('keys.createKey', { apiId })).body.keyId as string;
  expect((await api.post('permissions.createPermission', { name: 'taken' })).status).toBe(200);
  const roleId = (await api.post('permissions.createRole', { name: 'held' })).body.roleId as string;
  const override = { namespaceName: 'ns', identifier: 'a', limit: 1, duration: 1000 };
  expect((await api.post('ratelimits.setOverride', override)).status).toBe(200);
  const narrow = client(
    topology.nodes[0]!.url,
    (await topology.newRootKey({ workspaceId: ws.workspaceId, permissions: ['api.*.read_key'] }))
      .key,
  );
  const gone = 'role_1ChFjUG4o6VLuzbLGABNDC';
  const before = await ws.length();
  const refused: [number, Promise<RpcResponse>][] = [
    [400, api.post('permissions.createPermission', { name: '' })],
    [403, narrow.post('permissions.createPermission', { name: 'nope' })],
    [403, narrow.post('permissions.deleteRole', { roleId })],
    [403, narrow.post('ratelimits.setOverride', override)],
    [404, api.post('permissions.deletePermission', { name: 'nobody' })],
    [404, api.post('permissions.deleteRole', { roleId: gone })],
    [404, api.post('permissions.setRolePermissions', { roleId: gone, permissions: [] })],
    [404, api.post('keys.addPermissions', { keyId, permissions: [{ name: 'missing' }] })],
    [404, api.post('keys.setRoles', { keyId, roles: [{ id: gone }] })],
    [404, api.post('ratelimits.deleteOverride', { namespaceName: 'ns', identifier: 'b' })],
    [409, api.post('permissions.createPermission', { name: 'taken' })],
    [409, api.post('permissions.createRole', { name: 'held' })],
  ];
  for (const [status, call] of refused) expect((await call).status).toBe(status);
  expect(await ws.length()).toBe(before);
});

test('auditLogs.list: newest first, cursor paging, filters by target and operation; needs audit.*.read', async () => {
  const ws = await workspace();
  const { api } = ws;
  const apiId = (await api.post('apis.createApi', { name: 'paging' })).body.apiId as string;
  const keyIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    keyIds.push((await api.post('keys.createKey', { apiId })).body.keyId as string);
  }
  await api.post('keys.updateKey', { keyId: keyIds[0], name: 'first' });

  const all = await entries(api);
  // The workspace was born with its root key: the operator's entry comes first.
  expect(all.map((e) => e.operation)).toEqual([
    'keys.updateKey',
    ...Array(5).fill('keys.createKey'),
    'apis.createApi',
    'rootKeys.createRootKey',
  ]);
  const ids = all.map((e) => e.id);
  expect([...ids].sort().reverse()).toEqual(ids);

  // Pages of 3: 3, 3, 2, then no cursor.
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 3; page++) {
    const response = await api.get<{ entries: Entry[]; cursor?: string }>('auditLogs.list', {
      limit: '3',
      ...(cursor ? { cursor } : {}),
    });
    seen.push(...response.body.entries.map((e) => e.id));
    cursor = response.body.cursor;
  }
  expect(seen).toEqual(ids);
  expect(cursor).toBeUndefined();

  expect((await entries(api, { targetId: keyIds[0]! })).map((e) => e.operation)).toEqual([
    'keys.updateKey',
    'keys.createKey',
  ]);
  expect(await entries(api, { operation: 'apis.createApi' })).toHaveLength(1);
  expect(await entries(api, { operation: 'keys.deleteKey' })).toEqual([]);

  // Another workspace's log is its own: its root key's creation, nothing of this one's.
  const other = await workspace();
  expect((await entries(other.api)).map((e) => [e.operation, e.target.id])).toEqual([
    ['rootKeys.createRootKey', other.rootKeyId],
  ]);

  const noRead = await topology.newRootKey({
    workspaceId: ws.workspaceId,
    permissions: ['api.*.read_key'],
  });
  const refused = await client(topology.nodes[0]!.url, noRead.key).get('auditLogs.list', {});
  expect(refused.status).toBe(403);
  const reader = await topology.newRootKey({
    workspaceId: ws.workspaceId,
    permissions: ['audit.*.read'],
  });
  const read = await client(topology.nodes[0]!.url, reader.key).get<{ entries: Entry[] }>(
    'auditLogs.list',
    { limit: '1' },
  );
  expect(read.status).toBe(200);
  expect(read.body.entries).toHaveLength(1);
  expect((await api.get('auditLogs.list', { cursor: 'nope' })).status).toBe(400);
});

test('the log keeps at most KEYWARD_AUDIT_MAX_ENTRIES entries: a sixteenth in each shard', async () => {
  // 16: each shard keeps its newest entry only. A relay that timed out on a busy machine would
  // be the sweep's, later and out of order, so the node waits for Redis as long as it takes.
  const node = await topology.addNode({
    env: { KEYWARD_AUDIT_MAX_ENTRIES: '16', KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000' },
  });
  const root = await topology.newRootKey();
  const api = client(node.url, root.key);
  // The root key's own creation has an entry already, in the shard its id picks.
  const taken = new Set<number>();
  for (let shard = 0; shard < AUDIT_SHARDS; shard++) {
    if ((await primary.xlen(names.auditShard(root.workspaceId, shard))) > 0) taken.add(shard);
  }
  expect(taken.size).toBe(1);
  const newestByShard = new Map<number, string>();
  for (let i = 0; i < 24; i++) {
    const created = await api.post<{ permissionId: string }>('permissions.createPermission', {
      name: `capped-${i}`,
    });
    expect(created.status).toBe(200);
    newestByShard.set(auditShard(created.body.permissionId), `capped-${i}`);
  }
  for (let shard = 0; shard < AUDIT_SHARDS; shard++) {
    expect(await primary.xlen(names.auditShard(root.workspaceId, shard))).toBe(
      newestByShard.has(shard) || taken.has(shard) ? 1 : 0,
    );
  }
  const kept = (await entries(api)).filter((e) => e.operation === 'permissions.createPermission');
  expect(kept.map((e) => e.summary.name).sort()).toEqual([...newestByShard.values()].sort());
});

test('a node killed amid writes leaves every written key with its entry, and every entry with its key', async () => {
  const processes = await startProcessTopology({ nodes: 1, localRedis: false });
  const admin = await adminRedis(processes.primary.url);
  try {
    const node = processes.nodes[0]!;
    const api = client(node.url, processes.rootKey);
    const apiId = (await api.post('apis.createApi', { name: 'killed' })).body.apiId as string;
    // Four writers in a tight loop; SIGKILL lands amid their writes.
    let stop = false;
    const writer = async () => {
      while (!stop) {
        try {
          const created = await api.post('keys.createKey', { apiId });
          if (created.status === 200) {
            await api.post('keys.updateKey', { keyId: created.body.keyId, name: 'x' });
          }
        } catch {
          return;
        }
      }
    };
    const writers = Promise.all([writer(), writer(), writer(), writer()]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await node.stop('SIGKILL');
    stop = true;
    await writers;

    const ws = processes.workspaceId;
    // What the killed node left half done: creations undone or finished, entries relayed, as any
    // node's repair and audit sweep do.
    const keys = new KeyStore(admin, () => undefined);
    await new KeyRepair(admin, keys, { intervalMs: 60_000, staleAfterMs: 0 }).sweep();
    await new AuditSweeper(new AuditOutbox(admin), { intervalMs: 60_000, graceMs: 60_000 }).sweep();
    const keyIds = (await keys.list(ws, apiId, { limit: 1000 })).keys.map((key) => key.id);
    expect(keyIds.length).toBeGreaterThan(0);
    const stream = await auditRaw(admin, ws);
    const byKey = new Map<string, string[]>();
    for (const [, values] of stream) {
      const fields = Object.fromEntries(
        Array.from({ length: values.length / 2 }, (_, i) => [values[2 * i], values[2 * i + 1]]),
      );
      if (fields.targetType !== 'key') continue;
      byKey.set(fields.targetId!, [...(byKey.get(fields.targetId!) ?? []), fields.operation!]);
    }
    for (const keyId of keyIds) {
      const record = await admin.hgetall(names.key(keyId));
      const operations = byKey.get(keyId) ?? [];
      // One creation entry per key, and one update entry per update the record shows.
      expect(operations.filter((op) => op === 'keys.createKey')).toHaveLength(1);
      expect(operations.filter((op) => op === 'keys.updateKey')).toHaveLength(
        Number(record.version) - 1,
      );
    }
    expect([...byKey.keys()].sort()).toEqual([...keyIds].sort());
  } finally {
    await closeRedis(admin);
    await processes.stop();
  }
});
