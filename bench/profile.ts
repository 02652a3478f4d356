/**
 * `make profile`: a CPU profile of a keyward node verifying a `fast` key under load, drawn as a
 * flame graph. It starts its own two Redis servers and one node under `node --cpu-prof`
 * (`LOG_LEVEL=info` unless PROFILE_LOG_LEVEL says otherwise, its local Redis over a unix socket
 * as in `make bench`), drives
 * keys.verifyKey with autocannon from this process, stops the node so that V8 writes the profile,
 * and writes bench/profile.svg and bench/profile.md. Everything it starts is stopped when it ends.
 *
 * Knobs (environment): PROFILE_SECONDS (8 measured, after 2 of warm-up), PROFILE_CONNECTIONS (64),
 * PROFILE_LOG_LEVEL (`info`; `warn` profiles the node as `make bench` measures it, without the
 * access log line).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  callTree,
  categoryShares,
  inclusive,
  renderFlameSvg,
  selfTimes,
  type Category,
  type CpuProfile,
  type Frame,
} from './flame';
import { Measurement, rpcTarget, warmUp } from './load';
import { cpuSeconds, installCleanup, setPidFile, stop, stopAll } from './procs';
import { envNumber, HUGE, provenance, rpc, startLoneNode } from './setup';

const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const OUT = join(ROOT, '.run', 'profile');
const PROFILE_DIR = join(OUT, 'cpuprofile');

const SECONDS = envNumber('PROFILE_SECONDS', 8, 1, 60);
const CONNECTIONS = envNumber('PROFILE_CONNECTIONS', 64, 1, 256);
const LOG_LEVELS = ['info', 'warn'] as const;
const LOG_LEVEL = LOG_LEVELS.find((level) => level === process.env.PROFILE_LOG_LEVEL) ?? 'info';

const log = (message: string) => console.log(`profile: ${message}`);

/** The commit, marked when src/ or lua/ differ from it. */
function describeSource(): string {
  const { commit, uncommitted } = provenance(ROOT);
  return uncommitted.length === 0 ? commit : `${commit} (with uncommitted changes to src/ or lua/)`;
}

