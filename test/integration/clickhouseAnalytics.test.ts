/**
 * Nodes with KEYWARD_CLICKHOUSE_URL, as processes, against a real clickhouse-server (Debian's
 * 18.16): every verification and standalone limit becomes a row, with the key's API, identity
 * and externalId, region and tags, and the rollups count them; the schema is made
 * by the first node. With ClickHouse stopped, verifications are answered as fast as ever, what
 * does not fit the bounded buffer is dropped, counted in /metrics and logged once, and what was
 * held lands once ClickHouse is back.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '../../src/analytics/clickhouse/client';
import { SCHEMA_VERSION } from '../../src/analytics/clickhouse/schema';
import { runCli, runJson } from '../support/cliProcess';
import { startClickHouse, type TestClickHouse } from '../support/clickhouseServer';
import { createKey, eventually } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startProcessTopology, type ProcessTopology } from '../support/topology';

let clickhouse: TestClickHouse;
let topology: ProcessTopology;
let nodeA: Client;
let nodeB: Client;
let reader: ClickHouseClient;
let logs: string;

beforeAll(async () => {
  logs = mkdtempSync(join(tmpdir(), 'keyward-ch-logs-'));
  clickhouse = await startClickHouse();
  topology = await startProcessTopology({
    nodes: 2,
    env: { KEYWARD_CLICKHOUSE_URL: clickhouse.url('nodes'), KEYWARD_CLICKHOUSE_FLUSH_MS: '100' },
  });
  nodeA = client(topology.nodes[0]!.url, topology.rootKey);
  nodeB = client(topology.nodes[1]!.url, topology.rootKey);
  reader = clickhouse.client('nodes');
}, 60_000);
afterAll(async () => {
  await topology?.stop();
  await clickhouse?.dispose();
  rmSync(logs, { recursive: true, force: true });
});

async function count(sql: string): Promise<number> {
  return Number((await reader.rows<{ n: string }>(sql))[0]?.n ?? 0);
}

test('every verification and standalone limit of every node is a row, and the rollups count them', async () => {
  // Measured once here, for docs/testing.md: how long the test server takes to answer /ping.
  expect(clickhouse.startedInMs).toBeLessThan(30_000);
  const ws = topology.workspaceId;
  const api = await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'ch' });
  const apiId = api.body.apiId;
  const acme = await createKey(nodeA, apiId, { externalId: 'acme' });
  const plain = await createKey(nodeA, apiId, { remaining: 1 });
  const requestIds: string[] = [];
  const verify = async (node: Client, key: string, tags?: string[]) => {
    const answer = await node.post<{ code: string }>('keys.verifyKey', {
      apiId,
      key,
      ...(tags ? { tags } : {}),
    });
    expect(answer.status).toBe(200);
    requestIds.push(answer.headers.get('x-request-id')!);
    return answer.body.code;
  };
  expect(await verify(nodeA, acme.key, ['path=/a', 'env=prod'])).toBe('VALID');
  expect(await verify(nodeA, acme.key, ['path=/a', 'env=prod'])).toBe('VALID');
  expect(await verify(nodeB, acme.key)).toBe('VALID');
  expect(await verify(nodeB, plain.key)).toBe('VALID');
  expect(await verify(nodeB, plain.key)).toBe('USAGE_EXCEEDED');
  expect(await verify(nodeA, 'not_a_key_at_all')).toBe('NOT_FOUND');
  for (const identifier of ['ursula', 'ursula', 'ursula', 'victor']) {
    const answer = await nodeA.post('ratelimits.limit', {
      namespace: 'ch.ns',
      identifier,
      limit: 2,
      duration: 60_000,
    });
    expect(answer.status).toBe(200);
  }

  await eventually(
    async () =>
      (await count(
        `SELECT count() AS n FROM key_verifications_v1 WHERE workspace_id = '${ws}'`,
      )) === 6,
    { what: 'six verification rows', timeoutMs: 10_000 },
  );
  const rows = await reader.rows<Record<string, unknown>>(
    `SELECT request_id, key_space_id, key_id, identity_id, external_id, outcome, region, tags,
  spent_credits FROM key_verifications_v1 WHERE workspace_id = '${ws}' ORDER BY time, outcome`,
  );
  // One row per answered verification, under the answer's X-Request-Id.
  expect(requestIds).toHaveLength(6);
  expect(rows.map((row) => row.request_id).sort()).toEqual([...requestIds].sort());
  const acmeRows = rows.filter((row) => row.key_id === acme.keyId);
  expect(acmeRows).toHaveLength(3);
  for (const row of acmeRows) {
    expect(row).toMatchObject({
      key_space_id: apiId,
      identity_id: expect.stringMatching(/^id_/),
      external_id: 'acme',
      outcome: 'VALID',
      region: 'us-east-1',
    });
  }
  expect(acmeRows.map((row) => row.tags)).toEqual(
    expect.arrayContaining([['env=prod', 'path=/a'], []]),
  );
  expect(
    rows
      .filter((row) => row.key_id === plain.keyId)
      .map((row) => row.outcome)
      .sort(),
  ).toEqual(['USAGE_EXCEEDED', 'VALID']);
  expect(rows.find((row) => row.outcome === 'NOT_FOUND')).toMatchObject({
    key_id: '',
    key_space_id: apiId,
  });

  // A raw row is readable a moment before the views have pushed it into the rollups.
  const daily = () =>
    reader.rows<{ key_id: string; outcome: string; n: string }>(
      `SELECT key_id, outcome, sum(count) AS n FROM key_verifications_per_day_v1
WHERE workspace_id = '${ws}' GROUP BY key_id, outcome ORDER BY key_id, outcome`,
    );
  // Read until every insert has reached it: four rows could show while one count still lags.
  const perDay = [
    { key_id: '', outcome: 'NOT_FOUND', n: '1' },
    { key_id: acme.keyId, outcome: 'VALID', n: '3' },
    { key_id: plain.keyId, outcome: 'USAGE_EXCEEDED', n: '1' },
    { key_id: plain.keyId, outcome: 'VALID', n: '1' },
  ].sort((a, b) => (a.key_id + a.outcome < b.key_id + b.outcome ? -1 : 1));
  await eventually(async () => JSON.stringify(await daily()) === JSON.stringify(perDay), {
    onTimeout: 'return',
  });
  expect(await daily()).toEqual(perDay);
  // The per-month rollup lagged the raw rows and the per-day one in some runs: read until it has them.
  const monthly = () =>
    count(
      `SELECT sum(count) AS n FROM key_verifications_per_month_v1 WHERE workspace_id = '${ws}' AND external_id = 'acme'`,
    );
  await eventually(async () => (await monthly()) === 3, { onTimeout: 'return' });
  expect(await monthly()).toBe(3);

  await eventually(
    async () =>
      (await count(`SELECT count() AS n FROM ratelimits_v1 WHERE workspace_id = '${ws}'`)) === 4,
    { what: 'four limit rows', timeoutMs: 10_000 },
  );
  const perMinute = () =>
    reader.rows(
      `SELECT identifier, sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_minute_v1
WHERE workspace_id = '${ws}' GROUP BY identifier ORDER BY identifier`,
    );
  // Each insert reaches the rollup a moment after its raw rows, and the two identifiers' rows may
  // come in two inserts: read until both have, not only the first.
  const limitsPerMinute = [
    { identifier: 'ursula', passed: '2', total: '3' },
    { identifier: 'victor', passed: '1', total: '1' },
  ];
  await eventually(
    async () => JSON.stringify(await perMinute()) === JSON.stringify(limitsPerMinute),
    { onTimeout: 'return' },
  );
  expect(await perMinute()).toEqual(limitsPerMinute);
  const [limitRow] = await reader.rows<Record<string, unknown>>(
    `SELECT request_id, namespace_id FROM ratelimits_v1 WHERE workspace_id = '${ws}' LIMIT 1`,
  );
  expect(limitRow).toMatchObject({
    namespace_id: expect.stringMatching(/^rlns_/),
    request_id: expect.stringMatching(/^req_/),
  });
});

test('with ClickHouse stopped verifications are answered as ever; the overflow is dropped, counted and logged once', async () => {
  const logFile = join(logs, 'down.log');
  const node = await topology.addNode({
    logFile,
    env: {
      KEYWARD_CLICKHOUSE_URL: clickhouse.url('down'),
      KEYWARD_CLICKHOUSE_FLUSH_MS: '100',
      KEYWARD_CLICKHOUSE_BATCH_ROWS: '10',
      KEYWARD_CLICKHOUSE_MAX_BUFFERED_ROWS: '20',
      KEYWARD_CLICKHOUSE_TIMEOUT_MS: '500',
      LOG_LEVEL: 'info',
    },
  });
  const api = client(node.url, topology.rootKey);
  const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'down' })).body.apiId;
  const { key } = await createKey(api, apiId);
  await clickhouse.stop();
  try {
    const latencies: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      const answer = await api.post<{ valid: boolean }>('keys.verifyKey', { apiId, key });
      latencies.push(performance.now() - started);
      expect(answer.body.valid).toBe(true);
    }
    latencies.sort((a, b) => a - b);
    // No verification waits for ClickHouse (the insert deadline alone is 500 ms).
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(100);
    const metrics = await (await fetch(`${node.url}/metrics`)).text();
    expect(metrics).toContain(
      'keyward_clickhouse_rows_dropped_total{table="key_verifications_v1",reason="buffer_full"} 10',
    );
    expect(metrics).toContain('keyward_clickhouse_buffered_rows 20');
  } finally {
    await clickhouse.start();
  }
  // What was held lands once ClickHouse is back, the schema made by the node first.
  const down = clickhouse.client('down');
  await eventually(
    async () =>
      Number(
        (
          await down.rows<{ n: string }>(
            `SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`,
          )
        )[0]?.n,
      ) === 20,
    { what: 'the 20 held rows', timeoutMs: 15_000 },
  );
  await node.stop();
  const dropLines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('analytics rows dropped'));
  expect(dropLines).toHaveLength(1);
  const log = readFileSync(logFile, 'utf8');
  expect(log).toContain(`"clickhouse":"http://keyward@127.0.0.1:${clickhouse.httpPort}/down"`);
  expect(log).not.toContain('secret');
});

test('keyward clickhouse migrate: creates the schema, then finds nothing to do; the nodes made theirs', async () => {
  type Result = { clickhouse: string; from: number; to: number; applied: unknown[] };
  const env = { KEYWARD_CLICKHOUSE_URL: clickhouse.url('cli') };
  const first = await runJson<Result>(['clickhouse', 'migrate'], env);
  expect(first).toMatchObject({ from: 0, to: SCHEMA_VERSION });
  expect(first.applied).toHaveLength(SCHEMA_VERSION);
  expect(first.clickhouse).not.toContain('secret');
  expect(await runJson<Result>(['clickhouse', 'migrate'], env)).toMatchObject({
    from: SCHEMA_VERSION,
    applied: [],
  });
  expect(
    await runJson<Result>(['clickhouse', 'migrate'], {
      KEYWARD_CLICKHOUSE_URL: clickhouse.url('nodes'),
    }),
  ).toMatchObject({ from: SCHEMA_VERSION, applied: [] });
  const unset = await runCli(['clickhouse', 'migrate'], {});
  expect(unset.code).toBe(1);
  expect(unset.stderr).toContain('KEYWARD_CLICKHOUSE_URL is not set');
});
