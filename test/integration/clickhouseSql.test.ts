/**
 * v2's SQL analytics against a real clickhouse-server (Debian's 18.16): nodes write the rows of
 * two workspaces, and the caller's SQL reads its own only, through the published v2 client and
 * raw requests, as the read-only user of KEYWARD_CLICKHOUSE_READER_URL. Hostile queries are
 * refused with 400 before ClickHouse sees them, limits are 422, and nothing of another
 * workspace, another API or ClickHouse itself comes back.
 */
import { Unkey } from 'unkey-api-v2';
import { ClickHouseClient, ClickHouseError } from '../../src/analytics/clickhouse/client';
import { parseClickHouseUrl } from '../../src/analytics/clickhouse/url';
import {
  startClickHouse,
  CLICKHOUSE_PASSWORD,
  type TestClickHouse,
} from '../support/clickhouseServer';
import { createKey, eventually } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startProcessTopology, type ProcessTopology } from '../support/topology';

const ERRORS = 'https://unkey.com/docs/errors';

let clickhouse: TestClickHouse;
let topology: ProcessTopology;
let url: string;
let admin: Client;
let unkey: Unkey;
let apiA: string;
let apiB: string;
let otherApi: string;
let otherRootKey: string;

beforeAll(async () => {
  clickhouse = await startClickHouse();
  topology = await startProcessTopology({
    nodes: 2,
    env: {
      KEYWARD_CLICKHOUSE_URL: clickhouse.url('sql'),
      KEYWARD_CLICKHOUSE_READER_URL: `http://readonly:${CLICKHOUSE_PASSWORD}@127.0.0.1:${clickhouse.httpPort}/sql`,
      KEYWARD_CLICKHOUSE_FLUSH_MS: '100',
      KEYWARD_CLICKHOUSE_QUERY_MAX_RESULT_ROWS: '50',
      // ClickHouse counts whole granules (8,192 rows) of every part it reads: the few rows here
      // come in many small parts, and must stay well under it.
      KEYWARD_CLICKHOUSE_QUERY_MAX_ROWS_TO_READ: '500000',
    },
  });
  url = topology.nodes[0]!.url;
  admin = client(url, topology.rootKey);
  unkey = new Unkey({ rootKey: topology.rootKey, serverURL: url });

  apiA = (await admin.post<{ apiId: string }>('apis.createApi', { name: 'sql-a' })).body.apiId;
  apiB = (await admin.post<{ apiId: string }>('apis.createApi', { name: 'sql-b' })).body.apiId;
  const other = await topology.newRootKey();
  otherRootKey = other.key;
  const otherAdmin = client(topology.nodes[1]!.url, otherRootKey);
  otherApi = (await otherAdmin.post<{ apiId: string }>('apis.createApi', { name: 'sql-o' })).body
    .apiId;

  // Own workspace: 3 valid + 1 not found on API A (tagged), 2 valid on API B, over both nodes.
  const a = await createKey(admin, apiA, { externalId: 'acme' });
  const b = await createKey(admin, apiB);
  const nodeB = client(topology.nodes[1]!.url, topology.rootKey);
  for (const node of [admin, nodeB, admin]) {
    await node.post('keys.verifyKey', { apiId: apiA, key: a.key, tags: ['path=/a'] });
  }
  await admin.post('keys.verifyKey', { apiId: apiA, key: 'nope_123' });
  for (const node of [admin, nodeB]) await node.post('keys.verifyKey', { apiId: apiB, key: b.key });
  // Another workspace: 5 verifications, which no query of ours may see.
  const o = await createKey(otherAdmin, otherApi);
  for (let i = 0; i < 5; i++)
    await otherAdmin.post('keys.verifyKey', { apiId: otherApi, key: o.key });

  // Every row landed (read as the writer), and the day rollup has them.
  const writer = clickhouse.client('sql');
  try {
    await eventually(
      async () => {
        const [row] = await writer.rows<{ n: string }>(
          'SELECT sum(count) AS n FROM key_verifications_per_day_v1',
        );
        expect(Number(row?.n)).toBe(11);
        return true;
      },
      { timeoutMs: 20_000 },
    );
  } finally {
    writer.close();
  }
}, 90_000);

afterAll(async () => {
  await topology?.stop();
  await clickhouse?.dispose();
});

