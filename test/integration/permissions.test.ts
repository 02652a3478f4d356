import type { Unkey } from '@unkey/api';
import { ok, v1Sdk } from '../support/v1Sdk';
import { RbacStore } from '../../src/store/rbacStore';
import { names } from '../../src/store/names';
import { assertBuilt, runCli } from '../support/cliProcess';
import { eventually, testAudit } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client, type Client, type ErrorBody } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';
import { auditLength } from '../support/auditStreams';

/**
 * Permissions and roles as a catalogue (`permissions.*`), driven by the published v1 SDK
 * (`@unkey/api` 0.38) as an Unkey user's code drives it, and over plain HTTP for what the SDK does
 * not show (statuses, messages, root-key permissions).
 */
let topology: Topology;
let unkey: Unkey;
let api: Client;
let second: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  second = client(topology.nodes[1]!.url, topology.rootKey);
  unkey = v1Sdk(topology.nodes[0]!.url, topology.rootKey);
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

describe('permissions', () => {
  test('create, get, list and delete through the v1 SDK', async () => {
    const { permissionId } = await ok(
      unkey.permissions.createPermission({ name: 'documents.read', description: 'read them' }),
    );
    expect(permissionId).toMatch(/^perm_/);
    const second = await ok(unkey.permissions.createPermission({ name: 'documents.write' }));

    expect(await ok(unkey.permissions.getPermission({ permissionId }))).toEqual({
      id: permissionId,
      name: 'documents.read',
      slug: 'documents.read',
      description: 'read them',
    });
    const listed = await ok(unkey.permissions.listPermissions());
    expect(listed.map((p) => p.name)).toEqual(['documents.read', 'documents.write']);

    expect(await ok(unkey.permissions.deletePermission({ permissionId }))).toEqual({});
    const gone = await unkey.permissions.getPermission({ permissionId });
    expect(gone.error?.code).toBe('NOT_FOUND');
    expect((await ok(unkey.permissions.listPermissions())).map((p) => p.id)).toEqual([
      second.permissionId,
    ]);
    // A name freed by a deletion can be taken again, by a new permission with a new id.
    const again = await ok(unkey.permissions.createPermission({ name: 'documents.read' }));
    expect(again.permissionId).not.toBe(permissionId);
  });

  test('a name is taken once per workspace: 409, and nothing written', async () => {
    await ok(unkey.permissions.createPermission({ name: 'billing.read' }));
    const before = (await ok(unkey.permissions.listPermissions())).length;
    const taken = await api.post('permissions.createPermission', { name: 'billing.read' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({
      error: {
        code: 'CONFLICT',
        message: 'Permission with name "billing.read" already exists in this workspace',
      },
    });
    expect((await ok(unkey.permissions.listPermissions())).length).toBe(before);
    // Another workspace has names of its own.
    const other = await topology.newRootKey();
    const elsewhere = client(topology.nodes[0]!.url, other.key);
    expect(
      (await elsewhere.post('permissions.createPermission', { name: 'billing.read' })).status,
    ).toBe(200);
  });

  test('names follow Unkey v1: 3-256 characters safe in a URL and a query', async () => {
    for (const name of ['ab', 'has space', 'a*b', 'x'.repeat(257)]) {
      const refused = await api.post('permissions.createPermission', { name });
      expect([name, refused.status]).toEqual([name, 400]);
    }
    const slugged = await api.post<{ permissionId: string }>('permissions.createPermission', {
      name: 'reports.export',
      slug: 'reports-export',
      description: '',
    });
    const shown = await api.get('permissions.getPermission', {
      permissionId: slugged.body.permissionId,
    });
    expect(shown.body).toEqual({
      id: slugged.body.permissionId,
      name: 'reports.export',
      slug: 'reports-export',
    });
  });

  test('an unknown id, or one of another workspace, is 404', async () => {
    const { permissionId } = await ok(unkey.permissions.createPermission({ name: 'mine.only' }));
    const other = await topology.newRootKey();
    const elsewhere = client(topology.nodes[0]!.url, other.key);
    expect((await elsewhere.get('permissions.getPermission', { permissionId })).status).toBe(404);
    expect((await elsewhere.post('permissions.deletePermission', { permissionId })).status).toBe(
      404,
    );
    expect((await api.get('permissions.getPermission', { permissionId: 'perm_nope' })).status).toBe(
      404,
    );
    expect((await api.get('permissions.getPermission', { permissionId })).status).toBe(200);
  });
});

describe('roles', () => {
  test('create, get, list and delete through the v1 SDK', async () => {
    const { roleId } = await ok(
      unkey.permissions.createRole({ name: 'Billing Manager', description: 'pays the bills' }),
    );
    expect(roleId).toMatch(/^role_/);
    expect(await ok(unkey.permissions.getRole({ roleId }))).toEqual({
      id: roleId,
      name: 'Billing Manager',
      description: 'pays the bills',
    });
    expect((await ok(unkey.permissions.listRoles())).map((r) => r.id)).toContain(roleId);
    const taken = await api.post('permissions.createRole', { name: 'Billing Manager' });
    expect(taken.status).toBe(409);

    expect(await ok(unkey.permissions.deleteRole({ roleId }))).toEqual({});
    expect((await unkey.permissions.getRole({ roleId })).error?.code).toBe('NOT_FOUND');
    expect((await api.post('permissions.deleteRole', { roleId })).status).toBe(404);
  });
});

test('a permission or role is named by its id or its name, exactly one of them', async () => {
  const { permissionId } = await ok(unkey.permissions.createPermission({ name: 'named.read' }));
  const { roleId } = await ok(unkey.permissions.createRole({ name: 'Named Reader' }));
  expect((await api.get('permissions.getPermission', { name: 'named.read' })).body).toEqual({
    id: permissionId,
    name: 'named.read',
    slug: 'named.read',
  });
  expect((await api.get('permissions.getRole', { name: 'Named Reader' })).body).toEqual({
    id: roleId,
    name: 'Named Reader',
  });

  const both = await api.get('permissions.getPermission', { permissionId, name: 'named.read' });
  expect(both.status).toBe(400);
  expect((both.body as ErrorBody).error.message).toBe(
    'permissionId: give either permissionId or name',
  );
  // Neither: the words the schema used when permissionId alone was required.
  const neither = await api.post('permissions.deleteRole', {});
  expect(neither.status).toBe(400);
  expect((neither.body as ErrorBody).error.message).toBe('roleId: is required');
  const unknown = await api.get('permissions.getRole', { name: 'Nobody' });
  expect(unknown.status).toBe(404);
  expect((unknown.body as ErrorBody).error.message).toBe('role Nobody not found');
  // Another workspace's name is its own.
  const other = await topology.newRootKey();
  const elsewhere = client(topology.nodes[0]!.url, other.key);
  expect(
    (await elsewhere.post('permissions.deletePermission', { name: 'named.read' })).status,
  ).toBe(404);

  expect((await api.post('permissions.deletePermission', { name: 'named.read' })).body).toEqual({});
  expect((await api.post('permissions.deleteRole', { name: 'Named Reader' })).body).toEqual({});
  expect((await api.get('permissions.getPermission', { permissionId })).status).toBe(404);
  expect((await api.get('permissions.getRole', { roleId })).status).toBe(404);
});

describe('root-key permissions', () => {
  test('each call needs its rbac.*.<action>, and an api permission grants none of them', async () => {
    const scoped = async (permissions: string[]) =>
      client(
        topology.nodes[0]!.url,
        (await topology.newRootKey({ workspaceId: topology.workspaceId, permissions })).key,
      );
    const readOnly = await scoped(['rbac.*.read_permission', 'rbac.*.read_role']);
    expect((await readOnly.get('permissions.listPermissions', {})).status).toBe(200);
    expect((await readOnly.get('permissions.listRoles', {})).status).toBe(200);
    const refused = await readOnly.post('permissions.createPermission', { name: 'sneaky.one' });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('rbac.*.create_permission');

    const apiOnly = await scoped(['api.*.create_key', 'api.*.read_key']);
    expect((await apiOnly.get('permissions.listPermissions', {})).status).toBe(403);
    expect((await apiOnly.post('permissions.createRole', { name: 'sneaky role' })).status).toBe(
      403,
    );
  });
});

describe('what keys hold', () => {
  async function newKey() {
    const { apiId } = await ok(unkey.apis.create({ name: `holdings ${Date.now()}` }));
    return ok(unkey.keys.create({ apiId }));
  }
  const verify = (node: Client, key: string, permissions?: unknown) =>
    node.post<{ valid: boolean; code: string; permissions?: string[]; roles?: string[] }>(
      'keys.verifyKey',
      { key, ...(permissions !== undefined ? { authorization: { permissions } } : {}) },
    );

  test('permissions by id or name, created when asked, checked at verification', async () => {
    const { keyId, key } = await newKey();
    const { permissionId } = await ok(unkey.permissions.createPermission({ name: 'orders.read' }));
    const added = await ok(
      unkey.keys.addPermissions({
        keyId,
        permissions: [{ id: permissionId }, { name: 'orders.write', create: true }],
      }),
    );
    expect(added.map((p) => p.name).sort()).toEqual(['orders.read', 'orders.write']);

    const verdict = await ok(
      unkey.keys.verify({
        key,
        authorization: { permissions: { and: ['orders.read', 'orders.write'] } },
      }),
    );
    expect(verdict).toMatchObject({
      valid: true,
      code: 'VALID',
      permissions: ['orders.read', 'orders.write'],
      roles: [],
    });
    expect((await verify(api, key, 'orders.read AND orders.delete')).body.code).toBe(
      'INSUFFICIENT_PERMISSIONS',
    );
    const shown = await api.get('keys.getKey', { keyId });
    expect(shown.body).toMatchObject({ permissions: ['orders.read', 'orders.write'], roles: [] });

    // A name not there and not to be created: 404, and nothing changed.
    const refused = await api.post('keys.addPermissions', {
      keyId,
      permissions: [{ name: 'orders.refund' }],
    });
    expect(refused.status).toBe(404);
    await ok(unkey.keys.removePermissions({ keyId, permissions: [{ name: 'orders.write' }] }));
    expect((await verify(api, key, 'orders.write')).body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await verify(api, key, 'orders.read')).body.code).toBe('VALID');
    const set = await ok(
      unkey.keys.setPermissions({ keyId, permissions: [{ name: 'orders.other', create: true }] }),
    );
    expect(set.map((p) => p.name)).toEqual(['orders.other']);
    expect((await verify(api, key, 'orders.read')).body.code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  test('roles add their permissions; a deleted permission or role is refused on another node', async () => {
    const { keyId, key } = await newKey();
    const { roleId } = await ok(unkey.permissions.createRole({ name: 'support agent' }));
    const { permissionId } = await ok(unkey.permissions.createPermission({ name: 'tickets.read' }));
    await ok(unkey.keys.addRoles({ keyId, roles: [{ id: roleId }] }));
    await ok(unkey.keys.addPermissions({ keyId, permissions: [{ id: permissionId }] }));
    // The other node reads and caches the key first, so it must be told of every change.
    expect((await verify(second, key, 'tickets.read')).body).toMatchObject({
      code: 'VALID',
      roles: ['support agent'],
    });

    await ok(unkey.permissions.deletePermission({ permissionId }));
    await eventually(
      async () =>
        (await verify(second, key, 'tickets.read')).body.code === 'INSUFFICIENT_PERMISSIONS',
      { what: 'a deleted permission refused on the other node', timeoutMs: 1000 },
    );
    await ok(unkey.permissions.deleteRole({ roleId }));
    await eventually(async () => (await verify(second, key)).body.roles?.length === 0, {
      what: 'a deleted role gone on the other node',
      timeoutMs: 1000,
    });
    const set = await ok(
      unkey.keys.setRoles({ keyId, roles: [{ name: 'auditor', create: true }] }),
    );
    expect(set.map((r) => r.name)).toEqual(['auditor']);
    await eventually(async () => (await verify(second, key)).body.roles?.[0] === 'auditor', {
      what: 'a set role seen on the other node',
      timeoutMs: 1000,
    });
  });

  test('creating what is missing needs rbac.*.create_permission, and a refusal writes nothing', async () => {
    const { keyId } = await newKey();
    const adder = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['rbac.*.add_permission_to_key'],
        })
      ).key,
    );
    const before = (await ok(unkey.permissions.listPermissions())).length;
    const refused = await adder.post('keys.addPermissions', {
      keyId,
      permissions: [{ name: 'made.up', create: true }],
    });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('rbac.*.create_permission');
    expect((await ok(unkey.permissions.listPermissions())).length).toBe(before);
    expect((await api.get('keys.getKey', { keyId })).body).not.toHaveProperty('permissions');

    // Taking a permission away by a set needs the removal permission too.
    await ok(
      unkey.keys.addPermissions({ keyId, permissions: [{ name: 'kept.one', create: true }] }),
    );
    await ok(unkey.permissions.createPermission({ name: 'set.away.target' }));
    const setAway = await adder.post('keys.setPermissions', {
      keyId,
      permissions: [{ name: 'set.away.target' }],
    });
    expect(setAway.status).toBe(403);
    expect(JSON.stringify(setAway.body)).toContain('rbac.*.remove_permission_from_key');
    expect((await api.get('keys.getKey', { keyId })).body.permissions).toEqual(['kept.one']);
  });
});

