import {
  QueryRefused,
  rewriteQuery,
  type QueryScope,
} from '../../src/analytics/clickhouse/sqlQuery';

const scope: QueryScope = {
  tables: new Set(['key_verifications_v1', 'key_verifications_per_day_v1']),
  filters: [{ column: 'workspace_id', values: 'ws_1' }],
};
const scoped: QueryScope = {
  ...scope,
  filters: [...scope.filters, { column: 'key_space_id', values: ['api_1', 'api_2'] }],
};
const RAW = "(SELECT * FROM key_verifications_v1 WHERE workspace_id = 'ws_1')";

function refused(sql: string): string {
  try {
    rewriteQuery(sql, scope);
  } catch (error) {
    if (error instanceof QueryRefused) return error.kind;
    throw error;
  }
  throw new Error(`not refused: ${sql}`);
}

test('every public table becomes a subquery of the caller’s rows, under its own name or alias', () => {
  expect(rewriteQuery('SELECT count() AS n FROM key_verifications_v1', scope)).toBe(
    `SELECT count() AS n FROM ${RAW} AS key_verifications_v1`,
  );
  expect(rewriteQuery('SELECT v.key_id FROM key_verifications_v1 v', scope)).toBe(
    `SELECT v.key_id FROM ${RAW} AS v`,
  );
  expect(rewriteQuery('SELECT key_id FROM key_verifications_v1', scoped)).toBe(
    "SELECT key_id FROM (SELECT * FROM key_verifications_v1 WHERE workspace_id = 'ws_1' AND key_space_id IN ('api_1', 'api_2')) AS key_verifications_v1",
  );
});

test('subqueries, UNION ALL, JOINs and IN (SELECT …) are rewritten wherever they read', () => {
  const out = rewriteQuery(
    'SELECT key_id FROM key_verifications_v1 WHERE key_id IN (SELECT key_id FROM key_verifications_per_day_v1) ' +
      'UNION ALL SELECT d.key_id FROM (SELECT key_id FROM key_verifications_v1) AS s JOIN key_verifications_per_day_v1 d ON s.key_id = d.key_id',
    scope,
  );
  expect(out.match(/workspace_id = 'ws_1'/g)).toHaveLength(4);
  expect(out).not.toMatch(/FROM key_verifications_(v1|per_day_v1) (?!WHERE)/);
});

test('CTEs are inlined as subqueries (ClickHouse 18.16 has no WITH name AS (subquery))', () => {
  const out = rewriteQuery(
    "WITH valid AS (SELECT key_id FROM key_verifications_v1 WHERE outcome = 'VALID') SELECT count() AS n FROM valid",
    scope,
  );
  expect(out).toBe(
    `SELECT count() AS n FROM (SELECT key_id FROM ${RAW} AS key_verifications_v1 WHERE outcome = 'VALID') AS valid`,
  );
});

test('ClickHouse spellings: arrays, functions, INTERVAL, quotes doubled', () => {
  const out = rewriteQuery(
    "SELECT toStartOfHour(toDateTime(intDiv(time, 1000))) AS h, countIf(outcome = 'VALID') AS v, tags[1] AS t " +
      "FROM key_verifications_v1 WHERE hasAny(tags, ['a', 'it''s']) AND time > toUnixTimestamp(now() - INTERVAL 7 DAY) * 1000 GROUP BY h, t ORDER BY h LIMIT 10",
    scope,
  );
  expect(out).toContain("hasAny(tags, ['a', 'it''s'])");
  expect(out).toContain('INTERVAL 7 DAY');
});

