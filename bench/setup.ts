/**
 * Processes the benchmark and the profile both start: Redis servers, keyward nodes, and the RPC
 * calls that give them keys. Every process goes through procs.ts, so it is stopped with the run.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freePorts, isRunning, readyPort, start, type Child } from './procs';

export const HOST = '127.0.0.1';

export type Transport = 'unix' | 'tcp';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A knob from the environment: `fallback` when unset, an error when outside [min, max]. */
export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new Error(`${name}: must be a number between ${min} and ${max}`);
  }
  return value;
}

/** A rate limit no load here can exhaust: every verification is admitted and runs the script. */
export const HUGE = { limit: 1_000_000_000, refillRate: 1_000_000_000, refillInterval: 1000 };

export interface RedisInstance {
  name: string;
  port: number;
  url: string;
  /** The same server over its unix socket. */
  socketUrl: string;
  child: Child;
  client: Redis;
}

export interface Server {
  name: string;
  url: string;
  child: Child;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A redis-server without persistence, its files and log under `outDir`; `extraArgs` are more
 * redis-server options (`--replicaof` for a replica).
 */
export async function startRedis(
  outDir: string,
  name: string,
  port: number,
  extraArgs: string[] = [],
): Promise<RedisInstance> {
  const dir = join(outDir, name);
  mkdirSync(dir, { recursive: true });
  const child = start(
    name,
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      HOST,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
      '--dir',
      dir,
      '--unixsocket',
      join(dir, 'redis.sock'),
      '--unixsocketperm',
      '700',
      ...extraArgs,
    ],
    { logFile: join(outDir, `${name}.log`) },
  );
  for (let attempt = 0; !(await canConnect(port)); attempt++) {
    if (!isRunning(child)) throw new Error(`${name} exited; see ${child.logFile}`);
    if (attempt > 200) throw new Error(`${name} not listening after 10 s; see ${child.logFile}`);
    await sleep(50);
  }
  const url = `redis://${HOST}:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  client.on('error', () => undefined);
  await client.ping();
  return { name, port, url, socketUrl: `unix://${join(dir, 'redis.sock')}`, child, client };
}

/**
 * A redis-server replicating `primary`, resolved once the primary counts it as a replica that
 * acknowledges (WAIT 1 answers 1), so the first measured write does not wait for the first sync.
 */
export async function startReplica(
  outDir: string,
  name: string,
  port: number,
  primary: RedisInstance,
): Promise<RedisInstance> {
  const replica = await startRedis(outDir, name, port, ['--replicaof', HOST, String(primary.port)]);
  for (let attempt = 0; ; attempt++) {
    if (!isRunning(replica.child)) throw new Error(`${name} exited; see ${replica.child.logFile}`);
    if ((await primary.client.wait(1, 100)) >= 1) return replica;
    if (attempt > 100)
      throw new Error(`${name}: not in sync after 10 s; see ${replica.child.logFile}`);
  }
}

export interface KeywardOptions {
  /** The folder holding dist/ (and lua/, package.json). */
  app: string;
  /** Where the node's log goes. */
  outDir: string;
  cwd: string;
  name: string;
  port: number;
  logLevel: 'warn' | 'info';
  primary: RedisInstance;
  local: RedisInstance;
  transport: Transport;
  /** Flags for node itself, before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** More environment, applied last (KEYWARD_ANALYTICS=off, KEYWARD_ANALYTICS_REDIS_URL). */
  env?: Record<string, string>;
}