test('a name created through keys.addPermissions or addRoles follows the naming rules; looked up, any name is fine', async () => {
  const { apiId } = await ok(unkey.apis.create({ name: 'link names' }));
  const { keyId } = await ok(unkey.keys.create({ apiId }));
  const before = (await ok(unkey.permissions.listPermissions())).length;
  for (const [operation, body, message] of [
    [
      'keys.addPermissions',
      { permissions: [{ name: 'a b', create: true }] },
      /^permissions\[0\]\.name: may hold only/,
    ],
    [
      'keys.addPermissions',
      { permissions: [{ name: 'x', create: true }] },
      /^permissions\[0\]\.name: must be 3–256/,
    ],
    [
      'keys.addRoles',
      { roles: [{ name: 'ab', create: true }] },
      /^roles\[0\]\.name: must be 3–256/,
    ],
  ] as const) {
    const response = await api.post<ErrorBody>(operation, { keyId, ...body });
    expect([operation, response.status]).toEqual([operation, 400]);
    expect(response.body.error.message).toMatch(message);
  }
  const lookedUp = await api.post<ErrorBody>('keys.addPermissions', {
    keyId,
    permissions: [{ name: 'a b' }],
  });
  expect(lookedUp.status).toBe(404);
  expect((await ok(unkey.permissions.listPermissions())).length).toBe(before);
});

