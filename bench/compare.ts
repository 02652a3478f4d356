/**
 * `make bench-compare`: this build against an old one (BENCH_BASE), made to resolve a few percent.
 *
 * A node process keeps what it drew at start for its whole life: JIT decisions, heap layout, the
 * core the scheduler settled it on. Two nodes of one build, measured side by side in interleaved
 * slices, differed by up to ±7 % on this 2-core machine, and more slices do not average that out,
 * since it is the same two processes every time. So every round here starts FRESH processes: a
 * node of the new build (`new`), one of the old build (`base`), and a second node of the new build
 * (`new2`, the control), warms each up, measures each in slices (the order rotating and flipping
 * from round to round, each node twice per round in a palindrome, A B C C B A), and stops them.
 * Each round gives one ratio new/base and one control ratio new/new2; the report gives the median,
 * min and max of each over the rounds. The control's spread around 1.00 is the noise of one round;
 * the median of the comparison is to be read against it.
 *
 * The Redis servers (a primary and a node-local one, the fast key's bucket on the local one over
 * its unix socket) are started once and kept for the whole run, with the keys: the new build's key
 * was created by a node of the new build, the old build's by a node of the old build, as in
 * bench/run.ts (a build of the previous layout finds no key of this one).
 *
 * Knobs (environment): BENCH_COMPARE_ROUNDS (8), BENCH_COMPARE_SLICE (2 s), BENCH_COMPARE_WARMUP
 * (1.5 s per node per round), BENCH_CONNECTIONS (64), BENCH_PIN (1: with taskset and at least 2
 * CPUs, the keyward nodes on CPU 1, the Redis servers and this driver, the load generator, on CPU
 * 0), BENCH_TIMEOUT (600: fewer rounds are run, and the report says so, rather than run past it;
 * scripts/bench.sh kills the driver at that time). The old build comes from scripts/bench.sh as
 * for bench/run.ts: BENCH_BASE_APP, BENCH_BASE_REF, BENCH_BASE_COMMIT, BENCH_BASE_ERROR.
 *
 * Output: .run/bench/compare.json, .run/bench/compare.md (the table is printed too); logs and pids
 * in .run/compare.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Measurement, rpcTarget, warmUp, type LoadTarget } from './load';
import {
  CpuMeter,
  freePorts,
  installCleanup,
  isRunning,
  publishReport,
  runDriver,
  running,
  setPidFile,
  stop,
  stopAll,
} from './procs';
import { median, spread, type Spread } from './stats';
import {
  createRootKey,
  envNumber,
  HUGE,
  sleep,
  provenance,
  rpc,
  startKeyward,
  startRedis,
  type RedisInstance,
  type Server,
} from './setup';

const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
/** Logs, pids and the copy of the new build. */
const OUT = join(ROOT, '.run', 'compare');
/** compare.json and compare.md. */
const RESULTS = join(ROOT, '.run', 'bench');
/** A copy of dist/, lua/ and package.json taken when the run starts: one build for the whole run. */
const APP = join(OUT, 'app');

const ROUNDS = envNumber('BENCH_COMPARE_ROUNDS', 8, 1, 100);
const SLICE = envNumber('BENCH_COMPARE_SLICE', 2, 0.5, 30);
const WARMUP = envNumber('BENCH_COMPARE_WARMUP', 1.5, 0, 10);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 64, 1, 256);
const TIMEOUT = envNumber('BENCH_TIMEOUT', 600, 30, 7200);
/** Left at the end of the budget for stopping everything and writing the report. */
const MARGIN_SECONDS = 15;
const PIN_REQUESTED = process.env.BENCH_PIN === '1';
const STARTED = Date.now();
const secondsLeft = () => TIMEOUT - (Date.now() - STARTED) / 1000;

const log = (message: string) => process.stderr.write(`bench-compare: ${message}\n`);

const NODES = ['new', 'base', 'new2'] as const;
type NodeId = (typeof NODES)[number];

interface Base {
  ref: string;
  commit: string;
  app: string;
}

