/**
 * Every reader of usage follows the configured store (issue 24, part 4): with
 * KEYWARD_CLICKHOUSE_URL, v1 analytics.getVerifications, keys.getVerifications,
 * ratelimits.getUsage (what the dashboard's charts read) and `keyward usage` read ClickHouse's
 * rollups; without it, Redis's buckets. One scenario, counted into both (the ClickHouse node with
 * KEYWARD_ANALYTICS_COUNT_IN_REDIS=on, so both stores hold the same verifications), is read
 * through a node of each kind, and every answer must be the same. With ClickHouse, a key's recent
 * verifications are those of every node (part 5).
 */
import {
  CLICKHOUSE_PASSWORD,
  startClickHouse,
  type TestClickHouse,
} from '../support/clickhouseServer';
import { schemaVersion, SCHEMA_VERSION } from '../../src/analytics/clickhouse/schema';
import { runCommand, runCommandJson } from '../support/cliProcess';
import { freePort } from '../support/redisServer';
import { createKey, eventually } from '../support/helpers';
import { client, type Client, type Query } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

let clickhouse: TestClickHouse;
let topology: Topology;
/** Reads Redis. */
let redisNode: Client;
/** Writes both stores, reads ClickHouse. */
let clickhouseNode: Client;
let clickhouseEnv: Record<string, string>;
/** A ClickHouse node of another region that keeps the client's address. */
let farNode: { url: string; api: Client };

beforeAll(async () => {
  clickhouse = await startClickHouse();
  topology = await startTopology({ nodes: 1 });
  clickhouseEnv = { KEYWARD_CLICKHOUSE_URL: clickhouse.url('stores') };
  const node = await topology.addNode({
    env: {
      ...clickhouseEnv,
      KEYWARD_CLICKHOUSE_FLUSH_MS: '50',
      KEYWARD_ANALYTICS_FLUSH_MS: '50',
      KEYWARD_ANALYTICS_COUNT_IN_REDIS: 'on',
    },
  });
  const far = await topology.addNode({
    env: {
      ...clickhouseEnv,
      KEYWARD_CLICKHOUSE_FLUSH_MS: '50',
      KEYWARD_REGION: 'eu-west-1',
      KEYWARD_LOG_CLIENT_IP: 'x-forwarded-for',
    },
  });
  farNode = { url: far.url, api: client(far.url, topology.rootKey) };
  redisNode = client(topology.nodes[0]!.url, topology.rootKey);
  clickhouseNode = client(node.url, topology.rootKey);
}, 60_000);
afterAll(async () => {
  await topology?.stop();
  await clickhouse?.dispose();
});

/** The same call through both nodes: the ClickHouse node's answer, and whether Redis's is equal. */
async function both(method: string, query: Query) {
  const [fromRedis, fromClickHouse] = await Promise.all([
    redisNode.get(method, query),
    clickhouseNode.get(method, query),
  ]);
  expect(fromClickHouse.status).toBe(200);
  return { redis: fromRedis.body, clickhouse: fromClickHouse.body };
}