describe('what roles hold', () => {
  test('a role made with permissions gives them to its keys; its view lists them', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'role holdings' }));
    const { keyId, key } = await ok(unkey.keys.create({ apiId }));
    await ok(unkey.permissions.createPermission({ name: 'invoices.read' }));
    const made = await api.post<{ roleId: string }>('permissions.createRole', {
      name: 'accountant',
      permissions: ['invoices.read', 'invoices.write'],
    });
    expect(made.status).toBe(200);
    const { roleId } = made.body;
    expect((await api.get('permissions.getRole', { roleId })).body).toEqual({
      id: roleId,
      name: 'accountant',
      permissions: ['invoices.read', 'invoices.write'],
    });
    await ok(unkey.keys.addRoles({ keyId, roles: [{ name: 'accountant' }] }));
    const verdict = await api.post<{ code: string; permissions: string[] }>('keys.verifyKey', {
      key,
      authorization: { permissions: 'invoices.read AND invoices.write' },
    });
    expect(verdict.body).toMatchObject({
      code: 'VALID',
      permissions: ['invoices.read', 'invoices.write'],
    });
    // Deleting one of its permissions takes it from the role, and from the key, on every node.
    const writeId = (await ok(unkey.permissions.listPermissions())).find(
      (p) => p.name === 'invoices.write',
    )!.id;
    await ok(unkey.permissions.deletePermission({ permissionId: writeId }));
    await eventually(
      async () =>
        (
          await second.post<{ code: string }>('keys.verifyKey', {
            key,
            authorization: { permissions: 'invoices.write' },
          })
        ).body.code === 'INSUFFICIENT_PERMISSIONS',
      { what: 'the role without the deleted permission, on the other node', timeoutMs: 1000 },
    );
    expect((await api.get('permissions.getRole', { roleId })).body.permissions).toEqual([
      'invoices.read',
    ]);
  });

  test('a role created with permissions needs rbac.*.add_permission_to_role, as setRolePermissions does', async () => {
    const roleMaker = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['rbac.*.create_role', 'rbac.*.create_permission'],
        })
      ).key,
    );
    const refused = await roleMaker.post('permissions.createRole', {
      name: 'linker',
      permissions: ['linker.read'],
    });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('rbac.*.add_permission_to_role');
    const bare = await roleMaker.post('permissions.createRole', { name: 'bare linker' });
    expect(bare.status).toBe(200);
  });

  test('a role naming missing permissions needs rbac.*.create_permission; refused, it writes nothing', async () => {
    const roleMaker = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['rbac.*.create_role', 'rbac.*.add_permission_to_role'],
        })
      ).key,
    );
    const before = await ok(unkey.permissions.listRoles());
    const refused = await roleMaker.post('permissions.createRole', {
      name: 'ghost writer',
      permissions: ['ghost.write'],
    });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('rbac.*.create_permission');
    expect(await ok(unkey.permissions.listRoles())).toEqual(before);
    expect((await ok(unkey.permissions.listPermissions())).map((p) => p.name)).not.toContain(
      'ghost.write',
    );
    // Existing ones need no more than create_role.
    await ok(unkey.permissions.createPermission({ name: 'ghost.read' }));
    const allowed = await roleMaker.post('permissions.createRole', {
      name: 'ghost reader',
      permissions: ['ghost.read'],
    });
    expect(allowed.status).toBe(200);
  });
});

