/**
 * `make layout-figures` (issue 22, "One tenant, many shards"): how one workspace spreads over the
 * masters of a Redis Cluster, in this tree's layout (keys placed by their own ids) and in the
 * previous release's (everything of a workspace under `{ws}`), each filled the same way on a
 * fresh cluster of its own; and an API's listKeys page read from each, measured in one run.
 *
 * The fill, per layout: a root key (`keyward root create`), one API, LAYOUT_PERMISSIONS
 * permissions and LAYOUT_ROLES roles, LAYOUT_OWNERS identities, then LAYOUT_KEYS keys imported
 * through POST /v1/migrations.createKeys in batches of 100 (its limit), each by plaintext; every
 * third key with an ownerId (an import only links identities that exist: they were made first);
 * one key in 20 gets two permissions (keys.addPermissions), one in 40 a role too (keys.addRoles);
 * every key is verified once, and the node stopped (SIGTERM flushes its usage counts) before
 * Redis is read. Per master: DBSIZE and INFO memory before the fill (an empty cluster) and after,
 * every key name classified (its ids replaced by their kind) and MEMORY USAGE of a sample of each
 * class. Then a node per layout again, and GET /v1/apis.listKeys?limit=100 timed one request at
 * a time on the first page and on a page deep in the listing (its cursor found by walking the
 * pages), old and new alternating in blocks.
 *
 * Everything on 127.0.0.1; every process started here is stopped at the end, on failure and on
 * SIGINT/SIGTERM (bench/procs.ts), and scripts/bench.sh kills what is left after its timeout.
 * Output: .run/bench/layout.json and a markdown table on stdout (also .run/bench/layout.md).
 *
 * The old build comes from scripts/bench.sh (BENCH_BASE, c62d6b0 for this driver): BENCH_BASE_APP.
 * Knobs: LAYOUT_KEYS (100000), LAYOUT_MASTERS (3), LAYOUT_OWNERS (1000), LAYOUT_CONCURRENCY (6
 * management calls at a time), LAYOUT_VERIFY_CONCURRENCY (32 verifications at a time),
 * LAYOUT_LIST_REQUESTS (200 per page and layout), LAYOUT_DEEP_PAGE (page 500 of 100, or the middle
 * page when there are fewer), LAYOUT_SAMPLE (200 keys per class and master for MEMORY USAGE),
 * LAYOUT_LAYOUTS (`new,old`: which to fill).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { percentile } from './load';
import {
  freePorts,
  installCleanup,
  isRunning,
  runDriver,
  setPidFile,
  start,
  stop,
  stopAll,
} from './procs';
import type { Child } from './procs';
import { envNumber, HOST, provenance, sleep, startRedis } from './setup';

const run = promisify(execFile);
const ROOT = resolve(process.env.KEYWARD_ROOT ?? process.cwd());
/** Logs, pids, Redis folders of this driver (not .run/bench: `make bench` may run beside it). */
const WORK = join(ROOT, '.run', 'layout');
const OUT = join(ROOT, '.run', 'bench');

const KEYS = envNumber('LAYOUT_KEYS', 100_000, 100, 1_000_000);
const MASTERS = envNumber('LAYOUT_MASTERS', 3, 3, 9);
const OWNERS = envNumber('LAYOUT_OWNERS', 1000, 1, 100_000);
const CONCURRENCY = envNumber('LAYOUT_CONCURRENCY', 6, 1, 64);
const VERIFY_CONCURRENCY = envNumber('LAYOUT_VERIFY_CONCURRENCY', 32, 1, 128);
const LIST_REQUESTS = envNumber('LAYOUT_LIST_REQUESTS', 200, 20, 5000);
const SAMPLE = envNumber('LAYOUT_SAMPLE', 200, 10, 10_000);
const PERMISSIONS = 10;
const ROLES = 3;
const BATCH = 100;
const LAYOUTS = (process.env.LAYOUT_LAYOUTS ?? 'new,old')
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is 'new' | 'old' => s === 'new' || s === 'old');
const DEEP_PAGE = Math.min(
  envNumber('LAYOUT_DEEP_PAGE', 500, 2, 10_000),
  Math.max(2, Math.floor(KEYS / 100 / 2)),
);
/** The issue's criterion: the busiest master holds at most this share of the workspace. */
const CRITERION = 0.4;

