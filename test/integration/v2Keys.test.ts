import { Unkey } from 'unkey-api-v2';
import { hour } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The v2 routes that change keys, link permissions and roles, list and delete, driven by the
 * published v2 client (`@unkey/api` 2.5.1) unchanged but for its server URL: every answer must
 * be one it accepts, every refusal one it recognises.
 */
let topology: Topology;
let unkey: Unkey;
let v1: Client;
let url: string;

const ERRORS = 'https://unkey.com/docs/errors';

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  url = topology.nodes[0]!.url;
  unkey = new Unkey({ rootKey: topology.rootKey, serverURL: url });
  v1 = client(url, topology.rootKey);
});
afterAll(() => topology.stop());

/** What a call that must fail threw: the client's own error class, with the body it parsed. */
async function failure(call: Promise<unknown>) {
  const thrown = (await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  )) as Error & { meta?: unknown; error?: Record<string, unknown> };
  return { name: thrown.constructor.name, meta: thrown.meta, error: thrown.error };
}

async function newApi(name: string): Promise<string> {
  return (await unkey.apis.createApi({ name })).data.apiId;
}

/** A raw v2 call, for what the client would not send or does not parse. */
async function rawV2(operation: string, body: unknown, rootKey = topology.rootKey) {
  const response = await fetch(`${url}/v2/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('keys.updateKey', () => {
  test('changes every field v2 names, then clears each with null', async () => {
    const apiId = await newApi('v2 update');
    await v1.post('permissions.createRole', { name: 'v2.editor' });
    const { data: created } = await unkey.keys.createKey({
      apiId,
      name: 'before',
      credits: { remaining: 3 },
      ratelimits: [{ name: 'old', limit: 1, duration: hour, autoApply: false }],
    });
    const expires = Date.now() + 10 * hour;

    const { data, meta } = await unkey.keys.updateKey({
      keyId: created.keyId,
      name: 'after',
      externalId: 'v2_owner',
      meta: { plan: 'team' },
      expires,
      enabled: false,
      credits: { remaining: 7, refill: { interval: 'monthly', amount: 10, refillDay: 5 } },
      ratelimits: [{ name: 'requests', limit: 5, duration: 60_000, autoApply: true }],
      permissions: ['v2.docs.read'],
      roles: ['v2.editor'],
    });
    expect(data).toEqual({});
    expect(meta.requestId).toMatch(/^req_/);

    const { data: key } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(key).toMatchObject({
      name: 'after',
      meta: { plan: 'team' },
      expires,
      enabled: false,
      credits: { remaining: 7, refill: { interval: 'monthly', amount: 10, refillDay: 5 } },
      permissions: ['v2.docs.read'],
      roles: ['v2.editor'],
      identity: { externalId: 'v2_owner' },
    });
    // The list replaces every limit the key had.
    expect(key.ratelimits).toEqual([
      {
        id: expect.stringMatching(/^rl_/),
        name: 'requests',
        limit: 5,
        duration: 60_000,
        autoApply: true,
      },
    ]);

    await unkey.keys.updateKey({
      keyId: created.keyId,
      name: null,
      externalId: null,
      meta: null,
      expires: null,
      credits: null,
      enabled: true,
    });
    const { data: cleared } = await unkey.keys.getKey({ keyId: created.keyId });
    for (const field of ['name', 'meta', 'expires', 'credits', 'identity']) {
      expect(cleared).not.toHaveProperty(field);
    }
    expect(cleared.enabled).toBe(true);
  });

  test('credits: a refill stops with refill null, the count stays; a list without default drops the seed limit', async () => {
    const apiId = await newApi('v2 update credits');
    const { data: created } = await unkey.keys.createKey({
      apiId,
      credits: { remaining: 4, refill: { interval: 'daily', amount: 4 } },
      ratelimits: [{ name: 'default', limit: 9, duration: 1000, autoApply: true }],
    });
    const before = (await unkey.keys.getKey({ keyId: created.keyId })).data;
    expect(before.ratelimits?.map((limit) => limit.name)).toEqual(['default']);

    await unkey.keys.updateKey({ keyId: created.keyId, credits: { refill: null } });
    await unkey.keys.updateKey({ keyId: created.keyId, ratelimits: [] });
    const { data: key } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(key.credits).toEqual({ remaining: 4 });
    expect(key).not.toHaveProperty('ratelimits');
  });

  test('a refusal names the v2 field; an unknown key is 404; a root key without update_key is 403', async () => {
    const apiId = await newApi('v2 update refusals');
    const { data: created } = await unkey.keys.createKey({ apiId });
    const refused = await rawV2('keys.updateKey', {
      keyId: created.keyId,
      credits: { remaining: null, refill: { interval: 'daily', amount: 1 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      type: `${ERRORS}/unkey/application/invalid_input`,
      errors: [{ location: 'body.credits.refill', message: expect.any(String) }],
    });

    const daily = await failure(
      unkey.keys.updateKey({
        keyId: created.keyId,
        credits: { refill: { interval: 'daily', amount: 1, refillDay: 3 } },
      }),
    );
    expect(daily).toMatchObject({
      name: 'BadRequestErrorResponse',
      error: { errors: [{ location: 'body.credits.refill.refillDay' }] },
    });

    const missing = await failure(unkey.keys.updateKey({ keyId: 'key_missing', name: 'x' }));
    expect(missing).toEqual({
      name: 'NotFoundErrorResponse',
      meta: { requestId: expect.stringMatching(/^req_/) },
      error: {
        title: 'Not Found',
        detail: 'key key_missing not found',
        status: 404,
        type: `${ERRORS}/unkey/data/key_not_found`,
      },
    });

    const reader = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['api.*.read_key'],
    });
    const readOnly = new Unkey({ rootKey: reader.key, serverURL: url });
    const forbidden = await failure(readOnly.keys.updateKey({ keyId: created.keyId, name: 'x' }));
    expect(forbidden).toMatchObject({
      name: 'ForbiddenErrorResponse',
      error: { status: 403, type: `${ERRORS}/unkey/authorization/insufficient_permissions` },
    });
  });
});

describe('keys.deleteKey and keys.whoami', () => {
  test('whoami shows the key getKey shows; a deleted key is gone, permanent or not', async () => {
    const apiId = await newApi('v2 whoami');
    const { data: first } = await unkey.keys.createKey({ apiId, name: 'me', meta: { a: 1 } });
    const { data: second } = await unkey.keys.createKey({ apiId });

    const { data: me } = await unkey.keys.whoami({ key: first.key });
    expect(me).toEqual((await unkey.keys.getKey({ keyId: first.keyId })).data);
    expect(me).toMatchObject({ keyId: first.keyId, name: 'me', meta: { a: 1 } });

    expect((await unkey.keys.deleteKey({ keyId: first.keyId })).data).toEqual({});
    expect((await unkey.keys.deleteKey({ keyId: second.keyId, permanent: true })).data).toEqual({});
    for (const keyId of [first.keyId, second.keyId]) {
      expect(await failure(unkey.keys.getKey({ keyId }))).toMatchObject({
        name: 'NotFoundErrorResponse',
        error: { type: `${ERRORS}/unkey/data/key_not_found` },
      });
    }
    expect((await unkey.keys.verifyKey({ key: first.key })).data.code).toBe('NOT_FOUND');
    expect(await failure(unkey.keys.whoami({ key: first.key }))).toMatchObject({
      name: 'NotFoundErrorResponse',
      error: { status: 404, detail: 'key not found' },
    });
    expect(await failure(unkey.keys.deleteKey({ keyId: first.keyId }))).toMatchObject({
      name: 'NotFoundErrorResponse',
    });
  });
});

describe('keys.updateCredits', () => {
  test('set, increment and decrement answer the credits with their refill', async () => {
    const apiId = await newApi('v2 credits');
    const { data: refilled } = await unkey.keys.createKey({
      apiId,
      credits: { remaining: 5, refill: { interval: 'daily', amount: 20 } },
    });
    const update = async (body: Parameters<Unkey['keys']['updateCredits']>[0]) =>
      (await unkey.keys.updateCredits(body)).data;
    const refill = { interval: 'daily', amount: 20 };
    expect(await update({ keyId: refilled.keyId, operation: 'set', value: 10 })).toEqual({
      remaining: 10,
      refill,
    });
    expect(await update({ keyId: refilled.keyId, operation: 'increment', value: 5 })).toEqual({
      remaining: 15,
      refill,
    });
    expect(await update({ keyId: refilled.keyId, operation: 'decrement', value: 3 })).toEqual({
      remaining: 12,
      refill,
    });
    expect((await unkey.keys.verifyKey({ key: refilled.key })).data.credits).toBe(11);

    // A key with unlimited usage gets credits by `set`, without a refill.
    const { data: unlimited } = await unkey.keys.createKey({ apiId });
    expect(await update({ keyId: unlimited.keyId, operation: 'set', value: 2 })).toEqual({
      remaining: 2,
    });
  });

  test('refusals: no value, an unlimited key, an unknown key', async () => {
    const apiId = await newApi('v2 credits refusals');
    const { data: key } = await unkey.keys.createKey({ apiId, credits: { remaining: 1 } });
    const noValue = await failure(
      unkey.keys.updateCredits({ keyId: key.keyId, operation: 'increment' }),
    );
    expect(noValue).toMatchObject({
      name: 'BadRequestErrorResponse',
      error: {
        errors: [{ location: 'body.value', message: 'is required to increment or decrement' }],
      },
    });
    expect(
      await failure(unkey.keys.updateCredits({ keyId: 'key_missing', operation: 'set', value: 1 })),
    ).toMatchObject({ name: 'NotFoundErrorResponse' });

    // Unkey v2's 400 for a key without credits (keyward's v1 answers 412).
    const { data: unlimited } = await unkey.keys.createKey({ apiId });
    const refused = await failure(
      unkey.keys.updateCredits({ keyId: unlimited.keyId, operation: 'increment', value: 1 }),
    );
    expect(refused).toMatchObject({
      name: 'BadRequestErrorResponse',
      error: { status: 400, type: `${ERRORS}/unkey/application/invalid_input` },
    });
    // Set to unlimited and decrement past zero: test/integration/v2Bounds.test.ts.
  });
});

describe('keys.*Permissions and keys.*Roles', () => {
  test('each answers what the key holds directly afterwards', async () => {
    const apiId = await newApi('v2 links');
    const { data: key } = await unkey.keys.createKey({ apiId });
    const permission = (name: string) => ({
      id: expect.stringMatching(/^perm_/),
      name,
      slug: name,
    });

    const added = await unkey.keys.addPermissions({
      keyId: key.keyId,
      permissions: ['v2l.read', 'v2l.write'],
    });
    expect(added.data).toEqual([permission('v2l.read'), permission('v2l.write')]);
    const more = await unkey.keys.addPermissions({
      keyId: key.keyId,
      permissions: ['v2l.read', 'v2l.admin'],
    });
    expect(more.data).toEqual([
      permission('v2l.write'),
      permission('v2l.read'),
      permission('v2l.admin'),
    ]);
    const removed = await unkey.keys.removePermissions({
      keyId: key.keyId,
      permissions: ['v2l.read', 'v2l.never'],
    });
    expect(removed.data).toEqual([permission('v2l.write'), permission('v2l.admin')]);
    const set = await unkey.keys.setPermissions({ keyId: key.keyId, permissions: ['v2l.read'] });
    expect(set.data).toEqual([permission('v2l.read')]);
    expect((await unkey.keys.getKey({ keyId: key.keyId })).data.permissions).toEqual(['v2l.read']);
    expect((await unkey.keys.setPermissions({ keyId: key.keyId, permissions: [] })).data).toEqual(
      [],
    );

    await v1.post('permissions.createRole', { name: 'v2l.viewer' });
    await v1.post('permissions.createRole', { name: 'v2l.owner' });
    const role = (name: string) => ({ id: expect.stringMatching(/^role_/), name });
    expect((await unkey.keys.addRoles({ keyId: key.keyId, roles: ['v2l.viewer'] })).data).toEqual([
      role('v2l.viewer'),
    ]);
    expect((await unkey.keys.addRoles({ keyId: key.keyId, roles: ['v2l.owner'] })).data).toEqual([
      role('v2l.viewer'),
      role('v2l.owner'),
    ]);
    expect(
      (await unkey.keys.removeRoles({ keyId: key.keyId, roles: ['v2l.viewer'] })).data,
    ).toEqual([role('v2l.owner')]);
    expect((await unkey.keys.setRoles({ keyId: key.keyId, roles: ['v2l.viewer'] })).data).toEqual([
      role('v2l.viewer'),
    ]);
    const verified = await unkey.keys.verifyKey({ key: key.key });
    expect(verified.data.roles).toEqual(['v2l.viewer']);
  });

  test('a role must exist (404); creating a permission needs its permission (403); unknown key 404', async () => {
    const apiId = await newApi('v2 link refusals');
    const { data: key } = await unkey.keys.createKey({ apiId });
    expect(
      await failure(unkey.keys.addRoles({ keyId: key.keyId, roles: ['v2l.nobody'] })),
    ).toMatchObject({
      name: 'NotFoundErrorResponse',
      error: { status: 404, type: `${ERRORS}/unkey/data/role_not_found` },
    });

    const linker = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['rbac.*.add_permission_to_key'],
    });
    const noCreate = new Unkey({ rootKey: linker.key, serverURL: url });
    expect(
      await failure(noCreate.keys.addPermissions({ keyId: key.keyId, permissions: ['v2l.fresh'] })),
    ).toMatchObject({
      name: 'ForbiddenErrorResponse',
      error: {
        status: 403,
        detail: 'this root key lacks the permission rbac.*.create_permission',
        type: `${ERRORS}/unkey/authorization/insufficient_permissions`,
      },
    });
    expect(await failure(unkey.keys.setRoles({ keyId: 'key_missing', roles: [] }))).toMatchObject({
      name: 'NotFoundErrorResponse',
      error: { type: `${ERRORS}/unkey/data/key_not_found` },
    });
  });
});

describe('keys.migrateKeys and analytics.getVerifications', () => {
  test('migrateKeys is refused with a 400 naming migrationId and what keyward offers', async () => {
    const apiId = await newApi('v2 migrate');
    const refused = await failure(
      unkey.keys.migrateKeys({ migrationId: 'acme', apiId, keys: [{ hash: 'abc123' }] }),
    );
    expect(refused).toMatchObject({
      name: 'BadRequestErrorResponse',
      error: {
        status: 400,
        type: `${ERRORS}/unkey/application/invalid_input`,
        errors: [
          {
            location: 'body.migrationId',
            message: expect.stringContaining('/v1/migrations.createKeys'),
          },
        ],
      },
    });
  });

  test('getVerifications answers 412 analytics_not_configured, as Unkey does without ClickHouse', async () => {
    const thrown = (await unkey.analytics
      .getVerifications({ query: 'SELECT COUNT(*) FROM key_verifications_v1' })
      .catch((e: unknown) => e)) as Error & { statusCode: number; body: string };
    expect(thrown.constructor.name).toBe('APIError');
    expect(thrown.statusCode).toBe(412);
    expect(JSON.parse(thrown.body)).toEqual({
      meta: { requestId: expect.stringMatching(/^req_/) },
      error: {
        title: 'Precondition Failed',
        detail: expect.stringContaining('/v1/keys.getVerifications'),
        status: 412,
        type: `${ERRORS}/unkey/data/analytics_not_configured`,
      },
    });
    const unauthenticated = await rawV2('analytics.getVerifications', { query: 'x' }, 'nope');
    expect(unauthenticated.status).toBe(401);
  });
});

describe('apis.listKeys and apis.deleteApi', () => {
  test('pages through an API’s keys with {cursor, hasMore}, filters by externalId', async () => {
    const apiId = await newApi('v2 list');
    const ids: string[] = [];
    for (const externalId of ['v2_list_a', 'v2_list_b', 'v2_list_a']) {
      ids.push(
        (await unkey.keys.createKey({ apiId, externalId, meta: { externalId } })).data.keyId,
      );
    }
    const first = await unkey.apis.listKeys({ apiId, limit: 2 });
    expect(first.result.data.map((key) => key.keyId)).toEqual(ids.slice(0, 2));
    expect(first.result.pagination).toEqual({ cursor: expect.any(String), hasMore: true });
    expect(first.result.data[0]).toMatchObject({
      keyId: ids[0],
      start: expect.any(String),
      enabled: true,
      createdAt: expect.any(Number),
      meta: { externalId: 'v2_list_a' },
      identity: { externalId: 'v2_list_a' },
    });
    const second = await first.next();
    expect(second?.result.data.map((key) => key.keyId)).toEqual(ids.slice(2));
    expect(second?.result.pagination).toEqual({ hasMore: false });
    expect(await second?.next()).toBeNull();

    const owned = await unkey.apis.listKeys({ apiId, externalId: 'v2_list_a' });
    expect(owned.result.data.map((key) => key.keyId)).toEqual([ids[0], ids[2]]);
    const everything = await unkey.apis.listKeys({ apiId, revalidateKeysCache: true });
    expect(everything.result.data).toHaveLength(3);

    // This node has no vault (recoverableKeys.test.ts has one): decrypt says what is missing.
    // Unkey's spec lists no 412 for listKeys, so the client throws its generic APIError.
    const noVault = (await unkey.apis.listKeys({ apiId, decrypt: true }).catch((e) => e)) as Error;
    expect(noVault.message).toMatch(/Status 412/);
    expect(noVault.message).toContain('KEYWARD_VAULT_KEYS');
    expect(await failure(unkey.apis.listKeys({ apiId: 'api_missing' }))).toMatchObject({
      name: 'NotFoundErrorResponse',
      error: { type: `${ERRORS}/unkey/data/api_not_found` },
    });
  });

  test('deleteApi answers {} and takes the keys with it', async () => {
    const apiId = await newApi('v2 delete');
    const { data: key } = await unkey.keys.createKey({ apiId });
    expect((await unkey.apis.deleteApi({ apiId })).data).toEqual({});
    expect(await failure(unkey.apis.getApi({ apiId }))).toMatchObject({
      name: 'NotFoundErrorResponse',
    });
    expect((await unkey.keys.verifyKey({ key: key.key })).data.code).toBe('NOT_FOUND');
    expect(await failure(unkey.apis.deleteApi({ apiId }))).toMatchObject({
      name: 'NotFoundErrorResponse',
      error: { type: `${ERRORS}/unkey/data/api_not_found` },
    });
  });
});

test('v1 and v2 getKey agree on every field both have', async () => {
  const apiId = await newApi('v2 equivalence');
  await v1.post('permissions.createRole', { name: 'v2e.role' });
  const created = await v1.post<{ keyId: string }>('keys.createKey', {
    apiId,
    prefix: 'eq',
    name: 'same key',
    externalId: 'v2e_owner',
    meta: { tier: 'gold', nested: { a: [1, 2] } },
    expires: Date.now() + hour,
    remaining: 40,
    refill: { interval: 'monthly', amount: 50, refillDay: 3 },
    ratelimit: { type: 'fast', limit: 10, refillRate: 10, refillInterval: 1000 },
    ratelimits: [{ name: 'burst', limit: 2, duration: 60_000, autoApply: true }],
    permissions: ['v2e.read'],
    roles: ['v2e.role'],
  });
  expect(created.status).toBe(200);
  const keyId = created.body.keyId;
  await unkey.keys.updateKey({ keyId, enabled: true });

  const { body: one } = await v1.get<Record<string, unknown>>('keys.getKey', { keyId });
  const { data: two } = await unkey.keys.getKey({ keyId });
  // Every field compared is there, so that no agreement below is two absences.
  for (const field of ['name', 'meta', 'expires', 'updatedAt', 'permissions', 'roles']) {
    expect(one[field]).toBeDefined();
  }
  for (const field of ['remaining', 'refill', 'identity', 'ratelimit', 'ratelimits']) {
    expect(one[field]).toBeDefined();
  }
  const credits = one.refill as { interval: string; amount: number; refillDay: number };
  const ratelimit = one.ratelimit as { type: string; limit: number; refillInterval: number };
  const identity = one.identity as { id: string; externalId: string; meta: unknown };
  expect(two).toEqual({
    keyId: one.id,
    start: one.start,
    enabled: one.enabled,
    createdAt: one.createdAt,
    updatedAt: one.updatedAt,
    name: one.name,
    meta: one.meta,
    expires: one.expires,
    permissions: one.permissions,
    roles: one.roles,
    credits: {
      remaining: one.remaining,
      refill: { interval: credits.interval, amount: credits.amount, refillDay: credits.refillDay },
    },
    // An identity without limits: v2 leaves `ratelimits` out, as Unkey does.
    identity,
    ratelimits: [
      {
        id: expect.stringMatching(/^rl_/),
        name: 'default',
        limit: ratelimit.limit,
        duration: ratelimit.refillInterval,
        autoApply: true,
      },
      ...(
        one.ratelimits as { name: string; limit: number; duration: number; autoApply: boolean }[]
      ).map(({ name, limit, duration, autoApply }) => ({
        id: expect.stringMatching(/^rl_/),
        name,
        limit,
        duration,
        autoApply,
      })),
    ],
  });
});