test.each([
  ['another table', 'SELECT * FROM keyward_batches_v1', 'analytics_table'],
  ['system.tables', 'SELECT * FROM system.tables', 'analytics_table'],
  ['system in backticks', 'SELECT * FROM `system`.`tables`', 'analytics_table'],
  ['one backticked name', 'SELECT * FROM `system.tables`', 'analytics_table'],
  [
    'a database-qualified public name',
    'SELECT * FROM default.key_verifications_v1',
    'analytics_table',
  ],
  ['url()', "SELECT * FROM url('http://127.0.0.1/', CSV, 'a String')", 'analytics_table'],
  ['file()', "SELECT * FROM file('/etc/passwd', CSV, 'a String')", 'analytics_table'],
  ['remote()', "SELECT * FROM remote('127.0.0.1', system.one)", 'analytics_table'],
  ['url() as a function', "SELECT url('x') AS u FROM key_verifications_v1", 'analytics_function'],
  [
    'a function off the list',
    'SELECT currentUser() AS u FROM key_verifications_v1',
    'analytics_function',
  ],
  ['a qualified function', 'SELECT db.f(1) AS u FROM key_verifications_v1', 'analytics_function'],
  [
    'two statements',
    'SELECT 1 AS a FROM key_verifications_v1; SELECT 2 AS b FROM key_verifications_v1',
    'analytics_query',
  ],
  ['a write', "INSERT INTO key_verifications_v1 (key_id) VALUES ('x')", 'analytics_query_type'],
  ['DROP', 'DROP TABLE key_verifications_v1', 'analytics_query_type'],
  ['SETTINGS', 'SELECT * FROM key_verifications_v1 SETTINGS readonly = 0', 'analytics_query'],
  ['FORMAT', 'SELECT * FROM key_verifications_v1 FORMAT TSV', 'analytics_query'],
  ['INTO OUTFILE', "SELECT * FROM key_verifications_v1 INTO OUTFILE '/tmp/x'", 'analytics_query'],
  [
    'a subquery of a forbidden table',
    'SELECT * FROM (SELECT * FROM system.tables) AS key_verifications_v1',
    'analytics_table',
  ],
  [
    'IN a forbidden table',
    'SELECT * FROM key_verifications_v1 WHERE key_id IN (SELECT name FROM system.tables)',
    'analytics_table',
  ],
  [
    'UNION with a forbidden table',
    'SELECT key_id FROM key_verifications_v1 UNION ALL SELECT name FROM system.tables',
    'analytics_table',
  ],
  [
    'a CTE of a forbidden table named as a public one',
    'WITH key_verifications_v1 AS (SELECT * FROM system.tables) SELECT * FROM key_verifications_v1',
    'analytics_table',
  ],
  [
    'a forbidden table aliased as a public one',
    'SELECT * FROM system.tables AS key_verifications_v1',
    'analytics_table',
  ],
  [
    'a comment hiding a table',
    'SELECT * FROM /* key_verifications_v1 */ system.tables',
    'analytics_table',
  ],
  [
    'a line comment',
    'SELECT * FROM key_verifications_v1 -- \n UNION ALL SELECT * FROM system.tables',
    'analytics_table',
  ],
  [
    'a backslash escape',
    "SELECT 'a\\', key_id, ' FROM system.tables --' FROM key_verifications_v1",
    'analytics_table',
  ],
  ['a backslash in a string', "SELECT 'a\\'' AS s FROM key_verifications_v1", 'analytics_query'],
  [
    'double quotes hiding a quote',
    'SELECT "x\' , (SELECT 1 FROM system.one) , \'" AS s FROM key_verifications_v1',
    'analytics_query',
  ],
  [
    'UNION (distinct)',
    'SELECT key_id FROM key_verifications_v1 UNION SELECT key_id FROM key_verifications_v1',
    'analytics_query',
  ],
])('refuses %s', (_name, sql, kind) => {
  expect(refused(sql)).toBe(kind);
});

test('ORDER BY … DESC and SELECT DISTINCT are kept', () => {
  expect(
    rewriteQuery('SELECT DISTINCT key_id FROM key_verifications_v1 ORDER BY key_id DESC', scope),
  ).toBe(`SELECT DISTINCT key_id FROM ${RAW} AS key_verifications_v1 ORDER BY key_id DESC`);
});

test('backticked names and aliases that ClickHouse reads the same are kept', () => {
  expect(rewriteQuery('SELECT `key_id` AS `k` FROM key_verifications_v1', scope)).toBe(
    `SELECT \`key_id\` AS \`k\` FROM ${RAW} AS key_verifications_v1`,
  );
});
