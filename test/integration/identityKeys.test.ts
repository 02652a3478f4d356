import type { Unkey } from '@unkey/api';
import { ok, v1Sdk } from '../support/v1Sdk';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { assertBuilt, runCli } from '../support/cliProcess';
import { createKey, eventually, hour } from '../support/helpers';

/**
 * Keys and their identities (issue 14): createKey and updateKey link a key to the identity of its
 * externalId (made when missing), answers show it, and an identity's limits are shared by all its
 * keys on every node. Driven with the published v1 SDK, `@unkey/api` 0.38, where it can.
 */
let topology: Topology;
let unkey: Unkey;
let nodes: Client[];
let api: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
  api = nodes[0]!;
  unkey = v1Sdk(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'identities' })).body.apiId;
});
afterAll(() => topology.stop());

type Verdict = {
  code: string;
  ownerId?: string;
  identity?: { id: string; externalId: string; meta: Record<string, unknown> };
  ratelimits?: { name: string; remaining?: number }[];
};

test('createKey with an externalId makes the identity once and links every key to it', async () => {
  const first = await ok(unkey.keys.create({ apiId, externalId: 'acme_corp' }));
  const second = await ok(unkey.keys.create({ apiId, ownerId: 'acme_corp' }));
  const identity = await ok(unkey.identities.get({ externalId: 'acme_corp' }));
  for (const { keyId } of [first, second]) {
    const key = await ok(unkey.keys.get({ keyId }));
    expect(key).toMatchObject({
      ownerId: 'acme_corp',
      identity: { id: identity.id, externalId: 'acme_corp', meta: {} },
    });
  }
  const verdict = (await ok(unkey.keys.verify({ key: first.key }))) as Verdict;
  expect(verdict).toMatchObject({
    code: 'VALID',
    ownerId: 'acme_corp',
    identity: { id: identity.id, externalId: 'acme_corp', meta: {} },
  });
  const listed = await ok(unkey.apis.listKeys({ apiId, externalId: 'acme_corp' }));
  expect(listed.keys.map((k) => k.id).sort()).toEqual([first.keyId, second.keyId].sort());
});

test('the identity’s meta is answered, and an update of it reaches every node', async () => {
  const { identityId } = await ok(
    unkey.identities.create({ externalId: 'meta_corp', meta: { plan: 'pro' } }),
  );
  const { key } = await createKey(api, apiId, { externalId: 'meta_corp' });
  for (const node of nodes) {
    const verdict = (await node.post<Verdict>('keys.verifyKey', { key })).body;
    expect(verdict.identity).toEqual({
      id: identityId,
      externalId: 'meta_corp',
      meta: { plan: 'pro' },
    });
  }
  await ok(unkey.identities.update({ identityId, meta: { plan: 'enterprise' } }));
  await eventually(
    async () => {
      const verdict = (await nodes[1]!.post<Verdict>('keys.verifyKey', { key })).body;
      return verdict.identity?.meta.plan === 'enterprise';
    },
    { what: 'the other node answers the new meta' },
  );
});

test('an identity’s limit is shared: two keys on two nodes admit exactly its limit together', async () => {
  await ok(
    unkey.identities.create({
      externalId: 'shared_corp',
      ratelimits: [{ name: 'requests', limit: 9, duration: hour }],
    }),
  );
  const keys = await Promise.all([
    createKey(api, apiId, { externalId: 'shared_corp' }),
    createKey(api, apiId, { externalId: 'shared_corp' }),
  ]);
  const codes = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      nodes[i % 2]!.post<Verdict>('keys.verifyKey', {
        key: keys[Math.floor(i / 2) % 2]!.key,
        ratelimits: [{ name: 'requests' }],
      }).then((response) => response.body.code),
    ),
  );
  expect(codes.filter((code) => code === 'VALID')).toHaveLength(9);
  expect(codes.filter((code) => code === 'RATE_LIMITED')).toHaveLength(21);
});

test('a key’s own limit of the same name wins over its identity’s', async () => {
  await ok(
    unkey.identities.create({
      externalId: 'override_corp',
      ratelimits: [{ name: 'tokens', limit: 1000, duration: hour }],
    }),
  );
  const { key } = await createKey(api, apiId, {
    externalId: 'override_corp',
    ratelimits: [{ name: 'tokens', limit: 10, duration: hour }],
  });
  const verdict = (await ok(
    unkey.keys.verify({ key, ratelimits: [{ name: 'tokens', cost: 4 }] }),
  )) as Verdict;
  expect(verdict.ratelimits).toEqual([expect.objectContaining({ name: 'tokens', remaining: 6 })]);
});

