/** Turns one benchmark run into bench/results.md and a bar chart, bench/results.svg. */
import type { LeaseFigures } from './leases';
import type { LoadResult, SequentialResult } from './load';
import { spread, type Spread } from './stats';

export interface CaseResult {
  id: string;
  label: string;
  /**
   * ceiling: bare servers; floor: a bare server plus the very script call keyward makes; base:
   * keyward built from an older commit (BENCH_BASE); peer: what a user would write instead.
   */
  group: 'ceiling' | 'floor' | 'keyward' | 'base' | 'peer';
  load: LoadResult;
  /** How many interleaved slices its measured seconds came in. */
  slices: number;
  /** Each slice's figures (absent in runs before 2026-11-27's evening). */
  rounds?: RoundFigures[];
  /** One request before and after the measured run answered what the case expects. */
  checksPassed: boolean;
  checks: string[];
  cpu: {
    serverPercent: number;
    serverUsPerRequest: number;
    redisPercent: Record<string, number>;
    loadGeneratorPercent: number;
    /** The whole machine's busy CPU during the window (200 % = both of 2 cores). */
    machinePercent: number;
    /** Busy CPU not used by the server, its Redis or the load generator: someone else's work. */
    otherPercent: number;
  };
  /** Commands per request seen by each Redis (INFO commandstats, script internals included). */
  redisCommands: Record<string, Record<string, number>>;
  /** Every command each Redis ran per second of the case (the usage flush's cost, for one). */
  redisCommandsPerSecond?: Record<string, number>;
}

/** One slice of a case: the round it was measured in, and what it measured alone. */
export interface RoundFigures {
  round: number;
  requestsPerSecond: number;
  serverUsPerRequest: number;
}

/**
 * Two cases measured beside each other, round by round: per round, a's req/s over b's and a's CPU
 * per request minus b's. Each pair of slices is a few seconds of one moment of the machine, whose
 * speed drifts by up to 2× within an hour here; the median of the pairs is what such drift cannot
 * move, where the ratio of two whole-run totals is moved by any slow stretch that lands more on
 * one case. Undefined when fewer than three rounds hold both.
 */
export interface PairedRounds {
  rounds: number;
  ratio: Spread;
  cpuDifferenceUs: Spread;
}

export function pairedRounds(a: CaseResult, b: CaseResult): PairedRounds | undefined {
  const pairs = (a.rounds ?? []).flatMap((x) => {
    const y = b.rounds?.find((candidate) => candidate.round === x.round);
    return y && y.requestsPerSecond > 0 ? [[x, y] as const] : [];
  });
  if (pairs.length < 3) return undefined;
  return {
    rounds: pairs.length,
    ratio: spread(pairs.map(([x, y]) => x.requestsPerSecond / y.requestsPerSecond)),
    cpuDifferenceUs: spread(pairs.map(([x, y]) => x.serverUsPerRequest - y.serverUsPerRequest)),
  };
}

export interface BenchReport {
  date: string;
  /** The commit measured, and files of src/ or lua/ that differed from it (built into dist/). */
  source: { commit: string; uncommitted: string[] };
  machine: {
    nproc: number;
    cpu: string;
    memoryGiB: number;
    node: string;
    redis: string;
    kernel: string;
    /** 1-minute load average when the run began and ended: other work on the machine shows here. */
    loadAverage1m: { before: number; after: number };
  };
  settings: {
    seconds: number;
    warmupSeconds: number;
    connections: number;
    /** Rounds measured; each case got one slice of `sliceSeconds` per round. */
    rounds: number;
    plannedRounds: number;
    sliceSeconds: number;
  };
  cases: CaseResult[];
  /** Verification cases as a share of their floor (the same script call without keyward). */
  floor: FloorRatio[];
  /** The older build measured beside this one (`fast-base`), or why it could not be. */
  base:
    | { ref: string; commit: string; nodeModules: 'shared' | 'installed' }
    | { ref: string; commit: string; error: string }
    | undefined;
  redisBenchmark: {
    command: string;
    /** The Lua file whose SHA1 keyward called. */
    script: string;
    failedCalls: number;
    requests: number;
    clients: number;
    requestsPerSecond: number;
    avgMs: number;
    p50Ms: number;
    p99Ms: number;
  };
  latency: {
    seconds: number;
    /**
     * keyward's own share of a fast check at p50: what the check adds to keyward (fast − no limit)
     * minus what the same script call adds to a bare node:http server, in the same alternation.
     */
    keywardShareUs: number;
    results: SequentialResult[];
    /** One EVALSHA of the bucket script at a time from the driver (ioredis): the Redis floor. */
    redisRoundTrip: RoundTrip;
    /** The same over the other transport. */
    otherRedisRoundTrip: RoundTrip;
    p50DifferenceUs: number;
    p99DifferenceUs: number;
    /** How the measured node reached its local Redis. */
    localTransport: 'unix' | 'tcp';
    /** The same pair of requests on a node that reaches the same Redis the other way. */
    other: { transport: 'unix' | 'tcp'; p50DifferenceUs: number; p99DifferenceUs: number };
    /**
     * A bare node:http server answering the same two requests, the fast one after the same script
     * call (ioredis, the measured node's transport): what one round trip costs any Node server.
     */
    bare: { p50DifferenceUs: number; p99DifferenceUs: number };
  };
  memory: {
    records: number;
    cachedKeys: number;
    node: string;
    cacheConfig: { maxEntries: number; ttlMs: number; negativeTtlMs: number };
    baseline: { rssMiB: number; heapUsedMiB: number };
    filled: {
      rssMiB: number;
      heapUsedMiB: number;
      heapTotalMiB: number;
      externalMiB: number;
      arrayBuffersMiB: number;
    };
    bytesPerRecord: number;
    heapBytesPerRecord: number;
    seconds: number;
  };
  infoLog: { bytesPerRequest: number; destination: string } | undefined;
  /**
   * Consistent verification on a primary with one replica, KEYWARD_CONSISTENT_DURABILITY=local
   * against replicated, one request at a time (the cases consistent-local and
   * consistent-replicated give the same under load). Absent when those cases were not run.
   */
  durability?: {
    replicas: number;
    minReplicas: number;
    seconds: number;
    /** local first, then replicated. */
    results: SequentialResult[];
    /** replicated − local. */
    p50DifferenceUs: number;
    p99DifferenceUs: number;
  };
  /** Issue 27: consistent verification through leases (bench/leases.ts). */
  leases?: LeaseFigures;
  totalSeconds: number;
}