async function main(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(PROFILE_DIR, { recursive: true });
  setPidFile(join(OUT, 'pids'));
  installCleanup(stopAll);

  try {
    const { node, rootKey } = await startLoneNode({
      app: ROOT,
      outDir: OUT,
      rootKeyName: 'profile',
      logLevel: LOG_LEVEL,
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`],
    });
    const { apiId } = await rpc<{ apiId: string }>(node.url, rootKey, 'apis.createApi', {
      name: 'profile',
    });
    const fast = await rpc<{ key: string }>(node.url, rootKey, 'keys.createKey', {
      apiId,
      ratelimit: { type: 'fast', ...HUGE },
    });
    const target = rpcTarget(node.url, '/v1/keys.verifyKey', rootKey, { key: fast.key });
    log(`warming up, then ${SECONDS} s at ${CONNECTIONS} connections`);
    await warmUp(target, CONNECTIONS, 2);
    const cpuBefore = cpuSeconds(node.child.pid);
    const measurement = new Measurement(target, CONNECTIONS);
    // The profile's clock is process.hrtime's: only samples of the measured window are drawn.
    const from = Number(process.hrtime.bigint() / 1000n);
    await measurement.slice(SECONDS);
    const window = { from, to: Number(process.hrtime.bigint() / 1000n) };
    const cpuUsed = cpuSeconds(node.child.pid) - cpuBefore;
    const result = measurement.result();
    // SIGTERM: the node stops cleanly and V8 writes the profile as it exits.
    await stop(node.child, 15_000);

    const file = readdirSync(PROFILE_DIR).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile in ${PROFILE_DIR}; see ${node.logFile}`);
    const profile = JSON.parse(readFileSync(join(PROFILE_DIR, file), 'utf8')) as CpuProfile;
    const { root: tree, busy, idle } = callTree(profile, window);
    const when = new Date().toISOString();
    const source = describeSource();
    const subtitle = [
      `keyward ${source}, ${when}: keys.verifyKey with a fast key, ${CONNECTIONS} connections, ` +
        `LOG_LEVEL=${LOG_LEVEL}, ${Math.round(result.requestsPerSecond).toLocaleString('en-US')} req/s.`,
      `The ${SECONDS} s measured window only: ${busy.toLocaleString('en-US')} busy samples ` +
        `(idle left out). Width = share of busy samples; hover a frame for its share.`,
    ];
    writeFileSync(
      join(ROOT, 'bench', 'profile.svg'),
      renderFlameSvg(tree, 'keyward node: where the CPU goes in a fast verification', subtitle),
    );
    writeFileSync(
      join(ROOT, 'bench', 'profile.md'),
      renderSummary({ when, source, busy, idle, tree, result, cpuUsed, profile }),
    );
    log(
      `${Math.round(result.requestsPerSecond)} req/s, ` +
        `${((cpuUsed * 1e6) / Math.max(1, result.responses)).toFixed(1)} µs of CPU per request; ` +
        'wrote bench/profile.svg and bench/profile.md',
    );
  } finally {
    await stopAll();
  }
}

/** Stages of a verification, each a function of keyward's (or Node's) and all it calls. */
const STAGES: { label: string; name: string; file: string }[] = [
  {
    label: "keyward's handler, all of it (`serve`)",
    name: 'serve',
    file: 'dist/http/dataPlane.js',
  },
  {
    label: 'writing the answer (`write`: `writeHead` + `end`, down to `writev`)',
    name: 'write',
    file: 'dist/http/dataPlane.js',
  },
  {
    label: 'the bucket script call (`Limiter.check`, ioredis included)',
    name: 'check',
    file: 'dist/limiter/limiter.js',
  },
  {
    label: 'sending the queued Redis commands (`flush`, down to `writev`)',
    name: 'flush',
    file: 'dist/redis/coalesce.js',
  },
  {
    label: 'the access-log line and metrics (`recordRequest`)',
    name: 'recordRequest',
    file: 'dist/http/requestLog.js',
  },
  {
    label: 'reading and parsing the body (`readJsonBody`)',
    name: 'readJsonBody',
    file: 'dist/http/jsonBody.js',
  },
  {
    label: 'authenticating the root key (`authenticate`)',
    name: 'authenticate',
    file: 'dist/http/authenticate.js',
  },
  { label: 'SHA-256 (root key and key)', name: 'hash', file: 'node:internal/crypto/hash' },
  { label: 'garbage collection', name: '(garbage collector)', file: '' },
];

function stageShare(root: Frame, stage: (typeof STAGES)[number]): number {
  return inclusive(root, (frame) => frame.name === stage.name && frame.file === stage.file);
}

function renderSummary(run: {
  when: string;
  source: string;
  busy: number;
  idle: number;
  tree: ReturnType<typeof callTree>['root'];
  result: ReturnType<Measurement['result']>;
  cpuUsed: number;
  profile: CpuProfile;
}): string {
  const share = (n: number) => `${((100 * n) / Math.max(1, run.busy)).toFixed(1)} %`;
  const shares = categoryShares(run.tree);
  const categories = (Object.keys(shares) as Category[]).sort((a, b) => shares[b] - shares[a]);
  const rows = selfTimes(run.tree).slice(0, 25);
  const microsPerRequest = (run.cpuUsed * 1e6) / Math.max(1, run.result.responses);
  return [
    '# keyward CPU profile: a fast verification under load',
    '',
    `Generated by \`make profile\` (bench/profile.ts) on ${run.when}, code at ${run.source}.`,
    '',
    `One node (\`node --cpu-prof dist/cli.js serve\`, \`LOG_LEVEL=${LOG_LEVEL}\`, its local Redis over a unix`,
    `socket) verified one \`fast\` key (never limited) from autocannon at ${CONNECTIONS} connections:`,
    `${Math.round(run.result.requestsPerSecond).toLocaleString('en-US')} req/s for ${SECONDS} s after 2 s of warm-up, ` +
      `${microsPerRequest.toFixed(1)} µs of the node's CPU per request (from /proc, the profiler's own cost included), ` +
      `${run.result.errors} errors, ${run.result.non2xx} non-2xx.`,
    '',
    `Flame graph: [profile.svg](profile.svg) (callers below, callees above, width = share of busy`,
    `samples; hover a frame for its share). Only the samples of the ${SECONDS} s measured window count:`,
    `${run.busy.toLocaleString('en-US')} busy ones, ${run.idle.toLocaleString('en-US')} idle ones left out.`,
    '',
    '## Self time by origin',
    '',
    '| origin | share of busy samples |',
    '|---|---:|',
    ...categories.map(
      (category) =>
        `| ${category === 'native' ? 'native / kernel (no JS frame: syscalls such as `writev`, `(program)`)' : category === 'node' ? 'Node.js and V8 (`node:` modules, garbage collector)' : category} | ${share(shares[category])} |`,
    ),
    '',
    '## Stages (inclusive)',
    '',
    'Samples with the function anywhere on their stack. An async function shows up once per',
    'stretch it runs between awaits, so these are CPU shares, not wall time.',
    '',
    '| stage | share of busy samples |',
    '|---|---:|',
    ...STAGES.map((stage) => `| ${stage.label} | ${share(stageShare(run.tree, stage))} |`),
    '',
    '## Functions with the most self time',
    '',
    '| function | where | origin | self |',
    '|---|---|---|---:|',
    ...rows.map(
      (row) =>
        `| \`${row.name.replace(/\|/g, '\\|')}\` | ${row.file ? `${row.file}:${row.line}` : '—'} | ${row.category} | ${share(row.self)} |`,
    ),
    '',
    'Reproduce: `make profile` (knobs: `PROFILE_SECONDS`, `PROFILE_CONNECTIONS`). Open',
    '`.run/profile/cpuprofile/*.cpuprofile` in Chrome DevTools for the interactive view.',
    '',
  ].join('\n');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    void stopAll().finally(() => process.exit(1));
  },
);
