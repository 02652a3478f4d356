/**
 * `make bench`: keyward's verification hot path against its ceilings and against the server a user
 * would write instead, on this machine, in one run. Everything runs on 127.0.0.1, every load is
 * bounded in time and connections, and every process started here is stopped at the end, on an
 * error, and on Ctrl-C. Results: bench/results.md, bench/results.svg, bench/results.json.
 *
 * Knobs (environment): BENCH_SECONDS (10 measured per case), BENCH_SLICE_SECONDS (2: cases are
 * measured in interleaved slices of this length), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS
 * (64), BENCH_LATENCY_SECONDS (15, shared by the six request kinds), BENCH_MEMORY_RECORDS (1000000),
 * BENCH_INFO_CASES (fast,invalid: keyward cases measured again on a node at LOG_LEVEL=info),
 * BENCH_DURABILITY_LATENCY_SECONDS (6, shared by consistent-local and consistent-replicated),
 * BENCH_BUDGET_SECONDS (240: fewer rounds are measured, and the report says so, rather than
 * run past it), BENCH_BASE (scripts/bench.sh: the old build, HEAD~1 unless set, `none` for none),
 * BENCH_CASES (every case unless set: a comma-separated list of the case ids to measure; such a
 * run writes its results to .run/bench/, not bench/, as it is no run of record).
 *
 * The old build comes from scripts/bench.sh, built in a scratch worktree: BENCH_BASE_APP (its
 * folder), BENCH_BASE_REF, BENCH_BASE_COMMIT, BENCH_BASE_MODULES (shared or installed), or
 * BENCH_BASE_ERROR when it could not be built.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { measureLeases } from './leases';
import {
  Measurement,
  percentile,
  rpcTarget,
  sequential,
  warmUp,
  type LoadTarget,
  type SequentialResult,
} from './load';
import {
  cpuSeconds,
  freePorts,
  installCleanup,
  isRunning,
  machineBusySeconds,
  runDriver,
  setPidFile,
  stop,
  stopAll,
} from './procs';
import { commandCounts, connectRedis } from './redisClient';
import {
  createRootKey,
  envNumber,
  HOST,
  HUGE,
  provenance,
  rpc,
  captureBucketCall,
  startComparisonServer,
  startKeyward as startKeywardNode,
  startRedis as startRedisIn,
  startReplica,
  type RedisInstance,
  type Server,
  type Transport,
} from './setup';
import {
  floorRatios,
  renderMarkdown,
  renderSvg,
  type BenchReport,
  type CaseResult,
  type RoundFigures,
} from './report';

const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const OUT = join(ROOT, '.run', 'bench');
const BUILD = join(ROOT, '.run', 'bench-build', 'bench');
/** A copy of dist/, lua/ and package.json taken when the run starts: one build for the whole run. */
const APP = join(OUT, 'app');

const SECONDS = envNumber('BENCH_SECONDS', 10, 1, 30);
const WARMUP = envNumber('BENCH_WARMUP_SECONDS', 1, 0, 10);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 64, 1, 256);
const LATENCY_SECONDS = envNumber('BENCH_LATENCY_SECONDS', 15, 1, 30);
const MEMORY_RECORDS = envNumber('BENCH_MEMORY_RECORDS', 1_000_000, 1000, 2_000_000);
const INFO_CASES = (process.env.BENCH_INFO_CASES ?? 'fast,invalid')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const DURABILITY_LATENCY_SECONDS = envNumber('BENCH_DURABILITY_LATENCY_SECONDS', 6, 1, 30);
/** The case ids to measure, or undefined for all of them (the run of record). */
const CASES = process.env.BENCH_CASES?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const measured = (id: string) => CASES === undefined || CASES.includes(id);
/** Where the report goes: a run of only some cases must not overwrite the run of record. */
const RESULTS = CASES === undefined ? join(ROOT, 'bench') : OUT;

/**
 * How the measured node reaches its node-local Redis. A unix socket by default, as a node-local
 * Redis is deployed; the latency step measures the other transport too.
 */
const LOCAL_TRANSPORT: Transport = process.env.BENCH_LOCAL_REDIS === 'tcp' ? 'tcp' : 'unix';
const OTHER_TRANSPORT: Transport = LOCAL_TRANSPORT === 'unix' ? 'tcp' : 'unix';

/** Length of one measured slice; each case gets SECONDS in SECONDS / SLICE interleaved slices. */
const SLICE_SECONDS = envNumber('BENCH_SLICE_SECONDS', 2, 0.5, 30);
/** The driver measures fewer rounds (and says so) rather than run past this. */
const BUDGET_SECONDS = envNumber('BENCH_BUDGET_SECONDS', 240, 30, 600);
/** What must be left after the throughput rounds: both latency steps, Redis ceiling, memory step. */
const RESERVE_SECONDS = LATENCY_SECONDS + DURABILITY_LATENCY_SECONDS + 28;
const STARTED = Date.now();
const secondsLeft = () => BUDGET_SECONDS - (Date.now() - STARTED) / 1000;

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

/** The old build scripts/bench.sh prepared, and the folder it is in (not reported: a temp path). */
type BaseInRun =
  | { ref: string; commit: string; app: string; nodeModules: 'shared' | 'installed' }
  | { ref: string; commit: string; error: string };

function baseBuild(): BaseInRun | undefined {
  const ref = process.env.BENCH_BASE_REF;
  if (ref === undefined || ref === '' || ref === 'none') return undefined;
  const commit = process.env.BENCH_BASE_COMMIT ?? 'unknown';
  const app = process.env.BENCH_BASE_APP;
  const error = process.env.BENCH_BASE_ERROR;
  if (error || !app || !existsSync(join(app, 'dist', 'cli.js'))) {
    return { ref, commit, error: error || `no build at ${String(app)}` };
  }
  return {
    ref,
    commit,
    app,
    nodeModules: process.env.BENCH_BASE_MODULES === 'installed' ? 'installed' : 'shared',
  };
}

// ---------------------------------------------------------------------------------- Redis

const startRedis = (name: string, port: number) => startRedisIn(OUT, name, port);