describe('permissions.setRolePermissions', () => {
  test('replaces what a role holds, for its keys on every node; [] takes all away', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'set role permissions' }));
    const { keyId, key } = await ok(unkey.keys.create({ apiId }));
    const made = await api.post<{ roleId: string }>('permissions.createRole', {
      name: 'ledger auditor',
      permissions: ['ledger.read'],
    });
    const { roleId } = made.body;
    await ok(unkey.keys.addRoles({ keyId, roles: [{ id: roleId }] }));
    await ok(unkey.permissions.createPermission({ name: 'ledger.export', description: 'exports' }));

    const set = await api.post<{ id: string; name: string }[]>('permissions.setRolePermissions', {
      roleId,
      permissions: ['ledger.export', 'ledger.sign', 'ledger.export'],
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual([
      {
        id: expect.stringMatching(/^perm_/),
        name: 'ledger.export',
        slug: 'ledger.export',
        description: 'exports',
      },
      // Created, as createRole creates a name that is missing.
      { id: expect.stringMatching(/^perm_/), name: 'ledger.sign', slug: 'ledger.sign' },
    ]);
    expect((await api.get('permissions.getRole', { roleId })).body.permissions).toEqual([
      'ledger.export',
      'ledger.sign',
    ]);
    await eventually(
      async () =>
        (
          await second.post<{ code: string }>('keys.verifyKey', {
            key,
            authorization: { permissions: 'ledger.read OR ledger.export' },
          })
        ).body.code === 'VALID' &&
        (
          await second.post<{ code: string }>('keys.verifyKey', {
            key,
            authorization: { permissions: 'ledger.read' },
          })
        ).body.code === 'INSUFFICIENT_PERMISSIONS',
      { what: 'the role’s new permissions, on the other node', timeoutMs: 1000 },
    );

    expect(
      (await api.post('permissions.setRolePermissions', { roleId, permissions: [] })).body,
    ).toEqual([]);
    expect((await api.get('permissions.getRole', { roleId })).body).toEqual({
      id: roleId,
      name: 'ledger auditor',
    });
  });

  test('taking one away needs remove_permission_from_role, creating needs create_permission; refused, nothing is written', async () => {
    const made = await api.post<{ roleId: string }>('permissions.createRole', {
      name: 'signer',
      permissions: ['deeds.sign'],
    });
    const { roleId } = made.body;
    await ok(unkey.permissions.createPermission({ name: 'deeds.read' }));
    const adder = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['rbac.*.add_permission_to_role'],
        })
      ).key,
    );
    const before = await ok(unkey.permissions.listPermissions());
    const removing = await adder.post<ErrorBody>('permissions.setRolePermissions', {
      roleId,
      permissions: ['deeds.read'],
    });
    expect(removing.status).toBe(403);
    expect(removing.body.error.message).toBe(
      'this root key lacks the permission rbac.*.remove_permission_from_role',
    );
    const creating = await adder.post<ErrorBody>('permissions.setRolePermissions', {
      roleId,
      permissions: ['deeds.sign', 'deeds.burn'],
    });
    expect(creating.status).toBe(403);
    expect(creating.body.error.message).toContain('rbac.*.create_permission');
    expect(await ok(unkey.permissions.listPermissions())).toEqual(before);
    expect((await api.get('permissions.getRole', { roleId })).body.permissions).toEqual([
      'deeds.sign',
    ]);
    // Adding to what it holds needs nothing more.
    const adding = await adder.post('permissions.setRolePermissions', {
      roleId,
      permissions: ['deeds.sign', 'deeds.read'],
    });
    expect(adding.status).toBe(200);

    const unknown = await api.post<ErrorBody>('permissions.setRolePermissions', {
      roleId: 'role_1ChFjUG4o6VLuzbLGABNDC',
      permissions: [],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe('role role_1ChFjUG4o6VLuzbLGABNDC not found');
    const readOnly = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['rbac.*.read_role'],
        })
      ).key,
    );
    expect(
      (await readOnly.post('permissions.setRolePermissions', { roleId, permissions: [] })).status,
    ).toBe(403);
  });
});