export interface FloorRatio {
  /** The keyward case, and the floor case it is measured against. */
  case: string;
  floor: string;
  /** keyward req/s ÷ floor req/s. */
  ratio: number;
  cpuUsPerRequest: number;
  floorCpuUsPerRequest: number;
}

/** Which floor each verification case is read against. */
const FLOORS: readonly [string, string][] = [
  ['fast', 'floor-fast'],
  ['consistent', 'floor-consistent'],
];

export function floorRatios(cases: CaseResult[]): FloorRatio[] {
  const out: FloorRatio[] = [];
  for (const [id, floorId] of FLOORS) {
    const c = cases.find((x) => x.id === id);
    const floor = cases.find((x) => x.id === floorId);
    if (!c || !floor || floor.load.requestsPerSecond === 0) continue;
    out.push({
      case: id,
      floor: floorId,
      ratio: c.load.requestsPerSecond / floor.load.requestsPerSecond,
      cpuUsPerRequest: c.cpu.serverUsPerRequest,
      floorCpuUsPerRequest: floor.cpu.serverUsPerRequest,
    });
  }
  return out;
}

/** Other processes' CPU (% of one core) above which a case is flagged as measured on a shared machine. */
const SHARED = 25;

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const ratio = (a: number, b: number | undefined) =>
  b === undefined || b === 0 ? 'n/a' : (a / b).toFixed(2);
const mark = (ok: boolean) => (ok ? '**yes**' : '**NO**');
const signed = (us: number) => `${us >= 0 ? '+' : ''}${us.toFixed(0)}`;

function find(report: BenchReport, id: string): CaseResult | undefined {
  return report.cases.find((c) => c.id === id);
}

function errorsOf(c: CaseResult): number {
  return c.load.errors + c.load.timeouts;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean;
}

/**
 * A goal that compares two cases of this run by req/s, with each one's server CPU per request:
 * judged on the median of the per-round ratios when the two were measured in three rounds or
 * more (pairedRounds), else on the whole run's ratio, and only when `a` answered as it should.
 * Both figures are shown.
 */
function comparison(
  name: string,
  goal: string,
  a: CaseResult,
  b: CaseResult,
  meets: (ratio: number) => boolean,
): Target {
  const whole = a.load.requestsPerSecond / b.load.requestsPerSecond;
  const paired = pairedRounds(a, b);
  const totals =
    `${fmtInt(a.load.requestsPerSecond)} vs ${fmtInt(b.load.requestsPerSecond)} req/s; CPU ` +
    `${a.cpu.serverUsPerRequest.toFixed(0)} vs ${b.cpu.serverUsPerRequest.toFixed(0)} µs/request`;
  return {
    name,
    goal,
    measured: paired
      ? `${paired.ratio.median.toFixed(2)} × per round (${rangeOf(paired.ratio, 2)} over ` +
        `${paired.rounds} rounds); whole run ${whole.toFixed(2)} × (${totals})`
      : `${whole.toFixed(2)} × (${totals})`,
    met: meets(paired?.ratio.median ?? whole) && a.checksPassed && errorsOf(a) === 0,
  };
}

const rangeOf = (s: Spread, digits: number) => `${s.min.toFixed(digits)}–${s.max.toFixed(digits)}`;

