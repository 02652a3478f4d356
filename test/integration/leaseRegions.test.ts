import { startDelayProxy, type DelayProxy } from '../support/delayProxy';
import type { KeywardProcess } from '../support/keywardProcess';
import { redisCli, startRedis, type TestRedis } from '../support/redisServer';
import { runCommand, runCommandJson } from '../support/cliProcess';
import { client, type Client } from '../support/rpc';
import { hour, sleep } from '../support/helpers';
import { startProcessTopology, type ProcessTopology } from '../support/topology';

/**
 * Leases across regions (issue 27; docs/guarantees.md "Leases"), as deployed: a primary with a
 * node of its own region beside it, and a far region whose two nodes reach the primary through a
 * relay that holds every chunk 25 ms each way and share one region Redis. The far nodes run with
 * KEYWARD_CONSISTENT_LEASES=on and leases of 2 s.
 */

type Verdict = { valid: boolean; code: string; ratelimit?: { remaining: number } };

const ONE_WAY_MS = 25;
const ROUND_TRIP_MS = 2 * ONE_WAY_MS;
const LEASE_TTL_MS = 2000;

let topology: ProcessTopology;
let proxy: DelayProxy;
let regionRedis: TestRedis;
let farA: KeywardProcess;
let farB: KeywardProcess;
let near: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startProcessTopology({ nodes: 1 });
  proxy = await startDelayProxy(topology.primary.port, ONE_WAY_MS);
  regionRedis = await startRedis();
  const far = () =>
    topology.addNode({
      primaryUrl: proxy.url,
      localUrl: regionRedis.url,
      env: {
        KEYWARD_REGION: 'eu-west-1',
        KEYWARD_CONSISTENT_LEASES: 'on',
        KEYWARD_LEASE_TTL_MS: String(LEASE_TTL_MS),
        // Leases are about what a region holds; 50 % lets a test see one drained in few calls.
        KEYWARD_LEASE_MAX_PERCENT: '50',
      },
    });
  [farA, farB] = [await far(), await far()];
  near = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await near.post<{ apiId: string }>('apis.createApi', { name: 'leases' })).body.apiId;
});

afterAll(async () => {
  await topology?.stop();
  await proxy?.close();
  await regionRedis?.dispose();
});

async function consistentKey(limit: number, refillRate: number, refillInterval: number) {
  return (
    await near.post<{ key: string }>('keys.createKey', {
      apiId,
      ratelimit: { type: 'consistent', limit, refillRate, refillInterval },
    })
  ).body.key;
}