test('the store leaves no permission set, and no audit entry, under a role that is gone', async () => {
  const redis = await adminRedis(topology.primary.url);
  try {
    const store = new RbacStore(redis, () => undefined);
    const gone = 'role_1ChFjUG4o6VLuzbLGABNDC';
    const entries = () => auditLength(redis, topology.workspaceId);
    const before = await entries();
    expect(
      await store.setRolePermissions(topology.workspaceId, gone, ['perm_x'], testAudit(gone)),
    ).toBe(false);
    expect(await redis.exists(names.rolePermissions(gone))).toBe(0);
    expect(await entries()).toBe(before);
  } finally {
    await closeRedis(redis);
  }
});

describe('createKey and updateKey', () => {
  test('createKey takes permissions and roles by name, creating what is missing', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'born with permissions' }));
    const role = await api.post('permissions.createRole', {
      name: 'born role',
      permissions: ['born.read'],
    });
    expect(role.status).toBe(200);
    const { keyId, key } = await ok(
      unkey.keys.create({ apiId, permissions: ['born.write'], roles: ['born role'] }),
    );
    expect((await api.get('keys.getKey', { keyId })).body).toMatchObject({
      permissions: ['born.write'],
      roles: ['born role'],
    });
    const verdict = await api.post<{ code: string }>('keys.verifyKey', {
      key,
      authorization: { permissions: 'born.read AND born.write' },
    });
    expect(verdict.body.code).toBe('VALID');
  });

  test('a refused createKey writes nothing: no key, no permission', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'refused birth' }));
    const keyMaker = client(
      topology.nodes[0]!.url,
      (
        await topology.newRootKey({
          workspaceId: topology.workspaceId,
          permissions: ['api.*.create_key', 'api.*.read_key'],
        })
      ).key,
    );
    const refused = await keyMaker.post('keys.createKey', { apiId, permissions: ['never.made'] });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('rbac.*.create_permission');
    expect((await api.get('apis.listKeys', { apiId })).body.total).toBe(0);
    expect((await ok(unkey.permissions.listPermissions())).map((p) => p.name)).not.toContain(
      'never.made',
    );
    // An API that is not there: 404 before anything is made.
    const noApi = await api.post('keys.createKey', { apiId: 'api_gone', permissions: ['x.y.z'] });
    expect(noApi.status).toBe(404);
    expect((await ok(unkey.permissions.listPermissions())).map((p) => p.name)).not.toContain(
      'x.y.z',
    );
  });

  test('updateKey replaces what a key holds, seen by another node', async () => {
    const { apiId } = await ok(unkey.apis.create({ name: 'updated holdings' }));
    const { keyId, key } = await ok(unkey.keys.create({ apiId, permissions: ['first.one'] }));
    expect(
      (
        await second.post<{ code: string }>('keys.verifyKey', {
          key,
          authorization: { permissions: 'first.one' },
        })
      ).body.code,
    ).toBe('VALID');
    expect(
      (await api.post('keys.updateKey', { keyId, permissions: ['second.one'], name: 'moved' }))
        .status,
    ).toBe(200);
    const codeOn = async (node: Client, permissions: string) =>
      (
        await node.post<{ code: string }>('keys.verifyKey', {
          key,
          authorization: { permissions },
        })
      ).body.code;
    await eventually(
      async () =>
        (await codeOn(second, 'second.one')) === 'VALID' &&
        (await codeOn(second, 'first.one')) === 'INSUFFICIENT_PERMISSIONS',
      { what: 'the replaced permissions on the other node', timeoutMs: 1000 },
    );
    expect((await api.get('keys.getKey', { keyId })).body).toMatchObject({
      name: 'moved',
      permissions: ['second.one'],
    });
    expect((await api.post('keys.updateKey', { keyId, permissions: [] })).status).toBe(200);
    // A key that holds nothing answers as one that never held anything.
    expect((await api.get('keys.getKey', { keyId })).body).not.toHaveProperty('permissions');
  });
});

test('keyward inspect key shows what a key holds', async () => {
  assertBuilt();
  const { apiId } = await ok(unkey.apis.create({ name: 'inspected holdings' }));
  const { keyId } = await ok(unkey.keys.create({ apiId, permissions: ['cli.read'] }));
  const result = await runCli(
    ['inspect', 'key', '--workspace', topology.workspaceId, keyId, '--json'],
    { KEYWARD_REDIS_URL: topology.primary.url },
  );
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({
    key: { id: keyId, permissions: ['cli.read'], roles: [] },
  });
});
