/**
 * `make bench-vault`: what recoverable keys (issue 25) cost, as three ratios of two cases each,
 * measured on one node in the same run:
 *
 * 1. `create`: v2 keys.createKey without and with `recoverable: true`, the cost of sealing (a data
 *    key drawn, the plaintext sealed with AES-256-GCM, the data key wrapped by the vault's KEK).
 * 2. `get`: v2 keys.getKey of one recoverable key without and with `decrypt: true`. An opening
 *    also appends an audit entry before it answers: that write is part of what is measured.
 * 3. `verify`: v2 keys.verifyKey of a plain key and of a recoverable key, neither rate limited.
 *    Verification never opens the vault, so the two should be equal but for noise.
 *
 * The two cases of a pair are measured in slices, one after the other, their order flipping every
 * round (A B, then B A), so that whatever else the machine does falls on both alike. Each slice
 * gives a ratio; the report gives every pair's ratio over all its slices, and the median, min and
 * max of the per-round ratios. The node's CPU per request (utime + stime from /proc over the
 * case's slices) is the steadiest figure on a shared machine.
 *
 * One node (LOG_LEVEL=warn, KEYWARD_VAULT_KEYS set to a fresh random KEK,
 * KEYWARD_MANAGEMENT_RATE_LIMIT at its maximum so that the management calls are not throttled per
 * root key) and its two Redis servers (a primary and a node-local one over its unix socket) are
 * started by this driver and stopped at its end, on failure and on Ctrl-C too.
 *
 * Knobs (environment): BENCH_VAULT_ROUNDS (4), BENCH_VAULT_SLICE (2 s), BENCH_VAULT_WARMUP (1 s
 * per case), BENCH_VAULT_CONNECTIONS (16, the management calls), BENCH_CONNECTIONS (64, the
 * verifications), BENCH_TIMEOUT (300: fewer rounds are run, and the report says so, rather than
 * run past it; scripts/bench.sh kills the driver at that time).
 *
 * Output: .run/bench/vault.json, .run/bench/vault.md (the table is printed too); logs and pids in
 * .run/vault.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Measurement, rpcTarget, warmUp, type LoadTarget } from './load';
import {
  CpuMeter,
  installCleanup,
  isRunning,
  publishReport,
  runDriver,
  setPidFile,
  stopAll,
} from './procs';
import { median, spread, type Spread } from './stats';
import {
  envNumber,
  provenance,
  rpc,
  sleep,
  startLoneNode,
  type RedisInstance,
  type Server,
} from './setup';

const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
/** Logs and pids. */
const OUT = join(ROOT, '.run', 'vault');
/** vault.json and vault.md. */
const RESULTS = join(ROOT, '.run', 'bench');

const ROUNDS = envNumber('BENCH_VAULT_ROUNDS', 4, 1, 100);
const SLICE = envNumber('BENCH_VAULT_SLICE', 2, 0.5, 30);
const WARMUP = envNumber('BENCH_VAULT_WARMUP', 1, 0, 10);
const MANAGEMENT_CONNECTIONS = envNumber('BENCH_VAULT_CONNECTIONS', 16, 1, 256);
const VERIFY_CONNECTIONS = envNumber('BENCH_CONNECTIONS', 64, 1, 256);
const TIMEOUT = envNumber('BENCH_TIMEOUT', 300, 30, 7200);
/** Left at the end of the budget for stopping everything and writing the report. */
const MARGIN_SECONDS = 15;
const STARTED = Date.now();
const secondsLeft = () => TIMEOUT - (Date.now() - STARTED) / 1000;

const log = (message: string) => process.stderr.write(`bench-vault: ${message}\n`);

// ---------------------------------------------------------------------------------- cases

const PAIRS = ['create', 'get', 'verify'] as const;
type PairId = (typeof PAIRS)[number];

interface CaseSpec {
  id: string;
  label: string;
  route: string;
  body: object;
  connections: number;
  /** What a right answer looks like (a wrong one stops the run before it is measured). */
  check: (status: number, body: unknown) => boolean;
}

interface PairSpec {
  id: PairId;
  /** What the ratio b/a says. */
  title: string;
  a: CaseSpec;
  b: CaseSpec;
}

interface V2Body {
  meta?: { requestId?: string };
  data?: { keyId?: string; key?: string; plaintext?: string; valid?: boolean; code?: string };
}

