import { Unkey } from 'unkey-api-v2';
import { eventually } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * `lastUsedAt` (issue: Unkey's v2 key shape): the time of a key's latest verification in getKey
 * and listKeys, in both dialects, written by each node's flush (here every 50 ms) and never by
 * the verification itself.
 */
let topology: Topology;
let v1: Client;
let v2: Unkey;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2, env: { KEYWARD_ANALYTICS_FLUSH_MS: '50' } });
  v1 = client(topology.nodes[0]!.url, topology.rootKey);
  v2 = new Unkey({ rootKey: topology.rootKey, serverURL: topology.nodes[1]!.url });
});
afterAll(() => topology?.stop());

test('getKey and listKeys answer the latest verification of any node; a key never verified has none', async () => {
  const apiId = (await v1.post<{ apiId: string }>('apis.createApi', { name: 'last use' })).body
    .apiId;
  const used = (await v1.post<{ keyId: string; key: string }>('keys.createKey', { apiId })).body;
  const unused = (await v1.post<{ keyId: string }>('keys.createKey', { apiId })).body;
  const lastUsedAt = async () =>
    (await v1.get<{ lastUsedAt?: number }>('keys.getKey', { keyId: used.keyId })).body.lastUsedAt;

  const before = Date.now();
  await v1.post('keys.verifyKey', { key: used.key });
  const after = Date.now();
  await eventually(async () => (await lastUsedAt()) !== undefined, { what: 'the first flush' });
  const first = (await lastUsedAt())!;
  expect(first).toBeGreaterThanOrEqual(before);
  expect(first).toBeLessThanOrEqual(after);

  // A later verification through the other node moves it on, in v2's answers too.
  const again = Date.now();
  await v2.keys.verifyKey({ key: used.key });
  await eventually(async () => (await lastUsedAt())! >= again, { what: 'the second flush' });
  const { data } = await v2.keys.getKey({ keyId: used.keyId });
  expect(data.lastUsedAt).toBe(await lastUsedAt());

  const page = await v1.get<{ keys: { id: string; lastUsedAt?: number }[] }>('apis.listKeys', {
    apiId,
  });
  const byId = new Map(page.body.keys.map((key) => [key.id, key.lastUsedAt]));
  expect(byId.get(used.keyId)).toBe(await lastUsedAt());
  expect(byId.has(unused.keyId)).toBe(true);
  expect(byId.get(unused.keyId)).toBeUndefined();
  const listed = [];
  for await (const page of await v2.apis.listKeys({ apiId })) listed.push(...page.result.data);
  expect(listed.find((key) => key.keyId === used.keyId)?.lastUsedAt).toBe(await lastUsedAt());
});

test('a refused verification is a use too; a deleted key is not brought back by a late flush', async () => {
  const apiId = (await v1.post<{ apiId: string }>('apis.createApi', { name: 'last use 2' })).body
    .apiId;
  const disabled = (
    await v1.post<{ keyId: string; key: string }>('keys.createKey', { apiId, enabled: false })
  ).body;
  const { body } = await v1.post<{ code: string }>('keys.verifyKey', { key: disabled.key });
  expect(body.code).toBe('DISABLED');
  await eventually(
    async () =>
      (await v1.get<{ lastUsedAt?: number }>('keys.getKey', { keyId: disabled.keyId })).body
        .lastUsedAt !== undefined,
    { what: 'the flush' },
  );

  const doomed = (await v1.post<{ keyId: string; key: string }>('keys.createKey', { apiId })).body;
  await v1.post('keys.verifyKey', { key: doomed.key });
  await v1.post('keys.deleteKey', { keyId: doomed.keyId });
  // Past several flushes: the record stays a tombstone or gone, never a fragment.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await v1.get('keys.getKey', { keyId: doomed.keyId })).status).toBe(404);
});
