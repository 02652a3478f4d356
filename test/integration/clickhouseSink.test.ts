/**
 * The ClickHouse sink's retries are exact on a real clickhouse-server (18.16, no insert
 * deduplication for a plain MergeTree): an insert that landed but whose answer was lost is
 * never written again, one that never arrived is, and the rollups agree with the raw rows.
 */
import { connect, createServer, type Socket } from 'node:net';
import { ClickHouseClient } from '../../src/analytics/clickhouse/client';
import { migrate } from '../../src/analytics/clickhouse/schema';
import { ClickHouseSink, type SinkObserver } from '../../src/analytics/clickhouse/sink';
import { parseClickHouseUrl } from '../../src/analytics/clickhouse/url';
import { startClickHouse, type TestClickHouse } from '../support/clickhouseServer';
import { eventually } from '../support/helpers';
import { freePort } from '../support/redisServer';

/**
 * A relay to ClickHouse's HTTP port that can lose what the server answers (the insert arrives
 * and lands, its answer never comes back) or refuse connections (nothing arrives).
 */
async function startLossyRelay(target: number) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const state = { swallowAnswers: false, refuse: false };
  const server = createServer((downstream) => {
    if (state.refuse) {
      downstream.destroy();
      return;
    }
    const upstream = connect({ port: target, host: '127.0.0.1' });
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    downstream.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (!state.swallowAnswers) downstream.write(chunk);
    });
    downstream.on('close', () => upstream.destroy());
    upstream.on('close', () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let clickhouse: TestClickHouse;
let relay: Awaited<ReturnType<typeof startLossyRelay>>;
let direct: ClickHouseClient;

beforeAll(async () => {
  clickhouse = await startClickHouse();
  relay = await startLossyRelay(clickhouse.httpPort);
  direct = clickhouse.client('sink');
  await migrate(direct);
});
afterAll(async () => {
  await relay?.close();
  await clickhouse?.dispose();
});

function recorder() {
  const inserts: string[] = [];
  const written: number[] = [];
  const observer: SinkObserver = {
    insert: (result) => inserts.push(result),
    written: (_table, rows) => written.push(rows),
  };
  return { inserts, written, observer };
}

/** A sink whose inserts go through the relay; `options` override the defaults. */
function relayedSink(
  nodeId: string,
  observer: SinkObserver,
  options: Partial<ConstructorParameters<typeof ClickHouseSink>[1]> = {},
): ClickHouseSink {
  const url = clickhouse.url('sink').replace(`:${clickhouse.httpPort}/`, `:${relay.port}/`);
  // A short deadline: the lost answer is given up on quickly.
  const client = new ClickHouseClient(parseClickHouseUrl(url), 1000);
  return new ClickHouseSink(
    client,
    {
      batchRows: 1000,
      flushMs: 1000,
      maxBufferedRows: 10_000,
      rawRetentionDays: 30,
      region: 'test',
      nodeId,
      ...options,
    },
    observer,
  );
}

function verify(sink: ClickHouseSink, ws: string, n: number): void {
  for (let i = 0; i < n; i++) {
    sink.verification({
      request_id: `req_${ws}_${i}`,
      time: Date.now(),
      workspace_id: ws,
      key_space_id: 'api_1',
      identity_id: '',
      external_id: '',
      key_id: `key_${i % 3}`,
      outcome: 'VALID',
      tags: [],
      spent_credits: 0,
    });
  }
}

async function counted(ws: string): Promise<{ raw: number; minute: number; month: number }> {
  const one = async (sql: string) => Number((await direct.rows<{ n: string }>(sql))[0]?.n ?? 0);
  return {
    raw: await one(`SELECT count() AS n FROM key_verifications_v1 WHERE workspace_id = '${ws}'`),
    minute: await one(
      `SELECT sum(count) AS n FROM key_verifications_per_minute_v1 WHERE workspace_id = '${ws}'`,
    ),
    month: await one(
      `SELECT sum(count) AS n FROM key_verifications_per_month_v1 WHERE workspace_id = '${ws}'`,
    ),
  };
}

afterEach(() => {
  relay.state.swallowAnswers = false;
  relay.state.refuse = false;
});

test('an insert that landed but whose answer was lost is not written again', async () => {
  const { inserts, observer } = recorder();
  const sink = relayedSink('lost-answer', observer);
  expect(await sink.flush()).toBe(true); // the schema is there
  verify(sink, 'ws_lost_answer', 100);
  relay.state.swallowAnswers = true;
  expect(await sink.flush()).toBe(false);
  expect(inserts).toEqual(['unanswered']);
  expect(sink.held).toBe(100);
  // It did land: ClickHouse took the insert, only its answer was lost.
  await eventually(async () => (await counted('ws_lost_answer')).raw === 100);

  relay.state.swallowAnswers = false;
  expect(await sink.flush()).toBe(true);
  expect(inserts).toEqual(['unanswered', 'duplicate']);
  expect(sink.held).toBe(0);
  expect(await counted('ws_lost_answer')).toEqual({ raw: 100, minute: 100, month: 100 });
  await sink.stop(1000);
});

test('an insert that never arrived is sent again, once', async () => {
  const { inserts, written, observer } = recorder();
  const sink = relayedSink('never-arrived', observer);
  expect(await sink.flush()).toBe(true);
  verify(sink, 'ws_never_arrived', 50);
  relay.state.refuse = true;
  expect(await sink.flush()).toBe(false);
  expect(await sink.flush()).toBe(false); // still away: the batch stays unsure, nothing is lost
  expect(inserts).toEqual(['unanswered']);
  expect((await counted('ws_never_arrived')).raw).toBe(0);

  relay.state.refuse = false;
  verify(sink, 'ws_never_arrived', 25); // what came meanwhile goes in a batch of its own
  expect(await sink.flush()).toBe(true);
  expect(inserts).toEqual(['unanswered', 'ok', 'ok']);
  expect(written).toEqual([50, 25]);
  expect(await counted('ws_never_arrived')).toEqual({ raw: 75, minute: 75, month: 75 });
  await sink.stop(1000);
});

test('rows that do not fit are dropped and counted, never held', async () => {
  const dropped: number[] = [];
  const sink = relayedSink(
    'bounded',
    {
      dropped: (_table, reason, rows) => dropped.push(rows) && reason === 'buffer_full',
    },
    { batchRows: 10, maxBufferedRows: 30 },
  );
  relay.state.refuse = true;
  verify(sink, 'ws_bounded', 45);
  expect(sink.held).toBe(30);
  expect(dropped.reduce((a, b) => a + b, 0)).toBe(15);
  relay.state.refuse = false;
  // A slow first insert may go unanswered and be settled by the next flush: nothing doubles.
  await eventually(() => sink.flush(), { timeoutMs: 10_000 });
  expect((await counted('ws_bounded')).raw).toBe(30);
  await sink.stop(1000);
});

/** Text TabSeparated must escape, and text beyond ASCII: it lands as it was sent. */
const HOSTILE = [
  'tab\there',
  'line\nfeed',
  'carriage\rreturn',
  'back\\slash\\',
  "it's 'quoted'",
  'double "quoted"',
  'nul\0byte',
  '\b\f',
  '[brackets],{commas}',
  '\\N',
  'é ü ß → 日本語 😀',
  '',
];

test('every string a row carries lands as it was sent, escapes and UTF-8 included', async () => {
  const sink = new ClickHouseSink(
    clickhouse.client('sink'),
    {
      batchRows: 1000,
      flushMs: 1000,
      maxBufferedRows: 10_000,
      rawRetentionDays: 30,
      region: "eu\t'west'",
      nodeId: 'hostile',
      externalId: async (_ws, identityId) => `external ${identityId}`,
    },
    {},
  );
  const time = Date.now();
  HOSTILE.forEach((text, i) => {
    sink.verification({
      request_id: `req\t${i}`,
      time: time + i,
      workspace_id: 'ws_hostile',
      key_space_id: 'api_hostile',
      identity_id: text === '' ? '' : `id ${text}`,
      external_id: '',
      key_id: text,
      outcome: 'VALID',
      tags: [text, `${text}!`],
      spent_credits: i,
      client_ip: i % 2 === 0 ? text : undefined,
    });
    sink.limit({
      request_id: `req ${i}`,
      time: time + i,
      workspace_id: 'ws_hostile',
      namespace_id: 'ns_hostile',
      identifier: text,
      passed: i % 2 === 0 ? 1 : 0,
    });
  });
  expect(await sink.flush()).toBe(true);
  await sink.stop(1000);

  const verifications = await direct.rows<Record<string, unknown>>(
    `SELECT request_id, time, identity_id, external_id, key_id, tags, spent_credits, client_ip,
       region FROM key_verifications_v1 WHERE workspace_id = 'ws_hostile' ORDER BY time`,
  );
  expect(verifications).toEqual(
    HOSTILE.map((text, i) => ({
      request_id: `req\t${i}`,
      time: String(time + i),
      identity_id: text === '' ? '' : `id ${text}`,
      external_id: text === '' ? '' : `external id ${text}`,
      key_id: text,
      tags: [text, `${text}!`],
      spent_credits: String(i),
      client_ip: i % 2 === 0 ? text : '',
      region: "eu\t'west'",
    })),
  );
  const limits = await direct.rows<Record<string, unknown>>(
    `SELECT request_id, identifier, passed FROM ratelimits_v1
     WHERE workspace_id = 'ws_hostile' ORDER BY time`,
  );
  expect(limits).toEqual(
    HOSTILE.map((text, i) => ({
      request_id: `req ${i}`,
      identifier: text,
      passed: i % 2 === 0 ? 1 : 0,
    })),
  );
});
