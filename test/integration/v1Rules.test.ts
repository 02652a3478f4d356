import type { Unkey } from '@unkey/api';
import { Unkey as UnkeyV2 } from 'unkey-api-v2';
import { ok, v1Sdk } from '../support/v1Sdk';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Unkey v1's rules to the field (issue 23, section 2, "v1"): each as Unkey's own v1 route and its
 * tests have it, driven through the published v1 SDK (`@unkey/api` 0.38) where it has the call,
 * and over plain HTTP for what it does not show.
 */
let topology: Topology;
let unkey: Unkey;
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  unkey = v1Sdk(topology.nodes[0]!.url, topology.rootKey);
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

async function newApi(name: string): Promise<string> {
  return (await ok(unkey.apis.create({ name }))).apiId;
}

describe('keys.createKey', () => {
  test('takes permission and role names of 1-512 characters of any kind, as Unkey v1', async () => {
    const apiId = await newApi('short names');
    const long = 'p'.repeat(512);
    const { keyId } = await ok(
      unkey.keys.create({ apiId, permissions: ['a', 'has space', long], roles: ['r', 'é role'] }),
    );
    const view = (
      await api.get<{ permissions: string[]; roles: string[] }>('keys.getKey', { keyId })
    ).body;
    expect(view.permissions).toEqual(['a', 'has space', long].sort());
    expect(view.roles).toEqual(['r', 'é role'].sort());
    // Outside 1-512: 400 naming the field, and nothing made.
    for (const permissions of [[''], ['q'.repeat(513)]]) {
      const refused = await api.post('keys.createKey', { apiId, permissions });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('permissions[0]');
    }
    const roleRefused = await api.post('keys.createKey', { apiId, roles: [''] });
    expect(roleRefused.status).toBe(400);
    expect((await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total).toBe(1);
  });
});

describe('keys.setPermissions and keys.setRoles', () => {
  test('judge the body before they look the key up: a bad body naming no key is 400, not 404', async () => {
    for (const [operation, kind] of [
      ['keys.setPermissions', 'permissions'],
      ['keys.setRoles', 'roles'],
    ] as const) {
      // Unkey v1's "empty permissions" / "empty roles" (its error tests): at least one item.
      const empty = await api.post<{ error: { code: string; message: string } }>(operation, {
        keyId: 'key_123',
        [kind]: [],
      });
      expect(empty.status).toBe(400);
      expect(empty.body.error.code).toBe('BAD_REQUEST');
      expect(empty.body.error.message).toContain(kind);
      for (const body of [
        { keyId: '', [kind]: [{ id: 'perm_123' }] },
        { keyId: 'key_123', [kind]: [{ id: 5 }] },
        { keyId: 'key_123', [kind]: 'all' },
      ]) {
        expect((await api.post(operation, body)).status).toBe(400);
      }
      // A good body naming no key is the 404.
      expect(
        (await api.post(operation, { keyId: 'key_123', [kind]: [{ name: 'x' }] })).status,
      ).toBe(404);
    }
    // Through the SDK, as a v1 user meets it.
    const viaSdk = await unkey.keys.setPermissions({ keyId: 'key_123', permissions: [] });
    expect(viaSdk.error?.code).toBe('BAD_REQUEST');
  });
});

describe('identities.updateIdentity', () => {
  test('naming one rate limit twice is 409 CONFLICT in Unkey v1’s words, and nothing changes', async () => {
    const externalId = `twice_${Date.now()}`;
    const { identityId } = await ok(unkey.identities.create({ externalId }));
    const tokens = { name: 'tokens', limit: 10, duration: 60_000 };
    const { error } = await unkey.identities.update({
      identityId,
      ratelimits: [tokens, { ...tokens, limit: 5 }],
    });
    expect(error?.code).toBe('CONFLICT');
    expect(error?.message).toBe('Ratelimit with name "tokens" is already defined in the request');
    const raw = await api.post('identities.updateIdentity', {
      externalId,
      ratelimits: [tokens, tokens],
    });
    expect(raw.status).toBe(409);
    expect((await ok(unkey.identities.get({ identityId }))).ratelimits).toEqual([]);
    // Named once each, it is written.
    await ok(unkey.identities.update({ identityId, ratelimits: [tokens] }));
    expect((await ok(unkey.identities.get({ identityId }))).ratelimits).toMatchObject([tokens]);
  });
});

describe('identities.listIdentities', () => {
  test('lists one environment, `default` unless named, with identity.<environment>.read_identity', async () => {
    const other = await topology.newRootKey();
    const admin = v1Sdk(topology.nodes[0]!.url, other.key);
    for (const externalId of ['env_a', 'env_b', 'env_c']) {
      await ok(admin.identities.create({ externalId }));
    }
    const all = await ok(admin.identities.list({}));
    expect(all.identities.map((i) => i.externalId)).toEqual(['env_a', 'env_b', 'env_c']);
    expect(all.total).toBe(3);
    expect(await ok(admin.identities.list({ environment: 'default' }))).toEqual(all);
    // Every identity is made in `default` (as Unkey v1's createIdentity does): another holds none.
    expect(await ok(admin.identities.list({ environment: 'staging' }))).toEqual({
      identities: [],
      total: 0,
    });

    const scoped = async (permissions: string[]) =>
      v1Sdk(
        topology.nodes[0]!.url,
        (await topology.newRootKey({ workspaceId: other.workspaceId, permissions })).key,
      );
    const defaultReader = await scoped(['identity.default.read_identity']);
    expect((await ok(defaultReader.identities.list({}))).total).toBe(3);
    const stagingReader = await scoped(['identity.staging.read_identity']);
    expect((await ok(stagingReader.identities.list({ environment: 'staging' }))).total).toBe(0);
    const refused = await stagingReader.identities.list({});
    expect(refused.error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(refused.error?.message).toContain('identity.default.read_identity');
    // identity.*.read_identity reads every environment.
    const wildcard = await scoped(['identity.*.read_identity']);
    expect((await ok(wildcard.identities.list({ environment: 'staging' }))).total).toBe(0);
    expect((await ok(wildcard.identities.list({}))).total).toBe(3);
  });
});

describe('apis.listKeys', () => {
  test('each key answers its roles and its permissions, its roles’ included (v1 and v2)', async () => {
    const apiId = await newApi('listed holdings');
    expect(
      (await api.post('permissions.createRole', { name: 'lister', permissions: ['list.read'] }))
        .status,
    ).toBe(200);
    const holder = await ok(
      unkey.keys.create({ apiId, permissions: ['list.write'], roles: ['lister'] }),
    );
    const plain = await ok(unkey.keys.create({ apiId }));
    const roleOnly = await ok(unkey.keys.create({ apiId, roles: ['lister'] }));

    // v1, through the SDK: permissions are the key's own and its roles', as Unkey v1 lists them.
    const listed = await ok(unkey.apis.listKeys({ apiId }));
    const byId = new Map(listed.keys.map((key) => [key.id, key]));
    expect(byId.get(holder.keyId)).toMatchObject({
      permissions: ['list.read', 'list.write'],
      roles: ['lister'],
    });
    expect(byId.get(roleOnly.keyId)).toMatchObject({
      permissions: ['list.read'],
      roles: ['lister'],
    });
    // A key that holds nothing answers neither list (v2 omits empty ones; v1's are optional).
    expect(byId.get(plain.keyId)).not.toHaveProperty('permissions');
    expect(byId.get(plain.keyId)).not.toHaveProperty('roles');
    // getKey shows the key's own permissions, as Unkey v1's getKey does.
    expect((await ok(unkey.keys.get({ keyId: holder.keyId }))).permissions).toEqual(['list.write']);

    // v2, through its published client.
    const v2 = new UnkeyV2({ rootKey: topology.rootKey, serverURL: topology.nodes[0]!.url });
    const page = await v2.apis.listKeys({ apiId });
    const v2ById = new Map(page.result.data.map((key) => [key.keyId, key]));
    expect(v2ById.get(holder.keyId)).toMatchObject({
      permissions: ['list.read', 'list.write'],
      roles: ['lister'],
    });
    expect(v2ById.get(plain.keyId)).not.toHaveProperty('permissions');
  });
});

describe('keys.updateKey', () => {
  test('takes roles and permissions as [{id} | {name, create?}] and replaces what the key holds', async () => {
    const apiId = await newApi('updated refs');
    const { permissionId: readId } = await ok(
      unkey.permissions.createPermission({ name: 'upd.read' }),
    );
    const { roleId } = await ok(unkey.permissions.createRole({ name: 'upd role' }));
    const { keyId } = await ok(
      unkey.keys.create({ apiId, permissions: ['upd.old'], roles: ['upd old role'] }),
    );
    await ok(
      unkey.keys.update({
        keyId,
        permissions: [{ id: readId }, { name: 'upd.made', create: true }],
        roles: [{ id: roleId }],
      }),
    );
    const held = await ok(unkey.keys.get({ keyId }));
    expect(held.permissions).toEqual(['upd.made', 'upd.read']);
    expect(held.roles).toEqual(['upd role']);
    // By name without create: it must exist (404, nothing changed); [] takes all away.
    const missing = await unkey.keys.update({ keyId, permissions: [{ name: 'upd.nowhere' }] });
    expect(missing.error?.code).toBe('NOT_FOUND');
    expect((await ok(unkey.keys.get({ keyId }))).permissions).toEqual(['upd.made', 'upd.read']);
    await ok(unkey.keys.update({ keyId, roles: [], permissions: [{ name: 'upd.read' }] }));
    const after = await ok(unkey.keys.get({ keyId }));
    expect(after.permissions).toEqual(['upd.read']);
    expect(after.roles ?? []).toEqual([]);
    // An unknown id is 404; a ref naming neither id nor name is 400 before the key is looked up.
    expect((await api.post('keys.updateKey', { keyId, roles: [{ id: 'role_nope' }] })).status).toBe(
      404,
    );
    const neither = await api.post<{ error: { message: string } }>('keys.updateKey', {
      keyId: 'key_unknown',
      permissions: [{ create: true }],
    });
    expect(neither.status).toBe(400);
    expect(neither.body.error.message).toBe('permissions[0]: give either id or name');
    const badName = await api.post<{ error: { message: string } }>('keys.updateKey', {
      keyId,
      permissions: [{ name: '' }],
    });
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('permissions[0].name');
  });

  test('creating needs rbac.*.create_permission (create_role), taking away remove_…; a refusal writes nothing', async () => {
    const apiId = await newApi('updated refs, refused');
    const { keyId } = await ok(unkey.keys.create({ apiId, permissions: ['upd.kept'] }));
    const scoped = async (permissions: string[]) =>
      v1Sdk(
        topology.nodes[0]!.url,
        (await topology.newRootKey({ workspaceId: topology.workspaceId, permissions })).key,
      );
    const updater = await scoped([
      'api.*.update_key',
      'rbac.*.add_permission_to_key',
      'rbac.*.add_role_to_key',
    ]);
    const create = await updater.keys.update({
      keyId,
      permissions: [{ name: 'upd.kept' }, { name: 'upd.new', create: true }],
    });
    expect(create.error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(create.error?.message).toContain('rbac.*.create_permission');
    const role = await updater.keys.update({
      keyId,
      roles: [{ name: 'upd new role', create: true }],
    });
    expect(role.error?.message).toContain('rbac.*.create_role');
    const away = await updater.keys.update({ keyId, permissions: [] });
    expect(away.error?.message).toContain('rbac.*.remove_permission_from_key');
    expect((await ok(unkey.keys.get({ keyId }))).permissions).toEqual(['upd.kept']);
    const names = (await ok(unkey.permissions.listPermissions())).map((p) => p.name);
    expect(names).not.toContain('upd.new');
    // Allowed to create, it does.
    const creator = await scoped([
      'api.*.update_key',
      'rbac.*.add_permission_to_key',
      'rbac.*.create_permission',
    ]);
    await ok(
      creator.keys.update({
        keyId,
        permissions: [{ name: 'upd.kept' }, { name: 'upd.new', create: true }],
      }),
    );
    expect((await ok(unkey.keys.get({ keyId }))).permissions).toEqual(['upd.kept', 'upd.new']);
  });
});