const data = (body: unknown) => (body as V2Body).data;

function pairsOf(
  apiId: string,
  keys: { plain: string; recoverable: string; recoverableId: string },
) {
  const created = (status: number, body: unknown) =>
    status === 200 && typeof data(body)?.key === 'string' && typeof data(body)?.keyId === 'string';
  const valid = (status: number, body: unknown) =>
    status === 200 && data(body)?.valid === true && data(body)?.code === 'VALID';
  const pairs: PairSpec[] = [
    {
      id: 'create',
      title: 'createKey: recoverable / plain (the cost of sealing)',
      a: {
        id: 'create-plain',
        label: 'createKey',
        route: 'keys.createKey',
        body: { apiId },
        connections: MANAGEMENT_CONNECTIONS,
        check: created,
      },
      b: {
        id: 'create-recoverable',
        label: 'createKey recoverable',
        route: 'keys.createKey',
        body: { apiId, recoverable: true },
        connections: MANAGEMENT_CONNECTIONS,
        check: created,
      },
    },
    {
      id: 'get',
      title: 'getKey: decrypt / plain, one recoverable key (opening + its audit entry)',
      a: {
        id: 'get-plain',
        label: 'getKey',
        route: 'keys.getKey',
        body: { keyId: keys.recoverableId },
        connections: MANAGEMENT_CONNECTIONS,
        check: (status, body) =>
          status === 200 &&
          data(body)?.keyId === keys.recoverableId &&
          data(body)?.plaintext === undefined,
      },
      b: {
        id: 'get-decrypt',
        label: 'getKey decrypt',
        route: 'keys.getKey',
        body: { keyId: keys.recoverableId, decrypt: true },
        connections: MANAGEMENT_CONNECTIONS,
        check: (status, body) => status === 200 && data(body)?.plaintext === keys.recoverable,
      },
    },
    {
      id: 'verify',
      title: 'verifyKey: recoverable / plain key (no rate limit; should be 1.00)',
      a: {
        id: 'verify-plain',
        label: 'verifyKey plain key',
        route: 'keys.verifyKey',
        body: { key: keys.plain },
        connections: VERIFY_CONNECTIONS,
        check: valid,
      },
      b: {
        id: 'verify-recoverable',
        label: 'verifyKey recoverable key',
        route: 'keys.verifyKey',
        body: { key: keys.recoverable },
        connections: VERIFY_CONNECTIONS,
        check: valid,
      },
    },
  ];
  return pairs;
}

// ---------------------------------------------------------------------------------- measuring

interface CaseResult {
  id: string;
  label: string;
  route: string;
  connections: number;
  requestsPerSecond: number;
  responses: number;
  seconds: number;
  slices: number;
  p50Ms: number;
  p99Ms: number;
  /** The node's own CPU (utime + stime) per request served. */
  cpuUsPerRequest: number;
  /** The node's CPU while measured, share of one core. */
  serverPercent: number;
  /** The two Redis servers' CPU while measured, share of one core. */
  redisPercent: number;
  /** This driver's CPU (the load generator) while measured, share of one core. */
  loadGeneratorPercent: number;
  /** CPU the machine spent on other processes while measured, share of one core. */
  otherPercent: number;
  errors: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

interface SliceRecord {
  round: number;
  requestsPerSecond: number;
  cpuUsPerRequest: number;
}

class CaseRun {
  readonly measurement: Measurement;
  readonly target: LoadTarget;
  readonly slices: SliceRecord[] = [];
  private readonly cpu: CpuMeter;

  constructor(
    readonly spec: CaseSpec,
    private readonly node: Server,
    redises: RedisInstance[],
    rootKey: string,
  ) {
    this.cpu = new CpuMeter(
      node.child,
      redises.map((r) => r.child),
    );
    this.target = rpcTarget(node.url, `/v2/${spec.route}`, rootKey, spec.body);
    this.measurement = new Measurement(this.target, spec.connections);
  }

  /** One request, whose answer must be right; a few tries for a cold node on a loaded machine. */
  async check(when: string): Promise<void> {
    let last = '';
    for (let attempt = 0; attempt < 5; attempt++) {
      if (attempt > 0) await sleep(300);
      const res = await fetch(this.target.url, {
        method: 'POST',
        headers: this.target.headers,
        body: this.target.body,
      });
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (this.spec.check(res.status, body)) return;
      last = `${res.status} ${text.slice(0, 300)}`;
    }
    throw new Error(`${this.spec.id} ${when}: unexpected answer, 5 times: ${last}`);
  }