test('one scenario read from Redis and from ClickHouse gives the same answers', async () => {
  const { apiId } = (await clickhouseNode.post<{ apiId: string }>('apis.createApi', { name: 's' }))
    .body;
  const acme = await createKey(clickhouseNode, apiId, { externalId: 'acme', remaining: 100 });
  const limited = await createKey(clickhouseNode, apiId, {
    ratelimit: { type: 'fast', limit: 2, refillRate: 1, refillInterval: 3_600_000 },
  });
  const verify = (key: string, extra: Record<string, unknown> = {}) =>
    clickhouseNode.post('keys.verifyKey', { apiId, key, ...extra });
  await verify(acme.key, { tags: ['path=/a', 'env=prod'] });
  await verify(acme.key, { tags: ['path=/a'], remaining: { cost: 5 } });
  await verify(acme.key);
  for (let i = 0; i < 4; i++) await verify(limited.key, { tags: ['path=/b'] });
  await verify('not_a_key_at_all');
  for (const identifier of ['ursula', 'ursula', 'ursula', 'victor']) {
    await clickhouseNode.post('ratelimits.limit', {
      namespace: 'stores.ns',
      identifier,
      limit: 2,
      duration: 60_000,
    });
  }

  const start = Date.now() - 3_600_000;
  // Both stores hold every verification: 8 answered, 7 credits spent (1 + 5 + 1).
  const totals = async () => both('analytics.getVerifications', { apiId, start, groupBy: ['key'] });
  await eventually(
    async () => {
      const { redis, clickhouse: fromClickHouse } = await totals();
      const sum = (rows: unknown) =>
        (rows as { total: number; spentCredits: number }[]).reduce(
          (acc, row) => acc + row.total * 1000 + row.spentCredits,
          0,
        );
      return sum(redis) === 8007 && sum(fromClickHouse) === 8007;
    },
    { what: 'every verification counted in both stores', timeoutMs: 20_000 },
  );

  const calls: [string, Query][] = [
    ['analytics.getVerifications', { apiId, start }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['hour'] }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['minute'] }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['day', 'key'] }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['month'] }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['identity'] }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['tags'], orderBy: 'total' }],
    ['analytics.getVerifications', { apiId, start, groupBy: ['tag'], orderBy: 'total' }],
    ['analytics.getVerifications', { apiId, start, keyId: [limited.keyId], groupBy: ['hour'] }],
    ['analytics.getVerifications', { apiId, start, externalId: 'acme' }],
    ['analytics.getVerifications', { apiId, start, tag: ['path=/a'] }],
    ['keys.getVerifications', { keyId: acme.keyId }],
    ['keys.getVerifications', { keyId: limited.keyId }],
    ['keys.getVerifications', { ownerId: 'acme' }],
  ];
  for (const granularity of ['minute', 'hour', 'day']) {
    calls.push(['ratelimits.getUsage', { namespaceName: 'stores.ns', start, granularity }]);
  }
  calls.push(
    ['ratelimits.getUsage', { namespaceName: 'stores.ns', start, groupBy: 'identifier' }],
    ['ratelimits.getUsage', { namespaceName: 'stores.ns', start, identifier: 'ursula' }],
  );
  await eventually(
    async () => {
      const usage = await both('ratelimits.getUsage', {
        namespaceName: 'stores.ns',
        start,
        groupBy: 'identifier',
      });
      return JSON.stringify(usage.clickhouse).includes('"total":3');
    },
    { what: 'the limits in the rollups', timeoutMs: 20_000 },
  );
  for (const [method, query] of calls) {
    const answers = await both(method, query);
    // Sorted where the order is a tie the call leaves open.
    expect({ method, query, answer: canonical(answers.clickhouse) }).toEqual({
      method,
      query,
      answer: canonical(answers.redis),
    });
  }
  // A key's or an identity's minutes: ClickHouse answers them; Redis keeps an API's minutes
  // only, and says so with a 400 (docs/decisions.md, "Per-key minutes").
  for (const query of [
    { apiId, start, groupBy: ['minute', 'key'] },
    { apiId, start, keyId: [limited.keyId], groupBy: ['minute'] },
    { apiId, start, externalId: 'acme', groupBy: ['minute'] },
  ] as Query[]) {
    const [fromRedis, fromClickHouse] = await Promise.all([
      redisNode.get('analytics.getVerifications', query),
      clickhouseNode.get('analytics.getVerifications', query),
    ]);
    expect({ query, redis: fromRedis.status, clickhouse: fromClickHouse.status }).toEqual({
      query,
      redis: 400,
      clickhouse: 200,
    });
    expect(JSON.stringify(fromRedis.body)).toContain('only in ClickHouse');
  }
  // Something was read, not two empty answers.
  expect((await both('keys.getVerifications', { keyId: acme.keyId })).clickhouse).toMatchObject({
    verifications: [{ success: 3, spentCredits: 7 }],
  });

  // `keyward usage` reads the store its environment configures, the same way.
  const env = { KEYWARD_REDIS_URL: topology.primary.url, LOG_LEVEL: 'silent' };
  const args = ['usage', 'api', '--workspace', topology.workspaceId, '--start', '1h', apiId];
  const fromRedis = await runCommandJson<unknown>(args, env);
  const fromClickHouse = await runCommandJson<unknown>(args, { ...env, ...clickhouseEnv });
  expect(canonical(fromClickHouse)).toEqual(canonical(fromRedis));
  expect(JSON.stringify(fromClickHouse)).toContain('"valid":5');
});

