import { startTopology, type Topology } from '../support/topology';
import { client } from '../support/rpc';

/**
 * With KEYWARD_SHUTDOWN_DRAIN_MS, a stopping node first tells load balancers (liveness 503) while
 * it keeps answering, and only then closes its listener.
 */
let topology: Topology;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1, env: { KEYWARD_SHUTDOWN_DRAIN_MS: '400' } });
});
afterAll(() => topology.stop());

test('during the drain: liveness 503, requests still answered with Connection: close; then refused', async () => {
  const node = topology.nodes[0]!;
  const api = client(node.url, topology.rootKey);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'drain' })).body.apiId;
  const { key } = (await api.post<{ key: string }>('keys.createKey', { apiId })).body;

  const closed = node.close();
  const liveness = await fetch(`${node.url}/v1/liveness`);
  expect(liveness.status).toBe(503);
  expect(await liveness.json()).toMatchObject({ status: 'draining' });
  const verdict = await api.post<{ code: string }>('keys.verifyKey', { key });
  expect(verdict.body.code).toBe('VALID');
  expect(verdict.headers.get('connection')).toBe('close');

  await closed;
  await expect(fetch(`${node.url}/v1/liveness`)).rejects.toThrow();
});
