import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody } from '../support/rpc';

let topology: Topology;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1, env: { KEYWARD_MANAGEMENT_RATE_LIMIT: '5' } });
});
afterAll(() => topology.stop());

test('management calls beyond the per-root-key limit get 429 with Retry-After; verifications do not count', async () => {
  const api = client(topology.nodes[0]!.url, topology.rootKey);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'limited' })).body
    .apiId;
  const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId })).body;
  const statuses: number[] = [];
  let refused: Awaited<ReturnType<typeof api.get<ErrorBody>>> | undefined;
  for (let i = 0; i < 6; i++) {
    const response = await api.get<ErrorBody>('apis.getApi', { apiId });
    statuses.push(response.status);
    if (response.status === 429) refused = response;
  }
  // 2 calls spent above, 3 left in the bucket of 5 (it refills only after a whole second).
  expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  for (let i = 0; i < 10; i++) expect((await api.post('keys.verifyKey', { key })).status).toBe(200);
  expect(refused!.body.error.code).toBe('RATE_LIMITED');
  expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // Another root key has its own bucket.
  const other = await topology.newRootKey({ workspaceId: topology.workspaceId });
  expect(
    (await client(topology.nodes[0]!.url, other.key).get('apis.getApi', { apiId })).status,
  ).toBe(200);
});
