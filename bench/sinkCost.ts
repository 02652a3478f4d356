/**
 * What the ClickHouse sink costs a node per verification, in CPU (docs/performance.md, "The
 * ClickHouse sink"): keyward's own sink (ClickHouseUsageSink and ClickHouseSink from dist/) in
 * this one process, fed synthetic verifications, timed with process.cpuUsage().
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && \
 *     node --expose-gc .run/bench-build/bench/sinkCost.js [rows]
 *
 * `rows` (200,000 by default) go through the sink in batches of BENCH_SINK_BATCH (10,000, the
 * default KEYWARD_CLICKHOUSE_BATCH_ROWS; a node at a few thousand verifications a second sends
 * smaller ones), measured in two parts:
 * - push: UsageRecorder's call into the sink, once per verification (the request path);
 * - flush: one flush per batch (the timer's part): the batch formed, its identities' external ids
 *   looked up (an in-memory map, as the node's cache answers), its rows encoded and sent over
 *   HTTP to a stand-in for ClickHouse, a child process that reads the request and answers 200:
 *   what is measured is this process's work only.
 * Each build is measured BENCH_SINK_REPEATS times (5), the builds interleaved; µs per row, the
 * median and the lowest of the repeats, and with a baseline their ratio repeat by repeat.
 *
 * BENCH_SINK_BASELINE=<a dist/ folder> measures another build beside this tree's dist/ in the
 * same run (an older commit's `npm run build`, copied aside): the before and after of a change.
 * BENCH_SINK_CLICKHOUSE=1 then sends each build's rows once more, to a real clickhouse-server
 * (Debian's, 18.16, with keyward's schema and its materialized views), and reads the server's
 * CPU from /proc: what ClickHouse spends per row, which on a shared machine the node pays too.
 * Prints one JSON line per build and part.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { SinkOptions } from '../src/analytics/clickhouse/sink';
import type { CountedVerification } from '../src/observability/usage';
import { startClickHouse } from './clickhouseServer';
import { cpuSeconds, installCleanup, stopAll } from './procs';

/**
 * The parts of dist/ this script uses. Types only (this tree's): the classes are loaded at run
 * time from whichever build is measured, whose shapes these calls must still fit.
 */
interface Sink {
  readonly held: number;
  flush(): Promise<boolean>;
  stop(deadlineMs: number): Promise<number>;
}
interface Build {
  name: string;
  ClickHouseSink: new (
    client: unknown,
    options: SinkOptions,
    observer?: { dropped?(table: string, reason: string, rows: number): void },
  ) => Sink;
  ClickHouseUsageSink: new (sink: Sink) => {
    verification(ws: string, at: number, v: CountedVerification): void;
  };
  ClickHouseClient: new (target: unknown, timeoutMs: number) => { close(): void };
  parseClickHouseUrl(url: string): unknown;
}

const root = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const ROWS = Number(process.argv[2] ?? 200_000);
const BATCH = Number(process.env.BENCH_SINK_BATCH ?? 10_000);
const REPEATS = Number(process.env.BENCH_SINK_REPEATS ?? 5);
const log = (message: string) => process.stderr.write(`sink-cost: ${message}\n`);

function loadBuild(name: string, dist: string): Build {
  const load = createRequire(join(root, 'package.json'));
  const module = (path: string) => load(join(resolve(root, dist), path)) as Record<string, unknown>;
  return {
    name,
    ...module('analytics/clickhouse/sink.js'),
    ...module('analytics/clickhouse/usageRows.js'),
    ...module('analytics/clickhouse/client.js'),
    ...module('analytics/clickhouse/url.js'),
  } as unknown as Build;
}

// ---------------------------------------------------------------------------------- the rows

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** An id like keyward's: a prefix, `_` and 22 base58 characters. */
function newId(prefix: string): string {
  let id = `${prefix}_`;
  for (const b of randomBytes(22)) id += ALPHABET[b % ALPHABET.length];
  return id;
}

