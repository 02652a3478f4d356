import { startTopology, type Topology } from '../support/topology';

let topology: Topology;
beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
});
afterAll(() => topology.stop());

test('liveness answers without authentication and reports each Redis', async () => {
  const response = await fetch(`${topology.nodes[0]!.url}/v1/liveness`);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  const body = (await response.json()) as {
    status: string;
    services: Record<string, { status: string }>;
  };
  expect(body.status).toBe('ok');
  expect(body.services.primary?.status).toBe('ok');
  expect(body.services.local?.status).toBe('ok');
  expect(body.services.invalidation?.status).toBe('subscribed');
});

test('liveness answers 503 when the local Redis is down', async () => {
  await topology.locals[0]!.stop();
  const response = await fetch(`${topology.nodes[0]!.url}/v1/liveness`);
  expect(response.status).toBe(503);
  const body = (await response.json()) as { services: Record<string, { status: string }> };
  expect(body.services.local?.status).toBe('down');
  expect(body.services.primary?.status).toBe('ok');
});
