/**
 * `make bench-floor`: where a fast verification's CPU above its floor goes (issue 23). One keyward
 * node and the floor of its fast check (bench/servers.ts `script`: a bare node:http server making
 * the same EVALSHA, captured as `make bench` captures it, on the same node-local Redis over its
 * unix socket), measured in turn, slice by slice, their order flipping every round. For each, the CPU per request
 * is read from /proc apart: user time (its own code, V8, the garbage collector) and system time (the
 * system calls: the socket reads and writes of HTTP and of Redis). The difference of the two
 * servers, round by round, says which side keyward's extra cost is on.
 *
 * `BENCH_FLOOR_RATE` offers both servers the same load (requests per second over all connections,
 * autocannon's overallRate) instead of as much as each answers: at equal load, neither gains from
 * answering more requests per turn of its event loop than the other.
 *
 * Knobs (environment): BENCH_FLOOR_ROUNDS (8), BENCH_FLOOR_SLICE (3 s), BENCH_FLOOR_RATE (0: as
 * fast as answered), BENCH_CONNECTIONS (64), BENCH_TIMEOUT (300; scripts/bench.sh kills the driver
 * then). Output: .run/bench/floor.json and .run/bench/floor.md (the table is printed too); logs and
 * pids in .run/floor. Everything it starts is stopped when it ends, on failure and Ctrl-C too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Measurement, rpcTarget, warmUp } from './load';
import { installCleanup, runDriver, setPidFile, stopAll, userSystemSeconds } from './procs';
import {
  captureBucketCall,
  envNumber,
  HUGE,
  provenance,
  rpc,
  startComparisonServer,
  startLoneNode,
  type Server,
} from './setup';
import { median } from './stats';

const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
const OUT = join(ROOT, '.run', 'floor');
const REPORT = join(ROOT, '.run', 'bench');
const BUILD = join(ROOT, '.run', 'bench-build', 'bench');
const ROUNDS = envNumber('BENCH_FLOOR_ROUNDS', 8, 1, 100);
const SLICE = envNumber('BENCH_FLOOR_SLICE', 3, 0.5, 30);
const RATE = envNumber('BENCH_FLOOR_RATE', 0, 0, 1_000_000);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 64, 1, 1024);

const log = (message: string) => console.log(`bench-floor: ${message}`);

/** One server's slice: requests per second and CPU µs per request, user and system apart. */
interface SliceFigures {
  requestsPerSecond: number;
  userUs: number;
  systemUs: number;
}

interface FloorReport {
  date: string;
  commit: string;
  rounds: number;
  sliceSeconds: number;
  /** 0: as fast as each server answers. */
  offeredRate: number;
  connections: number;
  keyward: SliceFigures[];
  floor: SliceFigures[];
  /** Medians over the rounds of keyward minus the floor, µs per request. */
  aboveFloor: { userUs: number; systemUs: number; totalUs: number };
}

