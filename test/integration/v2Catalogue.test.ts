import { Overrides } from '@unkey/ratelimit';
import type { Redis } from 'ioredis';
import { Unkey } from 'unkey-api-v2';
import { limitId } from '../../src/dialects/v2/shapes';
import { names } from '../../src/store/names';
import { hour } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * identities.*, permissions.* and ratelimit.* (overrides) in Unkey's v2 wire format, driven by
 * the clients its users install: `@unkey/api` 2.5.1 and @unkey/ratelimit 2.1.4's Overrides. The
 * client parses every answer with its own schemas, so an answer it accepts has v2's shape.
 */
let topology: Topology;
let url: string;
let primary: Redis;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  url = topology.nodes[0]!.url;
  primary = await adminRedis(topology.primary.url);
});
afterAll(async () => {
  if (primary) await closeRedis(primary);
  await topology.stop();
});

/** A v2 client on a workspace of its own, so that its listings hold only what the test made. */
async function freshWorkspace() {
  const { key, workspaceId } = await topology.newRootKey();
  return { unkey: new Unkey({ rootKey: key, serverURL: url }), rootKey: key, workspaceId };
}

/** What a call that must fail threw: the client's error class and the v2 body it parsed. */
async function failure(call: Promise<unknown>) {
  const thrown = (await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  )) as Error & { error?: Record<string, unknown>; meta?: unknown };
  return { kind: thrown.constructor.name, meta: thrown.meta, error: thrown.error };
}

const TYPE = 'https://unkey.com/docs/errors';