function baseBuild(): Base {
  const ref = process.env.BENCH_BASE_REF;
  if (ref === undefined || ref === '' || ref === 'none') {
    throw new Error('no old build: set BENCH_BASE to a commit (bench-compare needs one)');
  }
  const commit = process.env.BENCH_BASE_COMMIT ?? 'unknown';
  const app = process.env.BENCH_BASE_APP;
  const error = process.env.BENCH_BASE_ERROR;
  if (error || !app || !existsSync(join(app, 'dist', 'cli.js'))) {
    throw new Error(`old build ${ref} (${commit}): ${error || `no build at ${String(app)}`}`);
  }
  return { ref, commit, app };
}

// ---------------------------------------------------------------------------------- pinning

/** Which CPU each kind of process is pinned to, when pinning is on. */
const CPU_OF = { node: 1, redis: 0, driver: 0 } as const;

function pinning(): { on: boolean; reason: string } {
  if (!PIN_REQUESTED) return { on: false, reason: 'BENCH_PIN not set' };
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    return { on: false, reason: 'BENCH_PIN=1, but taskset is missing' };
  }
  if (cpus().length < 2) return { on: false, reason: 'BENCH_PIN=1, but fewer than 2 CPUs' };
  return {
    on: true,
    reason: `keyward nodes on CPU ${CPU_OF.node}; Redis servers and the load generator on CPU ${CPU_OF.redis}`,
  };
}