/** The node's count of consistent verifications decided at `where`. */
async function decided(node: KeywardProcess, where: 'lease' | 'primary'): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`keyward_lease_decisions_total{where="${where}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Verifications one after another until one is refused (or `most`); the number admitted. */
async function drain(node: Client, key: string, most: number): Promise<number> {
  let admitted = 0;
  while (admitted < most) {
    const { body } = await node.post<Verdict>('keys.verifyKey', { key });
    if (!body.valid) break;
    admitted += 1;
  }
  return admitted;
}

test('a warm consistent verification in the far region is decided on its own Redis', async () => {
  const key = await consistentKey(1000, 1000, 1000);
  const farClient = client(farA.url, topology.rootKey);
  const before = await decided(farA, 'lease');
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    const { body } = await farClient.post<Verdict>('keys.verifyKey', { key });
    samples.push(performance.now() - started);
    expect(body.code).toBe('VALID');
  }
  // The first two go to the primary (the second takes the lease); the rest stay in the region.
  expect((await decided(farA, 'lease')) - before).toBeGreaterThanOrEqual(26);
  // A structural bound, not a speed target: most verifications cost less than a round trip.
  expect(median(samples)).toBeLessThan(ROUND_TRIP_MS);
});

test('keys.getBucket answers the primary’s bucket; keyward inspect key shows what is out on lease', async () => {
  const { key, keyId } = (
    await near.post<{ key: string; keyId: string }>('keys.createKey', {
      apiId,
      ratelimit: { type: 'consistent', limit: 100, refillRate: 1, refillInterval: hour },
    })
  ).body;
  const far = client(farA.url, topology.rootKey);
  expect(await drain(far, key, 3)).toBe(3);
  type Bucket = { ratelimit: { remaining: number } };
  // A read asks the primary, in either region, and takes no lease of its own.
  const [fromFar, fromNear] = await Promise.all([
    far.get<Bucket>('keys.getBucket', { keyId }),
    near.get<Bucket>('keys.getBucket', { keyId }),
  ]);
  expect(fromFar.body.ratelimit.remaining).toBe(fromNear.body.ratelimit.remaining);
  const env = {
    KEYWARD_REDIS_URL: topology.primary.url,
    KEYWARD_LOCAL_REDIS_URL: regionRedis.url,
    LOG_LEVEL: 'silent',
  };
  type Reading = {
    redis: string;
    tokens: number;
    leases: { holder: string; granted: number }[];
    regionLease: { tokens: number } | null;
  };
  const inspection = await runCommandJson<{ buckets: Reading[] }>(
    ['inspect', 'key', '--workspace', topology.workspaceId, keyId],
    env,
  );
  const [primary, region] = inspection.buckets as [Reading, Reading];
  expect(primary.leases).toEqual([
    { holder: 'eu-west-1', granted: expect.any(Number), expiresAt: expect.any(Number) },
  ]);
  // The region can spend no more than the primary counts out to it; what the primary holds,
  // what the region holds and the 3 spent are the limit, every token in exactly one place.
  expect(region.regionLease!.tokens).toBeLessThanOrEqual(primary.leases[0]!.granted);
  expect(primary.tokens + region.regionLease!.tokens + 3).toBe(100);
  expect(fromNear.body.ratelimit.remaining).toBe(primary.tokens);
  const human = await runCommand(
    ['inspect', 'key', '--workspace', topology.workspaceId, keyId],
    env,
  );
  expect(human.stdout).toMatch(/out on lease to eu-west-1: \d+ tokens until /);
  expect(human.stdout).toMatch(/this region's lease: \d+ tokens left until /);
});

test('never exceeded: both regions at once admit no more than the limit', async () => {
  const key = await consistentKey(40, 1, hour);
  const clients = [near, client(farA.url, topology.rootKey), client(farB.url, topology.rootKey)];
  const verdicts = await Promise.all(
    Array.from({ length: 150 }, async (_, i) => {
      const { status, body } = await clients[i % 3]!.post<Verdict>('keys.verifyKey', { key });
      expect(status).toBe(200);
      expect(['VALID', 'RATE_LIMITED']).toContain(body.code);
      return body.valid;
    }),
  );
  const admitted = verdicts.filter(Boolean).length;
  expect(admitted).toBeLessThanOrEqual(40);
  // What a lease still held when the burst ended is the only shortfall.
  expect(admitted).toBeGreaterThan(20);
});

test('a node SIGKILLed while its region holds a lease: its region spends it, the limit holds, and the room comes back after the lease', async () => {
  // 20 tokens, all back within one 3 s interval.
  const key = await consistentKey(20, 20, 3000);
  const a = client(farA.url, topology.rootKey);
  // Two verifications: the second takes a lease of half of what is left.
  expect(await drain(a, key, 2)).toBe(2);
  await farA.stop('SIGKILL');
  {
    // The lease lives in the region's Redis, not in the node: the other node spends it.
    const fromRegion = await drain(client(farB.url, topology.rootKey), key, 9);
    const fromPrimary = await drain(near, key, 40);
    expect(2 + fromRegion + fromPrimary).toBeLessThanOrEqual(20);
    expect(fromRegion).toBe(9);
    // Once the lease has ended and an interval passed, the bucket is whole again.
    await sleep(LEASE_TTL_MS + 3000 + 200);
    expect(await drain(near, key, 40)).toBe(20);
  }
});

test('the primary unreachable: the region spends what it leased, then answers as KEYWARD_LIMITER_FAILURE says', async () => {
  const key = await consistentKey(100, 1, hour);
  const b = client(farB.url, topology.rootKey);
  expect(await drain(b, key, 3)).toBe(3);
  const leaseKey = (
    await redisCli(regionRedis.port, '--scan', '--pattern', 'keyward:lease:*')
  ).trim();
  const leased = Number(await redisCli(regionRedis.port, 'hget', leaseKey, 'tokens'));
  expect(leased).toBeGreaterThan(0);
  // The relay cut: nothing reaches the primary from the far region any more.
  await proxy.close();
  expect(await drain(b, key, 100)).toBe(leased);
  // Then every verification needs the primary: KEYWARD_LIMITER_FAILURE=closed (the default).
  for (let i = 0; i < 2; i++) {
    expect((await b.post<Verdict>('keys.verifyKey', { key })).body.code).toBe(
      'LIMITER_UNAVAILABLE',
    );
  }
});
