import pino, { type Logger } from 'pino';
import { loadConfig } from '../../src/config';
import { startNode, type NodeOptions, type RunningNode } from '../../src/node';
import { createRootKey } from '../../src/operations/rootKeys';
import { closeRedis, connectRedis, createRedis, type RedisClient } from '../../src/redis/clients';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { keywardProcess, type KeywardProcess } from './keywardProcess';
import { startRedis, type TestRedis } from './redisServer';

/**
 * The one way tests start keyward nodes and the Redis servers behind them. The deployment in
 * miniature: one primary Redis and, per node, a node-local Redis for fast buckets. Nodes run in
 * this process (`startTopology`, `startTestNode`) or as `node dist/cli.js serve` processes of
 * their own (`startProcessTopology`, `startNodeProcess`) when a test must signal or kill them;
 * both start from the same environment (`nodeEnv`).
 */

/** Where a node finds Redis, and what the test changes of the defaults. */
export interface NodeRedis {
  /** KEYWARD_REDIS_URL; leave out with `clusterSeeds`. */
  primaryUrl?: string;
  /** KEYWARD_REDIS_CLUSTER_NODES: the primary is a Redis Cluster. */
  clusterSeeds?: string;
  /** KEYWARD_LOCAL_REDIS_URL; without it the node keeps its fast buckets on the primary. */
  localUrl?: string;
  /** Applied last: overrides any default here. */
  env?: Record<string, string>;
}

/** The environment of a test node, in-process or not (a process adds its port itself). */
export function nodeEnv(redis: NodeRedis): Record<string, string> {
  return {
    ...(redis.primaryUrl === undefined ? {} : { KEYWARD_REDIS_URL: redis.primaryUrl }),
    ...(redis.clusterSeeds === undefined
      ? {}
      : { KEYWARD_REDIS_CLUSTER_NODES: redis.clusterSeeds }),
    ...(redis.localUrl === undefined ? {} : { KEYWARD_LOCAL_REDIS_URL: redis.localUrl }),
    LOG_LEVEL: 'silent',
    // Two cores run every node, Redis and jest worker of a test run: a 100 ms command deadline
    // misfires when they are saturated. Tests that need the production deadline set it.
    KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...redis.env,
  };
}

export interface TestNodeOptions extends NodeRedis {
  /** Where the node logs; silent by default. */
  logger?: Logger;
  nodeOptions?: NodeOptions;
}

/** One node in this process, listening on a free port of 127.0.0.1. */
export function startTestNode(options: TestNodeOptions): Promise<RunningNode> {
  const config = loadConfig({ KEYWARD_PORT: '0', KEYWARD_HOST: '127.0.0.1', ...nodeEnv(options) });
  return startNode(config, options.logger ?? pino({ level: 'silent' }), options.nodeOptions);
}

export interface NodeProcessOptions extends NodeRedis {
  name?: string;
  logFile?: string;
  stdout?: 'pipe';
}

/** One node as its own process (`npm run build` first), started: liveness answered 200. */
export async function startNodeProcess(options: NodeProcessOptions): Promise<KeywardProcess> {
  const node = await keywardProcess({
    env: nodeEnv(options),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.logFile === undefined ? {} : { logFile: options.logFile }),
    ...(options.stdout === undefined ? {} : { stdout: options.stdout }),
  });
  await node.start();
  return node;
}

export type RootKeyOptions = { workspaceId?: string; permissions?: string[] };

/** A root key straight in the store (`permissions` default to `*`, in a fresh workspace). */
export async function createTestRootKey(
  redis: RedisClient,
  options: RootKeyOptions = {},
): Promise<{ key: string; workspaceId: string }> {
  await connectRedis(redis).catch(() => undefined);
  const created = await createRootKey(new RootKeyStore(redis), options);
  return { key: created.key, workspaceId: created.workspaceId };
}

/** What both kinds of topology have: the Redis servers and a root key. */
interface Deployment {
  primary: TestRedis;
  locals: TestRedis[];
  /** A root key with `*` in a fresh workspace. */
  rootKey: string;
  workspaceId: string;
  /** Another root key in the same store; `permissions` default to `*`. */
  newRootKey(options?: RootKeyOptions): Promise<{ key: string; workspaceId: string }>;
  /** Stops every node, then every Redis. */
  stop(): Promise<void>;
}

/** Nodes in this process. */
export interface Topology extends Deployment {
  nodes: RunningNode[];
  /**
   * One more node on the primary (or `primaryUrl`, e.g. a delay proxy's), on a node-local Redis
   * of its own unless `localUrl` names one; `stop()` closes it if the test did not.
   */
  addNode(options?: Omit<TestNodeOptions, 'clusterSeeds'>): Promise<RunningNode>;
}