/** Every thread of `pid` (taskset -a) onto `cpu`; threads it starts later inherit it. */
function pin(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

// ---------------------------------------------------------------------------------- rounds

interface VerifyBody {
  valid?: boolean;
  code?: string;
  ratelimit?: { remaining: number };
}

/**
 * One request, whose answer must be a valid key with its limit applied. A cold node's first
 * request may find a Redis command timed out on a loaded machine (KEYWARD_REDIS_COMMAND_TIMEOUT_MS,
 * 100 ms by default: a 503), so a few tries are allowed before the round is given up.
 */
async function checkAnswer(name: string, target: LoadTarget, when: string): Promise<void> {
  let last = '';
  for (let attempt = 0; attempt < 10; attempt++) {
    if (attempt > 0) await sleep(300);
    const res = await fetch(target.url, {
      method: 'POST',
      headers: target.headers,
      body: target.body,
    });
    const body = (await res.json()) as VerifyBody;
    if (
      res.status === 200 &&
      body.valid === true &&
      body.code === 'VALID' &&
      body.ratelimit !== undefined &&
      body.ratelimit.remaining > 0
    ) {
      return;
    }
    last = `${res.status} ${JSON.stringify(body)}`;
  }
  throw new Error(`${name} ${when}: unexpected answer, 10 times: ${last}`);
}

interface NodeRound {
  requestsPerSecond: number;
  responses: number;
  seconds: number;
  slices: number;
  /** The node's own CPU (utime + stime) per request served. */
  cpuUsPerRequest: number;
  /** The node's CPU while measured, as a share of one core. */
  serverPercent: number;
  /** This driver's CPU (the load generator) while the node was measured, share of one core. */
  loadGeneratorPercent: number;
  /** The two Redis servers' CPU while the node was measured, share of one core. */
  redisPercent: number;
  /** CPU the machine spent on processes other than these, share of one core. */
  otherPercent: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

interface Round {
  round: number;
  /** Measurement order of the slices, e.g. new base new2 new2 base new. */
  order: NodeId[];
  nodes: Record<NodeId, NodeRound>;
  /** new / base, req/s. */
  ratio: number;
  /** new / new2, req/s: the control, 1.00 but for noise. */
  control: number;
  /** CPU µs per request, base / new and new2 / new (above 1: the new node spends less). */
  cpuRatio: number;
  cpuControl: number;
  seconds: number;
}

class NodeRun {
  readonly measurement: Measurement;
  private readonly cpu: CpuMeter;

  constructor(
    readonly id: NodeId,
    readonly server: Server,
    readonly target: LoadTarget,
    redises: RedisInstance[],
  ) {
    this.measurement = new Measurement(target, CONNECTIONS);
    this.cpu = new CpuMeter(
      server.child,
      redises.map((r) => r.child),
    );
  }

  async slice(seconds: number): Promise<void> {
    await this.cpu.measure(() => this.measurement.slice(seconds));
    if (!isRunning(this.server.child)) throw new Error(`${this.server.name} died while measured`);
  }

  result(): NodeRound {
    const load = this.measurement.result();
    return {
      requestsPerSecond: load.requestsPerSecond,
      responses: load.responses,
      seconds: load.seconds,
      slices: this.measurement.slices,
      cpuUsPerRequest: (this.cpu.server / Math.max(1, load.responses)) * 1e6,
      ...this.cpu.shares(load.seconds),
      p50Ms: load.p50,
      p99Ms: load.p99,
      errors: load.errors + load.timeouts,
      non2xx: load.non2xx,
    };
  }
}

/**
 * Round r's order of the three nodes, measured as a palindrome (A B C C B A): the outer node
 * rotates every round, the two inner ones swap every third, so six rounds go through all six
 * orders and every node is outer, middle and inner equally often.
 */
function orderOf(round: number): NodeId[] {
  const outer = NODES[round % NODES.length] as NodeId;
  const rest = NODES.filter((id) => id !== outer);
  return [outer, ...(Math.floor(round / NODES.length) % 2 === 0 ? rest : rest.reverse())];
}

interface Setup {
  primary: RedisInstance;
  local: RedisInstance;
  base: Base;
  rootKey: string;
  /** The key each build verifies. */
  keys: { new: string; base: string };
  pinned: boolean;
}

async function startNode(setup: Setup, id: NodeId, name: string): Promise<Server> {
  const [port] = (await freePorts(1)) as [number];
  const app = id === 'base' ? setup.base.app : APP;
  const server = await startKeyward({
    app,
    outDir: OUT,
    cwd: app === APP ? ROOT : app,
    name,
    port,
    logLevel: 'warn',
    primary: setup.primary,
    local: setup.local,
    transport: 'unix',
  });
  if (setup.pinned) pin(server.child.pid, CPU_OF.node);
  return server;
}

async function runRound(setup: Setup, round: number): Promise<Round> {
  const started = Date.now();
  const order = orderOf(round);
  const runs = new Map<NodeId, NodeRun>();
  try {
    // Fresh processes, started in this round's order.
    for (const id of order) {
      const server = await startNode(setup, id, `${id}-r${round + 1}`);
      const target = rpcTarget(server.url, '/v1/keys.verifyKey', setup.rootKey, {
        key: id === 'base' ? setup.keys.base : setup.keys.new,
      });
      runs.set(id, new NodeRun(id, server, target, [setup.primary, setup.local]));
    }
    const run = (id: NodeId) => runs.get(id) as NodeRun;
    for (const id of order) {
      await checkAnswer(id, run(id).target, 'before');
      await warmUp(run(id).target, CONNECTIONS, WARMUP);
    }
    const slices = [...order, ...[...order].reverse()];
    for (const id of slices) await run(id).slice(SLICE);
    for (const id of order) await checkAnswer(id, run(id).target, 'after');
    const nodes = Object.fromEntries(NODES.map((id) => [id, run(id).result()])) as Record<
      NodeId,
      NodeRound
    >;
    return {
      round: round + 1,
      order: slices,
      nodes,
      ratio: nodes.new.requestsPerSecond / nodes.base.requestsPerSecond,
      control: nodes.new.requestsPerSecond / nodes.new2.requestsPerSecond,
      cpuRatio: nodes.base.cpuUsPerRequest / nodes.new.cpuUsPerRequest,
      cpuControl: nodes.new2.cpuUsPerRequest / nodes.new.cpuUsPerRequest,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const r of runs.values()) await stop(r.server.child);
    // A node that started but never served (not live in time, or its pinning failed) is in no
    // run: it is stopped here too, not left to compete with the next round's nodes.
    for (const child of running()) {
      if (child.name.endsWith(`-r${round + 1}`)) await stop(child);
    }
  }
}

// ---------------------------------------------------------------------------------- report

interface CompareReport {
  date: string;
  source: { commit: string; uncommitted: string[] };
  base: { ref: string; commit: string };
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
    slicesPerNodePerRound: number;
    warmupSeconds: number;
    connections: number;
    timeoutSeconds: number;
    pinned: boolean;
    pinning: string;
  };
  rounds: Round[];
  /** Rounds given up (their nodes stopped), with why. */
  failedRounds: { round: number; error: string }[];
  summary: {
    ratio: Spread;
    control: Spread;
    cpuRatio: Spread;
    cpuControl: Spread;
    /** Largest distance of a control round from 1.00, in percent. */
    controlSpreadPercent: number;
    /** Standard deviation of the control rounds' ratios, in percent. */
    controlSdPercent: number;
    /**
     * About a 95 % interval of the new/base median, ± percent: 1.96 × 1.25 × sd / √rounds, the
     * noise of one round taken from the control (its two nodes are as independent as new and
     * base). A difference smaller than this is not resolved by this run.
     */
    resolutionPercent: number;
    cpuUsPerRequest: Record<NodeId, number>;
    requestsPerSecond: Record<NodeId, number>;
    errors: number;
    non2xx: number;
    /** Median over rounds of the other processes' CPU while measured, share of one core. */
    otherPercentMedian: number;
  };
  verdict: string;
  totalSeconds: number;
}

/** The other processes' CPU during a round's slices, share of one core. */
const otherOf = (round: Round) =>
  NODES.reduce((sum, id) => sum + round.nodes[id].otherPercent, 0) / NODES.length;

function summarize(rounds: Round[]): CompareReport['summary'] {
  const controls = rounds.map((r) => r.control);
  const mean = controls.reduce((a, b) => a + b, 0) / controls.length;
  const sd =
    controls.length > 1
      ? Math.sqrt(controls.reduce((s, c) => s + (c - mean) ** 2, 0) / (controls.length - 1))
      : NaN;
  const perNode = (f: (n: NodeRound) => number) =>
    Object.fromEntries(
      NODES.map((id) => [id, median(rounds.map((r) => f(r.nodes[id])))]),
    ) as Record<NodeId, number>;
  const all = rounds.flatMap((r) => NODES.map((id) => r.nodes[id]));
  return {
    ratio: spread(rounds.map((r) => r.ratio)),
    control: spread(controls),
    cpuRatio: spread(rounds.map((r) => r.cpuRatio)),
    cpuControl: spread(rounds.map((r) => r.cpuControl)),
    controlSpreadPercent: Math.max(...controls.map((c) => Math.abs(c - 1))) * 100,
    controlSdPercent: sd * 100,
    resolutionPercent: ((1.96 * 1.25 * sd) / Math.sqrt(controls.length)) * 100,
    cpuUsPerRequest: perNode((n) => n.cpuUsPerRequest),
    requestsPerSecond: perNode((n) => n.requestsPerSecond),
    errors: all.reduce((s, n) => s + n.errors, 0),
    non2xx: all.reduce((s, n) => s + n.non2xx, 0),
    otherPercentMedian: median(rounds.map(otherOf)),
  };
}

const x2 = (v: number) => `${v.toFixed(2)}×`;
const x3 = (v: number) => v.toFixed(3);
const int = (v: number) => Math.round(v).toLocaleString('en-US');
const pct = (v: number) => `${v.toFixed(1)} %`;

function verdictOf(s: CompareReport['summary']): string {
  return (
    `new/base median ${x2(s.ratio.median)} (control ${x2(s.control.median)}, ` +
    `spread of control rounds ±${s.controlSpreadPercent.toFixed(1)} %)`
  );
}

function renderMarkdown(r: CompareReport): string {
  const s = r.summary;
  const lines: string[] = [];
  lines.push(`# bench-compare: ${r.source.commit} against ${r.base.ref} (${r.base.commit})`, '');
  lines.push(
    `${r.date}; ${r.machine.nproc} × ${r.machine.cpu}, Node ${r.machine.node}; load average ` +
      `(1 min) ${r.machine.loadAverage1m.before.toFixed(2)} before, ` +
      `${r.machine.loadAverage1m.after.toFixed(2)} after.` +
      (r.source.uncommitted.length > 0
        ? ` Uncommitted changes measured: ${r.source.uncommitted.join(', ')}.`
        : ''),
    '',
  );
  lines.push(
    `${r.settings.rounds} round${r.settings.rounds === 1 ? '' : 's'}` +
      (r.settings.rounds + r.failedRounds.length < r.settings.plannedRounds
        ? ` (of ${r.settings.plannedRounds} planned: the time budget, ${r.settings.timeoutSeconds} s, ran out)`
        : '') +
      (r.failedRounds.length > 0 ? ` (${r.failedRounds.length} more skipped, below)` : '') +
      ` of fresh node processes (new, base, and new2 = a second node of the new build, the ` +
      `control), each warmed up ${r.settings.warmupSeconds} s and measured in ` +
      `${r.settings.slicesPerNodePerRound} slices of ${r.settings.sliceSeconds} s per round ` +
      `(orders rotating and flipping), ${r.settings.connections} connections, ` +
      `\`fast\` keys.verifyKey. CPU pinning: ${r.settings.pinned ? 'on' : 'off'} ` +
      `(${r.settings.pinning}).`,
    '',
  );
  lines.push(
    '| round | order | new req/s | base req/s | new2 req/s | new/base | new/new2 | CPU µs/req new · base · new2 | other CPU % | errors, non-2xx |',
    '| ----: | ----- | --------: | ---------: | ---------: | -------: | -------: | ---------------------------: | ----------: | --------------: |',
  );
  for (const round of r.rounds) {
    const n = round.nodes;
    const other = otherOf(round);
    lines.push(
      `| ${round.round} | ${round.order.join(' ')} | ${int(n.new.requestsPerSecond)} | ` +
        `${int(n.base.requestsPerSecond)} | ${int(n.new2.requestsPerSecond)} | ${x3(round.ratio)} | ` +
        `${x3(round.control)} | ${n.new.cpuUsPerRequest.toFixed(1)} · ` +
        `${n.base.cpuUsPerRequest.toFixed(1)} · ${n.new2.cpuUsPerRequest.toFixed(1)} | ` +
        `${other.toFixed(0)} | ${NODES.reduce((sum, id) => sum + n[id].errors + n[id].non2xx, 0)} |`,
    );
  }
  for (const failed of r.failedRounds) {
    lines.push(`| ${failed.round} | skipped: ${failed.error.replace(/\|/g, '/')} |`);
  }
  lines.push('');
  lines.push(
    '| per-round ratio                               | median | min   | max   |',
    '| --------------------------------------------- | -----: | ----: | ----: |',
  );
  const row = (label: string, v: Spread) =>
    `| ${label.padEnd(45)} | ${x3(v.median)} | ${x3(v.min)} | ${x3(v.max)} |`;
  lines.push(row('new / base, req/s', s.ratio));
  lines.push(row('new / new2, req/s (control)', s.control));
  lines.push(row('base / new, CPU µs per request', s.cpuRatio));
  lines.push(row('new2 / new, CPU µs per request (control)', s.cpuControl));
  lines.push('');
  lines.push(
    `Medians over rounds: req/s new ${int(s.requestsPerSecond.new)}, base ` +
      `${int(s.requestsPerSecond.base)}, new2 ${int(s.requestsPerSecond.new2)}; CPU µs per request ` +
      `new ${s.cpuUsPerRequest.new.toFixed(1)}, base ${s.cpuUsPerRequest.base.toFixed(1)}, new2 ` +
      `${s.cpuUsPerRequest.new2.toFixed(1)}. Errors ${s.errors}, non-2xx ${s.non2xx}` +
      (s.errors + s.non2xx > 0
        ? ' (counted in req/s as answers: a node that answered 503s was not doing the same work).'
        : '.'),
    '',
    `"other CPU %": what processes other than these nodes, the two Redis servers and the load ` +
      `generator took while a node was measured, as a share of one core (the machine has ` +
      `${r.machine.nproc * 100} %), averaged over the round's slices.` +
      (s.otherPercentMedian > 25
        ? ` **The machine was busy** (median ${s.otherPercentMedian.toFixed(0)} % of a core): ` +
          `the figures are indicative.`
        : ''),
    '',
    Number.isFinite(s.controlSdPercent)
      ? `Control: standard deviation of one round ${pct(s.controlSdPercent)}; a new/base median ` +
          `is resolved to about ±${pct(s.resolutionPercent)} (95 %, 1.96 × 1.25 × sd / √rounds).`
      : 'Control: one round, no spread to estimate the resolution from.',
    '',
    `**${r.verdict}**`,
    '',
  );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? NaN;
  mkdirSync(OUT, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  setPidFile(join(OUT, 'pids'));
  installCleanup(stopAll);
  const base = baseBuild();
  const pins = pinning();
  log(`CPU pinning ${pins.on ? 'on' : 'off'}: ${pins.reason}`);
  if (pins.on) pin(process.pid, CPU_OF.driver);
  // One build for the whole run, even if dist/ or lua/ change while it runs (node_modules is
  // found one level up, in the project).
  rmSync(APP, { recursive: true, force: true });
  for (const entry of ['dist', 'lua', 'package.json', 'docs', 'public', 'static']) {
    if (existsSync(join(ROOT, entry)))
      cpSync(join(ROOT, entry), join(APP, entry), { recursive: true });
  }
  const source = provenance(ROOT);

  const [primaryPort, localPort] = (await freePorts(2)) as [number, number];
  const primary = await startRedis(OUT, 'redis-primary', primaryPort);
  const local = await startRedis(OUT, 'redis-local', localPort);
  const redises = [primary, local];
  if (pins.on) for (const r of redises) pin(r.child.pid, CPU_OF.redis);
  log(`redis primary on ${primary.port}, node-local on ${local.port}`);

  try {
    // The keys, created once by a node of each build, both stopped before the first round.
    const rootKey = createRootKey(APP, primary, 'bench-compare').key;
    const setup: Setup = {
      primary,
      local,
      base,
      rootKey,
      keys: { new: '', base: '' },
      pinned: pins.on,
    };
    const makeKey = async (id: 'new' | 'base') => {
      const node = await startNode(setup, id, `${id}-setup`);
      try {
        const { apiId } = await rpc<{ apiId: string }>(node.url, rootKey, 'apis.createApi', {
          name: `bench-compare (${id})`,
        });
        const { key } = await rpc<{ key: string }>(node.url, rootKey, 'keys.createKey', {
          apiId,
          prefix: 'bench',
          ratelimit: { type: 'fast', ...HUGE },
        });
        return key;
      } finally {
        await stop(node.child);
      }
    };
    setup.keys.new = await makeKey('new');
    setup.keys.base = await makeKey('base');

    const rounds: Round[] = [];
    const failedRounds: CompareReport['failedRounds'] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The next round is expected to take as long as the longest so far.
      const expected = Math.max(3 * (WARMUP + 2 * SLICE) + 6, ...rounds.map((r) => r.seconds));
      if (secondsLeft() < expected + MARGIN_SECONDS) {
        log(`time budget: stopping after ${round} of ${ROUNDS} rounds`);
        break;
      }
      let result: Round;
      try {
        result = await runRound(setup, round);
      } catch (error) {
        // A round that cannot be measured (a node that did not answer as it should) is reported
        // and skipped: its processes are stopped, and the next round starts fresh ones.
        const message = error instanceof Error ? error.message : String(error);
        failedRounds.push({ round: round + 1, error: message });
        log(`round ${round + 1}/${ROUNDS} skipped: ${message}`);
        if (failedRounds.length > ROUNDS / 2) throw new Error('more than half the rounds failed');
        continue;
      }
      rounds.push(result);
      const n = result.nodes;
      log(
        `round ${round + 1}/${ROUNDS} (${result.order.join(' ')}): ` +
          `new ${int(n.new.requestsPerSecond)}, base ${int(n.base.requestsPerSecond)}, ` +
          `new2 ${int(n.new2.requestsPerSecond)} req/s; new/base ${x3(result.ratio)}, ` +
          `new/new2 ${x3(result.control)}; CPU µs/req ${n.new.cpuUsPerRequest.toFixed(1)} · ` +
          `${n.base.cpuUsPerRequest.toFixed(1)} · ${n.new2.cpuUsPerRequest.toFixed(1)} ` +
          `(${result.seconds.toFixed(0)} s)`,
      );
    }
    if (rounds.length === 0) throw new Error('no round fitted in BENCH_TIMEOUT');

    const summary = summarize(rounds);
    const report: CompareReport = {
      date: new Date().toISOString(),
      source,
      base: { ref: base.ref, commit: base.commit },
      machine: {
        nproc: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadAverage1m: { before: loadBefore, after: loadavg()[0] ?? NaN },
      },
      settings: {
        plannedRounds: ROUNDS,
        rounds: rounds.length,
        sliceSeconds: SLICE,
        slicesPerNodePerRound: 2,
        warmupSeconds: WARMUP,
        connections: CONNECTIONS,
        timeoutSeconds: TIMEOUT,
        pinned: pins.on,
        pinning: pins.reason,
      },
      rounds,
      failedRounds,
      summary,
      verdict: verdictOf(summary),
      totalSeconds: (Date.now() - STARTED) / 1000,
    };
    publishReport(RESULTS, 'compare', report, renderMarkdown(report), log);
  } finally {
    await stopAll();
    for (const r of redises) r.client.disconnect();
  }
}

runDriver(main, log);
