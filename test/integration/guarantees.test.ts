import type { RunningNode } from '../../src/node';
import { startDelayProxy, type DelayProxy } from '../support/delayProxy';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client } from '../support/rpc';
import { hour } from '../support/helpers';

type Verdict = { valid: boolean; code: string; ratelimit?: { remaining: number } };

describe('concurrency across three nodes, each with its own local Redis', () => {
  let topology: Topology;
  let nodes: Client[];
  let apiId: string;

  beforeAll(async () => {
    topology = await startTopology({ nodes: 3 });
    nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
    apiId = (await nodes[0]!.post<{ apiId: string }>('apis.createApi', { name: 'load' })).body
      .apiId;
  });
  afterAll(() => topology.stop());

  /** `total` verifications at once, spread round-robin over the nodes; admitted count per node. */
  async function burst(key: string, total: number): Promise<number[]> {
    const verdicts = await Promise.all(
      Array.from({ length: total }, async (_, i) => {
        const response = await nodes[i % nodes.length]!.post<Verdict>('keys.verifyKey', { key });
        expect(response.status).toBe(200);
        expect(['VALID', 'RATE_LIMITED']).toContain(response.body.code);
        return { node: i % nodes.length, valid: response.body.valid };
      }),
    );
    return nodes.map((_, n) => verdicts.filter((v) => v.node === n && v.valid).length);
  }

  test('a consistent key admits exactly its limit, whichever nodes verify', async () => {
    const { key } = (
      await nodes[0]!.post<{ key: string }>('keys.createKey', {
        apiId,
        ratelimit: { type: 'consistent', limit: 50, refillRate: 1, refillInterval: hour },
      })
    ).body;
    const perNode = await burst(key, 300);
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(50);
  });

  test('a fast key admits at most its limit per node and nodes × limit in total', async () => {
    const { key } = (
      await nodes[0]!.post<{ key: string }>('keys.createKey', {
        apiId,
        ratelimit: { type: 'fast', limit: 20, refillRate: 1, refillInterval: hour },
      })
    ).body;
    const perNode = await burst(key, 300);
    // Each node saw 100 requests for a bucket of 20: exactly 20 each, 60 in all.
    expect(perNode).toEqual([20, 20, 20]);
  });
});

describe('regions: the primary behind a real delay', () => {
  const ONE_WAY_MS = 40;
  const ROUND_TRIP_MS = 2 * ONE_WAY_MS;
  let proxy: DelayProxy;
  let node: RunningNode;
  let topology: Topology;

  beforeAll(async () => {
    // Reuse the fixture for the primary and a root key, then add a far-away node behind the delay.
    topology = await startTopology({ nodes: 1 });
    proxy = await startDelayProxy(topology.primary.port, ONE_WAY_MS);
    node = await topology.addNode({ primaryUrl: proxy.url, env: { KEYWARD_REGION: 'eu-west-1' } });
  });
  afterAll(async () => {
    await node.close();
    await proxy.close();
    await topology.stop();
  });

  function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  }

  async function latencies(key: string, count: number): Promise<number[]> {
    const far = client(node.url, topology.rootKey);
    await far.post('keys.verifyKey', { key }); // cache the records first
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const response = await far.post<Verdict>('keys.verifyKey', { key });
      samples.push(performance.now() - started);
      expect(response.body.code).toBe('VALID');
    }
    return samples;
  }

  test('fast verifications do not pay the delay; consistent ones pay one round trip', async () => {
    const near = client(topology.nodes[0]!.url, topology.rootKey);
    const apiId = (await near.post<{ apiId: string }>('apis.createApi', { name: 'far' })).body
      .apiId;
    const create = async (type: string) =>
      (
        await near.post<{ key: string }>('keys.createKey', {
          apiId,
          ratelimit: { type, limit: 1000, refillRate: 1000, refillInterval: 1000 },
        })
      ).body.key;
    const fast = median(await latencies(await create('fast'), 15));
    const consistent = median(await latencies(await create('consistent'), 15));
    process.stdout.write(
      `regions: round trip to the primary ${ROUND_TRIP_MS} ms; median verify fast ${fast.toFixed(1)} ms, consistent ${consistent.toFixed(1)} ms\n`,
    );
    // Structural bounds, not speed targets: less than one round trip, or between one and two.
    expect(fast).toBeLessThan(ROUND_TRIP_MS);
    expect(consistent).toBeGreaterThanOrEqual(ROUND_TRIP_MS);
    expect(consistent).toBeLessThan(2 * ROUND_TRIP_MS);
  });
});