/** Runs one slice of `seconds` on `server` and reads its CPU from /proc around it. */
async function slice(
  server: Server,
  measurement: Measurement,
  seconds: number,
): Promise<SliceFigures> {
  const before = userSystemSeconds(server.child.pid);
  const measured = await measurement.slice(seconds);
  const after = userSystemSeconds(server.child.pid);
  const perRequest = (cpuSeconds: number) => (cpuSeconds * 1e6) / Math.max(1, measured.responses);
  return {
    requestsPerSecond: measured.responses / Math.max(1e-9, measured.seconds),
    userUs: perRequest(after.user - before.user),
    systemUs: perRequest(after.system - before.system),
  };
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  mkdirSync(REPORT, { recursive: true });
  setPidFile(join(OUT, 'pids'));
  installCleanup(stopAll);
  try {
    const { local, node, rootKey } = await startLoneNode({
      app: ROOT,
      outDir: OUT,
      rootKeyName: 'bench-floor',
      logLevel: 'warn',
    });
    const { apiId } = await rpc<{ apiId: string }>(node.url, rootKey, 'apis.createApi', {
      name: 'bench-floor',
    });
    const fast = await rpc<{ key: string }>(node.url, rootKey, 'keys.createKey', {
      apiId,
      ratelimit: { type: 'fast', ...HUGE },
    });
    // The very call keyward makes for this key, captured as `make bench` captures it.
    const bucketCall = await captureBucketCall(ROOT, local, async () => {
      await rpc(node.url, rootKey, 'keys.verifyKey', { key: fast.key });
    });
    const floor = await startComparisonServer({
      build: BUILD,
      cwd: ROOT,
      outDir: OUT,
      mode: 'script',
      name: 'floor-fast',
      env: {
        BENCH_REDIS_URL: local.socketUrl,
        BENCH_SCRIPT_KEY: fast.key,
        BENCH_SCRIPT_CALL: JSON.stringify(bucketCall.args),
      },
    });

    const targets = [node, floor].map((server) =>
      rpcTarget(server.url, '/v1/keys.verifyKey', rootKey, { key: fast.key }),
    );
    for (const target of targets) await warmUp(target, CONNECTIONS, 2);
    const measurements = targets.map(
      (target) => new Measurement(target, CONNECTIONS, RATE || undefined),
    );
    const figures: SliceFigures[][] = [[], []];
    const deadline = Date.now() + (envNumber('BENCH_TIMEOUT', 300, 30, 3600) - 30) * 1000;
    let rounds = 0;
    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0 && Date.now() + 2 * SLICE * 1000 > deadline) {
        log(`time budget: stopping after ${round} of ${ROUNDS} rounds`);
        break;
      }
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const server = which === 0 ? node : floor;
        figures[which]!.push(await slice(server, measurements[which]!, SLICE));
      }
      const [k, f] = [figures[0]!.at(-1)!, figures[1]!.at(-1)!];
      log(
        `round ${round + 1}/${ROUNDS}: keyward ${Math.round(k.requestsPerSecond)} req/s, ` +
          `${k.userUs.toFixed(1)} user + ${k.systemUs.toFixed(1)} system µs; floor ` +
          `${Math.round(f.requestsPerSecond)} req/s, ${f.userUs.toFixed(1)} + ${f.systemUs.toFixed(1)} µs`,
      );
      rounds++;
    }
    for (const [index, measurement] of measurements.entries()) {
      const result = measurement.result();
      if (result.errors + result.timeouts + result.non2xx > 0) {
        throw new Error(
          `${index === 0 ? 'keyward' : 'the floor'} answered with errors: ${JSON.stringify(result.statusCodes)}`,
        );
      }
    }
    const [keyward, floorFigures] = figures as [SliceFigures[], SliceFigures[]];
    const differences = (pick: (s: SliceFigures) => number) =>
      median(keyward.map((k, i) => pick(k) - pick(floorFigures[i]!)));
    const report: FloorReport = {
      date: new Date().toISOString(),
      commit: provenance(ROOT).commit,
      rounds,
      sliceSeconds: SLICE,
      offeredRate: RATE,
      connections: CONNECTIONS,
      keyward,
      floor: floorFigures,
      aboveFloor: {
        userUs: differences((s) => s.userUs),
        systemUs: differences((s) => s.systemUs),
        totalUs: differences((s) => s.userUs + s.systemUs),
      },
    };
    writeFileSync(join(REPORT, 'floor.json'), JSON.stringify(report, null, 2));
    const markdown = render(report);
    writeFileSync(join(REPORT, 'floor.md'), markdown);
    console.log(markdown);
  } finally {
    await stopAll();
  }
}

function render(report: FloorReport): string {
  const med = (list: SliceFigures[], pick: (s: SliceFigures) => number) =>
    median(list.map(pick)).toFixed(1);
  const row = (name: string, list: SliceFigures[]) =>
    `| ${name} | ${Math.round(median(list.map((s) => s.requestsPerSecond)))} | ` +
    `${med(list, (s) => s.userUs)} | ${med(list, (s) => s.systemUs)} | ` +
    `${med(list, (s) => s.userUs + s.systemUs)} |`;
  const { aboveFloor } = report;
  return [
    '# A fast verification against its floor: user and system CPU',
    '',
    `Generated by \`make bench-floor\` (bench/floor.ts) on ${report.date}, code at ${report.commit}: ` +
      `${report.rounds} rounds of ${report.sliceSeconds} s per server, ${report.connections} connections, ` +
      (report.offeredRate > 0
        ? `${report.offeredRate} requests/s offered to each.`
        : 'as fast as each server answers.'),
    '',
    'Medians of the rounds, CPU µs per request from /proc:',
    '',
    '| server | req/s | user | system | total |',
    '|---|---:|---:|---:|---:|',
    row('keyward, fast key', report.keyward),
    row('floor: node:http + the same EVALSHA', report.floor),
    '',
    `keyward above the floor, the median of the per-round differences: ${aboveFloor.totalUs.toFixed(1)} µs ` +
      `(user ${aboveFloor.userUs.toFixed(1)}, system ${aboveFloor.systemUs.toFixed(1)}).`,
    '',
  ].join('\n');
}

runDriver(main, log);