describe('identities', () => {
  test('create, get by id and by externalId, update, delete: answers the client takes', async () => {
    const { unkey } = await freshWorkspace();
    const created = await unkey.identities.createIdentity({
      externalId: 'user_v2',
      meta: { plan: 'pro' },
      ratelimits: [
        { name: 'requests', limit: 10, duration: 60_000, autoApply: true },
        { name: 'tokens', limit: 1000, duration: hour },
      ],
    });
    expect(created.meta.requestId).toMatch(/^req_/);
    const identityId = created.data.identityId;
    expect(identityId).toMatch(/^id_/);

    const expected = {
      id: identityId,
      externalId: 'user_v2',
      meta: { plan: 'pro' },
      ratelimits: [
        {
          id: limitId(identityId, 'requests'),
          name: 'requests',
          limit: 10,
          duration: 60_000,
          autoApply: true,
        },
        {
          id: limitId(identityId, 'tokens'),
          name: 'tokens',
          limit: 1000,
          duration: hour,
          // The client sends v2's default, false.
          autoApply: false,
        },
      ],
    };
    expect((await unkey.identities.getIdentity({ identity: identityId })).data).toEqual(expected);
    expect((await unkey.identities.getIdentity({ identity: 'user_v2' })).data).toEqual(expected);

    const updated = await unkey.identities.updateIdentity({
      identity: 'user_v2',
      meta: { plan: 'team' },
      ratelimits: [{ name: 'requests', limit: 20, duration: 60_000, autoApply: true }],
    });
    expect(updated.data).toEqual({
      ...expected,
      meta: { plan: 'team' },
      ratelimits: [{ ...expected.ratelimits[0], limit: 20 }],
    });
    // Only what is given is replaced.
    const kept = await unkey.identities.updateIdentity({ identity: identityId, meta: {} });
    expect(kept.data).toEqual({ ...updated.data, meta: {} });

    const deleted = await unkey.identities.deleteIdentity({ identity: 'user_v2' });
    expect(deleted.meta.requestId).toMatch(/^req_/);
    const gone = await failure(unkey.identities.getIdentity({ identity: identityId }));
    expect(gone).toEqual({
      kind: 'NotFoundErrorResponse',
      meta: { requestId: expect.stringMatching(/^req_/) },
      error: {
        title: 'Not Found',
        detail: `identity ${identityId} not found`,
        status: 404,
        type: `${TYPE}/unkey/data/identity_not_found`,
      },
    });
  });

  test('listIdentities pages to the end, each identity with its meta and limits', async () => {
    const { unkey } = await freshWorkspace();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await unkey.identities.createIdentity({
        externalId: `listed_${i}`,
        meta: { i },
        ...(i === 0 ? { ratelimits: [{ name: 'requests', limit: 1, duration: 1000 }] } : {}),
      });
      made.push(data.identityId);
    }
    const pages = [];
    // The client's own page iterator follows `pagination.cursor` until there is none.
    for await (const page of await unkey.identities.listIdentities({ limit: 2 })) {
      pages.push(page.result);
    }
    expect(pages.map((page) => page.pagination)).toEqual([
      { cursor: made[1], hasMore: true },
      { cursor: made[3], hasMore: true },
      { hasMore: false },
    ]);
    const listed = pages.flatMap((page) => page.data);
    expect(listed.map((identity) => identity.id)).toEqual(made);
    expect(listed[0]).toEqual({
      id: made[0],
      externalId: 'listed_0',
      meta: { i: 0 },
      ratelimits: [
        {
          id: limitId(made[0]!, 'requests'),
          name: 'requests',
          limit: 1,
          duration: 1000,
          autoApply: false,
        },
      ],
    });
    expect(listed[4]).toEqual({
      id: made[4],
      externalId: 'listed_4',
      meta: { i: 4 },
      ratelimits: [],
    });
  });

  test('listIdentities search: id or externalId containing it, ignoring case, paged', async () => {
    const { unkey } = await freshWorkspace();
    const made: Record<string, string> = {};
    for (const externalId of ['Alice_1', 'bob', 'ALICE_2', 'carol', 'malice']) {
      made[externalId] = (await unkey.identities.createIdentity({ externalId })).data.identityId;
    }
    const pages = [];
    for await (const page of await unkey.identities.listIdentities({ search: 'alice', limit: 2 })) {
      pages.push(page.result);
    }
    expect(pages.map((page) => page.data.map((identity) => identity.externalId))).toEqual([
      ['Alice_1', 'ALICE_2'],
      ['malice'],
    ]);
    expect(pages.map((page) => page.pagination.hasMore)).toEqual([true, false]);
    // An id matches too; a blank search lists everything.
    const byId = (await unkey.identities.listIdentities({ search: made.carol!.slice(-8) })).result;
    expect(byId.data.map((identity) => identity.externalId)).toEqual(['carol']);
    const blank = (await unkey.identities.listIdentities({ search: '  ' })).result;
    expect(blank.data).toHaveLength(5);
    const none = (await unkey.identities.listIdentities({ search: 'nobody' })).result;
    expect(none).toMatchObject({ data: [], pagination: { hasMore: false } });
  });

  test('errors in v2’s shape: a taken externalId, a search too long, a bad limit', async () => {
    const { unkey } = await freshWorkspace();
    await unkey.identities.createIdentity({ externalId: 'taken' });
    expect(await failure(unkey.identities.createIdentity({ externalId: 'taken' }))).toMatchObject({
      kind: 'ConflictErrorResponse',
      error: {
        status: 409,
        type: `${TYPE}/unkey/data/identity_already_exists`,
        detail: 'Identity with externalId "taken" already exists in this workspace',
      },
    });

    const tooLong = await failure(unkey.identities.listIdentities({ search: 'x'.repeat(257) }));
    expect(tooLong).toMatchObject({
      kind: 'BadRequestErrorResponse',
      error: { status: 400, errors: [{ location: 'body.search' }] },
    });

    const badLimit = await failure(
      unkey.identities.createIdentity({
        externalId: 'limited',
        ratelimits: [{ name: 'requests', limit: 0, duration: 1000 }],
      }),
    );
    expect(badLimit).toMatchObject({
      kind: 'BadRequestErrorResponse',
      error: { errors: [{ location: 'body.ratelimits[0].limit', message: 'must be >= 1' }] },
    });
  });

  test('the same identity read through v1 and v2 agrees', async () => {
    const { unkey, rootKey } = await freshWorkspace();
    const v1 = client(url, rootKey);
    const made = await v1.post<{ identityId: string }>('identities.createIdentity', {
      externalId: 'both_doors',
      meta: { region: 'eu', tier: 2 },
      ratelimits: [
        { name: 'requests', limit: 5, duration: 1000, autoApply: true, type: 'fast' },
        { name: 'tokens', limit: 50, duration: 60_000 },
      ],
    });
    const { identityId } = made.body;
    const one = (await v1.get('identities.getIdentity', { externalId: 'both_doors' })).body as {
      id: string;
      externalId: string;
      meta: unknown;
      ratelimits: { name: string; limit: number; duration: number; autoApply: boolean }[];
    };
    const two = (await unkey.identities.getIdentity({ identity: 'both_doors' })).data;
    expect(two.id).toBe(one.id);
    expect(two.id).toBe(identityId);
    expect(two.externalId).toBe(one.externalId);
    expect(two.meta).toEqual(one.meta);
    expect(two.ratelimits).toEqual(
      one.ratelimits.map(({ name, limit, duration, autoApply }) => ({
        id: limitId(identityId, name),
        name,
        limit,
        duration,
        autoApply,
      })),
    );
    // And a listing of each door shows the same identity.
    const listedOne = (await v1.get('identities.listIdentities', {})).body as {
      identities: { id: string; externalId: string }[];
    };
    const listedTwo = (await unkey.identities.listIdentities({})).result.data;
    expect(listedTwo.map(({ id, externalId }) => ({ id, externalId }))).toEqual(
      listedOne.identities.map(({ id, externalId }) => ({ id, externalId })),
    );
  });
});

