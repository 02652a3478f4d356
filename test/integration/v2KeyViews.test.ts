import { Unkey } from 'unkey-api-v2';
import { limitId } from '../../src/dialects/v2/shapes';
import { hour } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * What v2's key views show beside the key (issue 23): its identity's named limits, and the
 * permissions it holds through its roles. Driven by the published v2 client (`@unkey/api`
 * 2.5.1), which parses every answer with its own schemas; v1's answers are held to what Unkey
 * v1 answered (the identity without limits, getKey's permissions the key's own).
 */
let topology: Topology;
let unkey: Unkey;
let v1: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  const url = topology.nodes[0]!.url;
  unkey = new Unkey({ rootKey: topology.rootKey, serverURL: url });
  v1 = client(url, topology.rootKey);
});
afterAll(() => topology.stop());

async function newApi(name: string): Promise<string> {
  return (await unkey.apis.createApi({ name })).data.apiId;
}

type V1Key = Record<string, unknown> & { id: string; identity?: unknown; permissions?: unknown };

describe('the identity’s limits', () => {
  test('getKey, whoami, listKeys and verifyKey list them in v2’s shape; v1 shows none', async () => {
    const apiId = await newApi('views identity');
    const { data: identity } = await unkey.identities.createIdentity({
      externalId: 'views_user',
      meta: { plan: 'pro' },
      ratelimits: [
        { name: 'requests', limit: 10, duration: 60_000, autoApply: true },
        { name: 'tokens', limit: 1000, duration: hour },
      ],
    });
    // The key has a `tokens` limit of its own: it is the one a verification applies.
    const { data: created } = await unkey.keys.createKey({
      apiId,
      externalId: 'views_user',
      ratelimits: [{ name: 'tokens', limit: 5, duration: hour }],
    });
    const { identityId } = identity;
    const requests = {
      id: limitId(identityId, 'requests'),
      name: 'requests',
      limit: 10,
      duration: 60_000,
      autoApply: true,
    };
    const tokens = {
      id: limitId(identityId, 'tokens'),
      name: 'tokens',
      limit: 1000,
      duration: hour,
      autoApply: false,
    };
    const shown = {
      id: identityId,
      externalId: 'views_user',
      meta: { plan: 'pro' },
      ratelimits: [requests, tokens],
    };

    // getKey, whoami and listKeys list all of the identity's limits, as Unkey's getKey does.
    const { data: got } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(got.identity).toEqual(shown);
    const { data: me } = await unkey.keys.whoami({ key: created.key });
    expect(me.identity).toEqual(shown);
    const listed = await unkey.apis.listKeys({ apiId });
    expect(listed.result.data.map((key) => key.identity)).toEqual([shown]);
    // The same limits, with the same ids, as getIdentity shows them.
    const { data: read } = await unkey.identities.getIdentity({ identity: identityId });
    expect(read.ratelimits).toEqual(shown.ratelimits);

    // verifyKey lists those its key has none of its own for, as Unkey's verifyKey does.
    const { data: verdict } = await unkey.keys.verifyKey({ key: created.key });
    expect(verdict).toMatchObject({ valid: true, identity: { ...shown, ratelimits: [requests] } });

    // v1 answers the identity as Unkey v1 did: id, externalId and meta.
    const v1Identity = { id: identityId, externalId: 'views_user', meta: { plan: 'pro' } };
    const v1Got = (await v1.get<V1Key>('keys.getKey', { keyId: created.keyId })).body;
    expect(v1Got.identity).toEqual(v1Identity);
    const v1Me = (await v1.post<V1Key>('keys.whoami', { key: created.key })).body;
    expect(v1Me.identity).toEqual(v1Identity);
    const v1Listed = (await v1.get<{ keys: V1Key[] }>('apis.listKeys', { apiId })).body;
    expect(v1Listed.keys.map((key) => key.identity)).toEqual([v1Identity]);
    const v1Verdict = (await v1.post<V1Key>('keys.verifyKey', { key: created.key })).body;
    expect(v1Verdict).toMatchObject({ valid: true });
    expect(v1Verdict.identity).toEqual(v1Identity);
  });

  test('an identity without limits is shown without `ratelimits`, as Unkey leaves it out', async () => {
    const apiId = await newApi('views bare identity');
    const { data: created } = await unkey.keys.createKey({ apiId, externalId: 'views_bare' });
    const { data: got } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(got.identity).toEqual({ id: expect.any(String), externalId: 'views_bare', meta: {} });
    const { data: verdict } = await unkey.keys.verifyKey({ key: created.key });
    expect(verdict.identity).toEqual(got.identity);
  });

  test('a limit added to the identity later is shown by the next read of the key', async () => {
    const apiId = await newApi('views later');
    const { data: created } = await unkey.keys.createKey({ apiId, externalId: 'views_later' });
    await unkey.identities.updateIdentity({
      identity: 'views_later',
      ratelimits: [{ name: 'daily', limit: 100, duration: 24 * hour, autoApply: true }],
    });
    const { data: got } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(got.identity?.ratelimits).toEqual([
      {
        id: limitId(got.identity!.id, 'daily'),
        name: 'daily',
        limit: 100,
        duration: 24 * hour,
        autoApply: true,
      },
    ]);
  });
});