const log = (message: string) => process.stderr.write(`layout: ${message}\n`);

// ---------------------------------------------------------------------------------- cluster

interface Master {
  port: number;
  child: Child;
  client: Redis;
}

interface Cluster {
  name: string;
  masters: Master[];
  seeds: string;
}

async function startCluster(name: string): Promise<Cluster> {
  const ports = await freePorts(MASTERS);
  const masters: Master[] = [];
  for (const port of ports) {
    // A stale nodes.conf of an earlier run would keep the node out of the new cluster.
    rmSync(join(WORK, name, `redis-${port}`), { recursive: true, force: true });
    masters.push(
      await startRedis(join(WORK, name), `redis-${port}`, port, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '5000',
      ]),
    );
  }
  await run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((port) => `${HOST}:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { timeout: 30_000 },
  );
  for (const master of masters) {
    for (let attempt = 0; ; attempt++) {
      const info = (await master.client.cluster('INFO')) as string;
      if (info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${MASTERS}`))
        break;
      if (attempt > 300) throw new Error(`${name}: cluster not ok on ${master.port} after 30 s`);
      await sleep(100);
    }
  }
  log(`${name}: cluster of ${MASTERS} masters on ${ports.join(', ')}`);
  return { name, masters, seeds: ports.map((port) => `${HOST}:${port}`).join(',') };
}

async function stopCluster(cluster: Cluster): Promise<void> {
  for (const master of cluster.masters) master.client.disconnect();
  for (const master of cluster.masters) await stop(master.child);
}

interface MasterState {
  port: number;
  /** The slot ranges it serves. */
  slots: string;
  dbsize: number;
  usedMemory: number;
  usedMemoryDataset: number;
}

function infoField(info: string, field: string): number {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  if (!match) throw new Error(`INFO: no ${field}`);
  return Number(match[1]);
}

async function masterStates(cluster: Cluster): Promise<MasterState[]> {
  const nodes = ((await cluster.masters[0]!.client.cluster('NODES')) as string).split('\n');
  return Promise.all(
    cluster.masters.map(async (master) => {
      const line = nodes.find((l) => l.includes(`${HOST}:${master.port}@`)) ?? '';
      const info = await master.client.info('memory');
      return {
        port: master.port,
        slots: line.trim().split(' ').slice(8).join(' '),
        dbsize: await master.client.dbsize(),
        usedMemory: infoField(info, 'used_memory'),
        usedMemoryDataset: infoField(info, 'used_memory_dataset'),
      };
    }),
  );
}

/** Total DBSIZE, read until it stays the same for 3 s (journal, outboxes, flushes done). */
async function settle(cluster: Cluster, maxSeconds = 30): Promise<void> {
  let last = -1;
  let sameSince = Date.now();
  const deadline = Date.now() + maxSeconds * 1000;
  while (Date.now() < deadline) {
    const sizes = await Promise.all(cluster.masters.map((m) => m.client.dbsize()));
    const total = sizes.reduce((a, b) => a + b, 0);
    if (total !== last) {
      last = total;
      sameSince = Date.now();
    } else if (Date.now() - sameSince >= 3000) return;
    await sleep(500);
  }
  log(`${cluster.name}: DBSIZE still moving after ${maxSeconds} s; read as it is`);
}

// ---------------------------------------------------------------------------------- classes

/** A key name with its ids replaced by their kind: `keyward:key:{key_…}:perms` → a class. */
export function classOf(name: string): string {
  const token = (text: string) => {
    const kind = /^([a-z]+)_[A-Za-z0-9]+$/.exec(text)?.[1];
    if (kind) return `${kind}_…`;
    if (/^\d+$/.test(text)) return 'N';
    if (/^[A-Za-z0-9+/]{43}=$/.test(text)) return 'hash';
    return text;
  };
  return name
    .replace(/\{([^}]*)\}/, (_, tag: string) => {
      const parts = tag.split(/([.:])/);
      return `{${parts.map((p) => (p === '.' || p === ':' ? p : /^[0-9a-f]{3}$/.test(p) ? 'shard' : token(p))).join('')}}`;
    })
    .split(':')
    .map((part) => (part.startsWith('{') ? part : token(part)))
    .join(':');
}

