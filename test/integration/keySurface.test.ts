import { Unkey } from '@unkey/api';
import { assertBuilt, runCli } from '../support/cliProcess';
import { createKey, eventually } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The rest of Unkey v1's key surface (keys.whoami, apis.deleteKeys, a key's `environment`) and
 * three differences from Unkey's own route tests: a monthly refill without refillDay shows day 1,
 * updateKey takes `remaining: 0`, and a root key is never given full access by an empty list.
 */
let topology: Topology;
let api: Client;
let second: Client;

beforeAll(async () => {
  assertBuilt();
  topology = await startTopology({ nodes: 2 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
  second = client(topology.nodes[1]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

async function newApi(name: string): Promise<string> {
  const created = await api.post<{ apiId: string }>('apis.createApi', { name });
  expect(created.status).toBe(200);
  return created.body.apiId;
}

describe('environment', () => {
  test('is stored, shown by getKey and listKeys, answered by every verification', async () => {
    const apiId = await newApi('environments');
    // Through the published v1 SDK, which sends it as Unkey's createKey takes it.
    const unkey = new Unkey({
      baseUrl: topology.nodes[0]!.url,
      rootKey: topology.rootKey,
      retry: { attempts: 0, backoff: () => 0 },
    });
    const created = await unkey.keys.create({ apiId, environment: 'test' });
    const { keyId, key } = created.result!;
    expect((await api.get('keys.getKey', { keyId })).body.environment).toBe('test');
    const listed = await api.get<{ keys: { environment?: string }[] }>('apis.listKeys', { apiId });
    expect(listed.body.keys.map((k) => k.environment)).toEqual(['test']);
    const verified = await unkey.keys.verify({ key });
    expect(verified.result).toMatchObject({ valid: true, environment: 'test' });

    expect((await api.post('keys.updateKey', { keyId, environment: 'production' })).status).toBe(
      200,
    );
    await eventually(
      async () => (await second.post('keys.verifyKey', { key })).body.environment === 'production',
      { what: 'the new environment on the other node' },
    );
    expect((await api.post('keys.updateKey', { keyId, environment: null })).status).toBe(200);
    const cleared = await api.post('keys.verifyKey', { key });
    expect(cleared.body).not.toHaveProperty('environment');
    expect((await api.get('keys.getKey', { keyId })).body).not.toHaveProperty('environment');
  });

  test('is at most 256 characters, and may be empty as in Unkey', async () => {
    const apiId = await newApi('environment bounds');
    const tooLong = await api.post('keys.createKey', { apiId, environment: 'e'.repeat(257) });
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('environment: must NOT have more than 256');
    const empty = await createKey(api, apiId, { environment: '' });
    expect((await api.get('keys.getKey', { keyId: empty.keyId })).body.environment).toBe('');
  });
});

describe('keys.whoami', () => {
  test('answers the key a plaintext belongs to, as getKey shows it', async () => {
    const apiId = await newApi('whoami');
    const { keyId, key } = await createKey(api, apiId, {
      name: 'mine',
      remaining: 5,
      meta: { plan: 'pro' },
    });
    const shown = await api.post('keys.whoami', { key });
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual((await api.get('keys.getKey', { keyId })).body);
  });

  test('a plaintext that is no key, or a key the root key may not read, is 404 alike', async () => {
    const apiId = await newApi('whoami hidden');
    const otherApi = await newApi('whoami other');
    const { key } = await createKey(api, apiId);
    const scoped = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: [`api.${otherApi}.read_key`],
    });
    const narrow = client(topology.nodes[0]!.url, scoped.key);
    const hidden = await narrow.post('keys.whoami', { key });
    const unknown = await narrow.post('keys.whoami', { key: 'sk_not_a_key_at_all' });
    expect([hidden.status, unknown.status]).toEqual([404, 404]);
    const messageOf = (body: Record<string, unknown>) =>
      (body.error as { code: string; message: string }).message;
    expect(messageOf(hidden.body)).toBe(messageOf(unknown.body));

    // A key of a deleted API is gone too.
    expect((await api.post('apis.deleteApi', { apiId })).status).toBe(200);
    expect((await api.post('keys.whoami', { key })).status).toBe(404);
  });
});

describe('apis.deleteKeys', () => {
  test('deletes every key of the API, keeps the API, and the keys stop verifying everywhere', async () => {
    const apiId = await newApi('delete keys');
    const keys = [
      await createKey(api, apiId),
      await createKey(api, apiId),
      await createKey(api, apiId, {
        ratelimit: { type: 'consistent', limit: 5, duration: 60_000 },
      }),
    ];
    // The other node caches them first, so it must be told.
    for (const { key } of keys) {
      expect((await second.post('keys.verifyKey', { key })).body.code).toBe('VALID');
    }
    const deleted = await api.post('apis.deleteKeys', { apiId, permanent: true });
    expect(deleted).toMatchObject({ status: 200, body: { deletedKeys: 3 } });
    for (const { key } of keys) {
      await eventually(
        async () => (await second.post('keys.verifyKey', { key })).body.code === 'NOT_FOUND',
        { what: 'a deleted key refused on the other node' },
      );
    }
    expect((await api.get('apis.getApi', { apiId })).status).toBe(200);
    expect((await api.get('apis.listKeys', { apiId })).body).toMatchObject({ keys: [], total: 0 });
    // The API takes keys again, and a second call finds none to delete.
    await createKey(api, apiId);
    expect((await api.post('apis.deleteKeys', { apiId })).body).toEqual({ deletedKeys: 1 });
    expect((await api.post('apis.deleteKeys', { apiId })).body).toEqual({ deletedKeys: 0 });
  });

  test('an API that does not exist is 404', async () => {
    const missing = await api.post('apis.deleteKeys', { apiId: 'api_doesnotexist' });
    expect(missing.status).toBe(404);
  });
});

describe('fixed on the way', () => {
  test('a monthly refill without refillDay is stored and shown with refillDay 1', async () => {
    const apiId = await newApi('monthly refill');
    const monthly = { interval: 'monthly', amount: 10 };
    const created = await createKey(api, apiId, { remaining: 10, refill: monthly });
    const shown = await api.get('keys.getKey', { keyId: created.keyId });
    expect(shown.body.refill).toMatchObject({ ...monthly, refillDay: 1 });

    const updated = await createKey(api, apiId, { remaining: 3 });
    await api.post('keys.updateKey', { keyId: updated.keyId, refill: monthly });
    const afterUpdate = await api.get('keys.getKey', { keyId: updated.keyId });
    expect(afterUpdate.body.refill).toMatchObject({ ...monthly, refillDay: 1 });

    const imported = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
      { apiId, plaintext: `monthly_${apiId}`, remaining: 1, refill: monthly },
    ]);
    const importedKey = await api.get('keys.getKey', { keyId: imported.body.keyIds[0]! });
    expect(importedKey.body.refill).toMatchObject({ ...monthly, refillDay: 1 });
  });

  test('updateKey takes remaining: 0, and the key is then used up', async () => {
    const apiId = await newApi('remaining zero');
    const { keyId, key } = await createKey(api, apiId, { remaining: 5 });
    expect((await api.post('keys.updateKey', { keyId, remaining: 0 })).status).toBe(200);
    expect((await api.get('keys.getKey', { keyId })).body.remaining).toBe(0);
    expect((await api.post('keys.verifyKey', { key })).body).toMatchObject({
      valid: false,
      code: 'USAGE_EXCEEDED',
      remaining: 0,
    });
    expect((await api.post('keys.updateKey', { keyId, remaining: -1 })).status).toBe(400);
  });

  test('root create with an empty permission list is refused, never full access', async () => {
    const env = { KEYWARD_REDIS_URL: topology.primary.url };
    for (const permissions of ['', ',', ' , ']) {
      const result = await runCli(['root', 'create', '--permissions', permissions], env);
      expect([permissions, result.code]).not.toEqual([permissions, 0]);
      expect(result.stderr).toContain('permissions: name at least one permission, or *');
      expect(result.stdout).toBe('');
    }
    // Full access only when asked for.
    const star = await runCli(['root', 'create', '--permissions', '*'], env);
    expect(star.code).toBe(0);
    expect(JSON.parse(star.stdout)).toMatchObject({ key: expect.stringMatching(/^kwroot_/) });
  });
});