describe('permissions and roles', () => {
  test('a permission: v2’s slug is what keys hold, its name comes back as written', async () => {
    const { unkey, rootKey } = await freshWorkspace();
    const { data } = await unkey.permissions.createPermission({
      name: 'documents.read',
      slug: 'documents-read',
      description: 'Reads the documents',
    });
    const expected = {
      id: data.permissionId,
      name: 'documents.read',
      slug: 'documents-read',
      description: 'Reads the documents',
    };
    expect((await unkey.permissions.getPermission({ permission: data.permissionId })).data).toEqual(
      expected,
    );
    expect((await unkey.permissions.getPermission({ permission: 'documents-read' })).data).toEqual(
      expected,
    );
    // v1 names a permission by what keys hold: v2's slug.
    const v1 = client(url, rootKey);
    expect(
      (await v1.get('permissions.getPermission', { permissionId: data.permissionId })).body,
    ).toEqual({ ...expected, name: 'documents-read', slug: 'documents.read' });
    // A key given the slug through v2 holds this very permission.
    const { data: api } = await unkey.apis.createApi({ name: 'holders' });
    const { data: key } = await unkey.keys.createKey({
      apiId: api.apiId,
      permissions: ['documents-read'],
    });
    const verified = await unkey.keys.verifyKey({ key: key.key, permissions: 'documents-read' });
    expect(verified.data).toMatchObject({ valid: true, permissions: ['documents-read'] });
    const listed = (await unkey.permissions.listPermissions({})).result.data;
    expect(listed).toEqual([expected]);

    await unkey.permissions.deletePermission({ permission: 'documents-read' });
    expect(
      await failure(unkey.permissions.getPermission({ permission: data.permissionId })),
    ).toMatchObject({
      kind: 'NotFoundErrorResponse',
      error: { status: 404, type: `${TYPE}/unkey/data/permission_not_found` },
    });
  });

  test('a name is free text and need not be unique; a slug is the identifier, a taken one 409', async () => {
    const { unkey, rootKey } = await freshWorkspace();
    // Unkey's name: 1–512 characters of any kind, kept as written.
    const { data: spaced } = await unkey.permissions.createPermission({
      name: 'Read documents',
      slug: 'documents.read',
    });
    expect((await unkey.permissions.getPermission({ permission: 'documents.read' })).data).toEqual({
      id: spaced.permissionId,
      name: 'Read documents',
      slug: 'documents.read',
    });
    // v1 shows the two the other way round, as it always did.
    const v1 = client(url, rootKey);
    expect(
      (await v1.get('permissions.getPermission', { permissionId: spaced.permissionId })).body,
    ).toEqual({ id: spaced.permissionId, name: 'documents.read', slug: 'Read documents' });
    // The same name under another slug is another permission.
    const { data: again } = await unkey.permissions.createPermission({
      name: 'Read documents',
      slug: 'documents.read.all',
    });
    expect(again.permissionId).not.toBe(spaced.permissionId);
    const long = 'n'.repeat(512);
    await unkey.permissions.createPermission({ name: long, slug: 'long.name' });
    expect((await unkey.permissions.getPermission({ permission: 'long.name' })).data.name).toBe(
      long,
    );
    for (const name of ['', `${long}n`]) {
      expect(
        await failure(unkey.permissions.createPermission({ name, slug: 'never.made' })),
      ).toMatchObject({
        kind: 'BadRequestErrorResponse',
        error: { status: 400, type: `${TYPE}/unkey/application/invalid_input` },
      });
    }
    expect(
      await failure(unkey.permissions.createPermission({ name: 'documents.read', slug: 'a b' })),
    ).toMatchObject({ kind: 'BadRequestErrorResponse', error: { status: 400 } });
    // A taken slug is Unkey's 409, whatever the name; nothing is made.
    expect(
      await failure(
        unkey.permissions.createPermission({ name: 'Something else', slug: 'documents.read' }),
      ),
    ).toMatchObject({
      kind: 'ConflictErrorResponse',
      error: { status: 409, type: `${TYPE}/unkey/data/permission_already_exists` },
    });
    const slugs = (await unkey.permissions.listPermissions({})).result.data.map((p) => p.slug);
    expect(slugs.sort()).toEqual(['documents.read', 'documents.read.all', 'long.name']);
  });

  test('a role: made with permission slugs, read by id and by name, its permissions as objects', async () => {
    const { unkey } = await freshWorkspace();
    const { data: read } = await unkey.permissions.createPermission({
      name: 'Reading',
      slug: 'docs.read',
    });
    const { data: role } = await unkey.permissions.createRole({
      name: 'Editor',
      description: 'edits things',
      permissions: ['docs.write', 'docs.read'],
    });
    const byId = (await unkey.permissions.getRole({ role: role.roleId })).data;
    expect(byId).toEqual({
      id: role.roleId,
      name: 'Editor',
      description: 'edits things',
      permissions: [
        { id: read.permissionId, name: 'Reading', slug: 'docs.read' },
        // Created by the role: its name is its slug.
        { id: expect.stringMatching(/^perm_/), name: 'docs.write', slug: 'docs.write' },
      ],
    });
    expect((await unkey.permissions.getRole({ role: 'Editor' })).data).toEqual(byId);
    const { data: bare } = await unkey.permissions.createRole({ name: 'Nobody' });
    expect((await unkey.permissions.getRole({ role: bare.roleId })).data).toEqual({
      id: bare.roleId,
      name: 'Nobody',
    });

    await unkey.permissions.deleteRole({ role: 'Editor' });
    expect(await failure(unkey.permissions.getRole({ role: role.roleId }))).toMatchObject({
      kind: 'NotFoundErrorResponse',
      error: { status: 404, type: `${TYPE}/unkey/data/role_not_found` },
    });
  });

  test('setRolePermissions replaces what a role holds, answering its permissions as objects', async () => {
    const { unkey } = await freshWorkspace();
    await unkey.permissions.createPermission({ name: 'Billing', slug: 'billing.read' });
    const { data: role } = await unkey.permissions.createRole({
      name: 'Finance',
      permissions: ['ledger.read'],
    });
    const set = await unkey.permissions.setRolePermissions({
      roleId: role.roleId,
      permissions: ['billing.read', 'ledger.write'],
    });
    const expected = [
      { id: expect.stringMatching(/^perm_/), name: 'Billing', slug: 'billing.read' },
      { id: expect.stringMatching(/^perm_/), name: 'ledger.write', slug: 'ledger.write' },
    ];
    expect(set.data).toEqual(expected);
    expect((await unkey.permissions.getRole({ role: role.roleId })).data.permissions).toEqual(
      expected,
    );
    expect(
      (await unkey.permissions.setRolePermissions({ roleId: role.roleId, permissions: [] })).data,
    ).toEqual([]);
    expect(
      await failure(
        unkey.permissions.setRolePermissions({
          roleId: 'role_1ChFjUG4o6VLuzbLGABNDC',
          permissions: [],
        }),
      ),
    ).toMatchObject({
      kind: 'NotFoundErrorResponse',
      error: { type: `${TYPE}/unkey/data/role_not_found` },
    });
  });

  test('listPermissions and listRoles page to the end, and search', async () => {
    const { unkey } = await freshWorkspace();
    const permissions: string[] = [];
    for (const slug of ['a.read', 'a.write', 'b.read', 'b.write', 'c.read']) {
      permissions.push(
        (await unkey.permissions.createPermission({ name: slug, slug })).data.permissionId,
      );
    }
    const roles: string[] = [];
    for (const name of ['Reader', 'Writer', 'Admin']) {
      roles.push((await unkey.permissions.createRole({ name })).data.roleId);
    }

    // The client's page iterator follows `pagination.cursor` until there is none.
    const pages = [];
    for await (const page of await unkey.permissions.listPermissions({ limit: 2 })) {
      pages.push(page.result);
    }
    expect(pages.flatMap((page) => page.data.map((p) => p.id))).toEqual(permissions);
    expect(pages.map((page) => page.pagination)).toEqual([
      { cursor: permissions[1], hasMore: true },
      { cursor: permissions[3], hasMore: true },
      { hasMore: false },
    ]);

    const first = (await unkey.permissions.listRoles({ limit: 2 })).result;
    expect(first.data.map((r) => r.id)).toEqual(roles.slice(0, 2));
    expect(first.pagination).toEqual({ cursor: roles[1], hasMore: true });
    const last = (await unkey.permissions.listRoles({ limit: 2, cursor: first.pagination.cursor! }))
      .result;
    expect(last.data).toEqual([{ id: roles[2], name: 'Admin' }]);
    expect(last.pagination).toEqual({ hasMore: false });
    // A cursor whose entry is gone still finds the rest.
    await unkey.permissions.deleteRole({ role: roles[1]! });
    const after = (await unkey.permissions.listRoles({ cursor: roles[1]! })).result;
    expect(after.data.map((r) => r.id)).toEqual([roles[2]]);

    const reads = (await unkey.permissions.listPermissions({ search: 'READ' })).result;
    expect(reads.data.map((p) => p.slug)).toEqual(['a.read', 'b.read', 'c.read']);
    const writers = (await unkey.permissions.listRoles({ search: 'writ' })).result;
    expect(writers.data.map((r) => r.name)).toEqual([]);
    expect(
      (await unkey.permissions.listRoles({ search: 'ADM' })).result.data.map((r) => r.name),
    ).toEqual(['Admin']);
  });
});