export function targets(report: BenchReport): Target[] {
  const koa = find(report, 'bare-koa');
  const peer = find(report, 'peer');
  const fast = find(report, 'fast');
  const invalid = find(report, 'invalid');
  const list: Target[] = [];
  if (fast && koa) {
    const r = fast.load.requestsPerSecond / koa.load.requestsPerSecond;
    list.push({
      name: 'fast verify vs bare Koa',
      goal: '≥ 0.80 × bare Koa req/s',
      measured: `${r.toFixed(2)} × (${fmtInt(fast.load.requestsPerSecond)} vs ${fmtInt(koa.load.requestsPerSecond)})`,
      met: r >= 0.8,
    });
  }
  if (fast && peer) {
    const r = fast.load.requestsPerSecond / peer.load.requestsPerSecond;
    list.push({
      name: 'fast verify vs peer',
      goal: '≥ 1.5 × peer req/s',
      measured: `${r.toFixed(2)} × (${fmtInt(fast.load.requestsPerSecond)} vs ${fmtInt(peer.load.requestsPerSecond)})`,
      met: r >= 1.5,
    });
  }
  if (invalid && koa) {
    const r = invalid.load.requestsPerSecond / koa.load.requestsPerSecond;
    list.push({
      name: 'invalid-key flood vs bare Koa',
      goal: '≥ 0.90 × bare Koa req/s',
      measured: `${r.toFixed(2)} × (${fmtInt(invalid.load.requestsPerSecond)} vs ${fmtInt(koa.load.requestsPerSecond)})`,
      met: r >= 0.9,
    });
  }
  const badChecksum = find(report, 'bad-checksum');
  if (invalid && badChecksum) {
    list.push(
      comparison(
        'wrong-checksum flood vs unknown-key flood',
        '≥ 1.0 × the unknown-key flood req/s (refused before the hash and the cache)',
        badChecksum,
        invalid,
        (r) => r >= 1.0,
      ),
    );
  }
  const invalidInfo = find(report, 'invalid @info');
  if (invalid && invalidInfo) {
    list.push(
      comparison(
        'unknown-key flood at info vs warn',
        '≥ 0.90 × the same flood at LOG_LEVEL=warn (loses ≤ 10 %)',
        invalidInfo,
        invalid,
        (r) => r >= 0.9,
      ),
    );
  }
  if (fast && koa) {
    const r = fast.load.p99 / koa.load.p99;
    list.push({
      name: 'p99 of fast verify',
      goal: '≤ 2 × bare Koa p99',
      measured: `${r.toFixed(2)} × (${fmtMs(fast.load.p99)} ms vs ${fmtMs(koa.load.p99)} ms)`,
      met: r <= 2,
    });
  }
  // keyward's cases and the peer; the floors and the old build are other servers' answers.
  const keyward = report.cases.filter((c) => c.group === 'keyward' || c.group === 'peer');
  const bad = keyward.filter((c) => errorsOf(c) > 0 || c.load.non2xx > 0 || !c.checksPassed);
  list.push({
    name: 'no errors',
    goal: '0 errors, 0 timeouts, 0 non-2xx, every answer as expected',
    measured:
      bad.length === 0
        ? `0 in ${fmtInt(keyward.reduce((s, c) => s + c.load.responses, 0))} responses`
        : bad.map((c) => `${c.id}: ${errorsOf(c)} errors, ${c.load.non2xx} non-2xx`).join('; '),
    met: bad.length === 0,
  });
  const lat = report.latency;
  list.push({
    name: "keyward's share of a fast check",
    goal:
      '≤ 10 µs at p50: what the check adds to keyward minus what the same script call adds to a ' +
      'bare node:http server, same alternation',
    measured:
      `${lat.keywardShareUs.toFixed(0)} µs (keyward +${lat.p50DifferenceUs.toFixed(0)} µs, local ` +
      `Redis over ${transportName(lat.localTransport)}; bare node:http + the same EVALSHA ` +
      `+${lat.bare.p50DifferenceUs.toFixed(0)} µs)`,
    met: lat.keywardShareUs <= 10,
  });
  const base = report.base;
  if (base) {
    const old = find(report, 'fast-base');
    if ('error' in base || !old || !fast) {
      list.push({
        name: 'fast verify vs the old build',
        goal: '≥ 0.97 × the old build req/s (within 3 %)',
        measured: `not measured: ${'error' in base ? base.error : 'no fast-base case'} (${base.ref}, ${base.commit})`,
        met: false,
      });
    } else {
      const oldBad = errorsOf(old) > 0 || old.load.non2xx > 0 || !old.checksPassed;
      const target = comparison(
        'fast verify vs the old build',
        `≥ 0.97 × the old build req/s (within 3 %; ${base.ref}, ${base.commit})`,
        fast,
        old,
        (r) => r >= 0.97,
      );
      if (oldBad) target.measured += '; the old build answered with errors';
      target.met &&= !oldBad;
      list.push(target);
    }
  }
  const floorFast = find(report, 'floor-fast');
  if (fast && floorFast) {
    const above = pairedRounds(fast, floorFast);
    const old = find(report, 'fast-base');
    const oldAbove = old ? pairedRounds(old, floorFast) : undefined;
    list.push({
      name: "fast verify's CPU above its floor",
      goal:
        '≤ 10 µs/request: server CPU of a fast verification minus that of node:http + the same ' +
        'EVALSHA, median of the rounds measured side by side (issue 23)',
      measured: above
        ? `${above.cpuDifferenceUs.median.toFixed(1)} µs (${rangeOf(above.cpuDifferenceUs, 0)} over ` +
          `${above.rounds} rounds; floor ${floorFast.cpu.serverUsPerRequest.toFixed(0)} µs/request)` +
          (oldAbove
            ? `; the old build ${oldAbove.cpuDifferenceUs.median.toFixed(1)} µs ` +
              `(${rangeOf(oldAbove.cpuDifferenceUs, 0)})`
            : '')
        : `not paired (fewer than 3 rounds): ${(fast.cpu.serverUsPerRequest - floorFast.cpu.serverUsPerRequest).toFixed(0)} µs over the whole run`,
      met: above !== undefined && above.cpuDifferenceUs.median <= 10 && fast.checksPassed,
    });
  }
  const noAnalytics = find(report, 'fast-no-analytics');
  if (noAnalytics && fast) {
    const target = comparison(
      'fast verify with usage analytics vs without',
      '≥ 0.97 × the same build with KEYWARD_ANALYTICS=off req/s, in the same run',
      fast,
      noAnalytics,
      (r) => r >= 0.97,
    );
    target.met &&= noAnalytics.checksPassed && errorsOf(noAnalytics) === 0;
    list.push(target);
  }
  // Issue 26: an identity's pool and a webhook, each against the same build without it. A pool is
  // credits, exact across regions, so it is held against the same key spending credits of its
  // own (one primary call each); against a key without credits it is reported (docs/decisions.md,
  // "What the pool is measured against").
  const pool = find(report, 'fast-pool');
  const credits = find(report, 'fast-credits');
  const withoutPool = find(report, 'fast-credits-identity');
  if (pool && withoutPool) {
    list.push(
      comparison(
        "fast verify spending its identity's credit pool vs the same key spending credits of its own",
        '≥ 0.95 × the same key (the same identity, without a pool) with credits of its own, in the same run (issue 26)',
        pool,
        withoutPool,
        (r) => r >= 0.95,
      ),
    );
  }
  if (pool && fast) {
    list.push(
      comparison(
        "fast verify spending its identity's credit pool vs a fast key without credits",
        'reported: what spending credits on the primary costs a fast key (one more script call)',
        pool,
        fast,
        () => true,
      ),
    );
  }
  const hooked = find(report, 'fast-credits-webhooks');
  if (credits && hooked) {
    list.push(
      comparison(
        'fast verify with credits in a workspace with a webhook vs one without',
        '≥ 0.95 × the same key shape in a workspace without webhooks, in the same run (issue 26)',
        hooked,
        credits,
        (r) => r >= 0.95,
      ),
    );
  }
  const flushRate = fast?.redisCommandsPerSecond?.['redis-analytics'];
  if (fast && flushRate !== undefined) {
    list.push({
      name: "usage analytics: the flush's own cost",
      goal: 'reported: commands per second on the analytics Redis for a node at full load (fast case)',
      measured:
        `${flushRate.toFixed(1)} commands/s (INFO commandstats of redis-analytics during fast, ` +
        `${fmtInt(fast.load.requestsPerSecond)} verifications/s)`,
      met: true,
    });
  }
  const durableLocal = find(report, 'consistent-local');
  const durableReplicated = find(report, 'consistent-replicated');
  if (durableLocal && durableReplicated) {
    const target = comparison(
      'consistent verify, replicated vs local durability',
      'reported: KEYWARD_CONSISTENT_DURABILITY=replicated (a WAIT for 1 replica after each batch ' +
        'of writes) as a ratio of local, same primary and replica',
      durableReplicated,
      durableLocal,
      () => true,
    );
    const us = (ms: number) => `${ms >= 0 ? '+' : ''}${(ms * 1000).toFixed(0)}`;
    target.measured +=
      `; under load p50 ${us(durableReplicated.load.p50 - durableLocal.load.p50)} µs, p99 ` +
      `${us(durableReplicated.load.p99 - durableLocal.load.p99)} µs`;
    const one = report.durability;
    if (one) {
      target.measured +=
        `; one request at a time p50 ${signed(one.p50DifferenceUs)} µs, p99 ` +
        `${signed(one.p99DifferenceUs)} µs`;
    }
    target.met &&= durableLocal.checksPassed && errorsOf(durableLocal) === 0;
    list.push(target);
  }
  const accessModel = find(report, 'access-model');
  if (accessModel && fast) {
    list.push(
      comparison(
        'access model vs the fast key',
        'reported: a key with 20 permissions from 3 roles, a 4-term query, an identity limit ' +
          '(consistent) and 2 fast named limits, as a ratio of the single fast key',
        accessModel,
        fast,
        () => true,
      ),
    );
  }
  list.push({
    name: 'memory, 1,000,000 cached keys',
    goal: '< 512 MiB RSS',
    measured: `${report.memory.filled.rssMiB} MiB RSS (${fmtInt(report.memory.records)} records)`,
    met: report.memory.filled.rssMiB < 512 && report.memory.records >= 1_000_000,
  });
  return list;
}