/** `node dist/cli.js serve`, resolved once GET /v1/liveness answers. */
export async function startKeyward(options: KeywardOptions): Promise<Server & { logFile: string }> {
  const { name, port, local } = options;
  const logFile = join(options.outDir, `${name}.log`);
  rmSync(logFile, { force: true });
  const child = start(
    name,
    process.execPath,
    [...(options.nodeArgs ?? []), join(options.app, 'dist/cli.js'), 'serve'],
    {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        KEYWARD_REDIS_URL: options.primary.url,
        KEYWARD_LOCAL_REDIS_URL: options.transport === 'unix' ? local.socketUrl : local.url,
        KEYWARD_PORT: String(port),
        KEYWARD_HOST: HOST,
        LOG_LEVEL: options.logLevel,
        ...options.env,
      },
      cwd: options.cwd,
      logFile,
    },
  );
  const url = `http://${HOST}:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (!isRunning(child)) throw new Error(`keyward exited at start; see ${logFile}`);
    try {
      const res = await fetch(`${url}/v1/liveness`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (attempt > 200) throw new Error(`keyward not live after 10 s; see ${logFile}`);
    await sleep(50);
  }
  return { name, url, child, logFile };
}

/** One node with its two Redis servers and a root key: what the single-node drivers stand on. */
export interface LoneNode {
  primary: RedisInstance;
  local: RedisInstance;
  node: Server & { logFile: string };
  rootKey: string;
}

/**
 * Starts a primary and a node-local Redis on free ports, a root key holding every permission, and
 * one keyward node of `app` reaching its local Redis over the unix socket, as `make bench` runs it.
 * Everything goes through procs.ts: the caller's stopAll() stops it, also when this throws.
 */
export async function startLoneNode(options: {
  app: string;
  outDir: string;
  /** The root key's name, which the audit log shows. */
  rootKeyName: string;
  logLevel: 'warn' | 'info';
  nodeArgs?: string[];
  env?: Record<string, string>;
}): Promise<LoneNode> {
  const { app, outDir } = options;
  const [primaryPort, localPort, nodePort] = (await freePorts(3)) as [number, number, number];
  const primary = await startRedis(outDir, 'redis-primary', primaryPort);
  const local = await startRedis(outDir, 'redis-local', localPort);
  const rootKey = createRootKey(app, primary, options.rootKeyName).key;
  const node = await startKeyward({
    app,
    outDir,
    cwd: app,
    name: 'keyward',
    port: nodePort,
    logLevel: options.logLevel,
    primary,
    local,
    transport: 'unix',
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  return { primary, local, node, rootKey };
}

/**
 * One of bench/servers.ts's comparison servers (`http`, `koa`, `peer`, `script`: the floor), as
 * its own process, resolved once it prints the port it listens on.
 */
export async function startComparisonServer(options: {
  /** The compiled bench folder, holding servers.js. */
  build: string;
  cwd: string;
  outDir: string;
  mode: 'http' | 'koa' | 'peer' | 'script';
  name: string;
  env?: Record<string, string>;
}): Promise<Server> {
  const { build, cwd, outDir, mode, name } = options;
  const child = start(name, process.execPath, [join(build, 'servers.js'), mode], {
    env: { ...process.env, ...options.env, BENCH_PORT: '0', NODE_ENV: 'production' },
    cwd,
    logFile: join(outDir, `${name}.log`),
    pipeStdout: true,
  });
  const port = await readyPort(child);
  return { name, url: `http://${HOST}:${port}`, child };
}

/**
 * The exact token-bucket call keyward makes for a key, captured with MONITOR on the Redis that
 * holds its bucket (node-local for fast, primary for consistent) during one verification:
 * `[sha, numkeys, ...keys, ...args]`, keys retagged to `{bench}`.
 */
export async function captureBucketCall(
  /** The measured build's folder: its own script loader names the script. */
  app: string,
  redis: RedisInstance,
  verifyOnce: () => Promise<void>,
): Promise<{ args: string[]; script: string }> {
  // Once before watching: the first call of a script on a Redis is ioredis's EVAL fallback after
  // NOSCRIPT, whose body MONITOR shows escaped (no use for its SHA-1); every later one is EVALSHA.
  await verifyOnce();
  // monitor() opens a connection of its own, closed below.
  const monitor = await redis.client.monitor();
  try {
    const captured = new Promise<string[]>((resolve) => {
      monitor.on('monitor', (_time: string, args: string[]) => {
        const name = (args[0] ?? '').toLowerCase();
        if (name === 'evalsha' || name === 'eval') resolve(args);
      });
    });
    await verifyOnce();
    const args = await Promise.race([captured, sleep(3000).then(() => undefined)]);
    if (!args) throw new Error(`no EVALSHA seen on ${redis.name} during one verification`);
    let sha = args[1] as string;
    if ((args[0] as string).toLowerCase() === 'eval') {
      sha = createHash('sha1')
        .update(args[1] as string)
        .digest('hex');
    }
    const numKeys = Number(args[2]);
    const keys = args.slice(3, 3 + numKeys).map((k) => k.replace(/\{[^}]*\}/, '{bench}'));
    const rest = args.slice(3 + numKeys);
    // The measured build's own loader: a script's SHA-1 is that of its text with the includes
    // expanded, not of its file.
    const { loadScripts } = (await import(join(app, 'dist', 'redis', 'scripts.js'))) as {
      loadScripts(dir: string): { name: string; sha1: string }[];
    };
    const loaded = loadScripts(join(app, 'lua')).find((candidate) => candidate.sha1 === sha);
    const script = loaded ? `lua script ${loaded.name}` : `unknown script ${sha}`;
    return { args: [sha, String(numKeys), ...keys, ...rest], script };
  } finally {
    monitor.disconnect();
  }
}

export async function rpc<T>(
  url: string,
  rootKey: string,
  method: string,
  body: object,
): Promise<T> {
  const res = await fetch(`${url}/v1/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Which code is measured: the commit, and the files of src/ or lua/ that differ from it. */
export function provenance(root: string): { commit: string; uncommitted: string[] } {
  const git = (...args: string[]) => {
    try {
      // trimEnd: porcelain's first line leads with a space (" M src/…") that is part of it.
      return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  const changed = git('status', '--porcelain', '--', 'src', 'lua')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  return { commit: git('rev-parse', '--short', 'HEAD') || 'unknown', uncommitted: changed };
}

/** A root key holding every permission (`keyward root create` from the `app` folder's dist/). */
export function createRootKey(app: string, primary: RedisInstance, name: string): { key: string } {
  return JSON.parse(
    execFileSync(process.execPath, [join(app, 'dist/cli.js'), 'root', 'create', '--name', name], {
      encoding: 'utf8',
      env: { ...process.env, KEYWARD_REDIS_URL: primary.url },
    }),
  ) as { key: string };
}
