import { Unkey } from '@unkey/api';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Permissions and roles as a catalogue (`permissions.*`), driven by the published v1 SDK
 * (`@unkey/api` 0.38) as an Unkey user's code drives it, and over plain HTTP for what the SDK does
 * not show (statuses, messages, root-key permissions).
 */
let topology: Topology;
let unkey: Unkey;
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  unkey = new Unkey({
    baseUrl: topology.nodes[0]!.url,
    rootKey: topology.rootKey,
    retry: { attempts: 0, backoff: () => 0 },
  });
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

/** The result of an SDK call that must succeed. */
async function ok<R>(call: Promise<{ result?: R; error?: { code: string; message: string } }>) {
  const response = await call;
  if (response.error) throw new Error(`${response.error.code}: ${response.error.message}`);
  return response.result as R;
}

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