const OUTCOMES = ['VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'RATE_LIMITED', 'EXPIRED'];
/** Tags as requests send them: none mostly, some unsorted or repeated (normalTags' work). */
const TAGS: readonly (readonly string[] | undefined)[] = [
  undefined,
  undefined,
  ['plan=pro'],
  ['path=/v1/items', 'plan=free'],
  ['region=eu', 'path=/v1/orders', 'region=eu'],
];

/**
 * What verifyKey hands UsageRecorder for `count` verifications: 10,000 keys of one API, a third
 * with one of 1,000 identities (each with an external id), a credit on one in ten.
 */
function verifications(count: number) {
  const keys = Array.from({ length: 10_000 }, () => newId('key'));
  const identities = Array.from({ length: 1_000 }, () => newId('id'));
  const externalIds = new Map(identities.map((id, i) => [id, `user-${i}@example.com`]));
  const apiId = newId('api');
  const rows: CountedVerification[] = [];
  for (let i = 0; i < count; i++) {
    const k = i % keys.length;
    rows.push({
      apiId,
      keyId: keys[k],
      identityId: k % 3 === 0 ? identities[k % identities.length] : undefined,
      code: OUTCOMES[i % OUTCOMES.length] as string,
      tags: TAGS[k % TAGS.length],
      credits: i % 10 === 0 ? 1 : 0,
      requestId: newId('req'),
    });
  }
  return { ws: newId('ws'), rows, externalIds };
}

// ---------------------------------------------------------------------------------- stand-in

/**
 * A process that answers ClickHouse's HTTP interface as far as the sink needs: 200 to every
 * request, a schema version above any build's to `SELECT max(version)` (no migration runs), and
 * nothing else. It reads each body and throws it away.
 */
const STAND_IN = `
const { createServer } = require('node:http');
const server = createServer((req, res) => {
  let head = req.url;
  req.on('data', (chunk) => { if (head.length < 4096) head += chunk.toString('latin1', 0, 4096); });
  req.on('end', () => res.end(head.includes('max(version)') ? '{"version":1000}\\n' : ''));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

async function startStandIn(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', STAND_IN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((done, fail) => {
    child.stdout?.once('data', (chunk: Buffer) => done(chunk.toString().trim()));
    child.once('exit', () => fail(new Error('the stand-in for ClickHouse exited')));
  });
  return { url: `http://keyward:secret@127.0.0.1:${port}/bench`, child };
}

// ---------------------------------------------------------------------------------- measuring

interface Measured {
  build: string;
  target: string;
  rows: number;
  batch: number;
  /** µs of this process's CPU per row. */
  pushUs: number;
  flushUs: number;
  /** ClickHouse's CPU per row, when the target is a real server. */
  clickhouseUs?: number;
}