/** A v2 answer: rows, or a problem (`errors` on a 400). */
interface V2Answer {
  meta: { requestId: string };
  data: Record<string, unknown>[];
  error: { type: string; status: number; errors: { location: string }[] };
}

async function raw(
  query: unknown,
  rootKey = topology.rootKey,
  name = 'analytics.getVerifications',
): Promise<{ status: number; body: V2Answer }> {
  const response = await fetch(`${url}/v2/${name}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${rootKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as V2Answer };
}

test('the published v2 client reads its workspace’s verifications with SQL', async () => {
  const answer = await unkey.analytics.getVerifications({
    query:
      'SELECT outcome, count() AS total FROM key_verifications_v1 GROUP BY outcome ORDER BY outcome',
  });
  expect(answer.meta.requestId).toMatch(/^req_/);
  expect(answer.data).toEqual([
    { outcome: 'NOT_FOUND', total: 1 },
    { outcome: 'VALID', total: 5 },
  ]);
  const perApi = await raw(
    "SELECT key_space_id, sum(count) AS n FROM key_verifications_per_day_v1 WHERE outcome = 'VALID' GROUP BY key_space_id ORDER BY n DESC",
  );
  expect(perApi).toEqual({
    status: 200,
    body: {
      meta: { requestId: expect.stringMatching(/^req_/) },
      data: [
        { key_space_id: apiA, n: 3 },
        { key_space_id: apiB, n: 2 },
      ],
    },
  });
});

test('subqueries, CTEs (inlined), UNION ALL, JOINs, arrays and tags work on ClickHouse 18.16', async () => {
  const cases: [string, unknown[]][] = [
    [
      "WITH tagged AS (SELECT key_id FROM key_verifications_v1 WHERE has(tags, 'path=/a')) SELECT count() AS n FROM tagged",
      [{ n: 3 }],
    ],
    [
      "SELECT count() AS n FROM key_verifications_v1 WHERE hasAny(tags, ['path=/a', 'x']) AND external_id = 'acme'",
      [{ n: 3 }],
    ],
    [
      'SELECT n FROM (SELECT count() AS n FROM key_verifications_v1) AS s UNION ALL SELECT sum(count) AS n FROM key_verifications_per_hour_v1',
      [{ n: 6 }, { n: 6 }],
    ],
    [
      `SELECT count() AS n FROM key_verifications_v1 AS v INNER JOIN (SELECT DISTINCT key_id FROM key_verifications_per_month_v1 WHERE key_space_id = '${apiB}') AS m ON v.key_id = m.key_id`,
      [{ n: 2 }],
    ],
    [
      // The NOT_FOUND row's key_id is '', which the minute rollup has too.
      'SELECT count() AS n FROM key_verifications_v1 WHERE key_id IN (SELECT key_id FROM key_verifications_per_minute_v1)',
      [{ n: 6 }],
    ],
    [
      'SELECT arrayJoin(tags) AS tag, count() AS n FROM key_verifications_v1 GROUP BY tag',
      [{ tag: 'path=/a', n: 3 }],
    ],
  ];
  for (const [query, data] of cases) {
    const answer = await raw(query);
    expect([query, answer.status, answer.body.data ?? answer.body.error]).toEqual([
      query,
      200,
      data,
    ]);
  }
});

test('another workspace’s rows never come back, whatever the query says', async () => {
  for (const query of [
    'SELECT count() AS n FROM key_verifications_v1',
    `SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = '${otherApi}'`,
    "SELECT count() AS n FROM key_verifications_v1 WHERE workspace_id != '' OR 1 = 1",
    'SELECT count() AS n FROM (SELECT * FROM key_verifications_v1) AS key_verifications_v1',
  ]) {
    const answer = await raw(query);
    expect([query, answer.status]).toEqual([query, 200]);
    expect(answer.body.data[0]?.n).toBeLessThanOrEqual(6);
    const theirs = await raw(query, otherRootKey);
    expect([query, theirs.body.data]).toEqual([query, [{ n: 5 }]]);
  }
  // The other workspace reads its own 5, none of ours.
  const mine = await raw(
    `SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = '${apiA}'`,
    otherRootKey,
  );
  expect(mine.body.data).toEqual([{ n: 0 }]);
});

test('a root key that reads some APIs reads their rows only; without read_analytics it is 403', async () => {
  const scoped = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: [`api.${apiB}.read_analytics`],
  });
  const answer = await raw(
    'SELECT key_space_id, count() AS n FROM key_verifications_v1 GROUP BY key_space_id',
    scoped.key,
  );
  expect(answer.body.data).toEqual([{ key_space_id: apiB, n: 2 }]);
  const none = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['api.*.read_api'],
  });
  const refused = await raw('SELECT count() AS n FROM key_verifications_v1', none.key);
  expect(refused.status).toBe(403);
  expect(refused.body.error.type).toBe(`${ERRORS}/unkey/authorization/insufficient_permissions`);
});

test.each([
  ['system.tables', 'SELECT name FROM system.tables', 'invalid_analytics_table'],
  [
    'a database-qualified name',
    'SELECT * FROM sql.key_verifications_v1',
    'invalid_analytics_table',
  ],
  ['url()', "SELECT * FROM url('http://127.0.0.1:1/', CSV, 'a String')", 'invalid_analytics_table'],
  ['file()', "SELECT * FROM file('/etc/passwd', CSV, 'a String')", 'invalid_analytics_table'],
  [
    'a block comment',
    'SELECT * FROM /* key_verifications_v1 */ system.tables',
    'invalid_analytics_table',
  ],
  [
    'a line comment',
    'SELECT key_id FROM key_verifications_v1 -- x\nUNION ALL SELECT name FROM system.tables',
    'invalid_analytics_table',
  ],
  ['backticks', 'SELECT * FROM `system`.`tables`', 'invalid_analytics_table'],
  ['a backticked dotted name', 'SELECT * FROM `system.tables`', 'invalid_analytics_table'],
  [
    'double quotes around a quote',
    'SELECT "x\' , (SELECT 1 FROM system.one) , \'" AS s FROM key_verifications_v1',
    'invalid_analytics_query',
  ],
  [
    'a backslash escape',
    "SELECT 'a\\', key_id, ' FROM system.tables --' FROM key_verifications_v1",
    'invalid_analytics_table',
  ],
  [
    'SETTINGS',
    'SELECT * FROM key_verifications_v1 SETTINGS max_rows_to_read = 0',
    'invalid_analytics_query',
  ],
  [
    'INTO OUTFILE',
    "SELECT * FROM key_verifications_v1 INTO OUTFILE '/tmp/x'",
    'invalid_analytics_query',
  ],
  ['FORMAT', 'SELECT * FROM key_verifications_v1 FORMAT TSV', 'invalid_analytics_query'],
  [
    'several statements',
    'SELECT 1 AS a FROM key_verifications_v1; SELECT 2 AS b FROM key_verifications_v1',
    'invalid_analytics_query',
  ],
  [
    'a write',
    "INSERT INTO key_verifications_v1 (key_id) VALUES ('x')",
    'invalid_analytics_query_type',
  ],
  [
    'an alias shadowing a public name',
    'SELECT * FROM keyward_batches_v1 AS key_verifications_v1',
    'invalid_analytics_table',
  ],
  [
    'a CTE shadowing a public name',
    'WITH key_verifications_v1 AS (SELECT * FROM system.tables) SELECT * FROM key_verifications_v1',
    'invalid_analytics_table',
  ],
  [
    'a subquery of a forbidden table',
    'SELECT * FROM key_verifications_v1 WHERE key_id IN (SELECT name FROM system.tables)',
    'invalid_analytics_table',
  ],
  [
    'UNION ALL with a forbidden table',
    'SELECT key_id FROM key_verifications_v1 UNION ALL SELECT batch_id FROM keyward_batches_v1',
    'invalid_analytics_table',
  ],
  ['a rate-limit table', 'SELECT * FROM ratelimits_v1', 'invalid_analytics_table'],
  [
    'a function off the list',
    'SELECT currentDatabase() AS d FROM key_verifications_v1',
    'invalid_analytics_function',
  ],
  [
    'what ClickHouse cannot run',
    'SELECT no_such_column FROM key_verifications_v1',
    'invalid_analytics_query',
  ],
])('%s is 400', async (_, query, type) => {
  const answer = await raw(query);
  expect([answer.status, answer.body.error?.type]).toEqual([
    400,
    `${ERRORS}/user/bad_request/${type}`,
  ]);
  expect(answer.body.error.errors[0]?.location).toBe('body.query');
});

test('a result past the limit is 422, in Unkey’s type', async () => {
  const answer = await raw(
    'SELECT arrayJoin([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) AS i FROM key_verifications_v1',
  );
  expect(answer.status).toBe(422);
  expect(answer.body.error).toMatchObject({
    status: 422,
    title: 'Unprocessable Entity',
    type: `${ERRORS}/user/unprocessable_entity/query_memory_limit_exceeded`,
  });
});

test('v2 analytics.getRatelimits reads the standalone limits of the namespaces the key may read', async () => {
  for (const identifier of ['u1', 'u1', 'u2']) {
    await admin.post('ratelimits.limit', {
      namespace: 'sql.ns',
      identifier,
      limit: 10,
      duration: 60_000,
    });
  }
  await admin.post('ratelimits.limit', {
    namespace: 'sql.other',
    identifier: 'u1',
    limit: 10,
    duration: 60_000,
  });
  const query =
    'SELECT identifier, sum(passed) AS passed, count() AS total FROM ratelimits_v1 GROUP BY identifier ORDER BY identifier';
  await eventually(
    async () => {
      const all = await raw(
        'SELECT count() AS n FROM ratelimits_v1',
        topology.rootKey,
        'analytics.getRatelimits',
      );
      expect(all.body.data).toEqual([{ n: 4 }]);
      return true;
    },
    { timeoutMs: 20_000 },
  );
  const scoped = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: ['ratelimit.sql.ns.read_analytics'],
  });
  const answer = await raw(query, scoped.key, 'analytics.getRatelimits');
  expect(answer).toMatchObject({
    status: 200,
    body: {
      data: [
        { identifier: 'u1', passed: 2, total: 2 },
        { identifier: 'u2', passed: 1, total: 1 },
      ],
    },
  });
  const other = await raw(
    'SELECT count() AS n FROM ratelimits_v1',
    otherRootKey,
    'analytics.getRatelimits',
  );
  expect(other.body.data).toEqual([{ n: 0 }]);
  const verifications = await raw(
    'SELECT * FROM key_verifications_v1',
    topology.rootKey,
    'analytics.getRatelimits',
  );
  expect(verifications.body.error.type).toBe(`${ERRORS}/user/bad_request/invalid_analytics_table`);
});

test('the reader user can neither write nor change the schema, whatever reached it', async () => {
  const reader = new ClickHouseClient(
    parseClickHouseUrl(
      `http://readonly:${CLICKHOUSE_PASSWORD}@127.0.0.1:${clickhouse.httpPort}/sql`,
    ),
    5000,
  );
  try {
    for (const statement of [
      "INSERT INTO key_verifications_v1 (workspace_id) VALUES ('x')",
      'DROP TABLE key_verifications_v1',
      'SET readonly = 0',
    ]) {
      const error = (await reader.exec(statement).catch((e: unknown) => e)) as ClickHouseError;
      expect([statement, error instanceof ClickHouseError && error.code]).toEqual([statement, 164]);
    }
  } finally {
    reader.close();
  }
});

test('a time filter reaches the rows of the workspace (read by the primary key); reading too many rows is 422', async () => {
  // Last: 1,000,000 old rows of this workspace, which the counts above do not expect.
  const writer = clickhouse.client('sql');
  try {
    await writer.exec(
      `INSERT INTO key_verifications_v1 (request_id, time, workspace_id, key_space_id, outcome)
       SELECT 'bulk', toInt64(number), '${topology.workspaceId}', '${apiA}', 'VALID'
       FROM system.numbers LIMIT 1000000`,
    );
  } finally {
    writer.close();
  }
  const recent = await raw('SELECT count() AS n FROM key_verifications_v1 WHERE time < 1000');
  expect(recent).toMatchObject({ status: 200, body: { data: [{ n: 1000 }] } });
  const everything = await raw('SELECT count() AS n FROM key_verifications_v1');
  expect(everything.status).toBe(422);
  expect(everything.body.error.type).toBe(
    `${ERRORS}/user/unprocessable_entity/query_rows_limit_exceeded`,
  );
});