interface ClassRow {
  class: string;
  keys: number;
  /** MEMORY USAGE of a sample of its keys, scaled to all of them. */
  estimatedBytes: number;
  sampled: number;
}

async function classify(master: Master): Promise<ClassRow[]> {
  const byClass = new Map<string, { keys: number; sample: string[] }>();
  let cursor = '0';
  do {
    const [next, found] = await master.client.scan(cursor, 'COUNT', 2000);
    cursor = next;
    for (const name of found) {
      const c = classOf(name);
      const entry = byClass.get(c) ?? { keys: 0, sample: [] };
      entry.keys++;
      // Reservoir sampling: every key of the class equally likely to be measured.
      if (entry.sample.length < SAMPLE) entry.sample.push(name);
      else {
        const at = Math.floor(Math.random() * entry.keys);
        if (at < SAMPLE) entry.sample[at] = name;
      }
      byClass.set(c, entry);
    }
  } while (cursor !== '0');
  const rows: ClassRow[] = [];
  for (const [c, { keys, sample }] of byClass) {
    const pipeline = master.client.pipeline();
    for (const name of sample) pipeline.memory('USAGE', name, 'SAMPLES', '0');
    const replies = (await pipeline.exec()) ?? [];
    const sizes = replies.map(([, bytes]) => Number(bytes ?? 0));
    const mean = sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
    rows.push({ class: c, keys, estimatedBytes: Math.round(mean * keys), sampled: sizes.length });
  }
  return rows.sort((a, b) => b.estimatedBytes - a.estimatedBytes);
}

// ---------------------------------------------------------------------------------- nodes

interface Node {
  url: string;
  child: Child;
}