/** µs of this process's CPU since `since`. */
function cpuUsage(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

/**
 * Once a process has used under 2 % of a core over a second (at most 30 s): its CPU seconds
 * then. What clickhouse-server does after inserts (merging their parts) has ended.
 */
async function quiet(pid: number): Promise<number> {
  let last = cpuSeconds(pid);
  for (let i = 0; i < 30; i++) {
    await new Promise((done) => setTimeout(done, 1000));
    const now = cpuSeconds(pid);
    if (now - last < 0.02) return now;
    last = now;
  }
  return last;
}

/** `ROWS` verifications through one sink of `build`, in batches: CPU of the pushes and flushes. */
async function measure(
  build: Build,
  url: string,
  input: ReturnType<typeof verifications>,
  clickhousePid?: number,
): Promise<Measured> {
  const client = new build.ClickHouseClient(build.parseClickHouseUrl(url), 60_000);
  let dropped = 0;
  const sink = new build.ClickHouseSink(
    client,
    {
      // Never flushed early: each batch is sent by the flush measured below.
      batchRows: BATCH,
      flushMs: 1000,
      maxBufferedRows: BATCH * 2,
      rawRetentionDays: 30,
      region: 'bench',
      nodeId: 'sink-cost',
      externalId: (_ws, identityId) => Promise.resolve(input.externalIds.get(identityId)),
    },
    { dropped: (_table, _reason, rows) => (dropped += rows) },
  );
  const recorder = new build.ClickHouseUsageSink(sink);
  // The schema (the stand-in's answer or the real migration) outside the measured time.
  if (!(await sink.flush())) throw new Error(`${build.name}: the first flush failed`);
  (globalThis as { gc?: () => void }).gc?.();
  let push = 0;
  let flush = 0;
  const ch0 = clickhousePid === undefined ? 0 : await quiet(clickhousePid);
  const at = Date.now();
  for (let start = 0; start < input.rows.length; start += BATCH) {
    const end = Math.min(start + BATCH, input.rows.length);
    // One batch less one row: the last push would schedule a flush of its own (flushSoon).
    const t0 = process.cpuUsage();
    for (let i = start; i < end - 1; i++) recorder.verification(input.ws, at, input.rows[i]!);
    push += cpuUsage(t0);
    const t1 = process.cpuUsage();
    if (!(await sink.flush())) throw new Error(`${build.name}: a flush failed`);
    flush += cpuUsage(t1);
  }
  const sent = input.rows.length - Math.ceil(input.rows.length / BATCH);
  await sink.stop(10_000);
  // ClickHouse's merges of the parts these inserts made are its cost of them too.
  const clickhouseSeconds = clickhousePid === undefined ? 0 : (await quiet(clickhousePid)) - ch0;
  if (dropped > 0) throw new Error(`${build.name}: ${dropped} rows dropped`);
  return {
    build: build.name,
    target: clickhousePid === undefined ? 'stand-in' : 'clickhouse',
    rows: sent,
    batch: BATCH,
    pushUs: push / sent,
    flushUs: flush / sent,
    ...(clickhousePid === undefined ? {} : { clickhouseUs: (clickhouseSeconds * 1e6) / sent }),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round = (value: number) => Math.round(value * 1000) / 1000;

function summary(runs: Measured[]) {
  const first = runs[0]!;
  const pick = (f: (m: Measured) => number) => ({
    median: round(median(runs.map(f))),
    min: round(Math.min(...runs.map(f))),
  });
  return {
    build: first.build,
    target: first.target,
    rows: first.rows,
    batch: first.batch,
    repeats: runs.length,
    pushUsPerRow: pick((m) => m.pushUs),
    flushUsPerRow: pick((m) => m.flushUs),
    totalUsPerRow: pick((m) => m.pushUs + m.flushUs),
    ...(first.clickhouseUs === undefined
      ? {}
      : { clickhouseUsPerRow: pick((m) => m.clickhouseUs ?? 0) }),
  };
}

/**
 * This tree against the baseline, repeat by repeat (the two measured back to back): the ratio of
 * their CPU per row, which the machine's noise moves less than either figure.
 */
function paired(baseline: Measured[], tree: Measured[]) {
  const total = (m: Measured) => m.pushUs + m.flushUs;
  const ratios = tree.map((m, i) => total(m) / total(baseline[i]!));
  return {
    ratio: 'this tree / baseline, CPU per row (push + flush), per repeat',
    median: round(median(ratios)),
    min: round(Math.min(...ratios)),
    max: round(Math.max(...ratios)),
  };
}

async function main(): Promise<void> {
  const builds = [loadBuild('this tree', 'dist')];
  const baseline = process.env.BENCH_SINK_BASELINE;
  if (baseline) builds.unshift(loadBuild(`baseline ${baseline}`, baseline));
  const input = verifications(ROWS);
  const standIn = await startStandIn();
  try {
    const runs = new Map<string, Measured[]>(builds.map((b) => [b.name, []]));
    // One unmeasured round first: the JIT warm, every build's code loaded.
    for (const build of builds) await measure(build, standIn.url, input);
    for (let r = 0; r < REPEATS; r++) {
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order)
        runs.get(build.name)!.push(await measure(build, standIn.url, input));
    }
    for (const measured of runs.values()) console.log(JSON.stringify(summary(measured)));
    if (builds.length === 2)
      console.log(JSON.stringify(paired(...([...runs.values()] as [Measured[], Measured[]]))));
  } finally {
    standIn.child.kill();
  }
  if (process.env.BENCH_SINK_CLICKHOUSE !== '1') return;
  const dir = join(root, '.run', 'sink-cost');
  mkdirSync(dir, { recursive: true });
  installCleanup(async () => undefined);
  const clickhouse = await startClickHouse(join(dir, 'clickhouse'), join(dir, 'clickhouse.log'));
  try {
    for (const [i, build] of builds.entries()) {
      const measured = await measure(
        build,
        clickhouse.url(`sink_cost_${i}`),
        input,
        clickhouse.child.pid,
      );
      console.log(JSON.stringify(summary([measured])));
    }
  } finally {
    await clickhouse.dispose();
    await stopAll();
  }
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
