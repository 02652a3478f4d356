/**
 * ratelimits.getUsage over HTTP: the standalone limits of two nodes (v1's limit and multiLimit,
 * v2's ratelimit.limit), passed and refused, read back exactly once flushed, per identifier and as
 * a time series of minutes, hours or days; and its 400s and 404s.
 */
import { bucketStart, type Granularity } from '../../src/domain/usage';
import { names } from '../../src/store/names';
import { eventually, hour } from '../support/helpers';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

interface Row {
  time?: number;
  identifier?: string;
  passed: number;
  limited: number;
  total: number;
}

const NS = 'usage.read';

let topology: Topology;
let nodeA: Client;
let nodeB: Client;
let before: number;
let after: number;

const usage = async (query: Record<string, string | number>) => {
  const answer = await nodeA.get<{ usage: Row[] }>('ratelimits.getUsage', {
    namespaceName: NS,
    ...query,
  });
  expect(answer.status).toBe(200);
  return answer.body.usage;
};

const sum = (rows: readonly Row[]) =>
  rows.reduce(
    (total, row) => ({
      passed: total.passed + row.passed,
      limited: total.limited + row.limited,
      total: total.total + row.total,
    }),
    { passed: 0, limited: 0, total: 0 },
  );

beforeAll(async () => {
  topology = await startTopology({ nodes: 2, env: { KEYWARD_ANALYTICS_FLUSH_MS: '100' } });
  nodeA = client(topology.nodes[0]!.url, topology.rootKey);
  nodeB = client(topology.nodes[1]!.url, topology.rootKey);
  before = Date.now();
  const limit = { namespace: NS, limit: 2, duration: hour };
  const verdicts: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    const answer = await nodeA.post('ratelimits.limit', { ...limit, identifier: 'ursula' });
    verdicts.push(answer.body.success);
  }
  for (let i = 0; i < 2; i++) {
    const answer = await nodeB.post('ratelimits.multiLimit', [
      { ...limit, identifier: 'victor', limit: 1 },
    ]);
    verdicts.push(answer.body.success);
  }
  // v2's route runs the same operation: counted under the same namespace and identifier.
  const v2 = await fetch(`${topology.nodes[1]!.url}/v2/ratelimit.limit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...limit, identifier: 'ursula' }),
  });
  verdicts.push(((await v2.json()) as { data: { success: boolean } }).data.success);
  expect(verdicts).toEqual([true, true, false, true, false, false]);
  after = Date.now();
  await eventually(async () => sum(await usage({ groupBy: 'identifier' })).total === 6, {
    what: 'both nodes to flush',
  });
});
afterAll(() => topology.stop());

test('per identifier: exact counts from both nodes, most used first, limited by limit', async () => {
  expect(await usage({ groupBy: 'identifier' })).toEqual([
    { identifier: 'ursula', passed: 2, limited: 2, total: 4 },
    { identifier: 'victor', passed: 1, limited: 1, total: 2 },
  ]);
  expect(await usage({ groupBy: 'identifier', limit: 1 })).toEqual([
    { identifier: 'ursula', passed: 2, limited: 2, total: 4 },
  ]);
  expect(await usage({ groupBy: 'identifier', identifier: 'victor' })).toEqual([
    { identifier: 'victor', passed: 1, limited: 1, total: 2 },
  ]);
});

test.each<[Granularity, number]>([
  ['minute', 60_000],
  ['hour', hour],
  ['day', 86_400_000],
])('by %s: every bucket of the range in time order, zeros included', async (granularity, size) => {
  const start = bucketStart(granularity, before) - 2 * size;
  const rows = await usage({ granularity, start });
  const times = rows.map((row) => row.time!);
  // From start's bucket to now's, one row each.
  expect(times[0]).toBe(start);
  for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(size);
  expect(times[times.length - 1]).toBeGreaterThanOrEqual(bucketStart(granularity, after));
  expect(sum(rows)).toEqual({ passed: 3, limited: 3, total: 6 });
  // The counts sit in the buckets the limits were decided in.
  for (const row of rows) {
    if (row.total === 0) continue;
    expect(row.time).toBeGreaterThanOrEqual(bucketStart(granularity, before - 1000));
    expect(row.time).toBeLessThanOrEqual(bucketStart(granularity, after + 1000));
  }
  expect(sum(await usage({ granularity, start, identifier: 'victor' }))).toEqual({
    passed: 1,
    limited: 1,
    total: 2,
  });
});

test('by default: the last 24 hours by hour; by namespaceId the same', async () => {
  const byName = await usage({});
  expect(byName).toHaveLength(25);
  expect(sum(byName).total).toBe(6);
  const byId = await nodeB.get<{ usage: Row[] }>('ratelimits.getUsage', {
    namespaceId: await namespaceId(),
  });
  expect(sum(byId.body.usage).total).toBe(6);
});

test('a namespace never used is 404, whether named or by id', async () => {
  const named = await nodeA.get('ratelimits.getUsage', { namespaceName: 'never.used' });
  expect(named.status).toBe(404);
  expect(named.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
  const byId = await nodeA.get('ratelimits.getUsage', {
    namespaceId: 'rlns_1ChFn6PMC5yVErDBdZFGpo',
  });
  expect(byId.status).toBe(404);
});

test('a bad range, a range of too many buckets, or a bad namespace reference is 400', async () => {
  const now = Date.now();
  const bad = async (query: Record<string, string | number>) => {
    const answer = await nodeA.get<{ error: { code: string; message: string } }>(
      'ratelimits.getUsage',
      query,
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('BAD_REQUEST');
    return answer.body.error.message;
  };
  expect(await bad({ namespaceName: NS, start: now, end: now })).toBe(
    'start cannot be equal or greater than end',
  );
  expect(await bad({ namespaceName: NS, start: now, end: now - 1 })).toBe(
    'start cannot be equal or greater than end',
  );
  expect(
    await bad({ namespaceName: NS, granularity: 'minute', start: now, end: now + 3 * 86_400_000 }),
  ).toMatch(/^start, end: at most 3000 minutes at a time/);
  expect(await bad({ namespaceName: NS, granularity: 'week' })).toMatch(/^granularity/);
  expect(await bad({})).toMatch(/^namespaceId/);
  expect(await bad({ namespaceName: NS, namespaceId: 'rlns_1ChFn6PMC5yVErDBdZFGpo' })).toMatch(
    /^namespaceId/,
  );
  expect(await bad({ namespaceName: NS, limit: 5 })).toMatch(/^limit/);
});

/** The namespace's id, which no answer carries: from its record in the primary. */
async function namespaceId(): Promise<string> {
  const primary = await adminRedis(topology.primary.url);
  try {
    const id = await primary.hget(names.namespace(topology.workspaceId, NS), 'id');
    expect(id).toMatch(/^rlns_/);
    return id!;
  } finally {
    await closeRedis(primary);
  }
}
