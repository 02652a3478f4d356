import Redis from 'ioredis';
import { createHash } from 'node:crypto';
import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';

let topology: Topology;
let api: Client;
let apiId: string;
let otherApiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'imported' })).body.apiId;
  otherApiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'imported too' })).body
    .apiId;
});
afterAll(() => topology.stop());

const sha = (text: string) => createHash('sha256').update(text).digest('base64');
type Verdict = { valid: boolean; code: string; keyId?: string; remaining?: number };

async function keyCount(): Promise<number> {
  const redis = new Redis(topology.primary.url);
  const count = (await redis.keys(`keyward:keyhash:{*}:${topology.workspaceId}`)).length;
  await redis.quit();
  return count;
}

test('imports keys by plaintext and by hash; users keep their keys', async () => {
  const response = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
    {
      apiId,
      plaintext: 'sk_legacy_aaaaaaaaaaaa',
      prefix: 'sk_legacy',
      name: 'old one',
      ownerId: 'u1',
    },
    {
      apiId: otherApiId,
      hash: { value: sha('hashed_only_secret'), variant: 'sha256_base64' },
      start: 'hash',
      remaining: 2,
    },
    {
      apiId,
      plaintext: 'noprefixsecret',
      ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: 60_000 },
    },
  ]);
  expect(response.status).toBe(200);
  expect(response.body.keyIds).toHaveLength(3);
  const [first, second, third] = response.body.keyIds;

  const verdict = await api.post<Verdict>('keys.verifyKey', { key: 'sk_legacy_aaaaaaaaaaaa' });
  expect(verdict.body).toMatchObject({ valid: true, keyId: first, name: 'old one', ownerId: 'u1' });
  expect((await api.get<{ start: string }>('keys.getKey', { keyId: first! })).body.start).toBe(
    'sk_legacy_aaaa',
  );
  expect(
    (await api.post<Verdict>('keys.verifyKey', { key: 'hashed_only_secret' })).body,
  ).toMatchObject({ keyId: second, remaining: 1 });
  expect(
    (await api.get<{ start: string; apiId: string }>('keys.getKey', { keyId: second! })).body,
  ).toMatchObject({ start: 'hash', apiId: otherApiId });
  expect((await api.post<Verdict>('keys.verifyKey', { key: 'noprefixsecret' })).body.keyId).toBe(
    third,
  );
  expect((await api.post<Verdict>('keys.verifyKey', { key: 'noprefixsecret' })).body.code).toBe(
    'RATE_LIMITED',
  );
  expect((await api.get<{ start: string }>('keys.getKey', { keyId: third! })).body.start).toBe(
    'nopr',
  );
});

test('all or nothing: a duplicate in the batch or in the store is 409 and writes nothing', async () => {
  const before = await keyCount();
  const inBatch = await api.post<ErrorBody>('migrations.createKeys', [
    { apiId, plaintext: 'dup_one_secret' },
    { apiId, hash: { value: sha('dup_one_secret'), variant: 'sha256_base64' } },
  ]);
  expect(inBatch.status).toBe(409);
  expect(inBatch.body.error.code).toBe('CONFLICT');
  const stored = await api.post<ErrorBody>('migrations.createKeys', [
    { apiId, plaintext: 'fresh_secret_1', remaining: 5 },
    { apiId, plaintext: 'sk_legacy_aaaaaaaaaaaa' },
  ]);
  expect(stored.status).toBe(409);
  expect(stored.body.error.message).toBe('[1]: a key with this hash exists already');
  const missingApi = await api.post<ErrorBody>('migrations.createKeys', [
    { apiId, plaintext: 'fresh_secret_2' },
    { apiId: 'api_missing', plaintext: 'fresh_secret_3' },
  ]);
  expect(missingApi.status).toBe(404);
  expect(await keyCount()).toBe(before);
  expect((await api.post<Verdict>('keys.verifyKey', { key: 'fresh_secret_1' })).body.code).toBe(
    'NOT_FOUND',
  );
  expect((await api.post<Verdict>('keys.verifyKey', { key: 'fresh_secret_2' })).body.code).toBe(
    'NOT_FOUND',
  );
  // No orphaned credits either.
  const redis = new Redis(topology.primary.url);
  const credits = await redis.keys('keyward:credits:*');
  await redis.quit();
  expect(credits).toHaveLength(1); // the imported key with remaining: 2 above
});

test.each([
  [[], 'body: must NOT have fewer than 1 items'],
  [
    Array.from({ length: 101 }, (_, i) => ({ apiId: 'api_x', plaintext: `k${i}` })),
    'body: must NOT have more than 100 items',
  ],
  [[{ plaintext: 'x' }], '[0].apiId: is required'],
  [[{ apiId: 'api_x' }], '[0]: give either plaintext or hash'],
  [
    [{ apiId: 'api_x', plaintext: 'a', hash: { value: sha('a'), variant: 'sha256_base64' } }],
    '[0]: give either plaintext or hash',
  ],
  [
    [{ apiId: 'api_x', hash: { value: 'short', variant: 'sha256_base64' } }],
    '[0].hash.value: must be a base64 SHA-256 (44 characters)',
  ],
  [
    [{ apiId: 'api_x', hash: { value: sha('a'), variant: 'md5' } }],
    '[0].hash.variant: must be one of sha256_base64',
  ],
  [{ apiId: 'api_x', plaintext: 'x' }, 'body: must be array'],
])('refuses %#', async (body, message) => {
  const response = await api.post<ErrorBody>('migrations.createKeys', body);
  expect(response.status).toBe(400);
  expect(response.body.error.message).toBe(message);
});

test('needs create_key on every API of the batch', async () => {
  const scoped = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: [`api.${apiId}.create_key`],
  });
  const limited = client(topology.nodes[0]!.url, scoped.key);
  const denied = await limited.post<ErrorBody>('migrations.createKeys', [
    { apiId, plaintext: 'scoped_1' },
    { apiId: otherApiId, plaintext: 'scoped_2' },
  ]);
  expect(denied.status).toBe(403);
  expect(
    (await limited.post('migrations.createKeys', [{ apiId, plaintext: 'scoped_1' }])).status,
  ).toBe(200);
});

test('the same key imported into two workspaces verifies as each workspace’s own', async () => {
  const other = await topology.newRootKey();
  const otherApi = client(topology.nodes[0]!.url, other.key);
  const otherApiId = (await otherApi.post<{ apiId: string }>('apis.createApi', { name: 'twin' }))
    .body.apiId;
  const mine = (
    await api.post<{ keyIds: string[] }>('migrations.createKeys', [
      { apiId, plaintext: 'shared_secret_twin' },
    ])
  ).body.keyIds[0];
  const theirs = (
    await otherApi.post<{ keyIds: string[] }>('migrations.createKeys', [
      { apiId: otherApiId, plaintext: 'shared_secret_twin' },
    ])
  ).body.keyIds[0];
  expect(mine).not.toBe(theirs);
  for (let i = 0; i < 2; i++) {
    expect(
      (await api.post<Verdict>('keys.verifyKey', { key: 'shared_secret_twin' })).body.keyId,
    ).toBe(mine);
    expect(
      (await otherApi.post<Verdict>('keys.verifyKey', { key: 'shared_secret_twin' })).body.keyId,
    ).toBe(theirs);
  }
});