test('updateKey moves a key to another identity, and externalId null unlinks it', async () => {
  const { keyId, key } = await createKey(api, apiId, { externalId: 'before_corp' });
  await ok(unkey.keys.update({ keyId, externalId: 'after_corp' }));
  const after = await ok(unkey.identities.get({ externalId: 'after_corp' }));
  expect((await ok(unkey.keys.get({ keyId }))).identity).toMatchObject({ id: after.id });
  await ok(unkey.keys.update({ keyId, externalId: null }));
  const unlinked = await ok(unkey.keys.get({ keyId }));
  expect(unlinked.identity).toBeUndefined();
  expect(unlinked.ownerId).toBeUndefined();
  expect(((await ok(unkey.keys.verify({ key }))) as Verdict).identity).toBeUndefined();
});

test('a deleted identity leaves its keys verifying without one, on every node', async () => {
  const { key } = await createKey(api, apiId, { externalId: 'gone_corp' });
  const identity = await ok(unkey.identities.get({ externalId: 'gone_corp' }));
  expect((await nodes[1]!.post<Verdict>('keys.verifyKey', { key })).body.identity).toBeDefined();
  await ok(unkey.identities.delete({ identityId: identity.id }));
  await eventually(
    async () => {
      const verdict = (await nodes[1]!.post<Verdict>('keys.verifyKey', { key })).body;
      return verdict.code === 'VALID' && verdict.identity === undefined;
    },
    { what: 'the other node forgets the identity' },
  );
});

test('an import links keys to identities that exist and creates none', async () => {
  await ok(unkey.identities.create({ externalId: 'imported_corp' }));
  const response = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
    { apiId, plaintext: 'imported_key_one_0001', externalId: 'imported_corp' },
    { apiId, plaintext: 'imported_key_two_0002', externalId: 'nobody_corp' },
  ]);
  expect(response.status).toBe(200);
  const [linked, unlinked] = await Promise.all(
    response.body.keyIds.map((keyId) => ok(unkey.keys.get({ keyId }))),
  );
  expect(linked!.identity).toMatchObject({ externalId: 'imported_corp' });
  expect(unlinked!).toMatchObject({ ownerId: 'nobody_corp' });
  expect(unlinked!.identity).toBeUndefined();
  const missing = await unkey.identities.get({ externalId: 'nobody_corp' });
  expect(missing.error?.code).toBe('NOT_FOUND');
});

test('keyward inspect key shows the identity and every named bucket, read without spending', async () => {
  assertBuilt();
  await ok(
    unkey.identities.create({
      externalId: 'inspected_corp',
      ratelimits: [{ name: 'org', limit: 50, duration: hour }],
    }),
  );
  const { keyId, key } = await createKey(api, apiId, {
    externalId: 'inspected_corp',
    ratelimits: [{ name: 'own', limit: 5, duration: hour, autoApply: true }],
  });
  await ok(unkey.keys.verify({ key, ratelimits: [{ name: 'org', cost: 10 }] }));
  const inspect = (json: boolean) =>
    runCli(
      ['inspect', 'key', '--workspace', topology.workspaceId, keyId, ...(json ? ['--json'] : [])],
      { KEYWARD_REDIS_URL: topology.primary.url },
    );
  const asJson = await inspect(true);
  expect(asJson.code).toBe(0);
  const inspection = JSON.parse(asJson.stdout) as {
    key: { identity?: { externalId: string } };
    namedBuckets: { name: string; owner: string; tokens: number }[];
  };
  expect(inspection.key.identity).toMatchObject({ externalId: 'inspected_corp' });
  expect(inspection.namedBuckets.map(({ name, owner, tokens }) => [name, owner, tokens])).toEqual([
    ['own', 'key', 4],
    ['org', 'identity', 40],
  ]);
  const human = await inspect(false);
  expect(human.stdout).toContain('named limits');
  expect(human.stdout).toMatch(
    / {2}org \(consistent, its identity, shared, 50 every 3600000 ms, in primary\): 40 of 50 tokens/,
  );
  // Reading spent nothing.
  expect(JSON.parse((await inspect(true)).stdout).namedBuckets[1].tokens).toBe(40);
});