/** Nodes as processes. */
export interface ProcessTopology extends Deployment {
  nodes: KeywardProcess[];
  /** As Topology.addNode, for a process; started, and killed by `stop()` if still running. */
  addNode(options?: NodeProcessOptions): Promise<KeywardProcess>;
}

export interface TopologyOptions {
  nodes?: number;
  env?: Record<string, string>;
  /** Run the primary with an append-only file, so a restart keeps its data. */
  primaryAppendOnly?: boolean;
  /** false: no node-local Redis, nodes keep their fast buckets on the primary. Default true. */
  localRedis?: boolean;
}

export interface InProcessOptions extends TopologyOptions {
  /** Per-node options, by index (e.g. a wrong local clock for node 1). */
  nodeOptions?: NodeOptions[];
  /** Nodes reach their local Redis over its unix socket (local redis-server processes only). */
  localOverUnixSocket?: boolean;
  /** Where every node logs; silent by default. */
  logger?: Logger;
}

export interface ProcessOptions extends TopologyOptions {
  /** Node `index`'s name (the load balancer's server name); default `node on <port>`. */
  name?(index: number): string;
  /** Where node `index` writes its output; by default stderr is kept for start-up errors. */
  logFile?(index: number): string;
}

/**
 * The Redis servers, the root key and the bookkeeping both topologies share. `first(index)` says
 * how the topology's own nodes start, `start` starts one; a node without `localUrl` gets a local
 * Redis of its own, when the topology has them.
 */
async function deploy<N, O extends NodeRedis>(
  options: TopologyOptions,
  first: (index: number) => O,
  start: (node: O) => Promise<N>,
  close: (node: N) => Promise<unknown>,
  localUrl: (local: TestRedis) => string = (local) => local.url,
): Promise<Deployment & { nodes: N[]; addNode(node: O): Promise<N> }> {
  const withLocals = options.localRedis ?? true;
  const primary = await startRedis({ appendOnly: options.primaryAppendOnly ?? false });
  const locals: TestRedis[] = [];
  const nodes: N[] = [];
  const added: N[] = [];
  let admin: RedisClient | undefined;
  const stop = async () => {
    await Promise.all([...nodes, ...added].map(close));
    if (admin) await closeRedis(admin);
    await Promise.all([primary, ...locals].map((redis) => redis.dispose()));
  };
  const withRedis = async (node: O): Promise<O> => {
    const placed = { primaryUrl: primary.url, ...node, env: { ...options.env, ...node.env } };
    if (placed.localUrl !== undefined || !withLocals) return placed;
    const local = await startRedis();
    locals.push(local);
    return { ...placed, localUrl: localUrl(local) };
  };
  try {
    for (let i = 0; i < (options.nodes ?? 2); i++)
      nodes.push(await start(await withRedis(first(i))));
    admin = createRedis(primary.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    const store = admin;
    const newRootKey = (opts: RootKeyOptions = {}) => createTestRootKey(store, opts);
    const root = await newRootKey();
    return {
      primary,
      locals,
      nodes,
      rootKey: root.key,
      workspaceId: root.workspaceId,
      newRootKey,
      stop,
      addNode: async (node?: O) => {
        // Every field of both kinds of node options is optional.
        const started = await start(await withRedis(node ?? ({} as O)));
        added.push(started);
        return started;
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Nodes in this process: `nodes` of them (default 2), each with its own local Redis. */
export function startTopology(options: InProcessOptions = {}): Promise<Topology> {
  return deploy<RunningNode, TestNodeOptions>(
    options,
    (index) => ({
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.nodeOptions?.[index] ? { nodeOptions: options.nodeOptions[index] } : {}),
    }),
    async (node) => {
      const running = await startTestNode(node);
      // A test may close a node it added itself: stop() must not close it twice.
      let closing: Promise<void> | undefined;
      return { ...running, close: () => (closing ??= running.close()) };
    },
    (node) => node.close(),
    options.localOverUnixSocket
      ? (local) => local.socketUrl ?? fail('this Redis has no unix socket')
      : undefined,
  );
}

/** Nodes as `keyward serve` processes, all started; otherwise as startTopology. */
export function startProcessTopology(options: ProcessOptions = {}): Promise<ProcessTopology> {
  return deploy<KeywardProcess, NodeProcessOptions>(
    options,
    (index) => {
      const name = options.name?.(index);
      return {
        ...(name === undefined ? {} : { name }),
        ...(options.logFile ? { logFile: options.logFile(index) } : {}),
      };
    },
    startNodeProcess,
    (node) => node.dispose(),
  );
}

function fail(message: string): never {
  throw new Error(message);
}