async function startNode(app: string, cluster: Cluster, name: string): Promise<Node> {
  const [port] = (await freePorts(1)) as [number];
  const child = start(name, process.execPath, [join(app, 'dist', 'cli.js'), 'serve'], {
    env: {
      ...process.env,
      ...nodeEnv(cluster),
      KEYWARD_PORT: String(port),
      KEYWARD_HOST: HOST,
      LOG_LEVEL: 'warn',
    },
    cwd: app,
    logFile: join(WORK, `${name}.log`),
  });
  const url = `http://${HOST}:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (!isRunning(child)) throw new Error(`${name} exited at start; see ${child.logFile}`);
    try {
      const res = await fetch(`${url}/v1/liveness`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (attempt > 300) throw new Error(`${name}: not live after 15 s; see ${child.logFile}`);
    await sleep(50);
  }
  return { url, child };
}

function nodeEnv(cluster: Cluster): Record<string, string> {
  return {
    NODE_ENV: 'production',
    KEYWARD_REDIS_CLUSTER_NODES: cluster.seeds,
    // The fill is thousands of management calls a second from one root key.
    KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000000',
    // Two cores run both clusters, the node and this driver: the production 100 ms deadline
    // would misfire under the fill.
    KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '2000',
  };
}

function createRootKey(app: string, cluster: Cluster): string {
  const out = execFileSync(
    process.execPath,
    [join(app, 'dist', 'cli.js'), 'root', 'create', '--name', 'layout'],
    {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, ...nodeEnv(cluster), LOG_LEVEL: 'warn' },
    },
  );
  const line = out.trim().split('\n').pop() ?? '';
  return (JSON.parse(line) as { key: string }).key;
}

/** Keep-alive connections for the fill: fetch's own cost the driver a core's worth of CPU. */
const fillAgent = new Agent({ keepAlive: true, maxSockets: 128 });

function send(
  url: string,
  method: 'GET' | 'POST',
  rootKey: string,
  agent: Agent,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${rootKey}` };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = request(url, { method, agent, headers, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function rpc<T>(node: Node, rootKey: string, method: string, body: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await send(
      `${node.url}/v1/${method}`,
      'POST',
      rootKey,
      fillAgent,
      JSON.stringify(body),
    );
    if (res.status === 200) return JSON.parse(res.body) as T;
    // A busy machine may answer 503 (a Redis deadline): tried again a few times, then fatal.
    if (res.status !== 503 || attempt >= 3) throw new Error(`${method}: ${res.status} ${res.body}`);
    await sleep(200);
  }
}

/** Runs `task(i)` for i in [0, count) with `width` at a time. */
async function pool(
  count: number,
  task: (i: number) => Promise<void>,
  width = CONCURRENCY,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

// ---------------------------------------------------------------------------------- fill

interface Filled {
  layout: 'new' | 'old';
  build: string;
  cluster: Cluster;
  app: string;
  rootKey: string;
  apiId: string;
  seconds: { import: number; links: number; verify: number };
  before: MasterState[];
  after: MasterState[];
  classes: Record<number, ClassRow[]>;
}

async function fill(layout: 'new' | 'old', app: string, build: string): Promise<Filled> {
  const cluster = await startCluster(layout);
  const before = await masterStates(cluster);
  const rootKey = createRootKey(app, cluster);
  const node = await startNode(app, cluster, `${layout}-fill`);
  const { apiId } = await rpc<{ apiId: string }>(node, rootKey, 'apis.createApi', {
    name: 'layout',
  });
  for (let p = 0; p < PERMISSIONS; p++) {
    await rpc(node, rootKey, 'permissions.createPermission', { name: `docs.p${p}` });
  }
  for (let r = 0; r < ROLES; r++) {
    await rpc(node, rootKey, 'permissions.createRole', {
      name: `role.${r}`,
      permissions: [`docs.p${r}`, `docs.p${r + ROLES}`],
    });
  }
  await pool(OWNERS, async (o) => {
    await rpc(node, rootKey, 'identities.createIdentity', { externalId: `owner_${o}` });
  });

  // Hex keys: no checksum of keyward's format to check, as keys moved in from elsewhere.
  const plaintexts = Array.from(
    { length: KEYS },
    () => `legacy_${randomBytes(16).toString('hex')}`,
  );
  const keyIds: string[] = new Array<string>(KEYS);
  let started = Date.now();
  await pool(Math.ceil(KEYS / BATCH), async (b) => {
    const from = b * BATCH;
    const items = plaintexts.slice(from, from + BATCH).map((plaintext, j) => ({
      apiId,
      plaintext,
      ...((from + j) % 3 === 0 ? { ownerId: `owner_${(from + j) % OWNERS}` } : {}),
    }));
    const { keyIds: ids } = await rpc<{ keyIds: string[] }>(
      node,
      rootKey,
      'migrations.createKeys',
      items,
    );
    ids.forEach((id, j) => (keyIds[from + j] = id));
    if (b % 100 === 99) log(`${layout}: ${from + items.length} keys imported`);
  });
  const importSeconds = (Date.now() - started) / 1000;
  log(`${layout}: ${KEYS} keys imported in ${importSeconds.toFixed(1)} s`);

  started = Date.now();
  const linked = Array.from({ length: KEYS }, (_, i) => i).filter((i) => i % 20 === 0);
  await pool(linked.length, async (n) => {
    const i = linked[n]!;
    const keyId = keyIds[i]!;
    await rpc(node, rootKey, 'keys.addPermissions', {
      keyId,
      permissions: [
        { name: `docs.p${i % PERMISSIONS}` },
        { name: `docs.p${(i + 3) % PERMISSIONS}` },
      ],
    });
    if (i % 40 === 0) {
      await rpc(node, rootKey, 'keys.addRoles', { keyId, roles: [{ name: `role.${i % ROLES}` }] });
    }
  });
  const linksSeconds = (Date.now() - started) / 1000;

  started = Date.now();
  let invalid = 0;
  await pool(
    KEYS,
    async (i) => {
      const { valid } = await rpc<{ valid: boolean }>(node, rootKey, 'keys.verifyKey', {
        key: plaintexts[i],
      });
      if (!valid) invalid++;
      if (i % 20_000 === 19_999) log(`${layout}: ${i + 1} keys verified`);
    },
    VERIFY_CONCURRENCY,
  );
  const verifySeconds = (Date.now() - started) / 1000;
  log(`${layout}: every key verified once in ${verifySeconds.toFixed(1)} s (${invalid} invalid)`);
  if (invalid > 0) throw new Error(`${layout}: ${invalid} imported keys did not verify`);

  // SIGTERM: the node flushes the usage counts it holds before it exits.
  await stop(node.child, 10_000);
  await settle(cluster);
  const after = await masterStates(cluster);
  const classes: Record<number, ClassRow[]> = {};
  for (const master of cluster.masters) classes[master.port] = await classify(master);
  return {
    layout,
    build,
    cluster,
    app,
    rootKey,
    apiId,
    seconds: { import: importSeconds, links: linksSeconds, verify: verifySeconds },
    before,
    after,
    classes,
  };
}

// ---------------------------------------------------------------------------------- listKeys

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const get = (url: string, rootKey: string) => send(url, 'GET', rootKey, agent);

interface Page {
  keys: { id: string }[];
  cursor?: string;
  total: number;
}

function listUrl(node: Node, apiId: string, cursor?: string): string {
  return `${node.url}/v1/apis.listKeys?apiId=${apiId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
}

async function page(node: Node, rootKey: string, apiId: string, cursor?: string): Promise<Page> {
  const { status, body } = await get(listUrl(node, apiId, cursor), rootKey);
  if (status !== 200) throw new Error(`apis.listKeys: ${status} ${body}`);
  return JSON.parse(body) as Page;
}

interface ListTarget {
  layout: 'new' | 'old';
  node: Node;
  filled: Filled;
  deepCursor: string;
  walkSeconds: number;
}

interface Latency {
  layout: 'new' | 'old';
  page: 'first' | 'deep';
  requests: number;
  p50ms: number;
  p99ms: number;
  meanMs: number;
}

/** The cursor of page DEEP_PAGE, walked to from the first page; checks each page's size. */
async function deepCursor(
  node: Node,
  filled: Filled,
): Promise<{ cursor: string; seconds: number }> {
  const started = Date.now();
  let cursor: string | undefined;
  for (let p = 1; p < DEEP_PAGE; p++) {
    const got = await page(node, filled.rootKey, filled.apiId, cursor);
    if (got.keys.length !== 100 || got.cursor === undefined) {
      throw new Error(`${filled.layout}: page ${p} had ${got.keys.length} keys, no cursor`);
    }
    if (p === 1 && got.total < KEYS) throw new Error(`${filled.layout}: total ${got.total}`);
    cursor = got.cursor;
  }
  return { cursor: cursor!, seconds: (Date.now() - started) / 1000 };
}

/** One request at a time, layouts alternating in blocks of 20, the order flipping each block. */
async function timeListing(targets: ListTarget[], which: 'first' | 'deep'): Promise<Latency[]> {
  const samples = targets.map(() => [] as number[]);
  const block = 20;
  const once = async (t: ListTarget) => {
    const started = process.hrtime.bigint();
    const got = await get(
      listUrl(t.node, t.filled.apiId, which === 'deep' ? t.deepCursor : undefined),
      t.filled.rootKey,
    );
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (got.status !== 200) throw new Error(`${t.layout} listKeys: ${got.status} ${got.body}`);
    return ms;
  };
  for (const t of targets) for (let i = 0; i < 20; i++) await once(t);
  for (let b = 0; b * block < LIST_REQUESTS; b++) {
    const order = b % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      for (let i = 0; i < block && b * block + i < LIST_REQUESTS; i++) {
        samples[targets.indexOf(t)]!.push(await once(t));
      }
    }
  }
  return targets.map((t, k) => {
    const sorted = [...samples[k]!].sort((a, b) => a - b);
    return {
      layout: t.layout,
      page: which,
      requests: sorted.length,
      p50ms: percentile(sorted, 50),
      p99ms: percentile(sorted, 99),
      meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    };
  });
}

// ---------------------------------------------------------------------------------- report

interface LayoutFigures {
  layout: 'new' | 'old';
  build: string;
  fillSeconds: Filled['seconds'];
  masters: {
    port: number;
    slots: string;
    keysBefore: number;
    keysAfter: number;
    keys: number;
    keyShare: number;
    memoryBytes: number;
    memoryShare: number;
    datasetBytes: number;
  }[];
  totalKeys: number;
  totalMemoryBytes: number;
  bytesPerApiKey: number;
  redisKeysPerApiKey: number;
  busiest: { byKeys: number; keyShare: number; byMemory: number; memoryShare: number };
  meetsCriterion: boolean;
  /**
   * The same without the markers of relayed audit entries (`keyward:audit:{ws.shard}:relayed:…`,
   * one per entry, for ten minutes; `…{ws}:audit-relayed:…` in c62d6b0, for 24 h): what the
   * masters hold once they expired. Their
   * memory is the MEMORY USAGE estimate, taken off used_memory's growth.
   */
  withoutRelayMarkers: {
    markers: number;
    masters: {
      port: number;
      keys: number;
      keyShare: number;
      memoryBytes: number;
      memoryShare: number;
    }[];
    busiestKeyShare: number;
    busiestMemoryShare: number;
    meetsCriterion: boolean;
  };
  /** The busiest master's (by memory) key classes, biggest first. */
  busiestClasses: ClassRow[];
  classes: Record<string, ClassRow[]>;
}

function figuresOf(filled: Filled): LayoutFigures {
  const masters = filled.after.map((after) => {
    const before = filled.before.find((b) => b.port === after.port)!;
    return {
      port: after.port,
      slots: after.slots,
      keysBefore: before.dbsize,
      keysAfter: after.dbsize,
      keys: after.dbsize - before.dbsize,
      keyShare: 0,
      memoryBytes: after.usedMemory - before.usedMemory,
      memoryShare: 0,
      datasetBytes: after.usedMemoryDataset - before.usedMemoryDataset,
    };
  });
  const totalKeys = masters.reduce((a, m) => a + m.keys, 0);
  const totalMemoryBytes = masters.reduce((a, m) => a + m.memoryBytes, 0);
  for (const m of masters) {
    m.keyShare = m.keys / totalKeys;
    m.memoryShare = m.memoryBytes / totalMemoryBytes;
  }
  const byKeys = [...masters].sort((a, b) => b.keyShare - a.keyShare)[0]!;
  const byMemory = [...masters].sort((a, b) => b.memoryShare - a.memoryShare)[0]!;
  const markersOn = (port: number) =>
    (filled.classes[port] ?? [])
      .filter((row) => /:audit-relayed:|:relayed:aud_/.test(row.class))
      .reduce(
        (sum, row) => ({ keys: sum.keys + row.keys, bytes: sum.bytes + row.estimatedBytes }),
        {
          keys: 0,
          bytes: 0,
        },
      );
  const lasting = masters.map((m) => {
    const markers = markersOn(m.port);
    return {
      port: m.port,
      keys: m.keys - markers.keys,
      memoryBytes: m.memoryBytes - markers.bytes,
    };
  });
  const lastingKeys = lasting.reduce((a, m) => a + m.keys, 0);
  const lastingMemory = lasting.reduce((a, m) => a + m.memoryBytes, 0);
  const lastingMasters = lasting.map((m) => ({
    ...m,
    keyShare: m.keys / lastingKeys,
    memoryShare: m.memoryBytes / lastingMemory,
  }));
  const busiestKeyShare = Math.max(...lastingMasters.map((m) => m.keyShare));
  const busiestMemoryShare = Math.max(...lastingMasters.map((m) => m.memoryShare));
  return {
    layout: filled.layout,
    build: filled.build,
    fillSeconds: filled.seconds,
    masters,
    totalKeys,
    totalMemoryBytes,
    bytesPerApiKey: totalMemoryBytes / KEYS,
    redisKeysPerApiKey: totalKeys / KEYS,
    busiest: {
      byKeys: byKeys.port,
      keyShare: byKeys.keyShare,
      byMemory: byMemory.port,
      memoryShare: byMemory.memoryShare,
    },
    meetsCriterion: byKeys.keyShare <= CRITERION && byMemory.memoryShare <= CRITERION,
    withoutRelayMarkers: {
      markers: masters.reduce((sum, m) => sum + markersOn(m.port).keys, 0),
      masters: lastingMasters,
      busiestKeyShare,
      busiestMemoryShare,
      meetsCriterion: busiestKeyShare <= CRITERION && busiestMemoryShare <= CRITERION,
    },
    busiestClasses: filled.classes[byMemory.port] ?? [],
    classes: Object.fromEntries(Object.entries(filled.classes)),
  };
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
const int = (n: number) => Math.round(n).toLocaleString('en-US');

function markdown(report: {
  date: string;
  command: string;
  layouts: LayoutFigures[];
  listKeys: Latency[];
  machine: { nproc: number; loadAverage1m: number[] };
}): string {
  const lines: string[] = [];
  lines.push(
    `One workspace, one API, ${int(KEYS)} keys imported (migrations.createKeys), a third with an ` +
      `ownerId among ${int(OWNERS)} identities, one in 20 with 2 permissions (one in 40 also a ` +
      `role), each verified once; a Redis Cluster of ${MASTERS} masters, no replicas, per layout. ` +
      `Growth from the empty cluster (DBSIZE, INFO memory used_memory). ${report.date}, ` +
      `\`${report.command}\`, ${report.machine.nproc} cores.`,
    '',
    '| layout | master | Redis keys | share | used_memory | share |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  );
  for (const l of report.layouts) {
    for (const [i, m] of l.masters.entries()) {
      lines.push(
        `| ${i === 0 ? `${l.layout} (${l.build})` : ''} | ${i + 1} (slots ${m.slots}) | ${int(m.keys)} | ` +
          `${pct(m.keyShare)} | ${mb(m.memoryBytes)} MiB | ${pct(m.memoryShare)} |`,
      );
    }
    lines.push(
      `| | **all** | ${int(l.totalKeys)} | | ${mb(l.totalMemoryBytes)} MiB | |`,
      `| | per API key | ${l.redisKeysPerApiKey.toFixed(2)} keys | | ${int(l.bytesPerApiKey)} B | |`,
    );
  }
  lines.push(
    '',
    `Criterion: the busiest master holds at most ${pct(CRITERION)} of the keys and of the memory.`,
    '',
  );
  for (const l of report.layouts) {
    lines.push(
      `- ${l.layout}: busiest by keys ${pct(l.busiest.keyShare)}, by memory ${pct(l.busiest.memoryShare)}: ` +
        `${l.meetsCriterion ? 'met' : '**not met**'}`,
    );
    const w = l.withoutRelayMarkers;
    if (w.markers > 0) {
      lines.push(
        `- ${l.layout}, without the ${int(w.markers)} marker${w.markers === 1 ? '' : 's'} of relayed audit entries ` +
          `(\`keyward:audit:{ws.shard}:relayed:…\`, ten minutes each): busiest by keys ` +
          `${pct(w.busiestKeyShare)}, by memory ${pct(w.busiestMemoryShare)}: ` +
          `${w.meetsCriterion ? 'met' : '**not met**'} (per master: ` +
          `${w.masters.map((m) => `${int(m.keys)} keys, ${mb(m.memoryBytes)} MiB`).join('; ')})`,
      );
    }
  }
  for (const l of report.layouts) {
    lines.push(
      '',
      `Busiest master by memory, ${l.layout} layout: its key classes (MEMORY USAGE of up to ` +
        `${SAMPLE} keys of each, scaled)`,
      '',
      '| class | keys | est. bytes | share of its used_memory growth |',
      '| --- | ---: | ---: | ---: |',
    );
    const busiest = l.masters.find((m) => m.port === l.busiest.byMemory)!;
    for (const row of l.busiestClasses.slice(0, 10)) {
      lines.push(
        `| \`${row.class}\` | ${int(row.keys)} | ${mb(row.estimatedBytes)} MiB | ` +
          `${pct(row.estimatedBytes / busiest.memoryBytes)} |`,
      );
    }
  }
  lines.push(
    '',
    `GET /v1/apis.listKeys?limit=100, one request at a time (keep-alive), ${LIST_REQUESTS} per ` +
      `page and layout, layouts alternating in blocks of 20; deep: the page after ${DEEP_PAGE - 1} ` +
      'pages, through their cursor.',
    '',
    '| page | layout | p50 | p99 | mean |',
    '| --- | --- | ---: | ---: | ---: |',
  );
  for (const r of report.listKeys) {
    lines.push(
      `| ${r.page} | ${r.layout} | ${r.p50ms.toFixed(2)} ms | ${r.p99ms.toFixed(2)} ms | ${r.meanMs.toFixed(2)} ms |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------- main

async function main(): Promise<void> {
  mkdirSync(WORK, { recursive: true });
  mkdirSync(OUT, { recursive: true });
  setPidFile(join(WORK, 'pids'));
  installCleanup(stopAll);
  const loadBefore = loadavg()[0] ?? NaN;
  const source = provenance(ROOT);
  const baseApp = process.env.BENCH_BASE_APP;
  const baseError = process.env.BENCH_BASE_ERROR;
  const builds: Record<'new' | 'old', { app: string; build: string } | undefined> = {
    new: { app: ROOT, build: `${source.commit}${source.uncommitted.length ? '+changes' : ''}` },
    old:
      baseApp && !baseError && existsSync(join(baseApp, 'dist', 'cli.js'))
        ? { app: baseApp, build: process.env.BENCH_BASE_COMMIT ?? 'base' }
        : undefined,
  };
  if (LAYOUTS.includes('old') && !builds.old) {
    throw new Error(`no old build (BENCH_BASE_ERROR: ${baseError ?? 'BENCH_BASE_APP unset'})`);
  }
  const filled: Filled[] = [];
  const nodes: Node[] = [];
  try {
    for (const layout of LAYOUTS) {
      const { app, build } = builds[layout]!;
      log(`${layout} layout (${build}): fill`);
      filled.push(await fill(layout, app, build));
    }
    const targets: ListTarget[] = [];
    for (const f of filled) {
      const node = await startNode(f.app, f.cluster, `${f.layout}-list`);
      nodes.push(node);
      const { cursor, seconds } = await deepCursor(node, f);
      log(`${f.layout}: cursor of page ${DEEP_PAGE} after ${seconds.toFixed(1)} s of walking`);
      targets.push({ layout: f.layout, node, filled: f, deepCursor: cursor, walkSeconds: seconds });
    }
    const listKeys = [
      ...(await timeListing(targets, 'first')),
      ...(await timeListing(targets, 'deep')),
    ];
    const report = {
      date: new Date().toISOString(),
      command: 'make layout-figures',
      source,
      machine: {
        nproc: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        redis: execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim(),
        loadAverage1m: [loadBefore, loadavg()[0] ?? NaN],
      },
      settings: {
        keys: KEYS,
        masters: MASTERS,
        owners: OWNERS,
        permissions: PERMISSIONS,
        roles: ROLES,
        concurrency: CONCURRENCY,
        listRequests: LIST_REQUESTS,
        deepPage: DEEP_PAGE,
        sample: SAMPLE,
        criterion: CRITERION,
      },
      layouts: filled.map(figuresOf),
      listKeys,
      walkSeconds: Object.fromEntries(targets.map((t) => [t.layout, t.walkSeconds])),
    };
    writeFileSync(join(OUT, 'layout.json'), `${JSON.stringify(report, null, 2)}\n`);
    const md = markdown(report);
    writeFileSync(join(OUT, 'layout.md'), md);
    process.stdout.write(md);
    log(`done: ${join(OUT, 'layout.json')}, layout.md`);
  } finally {
    for (const node of nodes) await stop(node.child);
    for (const f of filled) await stopCluster(f.cluster);
    agent.destroy();
    fillAgent.destroy();
    await stopAll();
  }
}

runDriver(main, log);