/** The cases on the durable pair, the only ones whose Redis is not `primary`. */
const DURABLE_CASES = ['consistent-local', 'consistent-replicated'];

/** The setting the two durability cases compare, with what `replicated` waits for. */
const DURABILITY = {
  local: { KEYWARD_CONSISTENT_DURABILITY: 'local' },
  replicated: { KEYWARD_CONSISTENT_DURABILITY: 'replicated', KEYWARD_MIN_REPLICAS: '1' },
} as const;

/**
 * A primary with one replica of its own, used by the durability cases only: a replica makes its
 * primary send a replication stream, which would cost the primary of the other cases CPU. One
 * node per setting of KEYWARD_CONSISTENT_DURABILITY, both on this pair, so that the only
 * difference between the two cases is the WAIT.
 */
interface DurablePair {
  primary: RedisInstance;
  replica: RedisInstance;
  local: Server;
  replicated: Server;
  key: string;
  rootKey: string;
}

async function startDurablePair(
  local: RedisInstance,
  env: Record<string, string>,
): Promise<DurablePair> {
  const [primaryPort, replicaPort] = (await freePorts(2)) as [number, number];
  const primary = await startRedis('redis-durable-primary', primaryPort);
  const replica = await startReplica(OUT, 'redis-durable-replica', replicaPort, primary);
  log(`durability: primary on ${primary.port}, its replica on ${replica.port}`);
  const node = (setting: keyof typeof DURABILITY) =>
    startKeyward(
      'warn',
      primary,
      local,
      LOCAL_TRANSPORT,
      { dir: APP, name: `keyward-durable-${setting}` },
      { ...env, ...DURABILITY[setting] },
    );
  const localNode = await node('local');
  const replicatedNode = await node('replicated');
  const root = createRootKey(APP, primary, 'bench-durable');
  const { apiId } = await rpc<{ apiId: string }>(localNode.url, root.key, 'apis.createApi', {
    name: 'bench-durable',
  });
  const { key } = await rpc<{ key: string }>(localNode.url, root.key, 'keys.createKey', {
    apiId,
    prefix: 'bench',
    ratelimit: { type: 'consistent', ...HUGE },
  });
  return { primary, replica, local: localNode, replicated: replicatedNode, key, rootKey: root.key };
}

async function stopDurablePair(pair: DurablePair): Promise<void> {
  for (const server of [pair.local, pair.replicated, pair.replica, pair.primary]) {
    await stop(server.child);
  }
  pair.primary.client.disconnect();
  pair.replica.client.disconnect();
}

function perRequest(counts: Record<string, number>, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, calls] of Object.entries(counts)) {
    const rate = calls / Math.max(1, requests);
    if (rate >= 0.005) out[name] = Math.round(rate * 100) / 100;
  }
  return out;
}

// ---------------------------------------------------------------------------------- servers

function startCompareServer(
  mode: 'http' | 'koa' | 'peer' | 'script',
  env: Record<string, string> = {},
  name: string = mode,
): Promise<Server> {
  return startComparisonServer({ build: BUILD, cwd: ROOT, outDir: OUT, mode, name, env });
}

async function startKeyward(
  logLevel: 'warn' | 'info',
  primary: RedisInstance,
  local: RedisInstance,
  transport: Transport = LOCAL_TRANSPORT,
  app: { dir: string; name: string } = { dir: APP, name: 'keyward' },
  env: Record<string, string> = {},
): Promise<Server & { logFile: string }> {
  const [port] = (await freePorts(1)) as [number];
  const name = `${app.name}-${logLevel}${transport === LOCAL_TRANSPORT ? '' : `-${transport}`}`;
  return startKeywardNode({
    app: app.dir,
    outDir: OUT,
    cwd: app.dir === APP ? ROOT : app.dir,
    name,
    port,
    logLevel,
    primary,
    local,
    transport,
    env,
  });
}

// ---------------------------------------------------------------------------------- cases

/** Four terms over permissions the access-model key holds through three different roles. */
const ACCESS_MODEL_QUERY = 'p.0 AND p.7 AND (p.14 OR p.19)';

/**
 * The key of the access-model case (issue 14): 20 permissions held through 3 roles, an identity
 * with one consistent limit, and 2 fast named limits of its own, every limit applied each time.
 */
async function createAccessModelKey(
  url: string,
  rootKey: string,
  apiId: string,
): Promise<{ key: string }> {
  const roles = [0, 1, 2].map((role) => `role.${role}`);
  for (const [index, role] of roles.entries()) {
    const permissions = Array.from({ length: 20 }, (_, p) => `p.${p}`).filter(
      (_, p) => p % 3 === index,
    );
    await rpc(url, rootKey, 'permissions.createRole', { name: role, permissions });
  }
  const limit = { limit: HUGE.limit, duration: HUGE.refillInterval, autoApply: true };
  await rpc(url, rootKey, 'identities.createIdentity', {
    externalId: 'bench_identity',
    ratelimits: [{ name: 'identity', type: 'consistent', ...limit }],
  });
  return rpc<{ key: string }>(url, rootKey, 'keys.createKey', {
    apiId,
    prefix: 'bench',
    externalId: 'bench_identity',
    roles,
    ratelimits: [
      { name: 'a', type: 'fast', ...limit },
      { name: 'b', type: 'fast', ...limit },
    ],
  });
}

/**
 * Issue 26's keys: a fast-limited key of an identity with a credit pool; the same key shape with
 * credits of its own and an identity without a pool (what the pooled key is without its pool); one
 * with credits of its own and no identity; and the same in a second workspace that has a webhook
 * (events of credits and limits; its target accepts nothing, and none of these verifications brings
 * an event about).
 */