describe('permissions through roles', () => {
  test('v2 getKey, whoami, listKeys and verifyKey list the key’s own and its roles’; v1 getKey its own', async () => {
    const apiId = await newApi('views permissions');
    await v1.post('permissions.createRole', {
      name: 'views.reader',
      permissions: ['views.inherited', 'views.both'],
    });
    const { data: created } = await unkey.keys.createKey({
      apiId,
      permissions: ['views.own', 'views.both'],
      roles: ['views.reader'],
    });
    const effective = ['views.both', 'views.inherited', 'views.own'];

    const { data: got } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(got).toMatchObject({ permissions: effective, roles: ['views.reader'] });
    const { data: me } = await unkey.keys.whoami({ key: created.key });
    expect(me).toMatchObject({ permissions: effective, roles: ['views.reader'] });
    const listed = await unkey.apis.listKeys({ apiId });
    expect(listed.result.data.map((key) => key.permissions)).toEqual([effective]);
    const { data: verdict } = await unkey.keys.verifyKey({
      key: created.key,
      permissions: 'views.inherited AND views.own',
    });
    expect(verdict).toMatchObject({ valid: true, permissions: effective, roles: ['views.reader'] });

    // v1's getKey and whoami list the key's own, as Unkey v1's getKey did; listKeys and
    // verifyKey the key's own and its roles', as Unkey v1's did.
    const v1Got = (await v1.get<V1Key>('keys.getKey', { keyId: created.keyId })).body;
    expect(v1Got).toMatchObject({ permissions: ['views.both', 'views.own'] });
    expect(v1Got).not.toHaveProperty('effectivePermissions');
    const v1Me = (await v1.post<V1Key>('keys.whoami', { key: created.key })).body;
    expect(v1Me).toMatchObject({ permissions: ['views.both', 'views.own'] });
    expect(v1Me).not.toHaveProperty('effectivePermissions');
    const v1Listed = (await v1.get<{ keys: V1Key[] }>('apis.listKeys', { apiId })).body;
    expect(v1Listed.keys.map((key) => key.permissions)).toEqual([effective]);
    expect(v1Listed.keys[0]).not.toHaveProperty('effectivePermissions');
    const v1Verdict = (await v1.post<V1Key>('keys.verifyKey', { key: created.key })).body;
    expect(v1Verdict).toMatchObject({ permissions: effective });
  });

  test('rerollKey: the new key holds the old one’s permissions and roles, and so the same set', async () => {
    const apiId = await newApi('views reroll');
    await v1.post('permissions.createRole', {
      name: 'views.auditor',
      permissions: ['views.audit.read'],
    });
    const { data: old } = await unkey.keys.createKey({
      apiId,
      permissions: ['views.audit.write'],
      roles: ['views.auditor'],
    });
    const { data: fresh } = await unkey.keys.rerollKey({ keyId: old.keyId, expiration: hour });

    const [was, now] = [
      (await unkey.keys.getKey({ keyId: old.keyId })).data,
      (await unkey.keys.getKey({ keyId: fresh.keyId })).data,
    ];
    expect(now.permissions).toEqual(['views.audit.read', 'views.audit.write']);
    expect(now.permissions).toEqual(was.permissions);
    expect(now.roles).toEqual(['views.auditor']);
    // Held as Unkey's reroll copies them: the permission itself and the role, not the role's
    // permissions one by one (v1's getKey lists the key's own).
    const v1Now = (await v1.get<V1Key>('keys.getKey', { keyId: fresh.keyId })).body;
    expect(v1Now).toMatchObject({ permissions: ['views.audit.write'], roles: ['views.auditor'] });
    const { data: verdict } = await unkey.keys.verifyKey({
      key: fresh.key,
      permissions: 'views.audit.read AND views.audit.write',
    });
    expect(verdict).toMatchObject({
      valid: true,
      permissions: ['views.audit.read', 'views.audit.write'],
      roles: ['views.auditor'],
    });
  });
});