test("a key's recent verifications with ClickHouse are every node's, with region, tags and the allowed address", async () => {
  const { apiId } = (await clickhouseNode.post<{ apiId: string }>('apis.createApi', { name: 'r' }))
    .body;
  const { keyId, key } = await createKey(clickhouseNode, apiId);
  expect((await clickhouseNode.post('keys.verifyKey', { key, tags: ['path=/near'] })).status).toBe(
    200,
  );
  // Through a load balancer that appended the address it saw.
  const forwarded = await fetch(`${farNode.url}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${topology.rootKey}`,
      'content-type': 'application/json',
      'x-forwarded-for': '198.51.100.1, 203.0.113.9',
    },
    body: JSON.stringify({ key, apiId: 'api_not_its_own' }),
  });
  expect(((await forwarded.json()) as { code: string }).code).toBe('FORBIDDEN');

  type Recent = { verifications: Record<string, unknown>[]; scope: string };
  const recent = () => clickhouseNode.get<Recent>('keys.getRecentVerifications', { keyId });
  await eventually(async () => (await recent()).body.verifications.length === 2, {
    what: "both nodes' verifications in the log",
    timeoutMs: 20_000,
  });
  const answer = (await recent()).body;
  expect(answer.scope).toBe('every-node');
  // Newest first; two nodes' clocks may differ by a few ms, so which of these two is first is not
  // what this checks.
  expect(answer.verifications.map((v) => v.at as number)).toEqual(
    answer.verifications.map((v) => v.at as number).sort((x, y) => y - x),
  );
  expect([...answer.verifications].sort((x, y) => (x.code! < y.code! ? -1 : 1))).toEqual([
    { at: expect.any(Number), code: 'FORBIDDEN', region: 'eu-west-1', tags: [], ip: '203.0.113.9' },
    { at: expect.any(Number), code: 'VALID', region: 'us-east-1', tags: ['path=/near'] },
  ]);
  // The same from the other node; a node without ClickHouse knows only what it saw: nothing.
  expect((await farNode.api.get<Recent>('keys.getRecentVerifications', { keyId })).body).toEqual(
    answer,
  );
  expect((await redisNode.get<Recent>('keys.getRecentVerifications', { keyId })).body).toEqual({
    verifications: [],
    scope: 'node',
  });
});

test('keyward doctor checks ClickHouse: reachable, its version, the schema, a reader that cannot write', async () => {
  interface Report {
    ok: boolean;
    checks: { target: string; check: string; status: string; detail: string }[];
  }
  const env = { KEYWARD_REDIS_URL: topology.primary.url, LOG_LEVEL: 'silent' };
  const reader = (user: string) =>
    `http://${user}:${CLICKHOUSE_PASSWORD}@127.0.0.1:${clickhouse.httpPort}/stores`;
  const clickhouseLines = (report: Report) =>
    report.checks
      .filter((check) => check.target.startsWith('clickhouse'))
      .map(({ target, check, status }) => `${status} ${target} ${check}`);
  // Exit 1 when a check fails: the report is read from stdout whatever the code.
  const doctor = async (extra: Record<string, string>) => {
    const result = await runCommand(['doctor', '--json'], { ...env, ...extra });
    return { ...(JSON.parse(result.stdout) as Report), code: result.code };
  };
  const deadPort = await freePort();
  // The nodes migrate in the background once started.
  const schema = clickhouse.client('stores');
  await eventually(async () => (await schemaVersion(schema).catch(() => 0)) === SCHEMA_VERSION, {
    what: "the nodes' migration",
  });
  const [healthy, writableReader, fresh, away] = await Promise.all([
    doctor({ ...clickhouseEnv, KEYWARD_CLICKHOUSE_READER_URL: reader('readonly') }),
    doctor({ ...clickhouseEnv, KEYWARD_CLICKHOUSE_READER_URL: reader('keyward') }),
    doctor({ KEYWARD_CLICKHOUSE_URL: clickhouse.url('empty') }),
    doctor({ KEYWARD_CLICKHOUSE_URL: `http://keyward:x@127.0.0.1:${deadPort}/stores` }),
  ]);
  expect(clickhouseLines(healthy)).toEqual([
    'ok clickhouse reachable',
    'ok clickhouse version',
    'ok clickhouse schema',
    'ok clickhouse reader read-only',
  ]);
  expect(
    healthy.checks.find((c) => c.target === 'clickhouse' && c.check === 'version')?.detail,
  ).toMatch(/^ClickHouse 18\.16/);
  // The password is never printed.
  expect(JSON.stringify(healthy)).not.toContain(CLICKHOUSE_PASSWORD);
  expect(clickhouseLines(writableReader)).toContain('fail clickhouse reader read-only');
  expect([writableReader.ok, writableReader.code]).toEqual([false, 1]);
  // A database no node has migrated yet: a warning that says what to run.
  expect(clickhouseLines(fresh)).toContain('warn clickhouse schema');
  expect(fresh.checks.find((c) => c.check === 'schema')?.detail).toContain(
    'keyward clickhouse migrate',
  );
  expect(clickhouseLines(away)).toEqual(['fail clickhouse reachable']);
  expect([away.ok, away.code]).toEqual([false, 1]);
  // And the human form has one line per check, as for Redis.
  const human = await runCommand(['doctor'], { ...env, ...clickhouseEnv });
  expect(human.stdout).toMatch(/^OK\s+clickhouse\s+schema\s+version \d+$/m);
});

/** Arrays of rows sorted by their JSON: rows that tie on the order asked come in either order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(canonical).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v)]));
  }
  return value;
}