async function createIssue26Keys(
  app: string,
  primary: RedisInstance,
  url: string,
  rootKey: string,
  apiId: string,
): Promise<{
  pooled: { key: string };
  creditedWithIdentity: { key: string };
  credited: { key: string };
  hooked: { key: string; rootKey: string };
}> {
  const lots = 1_000_000_000;
  const fastLimit = { type: 'fast', ...HUGE };
  await rpc(url, rootKey, 'identities.createIdentity', {
    externalId: 'bench_pool',
    remaining: lots,
  });
  const pooled = await rpc<{ key: string }>(url, rootKey, 'keys.createKey', {
    apiId,
    prefix: 'bench',
    externalId: 'bench_pool',
    ratelimit: fastLimit,
  });
  const creditedWithIdentity = await rpc<{ key: string }>(url, rootKey, 'keys.createKey', {
    apiId,
    prefix: 'bench',
    externalId: 'bench_no_pool',
    ratelimit: fastLimit,
    remaining: lots,
  });
  const credited = await rpc<{ key: string }>(url, rootKey, 'keys.createKey', {
    apiId,
    prefix: 'bench',
    ratelimit: fastLimit,
    remaining: lots,
  });
  const hooksRoot = createRootKey(app, primary, 'bench-webhooks');
  const hooksApi = await rpc<{ apiId: string }>(url, hooksRoot.key, 'apis.createApi', {
    name: 'bench-webhooks',
  });
  await rpc(url, hooksRoot.key, 'webhooks.createWebhook', {
    url: 'http://127.0.0.1:9/keyward',
    events: ['key.credits.low', 'key.ratelimited'],
    creditsThreshold: 0,
  });
  const hooked = await rpc<{ key: string }>(url, hooksRoot.key, 'keys.createKey', {
    apiId: hooksApi.apiId,
    prefix: 'bench',
    ratelimit: fastLimit,
    remaining: lots,
  });
  return {
    pooled,
    creditedWithIdentity,
    credited,
    hooked: { key: hooked.key, rootKey: hooksRoot.key },
  };
}

interface VerifyBody {
  valid?: boolean;
  code?: string;
  ratelimit?: { limit: number; remaining: number; reset: number };
  ratelimits?: { name: string; remaining?: number }[];
  permissions?: string[];
  remaining?: number;
  identity?: { remaining?: number };
}

type Check = (body: VerifyBody) => boolean;

interface CaseSpec {
  id: string;
  label: string;
  group: CaseResult['group'];
  server: Server;
  key: string;
  rootKey: string;
  /** More of the verifyKey body than the key (a permission query). */
  extraBody?: Record<string, unknown>;
  /** What one answer must say; checked before and after the measured run. */
  check?: Check;
  /**
   * The id of a case this one is compared with: it is measured right next to it in every round,
   * before it in one round and after it in the next, so that the pair sees the same machine.
   */
  besideOf?: string;
}

function targetOf(
  spec: Pick<CaseSpec, 'server' | 'key' | 'rootKey' | 'extraBody'>,
  path: string,
): LoadTarget {
  return rpcTarget(spec.server.url, path, spec.rootKey, { key: spec.key, ...spec.extraBody });
}

async function probe(target: LoadTarget): Promise<{ status: number; body: VerifyBody }> {
  const res = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
  });
  return { status: res.status, body: (await res.json()) as VerifyBody };
}

/** One case being measured: its accumulated load, CPU and Redis work over all its slices. */
class CaseRun {
  readonly measurement: Measurement;
  readonly target: LoadTarget;
  private readonly checks: string[] = [];
  private checksPassed = true;
  private cpu = { server: 0, redis: [] as number[], driver: 0, machine: 0 };
  /** Each slice's own figures, by round: what the paired comparisons are read from. */
  private readonly rounds: RoundFigures[] = [];
  private readonly commands: Record<string, Record<string, number>> = {};

  constructor(
    readonly spec: CaseSpec,
    private readonly redises: RedisInstance[],
  ) {
    this.target = targetOf(spec, '/v1/keys.verifyKey');
    this.measurement = new Measurement(this.target, CONNECTIONS);
    this.cpu.redis = redises.map(() => 0);
  }

  /** One request, whose answer must be what the case expects. */
  async check(when: string): Promise<void> {
    const { status, body } = await probe(this.target);
    const ok = status === 200 && (this.spec.check ? this.spec.check(body) : true);
    this.checks.push(`${when}: ${status} ${body.code ?? ''}${ok ? '' : ' (UNEXPECTED)'}`);
    if (!ok) log(`${this.spec.id}: unexpected answer ${when}: ${status} ${JSON.stringify(body)}`);
    this.checksPassed &&= ok;
  }

  async warmUp(): Promise<void> {
    await this.check('before');
    await warmUp(this.target, CONNECTIONS, WARMUP);
  }

  /** One measured slice, with the CPU of every process involved and the Redis commands. */
  async slice(seconds: number, round: number): Promise<void> {
    const { spec, redises } = this;
    await Promise.all(redises.map((r) => r.client.config('RESETSTAT')));
    const machine0 = machineBusySeconds();
    const server0 = cpuSeconds(spec.server.child.pid);
    const redis0 = redises.map((r) => cpuSeconds(r.child.pid));
    const driver0 = process.cpuUsage();
    const measured = await this.measurement.slice(seconds);
    const driver = process.cpuUsage(driver0);
    this.cpu.machine += machineBusySeconds() - machine0;
    const server = cpuSeconds(spec.server.child.pid) - server0;
    this.cpu.server += server;
    this.rounds.push({
      round,
      requestsPerSecond: measured.responses / Math.max(1e-9, measured.seconds),
      serverUsPerRequest: (server / Math.max(1, measured.responses)) * 1e6,
    });
    redises.forEach((r, i) => {
      this.cpu.redis[i] =
        (this.cpu.redis[i] as number) + cpuSeconds(r.child.pid) - (redis0[i] as number);
    });
    this.cpu.driver += (driver.user + driver.system) / 1e6;
    for (const r of redises) {
      const counts = (this.commands[r.name] ??= {});
      for (const [name, calls] of Object.entries(await commandCounts(r.client))) {
        counts[name] = (counts[name] ?? 0) + calls;
      }
    }
    if (!isRunning(spec.server.child))
      throw new Error(`${spec.server.name} died during ${spec.id}`);
  }