describe('ratelimit overrides', () => {
  test('@unkey/ratelimit’s Overrides: set, get, list to the end, delete; limit obeys', async () => {
    const { unkey, rootKey, workspaceId } = await freshWorkspace();
    const overrides = new Overrides({ rootKey, baseUrl: url });
    const namespace = 'v2.overrides';
    const set = await overrides.setOverride({
      namespace,
      identifier: 'vip_*',
      limit: 1000,
      duration: 60_000,
    });
    expect(set.data.overrideId).toMatch(/^rlor_/);
    // The namespace by its id works as well as by its name.
    const namespaceId = (await primary.hget(names.namespace(workspaceId, namespace), 'id'))!;
    expect(namespaceId).toMatch(/^rlns_/);
    await overrides.setOverride({
      namespace: namespaceId,
      identifier: 'alice',
      limit: 3,
      duration: 1000,
    });
    await overrides.setOverride({ namespace, identifier: 'bob', limit: 4, duration: 2000 });

    expect((await overrides.getOverride({ namespace, identifier: 'vip_*' })).data).toEqual({
      overrideId: set.data.overrideId,
      identifier: 'vip_*',
      limit: 1000,
      duration: 60_000,
    });
    expect(
      (await overrides.getOverride({ namespace: namespaceId, identifier: 'alice' })).data,
    ).toMatchObject({ identifier: 'alice', limit: 3, duration: 1000 });

    const identifiers: string[] = [];
    const paginations = [];
    let cursor: string | undefined;
    do {
      const page = await overrides.listOverrides({
        namespace,
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      identifiers.push(...page.data.map((o: { identifier: string }) => o.identifier));
      paginations.push(page.pagination);
      cursor = page.pagination.cursor;
    } while (cursor);
    expect(identifiers).toEqual(['alice', 'bob', 'vip_*']);
    expect(paginations).toEqual([{ cursor: 'bob', hasMore: true }, { hasMore: false }]);

    const limited = await unkey.ratelimit.limit({
      namespace,
      identifier: 'vip_42',
      limit: 1,
      duration: 1000,
    });
    expect(limited.data).toMatchObject({
      success: true,
      limit: 1000,
      overrideId: set.data.overrideId,
    });

    const deleted = await overrides.deleteOverride({ namespace, identifier: 'vip_*' });
    expect(deleted.data).toEqual({});
    expect(await failure(overrides.getOverride({ namespace, identifier: 'vip_*' }))).toMatchObject({
      kind: 'NotFoundErrorResponse',
      error: {
        status: 404,
        type: `${TYPE}/unkey/data/ratelimit_override_not_found`,
        detail: `no override for vip_* in namespace ${namespace}`,
      },
    });
    expect(await failure(overrides.listOverrides({ namespace: 'never.used' }))).toMatchObject({
      kind: 'NotFoundErrorResponse',
      error: { type: `${TYPE}/unkey/data/ratelimit_namespace_not_found` },
    });
  });

  test('an override keyward cannot be is refused: a * inside the identifier, a limit of 0', async () => {
    const { rootKey } = await freshWorkspace();
    const overrides = new Overrides({ rootKey, baseUrl: url });
    for (const identifier of ['*_test', '*premium*', 'a*b']) {
      expect(
        await failure(
          overrides.setOverride({ namespace: 'v2.refused', identifier, limit: 5, duration: 1000 }),
        ),
      ).toMatchObject({
        kind: 'BadRequestErrorResponse',
        error: { errors: [{ location: 'body.identifier' }] },
      });
    }
    expect(
      await failure(
        overrides.setOverride({
          namespace: 'v2.refused',
          identifier: 'x',
          limit: 0,
          duration: 1000,
        }),
      ),
    ).toMatchObject({
      kind: 'BadRequestErrorResponse',
      error: {
        errors: [
          {
            location: 'body.limit',
            message: 'keyward has no blocking override: a limit is at least 1',
          },
        ],
      },
    });
    // Nothing was made: the namespace was never used.
    expect(await failure(overrides.listOverrides({ namespace: 'v2.refused' }))).toMatchObject({
      kind: 'NotFoundErrorResponse',
    });
  });
});

describe('ratelimit.multiLimit', () => {
  test('several limits, all or nothing: passed for the call and for each limit', async () => {
    const { unkey, rootKey } = await freshWorkspace();
    const overrides = new Overrides({ rootKey, baseUrl: url });
    const { data: vip } = await overrides.setOverride({
      namespace: 'v2.multi.api',
      identifier: 'vip',
      limit: 100,
      duration: 60_000,
    });
    const checks = [
      { namespace: 'v2.multi.api', identifier: 'vip', limit: 10, duration: 60_000 },
      { namespace: 'v2.multi.login', identifier: 'vip', limit: 2, duration: 60_000, cost: 2 },
    ];
    const first = await unkey.ratelimit.multiLimit(checks);
    expect(first.meta.requestId).toMatch(/^req_/);
    expect(first.data).toEqual({
      passed: true,
      limits: [
        {
          namespace: 'v2.multi.api',
          identifier: 'vip',
          limit: 100,
          remaining: 99,
          reset: expect.any(Number),
          passed: true,
          overrideId: vip.overrideId,
        },
        {
          namespace: 'v2.multi.login',
          identifier: 'vip',
          limit: 2,
          remaining: 0,
          reset: expect.any(Number),
          passed: true,
        },
      ],
    });
    // The login limit is spent: the call is refused, and the api limit keeps its tokens.
    const second = await unkey.ratelimit.multiLimit(checks);
    expect(second.data.passed).toBe(false);
    expect(second.data.limits.map((l) => [l.passed, l.remaining])).toEqual([
      [true, 99],
      [false, 0],
    ]);
    const alone = await unkey.ratelimit.limit({
      namespace: 'v2.multi.api',
      identifier: 'vip',
      limit: 10,
      duration: 60_000,
    });
    expect(alone.data.remaining).toBe(98);
  });

  test('one bucket named twice, or an empty list, is a 400 in v2’s shape', async () => {
    const { unkey } = await freshWorkspace();
    const check = { namespace: 'v2.multi.twice', identifier: 'a', limit: 1, duration: 1000 };
    expect(await failure(unkey.ratelimit.multiLimit([check, { ...check, limit: 5 }]))).toEqual({
      kind: 'BadRequestErrorResponse',
      meta: { requestId: expect.stringMatching(/^req_/) },
      error: {
        title: 'Bad Request',
        detail: '[1].identifier: the same namespace and identifier as [0]; name a bucket once',
        status: 400,
        type: `${TYPE}/unkey/application/invalid_input`,
        errors: [
          {
            location: 'body[1].identifier',
            message: 'the same namespace and identifier as [0]; name a bucket once',
          },
        ],
      },
    });
    expect(await failure(unkey.ratelimit.multiLimit([]))).toMatchObject({
      kind: 'BadRequestErrorResponse',
      error: { detail: 'body: must NOT have fewer than 1 items' },
    });
  });
});