  async warmUp(seconds: number): Promise<void> {
    await warmUp(this.target, this.spec.connections, seconds);
  }

  async slice(round: number, seconds: number): Promise<void> {
    const {
      result: { responses, seconds: elapsed },
      serverSeconds: server,
    } = await this.cpu.measure(() => this.measurement.slice(seconds));
    this.slices.push({
      round,
      requestsPerSecond: responses / Math.max(1e-9, elapsed),
      cpuUsPerRequest: (server / Math.max(1, responses)) * 1e6,
    });
    if (!isRunning(this.node.child)) throw new Error(`${this.node.name} died while measured`);
  }

  result(): CaseResult {
    const load = this.measurement.result();
    return {
      id: this.spec.id,
      label: this.spec.label,
      route: `POST /v2/${this.spec.route}`,
      connections: this.spec.connections,
      requestsPerSecond: load.requestsPerSecond,
      responses: load.responses,
      seconds: load.seconds,
      slices: this.measurement.slices,
      p50Ms: load.p50,
      p99Ms: load.p99,
      cpuUsPerRequest: (this.cpu.server / Math.max(1, load.responses)) * 1e6,
      ...this.cpu.shares(load.seconds),
      errors: load.errors + load.timeouts,
      non2xx: load.non2xx,
      statusCodes: load.statusCodes,
    };
  }
}

// ---------------------------------------------------------------------------------- report

interface PairResult {
  id: PairId;
  title: string;
  a: CaseResult;
  b: CaseResult;
  /** b / a over all slices. */
  throughputRatio: number;
  /** b / a, node CPU µs per request (above 1: b costs more). */
  cpuRatio: number;
  /** Per-round ratios b / a (each round: one slice of each). */
  perRound: { throughput: Spread; cpu: Spread };
  /** The order of each round, e.g. "a b", "b a". */
  orders: string[];
}

interface VaultReport {
  date: string;
  source: { commit: string; uncommitted: string[] };
  command: string;
  machine: {
    nproc: number;
    cpu: string;
    node: string;
    loadAverage1m: { before: number; after: number };
  };
  settings: {
    plannedRounds: number;
    rounds: number;
    sliceSeconds: number;
    warmupSeconds: number;
    managementConnections: number;
    verifyConnections: number;
    timeoutSeconds: number;
  };
  pairs: PairResult[];
  /** Median over cases of the other processes' CPU while measured, share of one core. */
  otherPercentMedian: number;
  totalSeconds: number;
}

const x3 = (v: number) => v.toFixed(3);
const int = (v: number) => Math.round(v).toLocaleString('en-US');
const ms = (v: number) => v.toFixed(2);

function pairResult(spec: PairSpec, a: CaseRun, b: CaseRun, orders: string[]): PairResult {
  const ra = a.result();
  const rb = b.result();
  const rounds = [...new Set(a.slices.map((s) => s.round))];
  const perRound = rounds.map((round) => {
    const sa = a.slices.find((s) => s.round === round) as SliceRecord;
    const sb = b.slices.find((s) => s.round === round);
    return sb
      ? {
          throughput: sb.requestsPerSecond / sa.requestsPerSecond,
          cpu: sb.cpuUsPerRequest / sa.cpuUsPerRequest,
        }
      : undefined;
  });
  const complete = perRound.filter((r) => r !== undefined);
  return {
    id: spec.id,
    title: spec.title,
    a: ra,
    b: rb,
    throughputRatio: rb.requestsPerSecond / ra.requestsPerSecond,
    cpuRatio: rb.cpuUsPerRequest / ra.cpuUsPerRequest,
    perRound: {
      throughput: spread(complete.map((r) => r.throughput)),
      cpu: spread(complete.map((r) => r.cpu)),
    },
    orders,
  };
}

function renderMarkdown(r: VaultReport): string {
  const lines: string[] = [];
  lines.push(`# bench-vault: what sealing and opening recoverable keys cost (${r.source.commit})`);
  lines.push('');
  lines.push(
    `${r.date}; \`${r.command}\`; ${r.machine.nproc} × ${r.machine.cpu}, Node ${r.machine.node}; ` +
      `load average (1 min) ${r.machine.loadAverage1m.before.toFixed(2)} before, ` +
      `${r.machine.loadAverage1m.after.toFixed(2)} after.` +
      (r.source.uncommitted.length > 0
        ? ` Uncommitted changes measured: ${r.source.uncommitted.join(', ')}.`
        : ''),
    '',
    `One node (LOG_LEVEL=warn, a vault KEK, the management rate limit out of the way), ` +
      `${r.settings.rounds} round${r.settings.rounds === 1 ? '' : 's'}` +
      (r.settings.rounds < r.settings.plannedRounds
        ? ` (of ${r.settings.plannedRounds} planned: the time budget, ${r.settings.timeoutSeconds} s, ran out)`
        : '') +
      ` of one ${r.settings.sliceSeconds} s slice per case, the two cases of a pair one after ` +
      `the other, their order flipping every round; each case warmed up ` +
      `${r.settings.warmupSeconds} s first. createKey and getKey at ` +
      `${r.settings.managementConnections} connections, verifyKey at ` +
      `${r.settings.verifyConnections}.`,
    '',
  );
  lines.push(
    '| case                      | conns |  req/s | p50 ms | p99 ms | CPU µs/req | other CPU % | errors, non-2xx |',
    '| ------------------------- | ----: | -----: | -----: | -----: | ---------: | ----------: | --------------: |',
  );
  for (const pair of r.pairs) {
    for (const c of [pair.a, pair.b]) {
      lines.push(
        `| ${c.label.padEnd(25)} | ${c.connections} | ${int(c.requestsPerSecond)} | ${ms(c.p50Ms)} | ` +
          `${ms(c.p99Ms)} | ${c.cpuUsPerRequest.toFixed(0)} | ${c.otherPercent.toFixed(0)} | ` +
          `${c.errors + c.non2xx} |`,
      );
    }
  }
  lines.push('');
  lines.push(
    '| ratio (b / a)                                                          | req/s | per round: median (min–max) | CPU µs/req | per round: median (min–max) |',
    '| ---------------------------------------------------------------------- | ----: | --------------------------: | ---------: | --------------------------: |',
  );
  for (const pair of r.pairs) {
    const p = pair.perRound;
    lines.push(
      `| ${pair.title} | ${x3(pair.throughputRatio)} | ${x3(p.throughput.median)} ` +
        `(${x3(p.throughput.min)}–${x3(p.throughput.max)}) | ${x3(pair.cpuRatio)} | ` +
        `${x3(p.cpu.median)} (${x3(p.cpu.min)}–${x3(p.cpu.max)}) |`,
    );
  }
  lines.push('');
  lines.push(
    `CPU µs/req is the node process's own CPU (utime + stime) over the case's slices, divided by ` +
      `its responses. "other CPU %": what processes other than this node, its two Redis servers ` +
      `and the load generator took while the case was measured, as a share of one core (the ` +
      `machine has ${r.machine.nproc * 100} %).` +
      (r.otherPercentMedian > 25
        ? ` **The machine was busy** (median ${r.otherPercentMedian.toFixed(0)} % of a core): ` +
          `read the ratios, not the req/s.`
        : ` Median ${r.otherPercentMedian.toFixed(0)} % of a core: a quiet machine.`),
    '',
    `getKey decrypt writes an audit entry for every opening (before the plaintext is answered): ` +
      `that write is part of its cost here.`,
    '',
  );
  return lines.join('\n');
}

/** `make bench-vault` with the knobs this run was given, as the report's command. */
function commandLine(): string {
  const knobs = [
    'BENCH_VAULT_ROUNDS',
    'BENCH_VAULT_SLICE',
    'BENCH_VAULT_WARMUP',
    'BENCH_VAULT_CONNECTIONS',
    'BENCH_CONNECTIONS',
  ].filter((name) => (process.env[name] ?? '') !== '');
  return [...knobs.map((name) => `${name}=${process.env[name]}`), 'make bench-vault'].join(' ');
}

// ---------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? NaN;
  mkdirSync(OUT, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  setPidFile(join(OUT, 'pids'));
  installCleanup(stopAll);
  const source = provenance(ROOT);

  let redises: RedisInstance[] = [];
  try {
    const { primary, local, node, rootKey } = await startLoneNode({
      app: ROOT,
      outDir: OUT,
      rootKeyName: 'bench-vault',
      logLevel: 'warn',
      env: {
        // A fresh KEK for this run: nothing it seals outlives the run's Redis servers.
        KEYWARD_VAULT_KEYS: `bench:${randomBytes(32).toString('base64')}`,
        KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000000',
      },
    });
    redises = [primary, local];
    log(`redis primary on ${primary.port}, node-local on ${local.port}`);
    log(`keyward on ${node.url}`);

    const { apiId } = await rpc<{ apiId: string }>(node.url, rootKey, 'apis.createApi', {
      name: 'bench-vault',
    });
    const plain = await rpc<{ key: string; keyId: string }>(node.url, rootKey, 'keys.createKey', {
      apiId,
      prefix: 'bench',
    });
    const recoverable = await rpc<{ key: string; keyId: string }>(
      node.url,
      rootKey,
      'keys.createKey',
      { apiId, prefix: 'bench', recoverable: true },
    );
    const specs = pairsOf(apiId, {
      plain: plain.key,
      recoverable: recoverable.key,
      recoverableId: recoverable.keyId,
    });
    const runs = new Map<string, CaseRun>();
    for (const pair of specs) {
      for (const spec of [pair.a, pair.b]) {
        runs.set(spec.id, new CaseRun(spec, node, redises, rootKey));
      }
    }
    const run = (spec: CaseSpec) => runs.get(spec.id) as CaseRun;

    for (const r of runs.values()) await r.check('before');
    for (const r of runs.values()) {
      log(`warming up ${r.spec.id} (${WARMUP} s)`);
      await r.warmUp(WARMUP);
    }

    const orders = new Map<PairId, string[]>(PAIRS.map((id) => [id, []]));
    let rounds = 0;
    const roundSeconds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const expected = Math.max(2 * PAIRS.length * SLICE + 3, ...roundSeconds);
      if (secondsLeft() < expected + MARGIN_SECONDS) {
        log(`time budget: stopping after ${round} of ${ROUNDS} rounds`);
        break;
      }
      const started = Date.now();
      // The pairs rotate too, so that no pair always follows the same one.
      for (let i = 0; i < specs.length; i++) {
        const pair = specs[(round + i) % specs.length] as PairSpec;
        const flip = round % 2 === 1;
        const [first, second] = flip ? [pair.b, pair.a] : [pair.a, pair.b];
        (orders.get(pair.id) as string[]).push(flip ? 'b a' : 'a b');
        await run(first).slice(round, SLICE);
        await run(second).slice(round, SLICE);
      }
      rounds++;
      roundSeconds.push((Date.now() - started) / 1000);
      const last = (spec: CaseSpec) => run(spec).slices.at(-1) as SliceRecord;
      log(
        `round ${round + 1}/${ROUNDS}: ` +
          specs
            .map(
              (p) =>
                `${p.id} ${int(last(p.a).requestsPerSecond)} → ${int(last(p.b).requestsPerSecond)} req/s ` +
                `(${last(p.a).cpuUsPerRequest.toFixed(0)} → ${last(p.b).cpuUsPerRequest.toFixed(0)} µs)`,
            )
            .join('; '),
      );
    }
    if (rounds === 0) throw new Error('no round fitted in BENCH_TIMEOUT');
    for (const r of runs.values()) await r.check('after');

    const pairs = specs.map((p) => pairResult(p, run(p.a), run(p.b), orders.get(p.id) as string[]));
    const report: VaultReport = {
      date: new Date().toISOString(),
      source,
      command: commandLine(),
      machine: {
        nproc: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadAverage1m: { before: loadBefore, after: loadavg()[0] ?? NaN },
      },
      settings: {
        plannedRounds: ROUNDS,
        rounds,
        sliceSeconds: SLICE,
        warmupSeconds: WARMUP,
        managementConnections: MANAGEMENT_CONNECTIONS,
        verifyConnections: VERIFY_CONNECTIONS,
        timeoutSeconds: TIMEOUT,
      },
      pairs,
      otherPercentMedian: median(pairs.flatMap((p) => [p.a.otherPercent, p.b.otherPercent])),
      totalSeconds: (Date.now() - STARTED) / 1000,
    };
    publishReport(RESULTS, 'vault', report, renderMarkdown(report), log);
  } finally {
    await stopAll();
    for (const r of redises) r.client.disconnect();
  }
}

runDriver(main, log);