  async finish(): Promise<CaseResult> {
    await this.check('after');
    const load = this.measurement.result();
    const { cpu, redises, spec } = this;
    const ours = cpu.server + cpu.redis.reduce((a, b) => a + b, 0) + cpu.driver;
    const result: CaseResult = {
      id: spec.id,
      label: spec.label,
      group: spec.group,
      load,
      slices: this.measurement.slices,
      rounds: this.rounds,
      checksPassed: this.checksPassed,
      checks: this.checks,
      cpu: {
        serverPercent: (cpu.server / load.seconds) * 100,
        serverUsPerRequest: (cpu.server / Math.max(1, load.responses)) * 1e6,
        redisPercent: Object.fromEntries(
          redises.map((r, i) => [r.name, ((cpu.redis[i] as number) / load.seconds) * 100]),
        ),
        loadGeneratorPercent: (cpu.driver / load.seconds) * 100,
        machinePercent: (cpu.machine / load.seconds) * 100,
        otherPercent: Math.max(0, ((cpu.machine - ours) / load.seconds) * 100),
      },
      redisCommands: Object.fromEntries(
        Object.entries(this.commands).map(([name, counts]) => [
          name,
          perRequest(counts, load.responses),
        ]),
      ),
      redisCommandsPerSecond: Object.fromEntries(
        Object.entries(this.commands).map(([name, counts]) => [
          name,
          Object.values(counts).reduce((sum, calls) => sum + calls, 0) / load.seconds,
        ]),
      ),
    };
    log(
      `${spec.id}: ${Math.round(load.requestsPerSecond)} req/s, p50 ${load.p50.toFixed(2)} ms, ` +
        `p99 ${load.p99.toFixed(2)} ms, errors ${load.errors + load.timeouts}, non-2xx ${load.non2xx}, ` +
        `server CPU ${result.cpu.serverPercent.toFixed(0)}%, other processes ${result.cpu.otherPercent.toFixed(0)}%`,
    );
    return result;
  }
}

/**
 * Measures every case for SECONDS in SLICE-second slices, case after case, round after round
 * (the order rotating each round), so that anything else the machine does while the benchmark
 * runs lands on every case alike instead of on whichever ran at the wrong moment.
 */
async function measureInterleaved(
  runs: CaseRun[],
): Promise<{ rounds: number; plannedRounds: number; slice: number }> {
  for (const run of runs) {
    log(`${run.spec.id}: warm-up ${WARMUP} s`);
    await run.warmUp();
  }
  // A case measured beside another forms one unit with it; units rotate, a unit's order flips.
  const units = runs
    .filter((run) => run.spec.besideOf === undefined)
    .map((run) => [run, ...runs.filter((other) => other.spec.besideOf === run.spec.id)]);
  const placed = units.reduce((sum, unit) => sum + unit.length, 0);
  if (placed !== runs.length) throw new Error('a case is measured beside a case that is not run');
  const rounds = Math.max(1, Math.round(SECONDS / SLICE_SECONDS));
  const slice = SECONDS / rounds;
  const roundSeconds = runs.length * (slice + 0.3);
  let done = 0;
  for (let round = 0; round < rounds; round++) {
    if (round > 0 && secondsLeft() < roundSeconds + RESERVE_SECONDS) {
      log(`time budget: stopping after ${round} of ${rounds} rounds`);
      break;
    }
    log(`round ${round + 1}/${rounds}: ${runs.length} cases × ${slice} s`);
    for (let k = 0; k < units.length; k++) {
      const unit = units[(round + k) % units.length] as CaseRun[];
      for (const run of round % 2 === 0 ? unit : [...unit].reverse()) await run.slice(slice, round);
    }
    done++;
  }
  return { rounds: done, plannedRounds: rounds, slice };
}