function redisSummary(c: CaseResult): string {
  const parts: string[] = [];
  for (const [redis, commands] of Object.entries(c.redisCommands)) {
    const entries = Object.entries(commands);
    const name = redis.replace('redis-', '');
    parts.push(
      entries.length === 0
        ? `${name}: none`
        : `${name}: ${entries.map(([cmd, rate]) => `${cmd} ${rate}`).join(', ')}`,
    );
  }
  return parts.length === 0 ? 'n/a' : parts.join('; ');
}

export function renderMarkdown(report: BenchReport): string {
  const koa = find(report, 'bare-koa');
  const peer = find(report, 'peer');
  const m = report.machine;
  const s = report.settings;
  const lines: string[] = [];
  lines.push('# keyward benchmark results');
  lines.push('');
  lines.push(
    `Generated by \`make bench\` (scripts/bench.sh → bench/run.ts) on ${report.date}, one run, ` +
      `${report.totalSeconds.toFixed(0)} s. Every figure below comes from that run; the raw numbers ` +
      'are in `bench/results.json`.',
  );
  lines.push('');
  lines.push(
    `Code measured: commit \`${report.source.commit}\`` +
      (report.source.uncommitted.length === 0
        ? ' (src/ and lua/ as committed), built into dist/ and copied once at the start of the run.'
        : `, with uncommitted changes to ${report.source.uncommitted.map((f) => `\`${f}\``).join(', ')} ` +
          '(the working tree as built into dist/, copied once at the start of the run).'),
  );
  lines.push('');
  lines.push('## Machine');
  lines.push('');
  lines.push(`- CPUs (nproc): ${m.nproc} × ${m.cpu}; memory ${m.memoryGiB} GiB; ${m.kernel}`);
  lines.push(`- Node ${m.node}; ${m.redis}`);
  lines.push(
    '- Load generator, servers and Redis all share these cores (the CPU table below shows who used what).',
  );
  lines.push(
    `- 1-minute load average: ${m.loadAverage1m.before.toFixed(2)} when the run began (before it ` +
      `loaded anything), ${m.loadAverage1m.after.toFixed(2)} at its end.`,
  );
  lines.push('');
  lines.push('## Reproduce');
  lines.push('');
  lines.push('```sh');
  lines.push('make bench');
  lines.push('```');
  lines.push('');
  lines.push(
    'Knobs: `BENCH_SECONDS`, `BENCH_SLICE_SECONDS`, `BENCH_WARMUP_SECONDS`, `BENCH_CONNECTIONS`, ' +
      '`BENCH_LATENCY_SECONDS`, `BENCH_MEMORY_RECORDS`, `BENCH_INFO_CASES`, ' +
      '`BENCH_DURABILITY_LATENCY_SECONDS`, `BENCH_BUDGET_SECONDS`, `BENCH_LOCAL_REDIS`, ' +
      '`BENCH_BASE` (the old build: a commit, `HEAD~1` by default, `none` for none), ' +
      '`BENCH_CASES` (only these case ids; such a run writes `.run/bench/results.*`) ' +
      '(defaults give the run below).',
  );
  lines.push('');
  lines.push('## Method');
  lines.push('');
  lines.push(
    `- Every server is its own process; autocannon 8 drives it from the bench driver process ` +
      `(never the same event loop). ${s.connections} connections, no pipelining, ` +
      `${s.warmupSeconds} s warm-up (discarded) per case, then ` +
      `${(s.rounds * s.sliceSeconds).toFixed(0)} s measured per case, in ${s.rounds} rounds of ` +
      `${s.sliceSeconds} s${s.rounds < s.plannedRounds ? ` (of ${s.plannedRounds} planned: the run's time budget cut it short)` : ''}: every case gets one ${s.sliceSeconds} s slice per round, in an order ` +
      'that rotates each round. All servers are up for the whole run (idle when not measured), so ' +
      'whatever else the machine does while the benchmark runs falls on every case alike rather ' +
      'than on whichever ran at the wrong moment.',
  );
  lines.push(
    '- Same request for every HTTP case: `POST /v1/keys.verifyKey`, `Authorization: Bearer <root key>`, ' +
      '`Content-Type: application/json`, body `{"key": "<key>"}`.',
  );
  lines.push(
    '- Two Redis 7 servers of its own (`--save "" --appendonly no`, 127.0.0.1, free ports): the primary ' +
      '(records, consistent buckets, the peer) and a node-local one (fast buckets), which the ' +
      `keyward node reaches over ${transportName(report.latency.localTransport)} ` +
      '(`BENCH_LOCAL_REDIS=tcp` for TCP).',
  );
  lines.push(
    '- keyward: `node dist/cli.js serve` at `LOG_LEVEL=warn` (rows marked `@info`: `LOG_LEVEL=info`, ' +
      'one access-log line per request written to a file). Keys: none / `fast` / `consistent` rate ' +
      'limit of 1e9 tokens refilled by 1e9 per 1000 ms (never limited), an unknown key string, ' +
      'and the key without a limit with its last character changed (a wrong checksum).',
  );
  lines.push(
    '- Ceilings: a bare node:http handler and a bare Koa app that read and JSON.parse the body and ' +
      'answer a small JSON; `redis-benchmark` running EVALSHA of the token-bucket script with ' +
      'exactly the arguments keyward sends for the fast key (captured with MONITOR during one ' +
      'verification, key retagged to `{bench}`), on the node-local Redis.',
  );
  lines.push(
    "- Floors (this design's floor): the bare node:http handler plus the very EVALSHA keyward makes " +
      'for the fast key (node-local Redis, same transport as the node) and for the consistent key ' +
      '(the primary, over TCP), captured with MONITOR like the Redis ceiling, through ioredis, ' +
      'before answering. A verification can be no faster than that; its ratio to it is what ' +
      "keyward's own work costs.",
  );
  const base = report.base;
  if (base) {
    lines.push(
      `- Old build: \`${base.ref}\` (commit \`${base.commit}\`), checked out in a scratch git ` +
        'worktree and built by `scripts/bench.sh`, ' +
        ('error' in base
          ? `could not be measured: ${base.error}.`
          : `${base.nodeModules === 'shared' ? 'sharing node_modules (same package-lock.json)' : 'with its own npm install (its package-lock.json differs)'}; ` +
            'its node runs at `LOG_LEVEL=warn` beside the new one on the same two Redis servers and ' +
            'verifies a fast key of the same limit that it created itself (a build of the previous ' +
            'layout does not read keys of this one). Its slices alternate with the new build’s fast case: next ' +
            'to each other in every round, the old one first in every other round.'),
    );
  }
  if (find(report, 'consistent-local') || find(report, 'consistent-replicated')) {
    lines.push(
      '- Durability: a third Redis pair of its own, a primary and one replica on this machine ' +
        '(`--replicaof` the primary, in sync before anything is measured), serves the two ' +
        'durability cases only, so that no other case pays for a replication stream. Two nodes ' +
        'on it, one with `KEYWARD_CONSISTENT_DURABILITY=local` and one with `replicated` ' +
        '(`KEYWARD_MIN_REPLICAS=1`, `KEYWARD_REPLICA_WAIT_MS` at its default, half of ' +
        '`KEYWARD_REDIS_COMMAND_TIMEOUT_MS`), verify the same key with a `consistent` limit, ' +
        "the load and limit of the `consistent` case. The replicated one's slices are next to " +
        "the local one's in every round, first in every other round.",
    );
  }
  lines.push(
    '- Peer (what a user would write instead): Koa + sha256(key) + HGET of the key record (JSON) from ' +
      'one Redis hash + rate-limiter-flexible `RateLimiterRedis` (ioredis) `consume`, on the primary.',
  );
  lines.push(
    '- req/s = responses counted during the measured window ÷ its length. p50/p99 come from every ' +
      "response's own timing (autocannon's `response` event, sub-ms precision), not autocannon's " +
      'whole-millisecond histogram. One request before and after each case checks the answer ' +
      '(e.g. `VALID` with a `ratelimit` for the fast key, `NOT_FOUND` for the unknown key).',
  );
  lines.push('');
  lines.push('## Throughput');
  lines.push('');
  lines.push('![requests per second per case](results.svg)');
  lines.push('');
  lines.push(
    '| case | req/s | p50 ms | p99 ms | errors | non-2xx | × bare Koa | × peer | other processes’ CPU % | answer checks |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const c of report.cases) {
    lines.push(
      `| ${c.label} | ${fmtInt(c.load.requestsPerSecond)} | ${fmtMs(c.load.p50)} | ${fmtMs(c.load.p99)} | ` +
        `${errorsOf(c)} | ${c.load.non2xx} | ${ratio(c.load.requestsPerSecond, koa?.load.requestsPerSecond)} | ` +
        `${ratio(c.load.requestsPerSecond, peer?.load.requestsPerSecond)} | ` +
        `${c.cpu.otherPercent.toFixed(0)}${c.cpu.otherPercent > SHARED ? ' ⚠' : ''} | ` +
        `${c.checksPassed ? 'ok' : 'FAILED'} (${c.checks.join(', ')}) |`,
    );
  }
  const rb = report.redisBenchmark;
  lines.push(
    `| Redis ceiling: redis-benchmark EVALSHA ${rb.script} (${rb.clients} clients, ` +
      `${fmtInt(rb.requests)} requests, node-local Redis) | ${fmtInt(rb.requestsPerSecond)} | ` +
      `${fmtMs(rb.p50Ms)} | ${fmtMs(rb.p99Ms)} | 0 | n/a | ` +
      `${ratio(rb.requestsPerSecond, koa?.load.requestsPerSecond)} | ` +
      `${ratio(rb.requestsPerSecond, peer?.load.requestsPerSecond)} | n/a | failed_calls ${rb.failedCalls} |`,
  );
  lines.push('');
  const shared = report.cases.filter((c) => c.cpu.otherPercent > SHARED);
  lines.push(
    shared.length === 0
      ? `No case saw more than ${SHARED} % of a core used by other processes while it ran.`
      : `⚠ ${shared.map((c) => c.id).join(', ')}: while ${shared.length === 1 ? 'this case' : 'these cases'} ran, ` +
          `other processes on the machine used more than ${SHARED} % of a core (see the CPU table); ` +
          'those figures understate what this machine can do and the ratios involving them are noisy.',
  );
  lines.push('');
  lines.push(`Redis ceiling command: \`${rb.command}\``);
  lines.push('');
  if (report.floor.length > 0) {
    lines.push('### Against the floor of this design');
    lines.push('');
    lines.push(
      'Each verification against a bare node:http server that makes the same script call and ' +
        'nothing else (same Redis, same transport, ioredis): the ratio is the share of that ' +
        "floor's throughput keyward keeps, the CPU difference what keyward's own work costs per request.",
    );
    lines.push('');
    lines.push(
      '| case | req/s | floor req/s | × floor | server CPU µs/request | floor CPU µs/request | keyward above the floor, µs/request | above the floor, median of rounds |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const f of report.floor) {
      const c = find(report, f.case);
      const floor = find(report, f.floor);
      if (!c || !floor) continue;
      const paired = pairedRounds(c, floor);
      lines.push(
        `| ${f.case} | ${fmtInt(c.load.requestsPerSecond)} | ${fmtInt(floor.load.requestsPerSecond)} | ` +
          `${f.ratio.toFixed(2)} | ${f.cpuUsPerRequest.toFixed(0)} | ${f.floorCpuUsPerRequest.toFixed(0)} | ` +
          `${(f.cpuUsPerRequest - f.floorCpuUsPerRequest).toFixed(0)} | ` +
          `${paired ? `${paired.cpuDifferenceUs.median.toFixed(1)} (${rangeOf(paired.cpuDifferenceUs, 0)}, ${paired.rounds} rounds)` : 'n/a'} |`,
      );
    }
    lines.push('');
  }
  lines.push('## Targets (from the performance issue)');
  lines.push('');
  lines.push('| target | goal | measured | met |');
  lines.push('|---|---|---|---|');
  for (const t of targets(report)) {
    lines.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${mark(t.met)} |`);
  }
  const otherMean =
    report.cases.reduce((sum, c) => sum + c.cpu.otherPercent, 0) / Math.max(1, report.cases.length);
  if (otherMean > SHARED) {
    lines.push('');
    lines.push(
      `⚠ Other processes used ${otherMean.toFixed(0)} % of a core on average while the cases ran ` +
        '(this machine is shared). Interleaving spreads that load over all cases, so the ratios ' +
        'above are fairer than the absolute figures, but both are noisier than on a quiet machine.',
    );
  }
  lines.push('');
  lines.push('## Where the CPU went (measured window)');
  lines.push('');
  lines.push(
    'Server CPU from `/proc/<pid>/stat` (100 % = one core), load generator = the bench driver ' +
      'process running autocannon, Redis = each redis-server. Redis commands per request from ' +
      '`INFO commandstats` (commands run inside a Lua script are counted too: the token bucket ' +
      'runs TIME, HMGET, HSET, PEXPIRE; rate-limiter-flexible runs SET, INCRBY, PTTL). Machine busy ' +
      'from `/proc/stat` (200 % = both cores); "other processes" is what neither the server, its ' +
      'Redis nor the load generator used (kernel network work not charged to a process, and any ' +
      'other job on the machine): a case with a high value there was measured on a shared machine ' +
      'and is less trustworthy (interleaving spreads that over all cases).',
  );
  lines.push('');
  lines.push(
    '| case | server CPU % | server CPU µs/request | load generator CPU % | Redis CPU % | machine busy % | other processes % | Redis commands per request |',
  );
  lines.push('|---|---:|---:|---:|---|---:|---:|---|');
  for (const c of report.cases) {
    const redisCpu = Object.entries(c.cpu.redisPercent)
      .map(([name, pct]) => `${name.replace('redis-', '')} ${pct.toFixed(0)}`)
      .join(', ');
    lines.push(
      `| ${c.id} | ${c.cpu.serverPercent.toFixed(0)} | ${c.cpu.serverUsPerRequest.toFixed(0)} | ` +
        `${c.cpu.loadGeneratorPercent.toFixed(0)} | ${redisCpu || 'n/a'} | ` +
        `${c.cpu.machinePercent.toFixed(0)} | ${c.cpu.otherPercent.toFixed(0)} | ${redisSummary(c)} |`,
    );
  }
  if (report.infoLog) {
    lines.push('');
    lines.push(
      `At \`LOG_LEVEL=info\` the node wrote ${report.infoLog.bytesPerRequest.toFixed(0)} bytes of ` +
        `access log per request to ${report.infoLog.destination}.`,
    );
  }
  lines.push('');
  lines.push('## Added latency of a fast rate-limit check');
  lines.push('');
  const lat = report.latency;
  lines.push(
    `One keep-alive connection, one request at a time (the same verifyKey request), alternating ` +
      `blocks of 200 requests between a key without a rate limit and a key with a \`fast\` one for ` +
      `${lat.seconds} s after 500 warm-up requests each; client-side hrtime per request, at ` +
      '`LOG_LEVEL=warn`. The difference is what the fast check (one EVALSHA on the node-local Redis) adds. ' +
      `The measured node reaches its local Redis over ${transportName(lat.localTransport)}; a second ` +
      `node, measured in the same alternation, reaches the same Redis over ` +
      `${transportName(lat.other.transport)}. The last two rows are a bare node:http server (read ` +
      'and JSON.parse the body, answer a small JSON) in the same alternation, answering the fast ' +
      "key only after the very script call keyward makes (ioredis, over the measured node's " +
      'transport): what one script round trip per request costs any Node server on this machine.',
  );
  lines.push('');
  lines.push('| key | requests | p50 µs | p90 µs | p99 µs | mean µs | failed |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of lat.results) {
    lines.push(
      `| ${r.name} | ${fmtInt(r.requests)} | ${r.p50us.toFixed(0)} | ${r.p90us.toFixed(0)} | ` +
        `${r.p99us.toFixed(0)} | ${r.meanUs.toFixed(0)} | ${r.failures} |`,
    );
  }
  lines.push('');
  lines.push(
    `p50 difference (fast − no rate limit): **${lat.p50DifferenceUs.toFixed(0)} µs**; p99 difference ` +
      `${lat.p99DifferenceUs.toFixed(0)} µs. Over ${transportName(lat.other.transport)}: p50 ` +
      `difference ${lat.other.p50DifferenceUs.toFixed(0)} µs, p99 difference ` +
      `${lat.other.p99DifferenceUs.toFixed(0)} µs.`,
  );
  lines.push('');
  const floor = (trip: RoundTrip) =>
    `p50 ${trip.p50us.toFixed(0)} µs, p99 ${trip.p99us.toFixed(0)} µs over ` +
    `${transportName(trip.transport)} (${fmtInt(trip.requests)} calls)`;
  lines.push(
    `keyward's own share of the fast check is what it adds beyond the bare server's script ` +
      `call in the same alternation: ${lat.p50DifferenceUs.toFixed(0)} − ` +
      `${lat.bare.p50DifferenceUs.toFixed(0)} = **${lat.keywardShareUs.toFixed(0)} µs** at p50 ` +
      `(target ≤ 10 µs: ${mark(lat.keywardShareUs <= 10)}; the bare server's ` +
      `p99 difference: ${lat.bare.p99DifferenceUs.toFixed(0)} µs). The script round trip itself ` +
      'is subtracted: what this machine charges for it, a bare server pays too. For scale, the same EVALSHA ' +
      `back to back from the driver process with ioredis (no HTTP server) took ` +
      `${floor(lat.redisRoundTrip)}, and ${floor(lat.otherRedisRoundTrip)}; a loop like that keeps ` +
      'the CPUs awake, so it is lower than any one-request-at-a-time figure. Why a round trip costs ' +
      'this much here: `docs/performance.md`, "The latency floor of this machine".',
  );
  lines.push('');
  const durable = report.durability;
  const durableLocal = find(report, 'consistent-local');
  const durableReplicated = find(report, 'consistent-replicated');
  if (durable || (durableLocal && durableReplicated)) {
    lines.push('## Consistent verification with replicated durability');
    lines.push('');
    lines.push(
      'The same key with a `consistent` limit on a primary with one replica (on this machine), ' +
        'verified by a node with `KEYWARD_CONSISTENT_DURABILITY=local` and by one with ' +
        '`replicated` (`KEYWARD_MIN_REPLICAS=1`): each bucket script is followed, in the same ' +
        'round trip, by one `WAIT 1 <ms>` per batch of writes, and answers once the replica holds it.',
    );
    lines.push('');
    if (durableLocal && durableReplicated) {
      lines.push(
        '| durability | req/s | p50 ms | p99 ms | server CPU µs/request | primary CPU % | replica CPU % | Redis commands per request |',
      );
      lines.push('|---|---:|---:|---:|---:|---:|---:|---|');
      for (const c of [durableLocal, durableReplicated]) {
        lines.push(
          `| ${c.id.replace('consistent-', '')} | ${fmtInt(c.load.requestsPerSecond)} | ` +
            `${fmtMs(c.load.p50)} | ${fmtMs(c.load.p99)} | ${c.cpu.serverUsPerRequest.toFixed(0)} | ` +
            `${(c.cpu.redisPercent['redis-durable-primary'] ?? NaN).toFixed(0)} | ` +
            `${(c.cpu.redisPercent['redis-durable-replica'] ?? NaN).toFixed(0)} | ${redisSummary(c)} |`,
        );
      }
      lines.push('');
      const r = durableReplicated.load.requestsPerSecond / durableLocal.load.requestsPerSecond;
      const us = (ms: number) => signed(ms * 1000);
      lines.push(
        `Under load (${s.connections} connections): replicated / local = **${r.toFixed(2)} ×** ` +
          `the throughput; p50 ${us(durableReplicated.load.p50 - durableLocal.load.p50)} µs, ` +
          `p99 ${us(durableReplicated.load.p99 - durableLocal.load.p99)} µs.`,
      );
      lines.push('');
    }
    if (durable) {
      lines.push(
        `One keep-alive connection, one request at a time, alternating blocks of 200 requests ` +
          `between the two nodes for ${durable.seconds} s after 500 warm-up requests each:`,
      );
      lines.push('');
      lines.push('| durability | requests | p50 µs | p90 µs | p99 µs | mean µs | failed |');
      lines.push('|---|---:|---:|---:|---:|---:|---:|');
      for (const r of durable.results) {
        lines.push(
          `| ${r.name} | ${fmtInt(r.requests)} | ${r.p50us.toFixed(0)} | ${r.p90us.toFixed(0)} | ` +
            `${r.p99us.toFixed(0)} | ${r.meanUs.toFixed(0)} | ${r.failures} |`,
        );
      }
      lines.push('');
      lines.push(
        `Replicated − local, one request at a time: p50 **${signed(durable.p50DifferenceUs)} µs**, ` +
          `p99 ${signed(durable.p99DifferenceUs)} µs.`,
      );
      lines.push('');
    }
  }
  if (report.leases) lines.push(...leaseSection(report.leases));
  lines.push('## Memory: 1,000,000 cached key records');
  lines.push('');
  const mem = report.memory;
  lines.push(
    'What was measured: a separate `node --expose-gc bench/memory.js` process (not a serving node) ' +
      "that builds keyward's own `Directory` (from `dist/`, so its own `ReadThroughCache`s and LRU) " +
      `with the node's default cache configuration (maxEntries ${fmtInt(mem.cacheConfig.maxEntries)}, ` +
      `ttl ${mem.cacheConfig.ttlMs} ms) and the heap tuning \`keyward serve\` applies first ` +
      '(`tuneHeapForKeyCache`: V8 allocation-site pretenuring off), and fills it through ' +
      `\`keyByHash\` — the path a verification ` +
      `takes — with ${fmtInt(mem.records)} records built by the real \`keyFromHash\` from hashes shaped ` +
      'like an HGETALL reply (ids `key_`+22 base58, base64 sha256 hash, start, createdAt, enabled, ' +
      'version, seq, a fast rate limit; every string a separate copy, as a Redis reply gives). RSS is ' +
      '`process.memoryUsage().rss` after forced GCs. Not included: HTTP server, Redis clients, sockets.',
  );
  lines.push('');
  lines.push('| | RSS MiB | heap used MiB |');
  lines.push('|---|---:|---:|');
  lines.push(
    `| empty Directory (baseline) | ${mem.baseline.rssMiB} | ${mem.baseline.heapUsedMiB} |`,
  );
  lines.push(
    `| ${fmtInt(mem.cachedKeys)} keys cached | ${mem.filled.rssMiB} | ${mem.filled.heapUsedMiB} |`,
  );
  lines.push('');
  lines.push(
    `Per record: ${mem.bytesPerRecord} bytes of RSS, ${mem.heapBytesPerRecord} bytes of V8 heap. ` +
      `Target < 512 MiB: ${mark(mem.filled.rssMiB < 512)} (filled in ${mem.seconds.toFixed(1)} s).`,
  );
  lines.push('');
  return `${lines.join('\n')}`;
}

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Horizontal bars of req/s per case, each labelled with its number. */
export function renderSvg(report: BenchReport): string {
  const cases = report.cases;
  const koa = find(report, 'bare-koa');
  const width = 900;
  const labelWidth = 330;
  const barMax = width - labelWidth - 110;
  const rowHeight = 30;
  const top = 58;
  const height = top + cases.length * rowHeight + 78;
  const peerRps = find(report, 'peer')?.load.requestsPerSecond ?? 0;
  const max = Math.max(...cases.map((c) => c.load.requestsPerSecond), 1.5 * peerRps, 1);
  const colors = {
    ceiling: '#9aa5b1',
    floor: '#5f6b7a',
    keyward: '#2f6fdf',
    base: '#93b4ee',
    peer: '#e8833a',
  } as const;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="16" y="24" font-size="16" font-weight="bold">keyward verifyKey: requests per second (higher is better)</text>`,
  );
  out.push(
    `<text x="16" y="44" fill="#555">${escapeXml(
      `${report.settings.connections} connections, ${report.settings.seconds} s each; ${report.machine.nproc} CPUs, Node ${report.machine.node}; ${report.date.slice(0, 10)}`,
    )}</text>`,
  );
  cases.forEach((c, i) => {
    const y = top + i * rowHeight;
    const w = Math.max(1, (c.load.requestsPerSecond / max) * barMax);
    out.push(
      `<text x="${labelWidth - 10}" y="${y + 19}" text-anchor="end">${escapeXml(shortLabel(c))}</text>`,
    );
    out.push(
      `<rect x="${labelWidth}" y="${y + 5}" width="${w.toFixed(1)}" height="${rowHeight - 10}" fill="${colors[c.group]}" rx="2"/>`,
    );
    out.push(
      `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 19}" font-weight="bold">${fmtInt(c.load.requestsPerSecond)}${c.cpu.otherPercent > SHARED ? ' ⚠' : ''}</text>`,
    );
  });
  const bottom = top + cases.length * rowHeight;
  const peerCase = find(report, 'peer');
  const marker = (value: number, color: string, text: string, labelY: number) => {
    const x = labelWidth + (value / max) * barMax;
    out.push(
      `<line x1="${x.toFixed(1)}" y1="${top}" x2="${x.toFixed(1)}" y2="${bottom}" stroke="${color}" stroke-dasharray="4 3"/>`,
    );
    out.push(
      `<text x="${x.toFixed(1)}" y="${labelY}" fill="${color}" text-anchor="middle" font-size="12">${escapeXml(text)}</text>`,
    );
  };
  if (koa)
    marker(0.8 * koa.load.requestsPerSecond, '#c62828', 'target: 0.80 × bare Koa', bottom + 16);
  if (peerCase) {
    marker(1.5 * peerCase.load.requestsPerSecond, '#8e24aa', 'target: 1.5 × peer', bottom + 30);
  }
  const legendY = height - 26;
  let lx = 16;
  for (const [group, label] of [
    ['ceiling', 'ceiling (bare)'],
    ['floor', 'floor (bare + EVALSHA)'],
    ['keyward', 'keyward'],
    ['base', 'keyward, old build'],
    ['peer', 'peer (Koa + HGET + rate-limiter-flexible)'],
  ] as const) {
    out.push(
      `<rect x="${lx}" y="${legendY - 10}" width="12" height="12" fill="${colors[group]}"/>`,
    );
    out.push(`<text x="${lx + 17}" y="${legendY}">${escapeXml(label)}</text>`);
    lx += 30 + label.length * 7;
  }
  if (cases.some((c) => c.cpu.otherPercent > SHARED)) {
    out.push(
      `<text x="16" y="${height - 8}" fill="#555" font-size="12">⚠ other processes were busy during this case</text>`,
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function shortLabel(c: CaseResult): string {
  const names: Record<string, string> = {
    'bare-http': 'bare node:http',
    'bare-koa': 'bare Koa',
    'floor-fast': 'floor: node:http + fast EVALSHA',
    'floor-consistent': 'floor: node:http + consistent EVALSHA',
    'fast-base': 'keyward old build: fast rate limit',
    'fast-no-analytics': 'keyward: key, fast rate limit, analytics off',
    'fast-pool': "keyward: fast rate limit, identity's credit pool",
    'fast-credits': 'keyward: fast rate limit, own credits',
    'fast-credits-identity': 'keyward: fast rate limit, own credits, identity without a pool',
    'fast-credits-webhooks': 'keyward: fast rate limit, own credits, workspace with a webhook',
    'no-ratelimit': 'keyward: key, no rate limit',
    fast: 'keyward: key, fast rate limit',
    'access-model': 'keyward: access model (roles, query, identity + named limits)',
    consistent: 'keyward: key, consistent rate limit',
    'consistent-local': 'keyward: consistent, primary + replica, local',
    'consistent-replicated': 'keyward: consistent, primary + replica, replicated',
    invalid: 'keyward: unknown key',
    'bad-checksum': 'keyward: wrong checksum',
    peer: 'peer: Koa+HGET+RateLimiterRedis',
  };
  const [base, level] = c.id.split(' ');
  return `${names[base as string] ?? c.id}${level ? ` (${level.replace('@', 'LOG_LEVEL=')})` : ''}`;
}

interface RoundTrip {
  requests: number;
  p50us: number;
  p99us: number;
  transport: 'unix' | 'tcp';
}

function transportName(transport: 'unix' | 'tcp'): string {
  return transport === 'unix' ? 'a unix socket' : 'TCP on 127.0.0.1';
}

/** Issue 27's section: leases on and off in a far region, and their under-admission. */
function leaseSection(leases: LeaseFigures): string[] {
  const ms = (us: number) => (us / 1000).toFixed(2);
  const lines = ['## Consistent limits through leases (issue 27)', ''];
  lines.push(
    `A far region ${leases.roundTripMs} ms (one round trip) from the primary: two nodes on one ` +
      'region Redis reach the primary through a relay that holds every chunk half that long each ' +
      'way. The same `consistent` key, verified one request at a time in alternating blocks, by a ' +
      `node with \`KEYWARD_CONSISTENT_LEASES=on\` (leases of ${leases.ttlMs / 1000} s, at most ` +
      `${leases.maxPercent} % of the limit) and by one without:`,
  );
  lines.push('');
  lines.push('| far node | requests | p50 ms | p90 ms | p99 ms | mean ms | failed |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of leases.latency) {
    lines.push(
      `| ${r.name} | ${fmtInt(r.requests)} | ${ms(r.p50us)} | ${ms(r.p90us)} | ${ms(r.p99us)} | ` +
        `${ms(r.meanUs)} | ${r.failures} |`,
    );
  }
  lines.push('');
  lines.push(
    `Script calls on the primary per 1,000 far verifications: **${leases.primaryCallsPer1000.on.toFixed(1)}** ` +
      `with leases, ${leases.primaryCallsPer1000.off.toFixed(0)} without.`,
  );
  lines.push('');
  lines.push(
    "Under-admission, on the scripts' virtual clock against real Redis (the same arrivals sent " +
      'through the leases and to one plain bucket of the same shape; "wrongly refused" is what the ' +
      'plain bucket admitted beyond the leases, per request):',
  );
  lines.push('');
  lines.push(
    '| load | requests | admitted, leases | admitted, one bucket | wrongly refused | served from a lease |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|');
  for (const [name, r] of [
    ['steady 80 %', leases.steady],
    ['worst case', leases.worst],
  ] as const) {
    lines.push(
      `| ${name}: ${r.description} | ${fmtInt(r.requests)} | ${fmtInt(r.admittedWithLeases)} | ` +
        `${fmtInt(r.admittedByOneBucket)} | ${r.wronglyRefusedPercent.toFixed(2)} % | ` +
        `${r.servedFromLeasesPercent.toFixed(1)} % |`,
    );
  }
  lines.push('');
  return lines;
}