async function redisBenchmark(
  redis: RedisInstance,
  call: { args: string[]; script: string },
): Promise<BenchReport['redisBenchmark']> {
  const requests = 100_000;
  const clients = 50;
  const args = [
    '-h',
    HOST,
    '-p',
    String(redis.port),
    '-n',
    String(requests),
    '-c',
    String(clients),
    '--csv',
    'EVALSHA',
    ...call.args,
  ];
  const command = `redis-benchmark ${args.map((a) => (a === '' ? '""' : a)).join(' ')}`;
  log(`redis ceiling: ${command}`);
  await redis.client.config('RESETSTAT');
  const run = spawnSync('redis-benchmark', args, { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`redis-benchmark failed: ${run.stderr || run.error}`);
  const evalsha = /^cmdstat_evalsha:.*$/m.exec(await redis.client.info('commandstats'))?.[0] ?? '';
  const failed = Number(/failed_calls=(\d+)/.exec(evalsha)?.[1] ?? 'NaN');
  if (failed !== 0) throw new Error(`redis-benchmark: EVALSHA failed (${evalsha})`);
  const lines = run.stdout.trim().split('\n');
  const row = (lines[lines.length - 1] ?? '').split(',').map((cell) => cell.replace(/"/g, ''));
  const [, rps, avg, , p50, , p99] = row;
  return {
    command,
    script: call.script,
    requests,
    clients,
    requestsPerSecond: Number(rps),
    avgMs: Number(avg),
    p50Ms: Number(p50),
    p99Ms: Number(p99),
    failedCalls: failed,
  };
}

/** The floor under a fast check: one EVALSHA of the bucket script at a time, from this process. */
async function evalshaRoundTrip(
  redis: RedisInstance,
  call: { args: string[] },
  seconds: number,
  transport: Transport,
): Promise<{ requests: number; p50us: number; p99us: number; transport: Transport }> {
  const client = connectRedis(transport === 'unix' ? redis.socketUrl : redis.url);
  const [sha, numKeys, ...args] = call.args as [string, string, ...string[]];
  try {
    for (let i = 0; i < 500; i++) await client.evalsha(sha, numKeys, ...args);
    const samples: number[] = [];
    const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
    while (process.hrtime.bigint() < deadline) {
      const started = process.hrtime.bigint();
      await client.evalsha(sha, numKeys, ...args);
      samples.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    samples.sort((a, b) => a - b);
    return {
      requests: samples.length,
      p50us: percentile(samples, 50),
      p99us: percentile(samples, 99),
      transport,
    };
  } finally {
    client.disconnect();
  }
}

function redisVersion(): string {
  try {
    return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function runMemory(): BenchReport['memory'] {
  log(`memory: ${MEMORY_RECORDS} cached key records in a separate process`);
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', join(BUILD, 'memory.js'), String(MEMORY_RECORDS)],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, KEYWARD_ROOT: APP },
      killSignal: 'SIGKILL',
    },
  );
  if (run.status !== 0) throw new Error(`memory step failed: ${run.stderr || run.error}`);
  return JSON.parse(run.stdout.trim()) as BenchReport['memory'];
}

/**
 * Sections of results.md that other drivers' runs wrote (`make layout-figures`: "Layout (issue
 * 22)"), kept from the file this run replaces: from their heading to the end of the file.
 */
function keptSections(file: string): string {
  if (!existsSync(file)) return '';
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf('\n## Layout (issue 22)');
  return at < 0 ? '' : text.slice(at);
}

// ---------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? NaN;
  mkdirSync(OUT, { recursive: true });
  setPidFile(join(OUT, 'pids'));
  installCleanup(stopAll);
  // One build for the whole run, even if dist/ or lua/ change while it runs: what dist/ reads
  // next to itself is copied with it (node_modules is found one level up, in the project).
  rmSync(APP, { recursive: true, force: true });
  for (const entry of ['dist', 'lua', 'package.json', 'docs', 'public', 'static']) {
    if (existsSync(join(ROOT, entry))) {
      cpSync(join(ROOT, entry), join(APP, entry), { recursive: true });
    }
  }
  const source = provenance(ROOT);

  const [primaryPort, localPort, analyticsPort] = (await freePorts(3)) as [number, number, number];
  const primary = await startRedis('redis-primary', primaryPort);
  const local = await startRedis('redis-local', localPort);
  // Usage analytics go to a Redis of their own here (KEYWARD_ANALYTICS_REDIS_URL), so that the
  // flush's commands per second can be read apart from the verifications' (INFO commandstats).
  const analytics = await startRedis('redis-analytics', analyticsPort);
  const redises = [primary, local, analytics];
  const withAnalytics = { KEYWARD_ANALYTICS_REDIS_URL: analytics.url };
  log(`redis primary on ${primary.port}, node-local on ${local.port}`);

  try {
    // Every server of the comparison, each its own process, all up before any is measured.
    const http = await startCompareServer('http');
    const koa = await startCompareServer('koa');

    const root = createRootKey(APP, primary, 'bench');
    // A vault and loopback targets: the webhooks case's workspace has a webhook (issue 26).
    const node = await startKeyward('warn', primary, local, LOCAL_TRANSPORT, undefined, {
      ...withAnalytics,
      KEYWARD_VAULT_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      KEYWARD_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    const infoNode =
      INFO_CASES.length > 0
        ? await startKeyward('info', primary, local, LOCAL_TRANSPORT, undefined, withAnalytics)
        : undefined;
    // The same build with usage analytics switched off: fast-no-analytics, measured beside fast.
    const noAnalyticsNode = await startKeyward(
      'warn',
      primary,
      local,
      LOCAL_TRANSPORT,
      { dir: APP, name: 'keyward-no-analytics' },
      { KEYWARD_ANALYTICS: 'off' },
    );
    // The old build: a node of its own on the same two Redis servers, for the same keys. A build
    // that cannot serve is reported, not fatal: the rest of the run still measures the new one.
    let base = baseBuild();
    let baseNode: Server | undefined;
    if (base && 'app' in base) {
      try {
        baseNode = await startKeyward('warn', primary, local, LOCAL_TRANSPORT, {
          dir: base.app,
          name: 'keyward-base',
        });
      } catch (error) {
        base = { ref: base.ref, commit: base.commit, error: `did not start: ${String(error)}` };
      }
    }
    if (base && 'error' in base) log(`old build ${base.ref} (${base.commit}): ${base.error}`);
    const durable = DURABLE_CASES.some(measured)
      ? await startDurablePair(local, withAnalytics)
      : undefined;

    const { apiId } = await rpc<{ apiId: string }>(node.url, root.key, 'apis.createApi', {
      name: 'bench',
    });
    const create = (ratelimit?: object) =>
      rpc<{ keyId: string; key: string }>(node.url, root.key, 'keys.createKey', {
        apiId,
        prefix: 'bench',
        ...(ratelimit ? { ratelimit } : {}),
      });
    const plain = await create();
    const fast = await create({ type: 'fast', ...HUGE });
    // The old build verifies a key it created itself, the same as `fast`, in an API it created
    // itself: a build of the previous layout (records under their workspace's tag) finds neither
    // a key nor an API of this tree's layout.
    const baseFast = baseNode
      ? await rpc<{ keyId: string; key: string }>(baseNode.url, root.key, 'keys.createKey', {
          apiId: (
            await rpc<{ apiId: string }>(baseNode.url, root.key, 'apis.createApi', {
              name: 'bench (old build)',
            })
          ).apiId,
          prefix: 'bench',
          ratelimit: { type: 'fast', ...HUGE },
        })
      : undefined;
    const consistent = await create({ type: 'consistent', ...HUGE });
    const invalidKey = `bench_${randomBytes(16).toString('hex')}`;
    // An issued key with its last character changed: the shape of a key, the checksum wrong.
    const badChecksumKey = `${plain.key.slice(0, -1)}${plain.key.endsWith('2') ? '3' : '2'}`;
    const accessModel = await createAccessModelKey(node.url, root.key, apiId);
    const { pooled, creditedWithIdentity, credited, hooked } = await createIssue26Keys(
      APP,
      primary,
      node.url,
      root.key,
      apiId,
    );

    // The exact script calls keyward makes for the fast and the consistent key. The floor servers,
    // the latency step's bare server and the Redis ceiling repeat them without keyward.
    const verifyOnce = (key: string) => async () => {
      await probe(targetOf({ server: node, key, rootKey: root.key }, '/v1/keys.verifyKey'));
    };
    const bucketCall = await captureBucketCall(APP, local, verifyOnce(fast.key));
    const consistentCall = await captureBucketCall(APP, primary, verifyOnce(consistent.key));
    // The floor of this design: the bare node:http handler plus that one script call, on the
    // Redis and over the transport the node uses for it.
    const floorFast = await startCompareServer(
      'script',
      {
        BENCH_REDIS_URL: LOCAL_TRANSPORT === 'unix' ? local.socketUrl : local.url,
        BENCH_SCRIPT_KEY: fast.key,
        BENCH_SCRIPT_CALL: JSON.stringify(bucketCall.args),
      },
      'floor-fast',
    );
    const floorConsistent = await startCompareServer(
      'script',
      {
        BENCH_REDIS_URL: primary.url,
        BENCH_SCRIPT_KEY: consistent.key,
        BENCH_SCRIPT_CALL: JSON.stringify(consistentCall.args),
      },
      'floor-consistent',
    );

    // The peer keeps its records as JSON in one Redis hash, keyed by the key's sha256.
    const peerHash = 'peer:keys';
    await primary.client.hset(
      peerHash,
      createHash('sha256').update(fast.key, 'utf8').digest('base64'),
      JSON.stringify({
        id: fast.keyId,
        apiId,
        enabled: true,
        ratelimit: { limit: HUGE.limit, durationSeconds: HUGE.refillInterval / 1000 },
      }),
    );
    const peer = await startCompareServer('peer', {
      BENCH_REDIS_URL: primary.url,
      BENCH_PEER_HASH: peerHash,
      BENCH_ROOT_KEY: root.key,
    });

    const valid: Check = (b) => b.valid === true && b.code === 'VALID';
    const limited: Check = (b) =>
      valid(b) && b.ratelimit !== undefined && b.ratelimit.remaining > 0;
    const keywardCases = (server: Server, suffix: string, which?: string[]): CaseSpec[] =>
      [
        {
          id: `no-ratelimit${suffix}`,
          label: `keyward verify, key without rate limit${suffix}`,
          key: plain.key,
          check: (b: VerifyBody) => valid(b) && b.ratelimit === undefined,
        },
        {
          id: `fast${suffix}`,
          label: `keyward verify, fast rate limit${suffix}`,
          key: fast.key,
          check: limited,
        },
        {
          id: `consistent${suffix}`,
          label: `keyward verify, consistent rate limit${suffix}`,
          key: consistent.key,
          check: limited,
        },
        {
          id: `access-model${suffix}`,
          label:
            `keyward verify, access model: 20 permissions from 3 roles, a 4-term query, an ` +
            `identity's consistent limit and 2 fast named limits${suffix}`,
          key: accessModel.key,
          extraBody: { authorization: { permissions: ACCESS_MODEL_QUERY } },
          check: (b: VerifyBody) =>
            valid(b) &&
            b.permissions?.length === 20 &&
            b.ratelimits?.length === 3 &&
            b.ratelimits.every((limit) => (limit.remaining ?? 0) > 0),
        },
        {
          id: `invalid${suffix}`,
          label: `keyward verify, unknown key${suffix}`,
          key: invalidKey,
          check: (b: VerifyBody) => b.valid === false && b.code === 'NOT_FOUND',
        },
        {
          id: `bad-checksum${suffix}`,
          label: `keyward verify, key with a wrong checksum${suffix}`,
          key: badChecksumKey,
          check: (b: VerifyBody) => b.valid === false && b.code === 'NOT_FOUND',
        },
      ]
        .filter((c) => which === undefined || which.includes(c.id.replace(suffix, '')))
        .map((c) => ({
          ...c,
          group: 'keyward' as const,
          server,
          rootKey: root.key,
          // The unknown-key flood at info is judged against warn, and the flood of a wrong
          // checksum against the unknown key's: each measured beside the unknown key at warn.
          ...((suffix !== '' && c.id === `invalid${suffix}`) || c.id === `bad-checksum${suffix}`
            ? { besideOf: 'invalid' }
            : {}),
        }));

    const dummyKey = `bench_${randomBytes(16).toString('hex')}`;
    const allSpecs: CaseSpec[] = [
      {
        id: 'bare-http',
        label: 'bare node:http (read + JSON.parse body, small JSON answer)',
        group: 'ceiling',
        server: http,
        key: dummyKey,
        rootKey: 'not-checked',
      },
      {
        id: 'bare-koa',
        label: 'bare Koa (read + JSON.parse body, small JSON answer)',
        group: 'ceiling',
        server: koa,
        key: dummyKey,
        rootKey: 'not-checked',
      },
      {
        id: 'floor-fast',
        label:
          `floor of a fast check: bare node:http + the same EVALSHA on the node-local Redis ` +
          `(ioredis, ${LOCAL_TRANSPORT})`,
        group: 'floor',
        server: floorFast,
        key: fast.key,
        rootKey: 'not-checked',
        check: valid,
        // Issue 23 reads keyward's CPU above this floor round by round: next to `fast` in every
        // round, the difference of two slices of one moment instead of two averages of a run.
        besideOf: 'fast',
      },
      {
        id: 'floor-consistent',
        label:
          'floor of a consistent check: bare node:http + the same EVALSHA on the primary (ioredis, tcp)',
        group: 'floor',
        server: floorConsistent,
        key: consistent.key,
        rootKey: 'not-checked',
        check: valid,
        besideOf: 'consistent',
      },
      ...keywardCases(node, ''),
      {
        id: 'fast-no-analytics',
        label: 'keyward verify, fast rate limit, usage analytics off (KEYWARD_ANALYTICS=off)',
        group: 'keyward' as const,
        server: noAnalyticsNode,
        key: fast.key,
        rootKey: root.key,
        check: limited,
        besideOf: 'fast',
      },
      // Issue 26: an identity's pool, and a workspace with a webhook, each beside what they add to.
      {
        id: 'fast-pool',
        label: "keyward verify, fast rate limit, its identity's credit pool (1e12)",
        group: 'keyward' as const,
        server: node,
        key: pooled.key,
        rootKey: root.key,
        check: (b: VerifyBody) => limited(b) && (b.identity?.remaining ?? 0) > 0,
        besideOf: 'fast-credits-identity',
      },
      {
        id: 'fast-credits-identity',
        label:
          'keyward verify, fast rate limit, credits of its own (1e12), an identity without a pool',
        group: 'keyward' as const,
        server: node,
        key: creditedWithIdentity.key,
        rootKey: root.key,
        check: (b: VerifyBody) => limited(b) && (b.remaining ?? 0) > 0 && b.identity !== undefined,
      },
      {
        id: 'fast-credits',
        label: 'keyward verify, fast rate limit and credits of its own (1e12)',
        group: 'keyward' as const,
        server: node,
        key: credited.key,
        rootKey: root.key,
        check: (b: VerifyBody) => limited(b) && (b.remaining ?? 0) > 0,
      },
      {
        id: 'fast-credits-webhooks',
        label:
          'keyward verify, fast rate limit and credits of its own, in a workspace with a webhook ' +
          '(key.credits.low, key.ratelimited)',
        group: 'keyward' as const,
        server: node,
        key: hooked.key,
        rootKey: hooked.rootKey,
        check: (b: VerifyBody) => limited(b) && (b.remaining ?? 0) > 0,
        besideOf: 'fast-credits',
      },
      ...(baseNode && base
        ? [
            {
              id: 'fast-base',
              label: `keyward verify, fast rate limit, old build (${base.ref}, ${base.commit})`,
              group: 'base' as const,
              server: baseNode,
              key: baseFast?.key ?? fast.key,
              rootKey: root.key,
              check: limited,
              besideOf: 'fast',
            },
          ]
        : []),
      ...(infoNode ? keywardCases(infoNode, ' @info', INFO_CASES) : []),
      ...(durable
        ? (['local', 'replicated'] as const).map((setting) => ({
            id: `consistent-${setting}`,
            label:
              `keyward verify, consistent rate limit, on a primary with one replica, ` +
              `KEYWARD_CONSISTENT_DURABILITY=${setting}` +
              (setting === 'replicated' ? ' (KEYWARD_MIN_REPLICAS=1)' : ''),
            group: 'keyward' as const,
            server: durable[setting],
            key: durable.key,
            rootKey: durable.rootKey,
            check: limited,
            ...(setting === 'replicated' ? { besideOf: 'consistent-local' } : {}),
          }))
        : []),
      {
        id: 'peer',
        label: 'peer: Koa + sha256 + HGET + RateLimiterRedis (valid key, rate limited)',
        group: 'peer',
        server: peer,
        key: fast.key,
        rootKey: root.key,
        check: limited,
      },
    ];
    const specs = allSpecs
      .filter((spec) => measured(spec.id))
      // A case measured beside one left out of this run is measured on its own.
      .map((spec) =>
        spec.besideOf === undefined || measured(spec.besideOf)
          ? spec
          : { ...spec, besideOf: undefined },
      );
    const durableRedises = durable ? [durable.primary, durable.replica, local, analytics] : redises;
    const runs = specs.map(
      (spec) =>
        new CaseRun(
          spec,
          spec.group === 'ceiling'
            ? []
            : DURABLE_CASES.includes(spec.id)
              ? durableRedises
              : redises,
        ),
    );
    const infoLogBefore = infoNode ? statSync(infoNode.logFile).size : 0;
    const { rounds, plannedRounds, slice } = await measureInterleaved(runs);
    const results: CaseResult[] = [];
    for (const run of runs) results.push(await run.finish());
    let infoLog: BenchReport['infoLog'];
    if (infoNode) {
      const requests = results
        .filter((c) => c.id.endsWith(' @info'))
        .reduce((sum, c) => sum + c.load.responses, 0);
      infoLog = {
        bytesPerRequest: (statSync(infoNode.logFile).size - infoLogBefore) / Math.max(1, requests),
        destination: 'a file (.run/bench/keyward-info.log)',
      };
    }
    for (const server of [http, koa, peer, floorConsistent, infoNode, baseNode, noAnalyticsNode]) {
      if (server) await stop(server.child);
    }

    // What the WAIT adds to one consistent verification: one connection, one request at a time,
    // alternating between the two durability settings on the same primary and replica.
    let durability: BenchReport['durability'];
    if (durable) {
      log(
        `latency: consistent, durability local vs replicated, 1 connection, ` +
          `${DURABILITY_LATENCY_SECONDS} s in alternating blocks`,
      );
      const results = await sequential(
        (['local', 'replicated'] as const).map((setting) => ({
          name: `consistent, KEYWARD_CONSISTENT_DURABILITY=${setting}`,
          target: targetOf(
            { server: durable[setting], key: durable.key, rootKey: durable.rootKey },
            '/v1/keys.verifyKey',
          ),
          check: (body: string) => limited(JSON.parse(body) as VerifyBody),
        })),
        { seconds: DURABILITY_LATENCY_SECONDS, warmupRequests: 500, block: 200 },
      );
      await stopDurablePair(durable);
      const [localSeq, replicatedSeq] = results as [(typeof results)[0], (typeof results)[0]];
      durability = {
        minReplicas: 1,
        replicas: 1,
        seconds: DURABILITY_LATENCY_SECONDS,
        results,
        p50DifferenceUs: replicatedSeq.p50us - localSeq.p50us,
        p99DifferenceUs: replicatedSeq.p99us - localSeq.p99us,
      };
      log(
        `latency: consistent p50 local ${localSeq.p50us.toFixed(0)} µs, replicated ` +
          `${replicatedSeq.p50us.toFixed(0)} µs (+${durability.p50DifferenceUs.toFixed(0)} µs); ` +
          `p99 +${durability.p99DifferenceUs.toFixed(0)} µs`,
      );
    }

    // Issue 27: consistent verification in a far region with leases on and off.
    let leases: BenchReport['leases'];
    if (measured('leases')) {
      leases = await measureLeases({
        outDir: OUT,
        app: APP,
        cwd: ROOT,
        ports: (await freePorts(4)) as [number, number, number, number],
        log,
      });
      const [on, off] = leases.latency as [SequentialResult, SequentialResult];
      log(
        `leases: far p50 on ${(on.p50us / 1000).toFixed(2)} ms, off ${(off.p50us / 1000).toFixed(1)} ms; ` +
          `wrongly refused at 80 % ${leases.steady.wronglyRefusedPercent.toFixed(2)} %`,
      );
    }

    // Added latency of a fast check: one connection, one request at a time. A second node that
    // reaches the same local Redis over the other transport shows what the transport is worth; a
    // bare node:http server making the same script call (ioredis, same transport: the fast floor
    // of the throughput cases) shows what one script round trip costs any Node server here.
    const otherNode = await startKeyward('warn', primary, local, OTHER_TRANSPORT);
    const scriptServer = floorFast;
    log(`latency: fast vs no-ratelimit, 1 connection, ${LATENCY_SECONDS} s in alternating blocks`);
    // A key without a limit and the fast key on one node: their difference is the fast check.
    const pair = (server: Server, noLimitName: string, transport: Transport) => [
      {
        name: noLimitName,
        target: targetOf({ server, key: plain.key, rootKey: root.key }, '/v1/keys.verifyKey'),
        check: (body: string) => valid(JSON.parse(body) as VerifyBody),
      },
      {
        name: `fast, local Redis over ${transport}`,
        target: targetOf({ server, key: fast.key, rootKey: root.key }, '/v1/keys.verifyKey'),
        check: (body: string) => limited(JSON.parse(body) as VerifyBody),
      },
    ];
    const seq = await sequential(
      [
        ...pair(node, 'no-ratelimit', LOCAL_TRANSPORT),
        ...pair(otherNode, 'no-ratelimit, other node', OTHER_TRANSPORT),
        ...[plain.key, fast.key].map((key) => ({
          name: `bare node:http${key === fast.key ? ` + one EVALSHA over ${LOCAL_TRANSPORT}` : ''}`,
          target: targetOf({ server: scriptServer, key, rootKey: root.key }, '/v1/keys.verifyKey'),
          check: (body: string) => valid(JSON.parse(body) as VerifyBody),
        })),
      ],
      { seconds: LATENCY_SECONDS, warmupRequests: 500, block: 200 },
    );
    await stop(otherNode.child);
    await stop(scriptServer.child);
    const [noRl, fastSeq, otherNoRl, otherFast, bareNoCall, bareCall] = seq as [
      (typeof seq)[0],
      (typeof seq)[0],
      (typeof seq)[0],
      (typeof seq)[0],
      (typeof seq)[0],
      (typeof seq)[0],
    ];

    // (c) Redis ceiling: the very call keyward makes for the fast key, without keyward.
    await stop(node.child);
    const redisCeiling = await redisBenchmark(local, bucketCall);
    // The floor under the check: the same script call from a bare client, one at a time, over
    // each transport (the one the measured node used first).
    const roundTrip = await evalshaRoundTrip(local, bucketCall, 1.5, LOCAL_TRANSPORT);
    const otherRoundTrip = await evalshaRoundTrip(local, bucketCall, 1.5, OTHER_TRANSPORT);
    const latency: BenchReport['latency'] = {
      seconds: LATENCY_SECONDS,
      keywardShareUs: fastSeq.p50us - noRl.p50us - (bareCall.p50us - bareNoCall.p50us),
      results: seq,
      redisRoundTrip: roundTrip,
      otherRedisRoundTrip: otherRoundTrip,
      p50DifferenceUs: fastSeq.p50us - noRl.p50us,
      p99DifferenceUs: fastSeq.p99us - noRl.p99us,
      localTransport: LOCAL_TRANSPORT,
      other: {
        transport: OTHER_TRANSPORT,
        p50DifferenceUs: otherFast.p50us - otherNoRl.p50us,
        p99DifferenceUs: otherFast.p99us - otherNoRl.p99us,
      },
      bare: {
        p50DifferenceUs: bareCall.p50us - bareNoCall.p50us,
        p99DifferenceUs: bareCall.p99us - bareNoCall.p99us,
      },
    };
    log(
      `latency: p50 no-ratelimit ${noRl.p50us.toFixed(0)} µs, fast ${fastSeq.p50us.toFixed(0)} µs ` +
        `(+${latency.p50DifferenceUs.toFixed(0)} µs); bare node:http +${latency.bare.p50DifferenceUs.toFixed(0)} µs ` +
        `for the same EVALSHA (keyward's share ${latency.keywardShareUs.toFixed(0)} µs); ` +
        `EVALSHA alone p50 ${roundTrip.p50us.toFixed(0)} µs`,
    );

    const memory = runMemory();

    const report: BenchReport = {
      date: new Date().toISOString(),
      source,
      machine: {
        nproc: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
        node: process.version,
        redis: redisVersion(),
        loadAverage1m: { before: loadBefore, after: loadavg()[0] ?? NaN },
        kernel: (() => {
          try {
            return execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim();
          } catch {
            return 'unknown';
          }
        })(),
      },
      settings: {
        seconds: SECONDS,
        warmupSeconds: WARMUP,
        connections: CONNECTIONS,
        rounds,
        plannedRounds,
        sliceSeconds: slice,
      },
      cases: results,
      floor: floorRatios(results),
      base:
        base && 'app' in base
          ? { ref: base.ref, commit: base.commit, nodeModules: base.nodeModules }
          : base,
      redisBenchmark: redisCeiling,
      latency,
      memory,
      infoLog,
      durability,
      ...(leases ? { leases } : {}),
      totalSeconds: (Date.now() - STARTED) / 1000,
    };
    writeFileSync(join(RESULTS, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(RESULTS, 'results.svg'), renderSvg(report));
    writeFileSync(
      join(RESULTS, 'results.md'),
      renderMarkdown(report) + keptSections(join(RESULTS, 'results.md')),
    );
    log(`done in ${report.totalSeconds.toFixed(0)} s: ${join(RESULTS, 'results.md')}, results.svg`);
  } finally {
    await stopAll();
    for (const r of redises) r.client.disconnect();
  }
}

runDriver(main, log);
