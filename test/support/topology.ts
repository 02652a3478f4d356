import pino from 'pino';
import { loadConfig } from '../../src/config';
import { startNode, type NodeOptions, type RunningNode } from '../../src/node';
import { createRootKey } from '../../src/operations/rootKeys';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { startRedis, type TestRedis } from './redisServer';

/**
 * The deployment in miniature: one primary Redis (us-east-1) and, per node, a node-local Redis
 * for fast buckets; every node is a real HTTP server in this process.
 */
export interface Topology {
  primary: TestRedis;
  locals: TestRedis[];
  nodes: RunningNode[];
  /** A root key with `*` in a fresh workspace. */
  rootKey: string;
  workspaceId: string;
  /** Another root key in the same store; `permissions` default to `*`. */
  newRootKey(options?: {
    workspaceId?: string;
    permissions?: string[];
  }): Promise<{ key: string; workspaceId: string }>;
  stop(): Promise<void>;
}

export interface TopologyOptions {
  nodes?: number;
  env?: Record<string, string>;
  /** Per-node options, by index (e.g. a wrong local clock for node 1). */
  nodeOptions?: NodeOptions[];
  /** Run the primary with an append-only file, so a restart keeps its data. */
  primaryAppendOnly?: boolean;
  /** Nodes reach their local Redis over its unix socket (local redis-server processes only). */
  localOverUnixSocket?: boolean;
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const count = options.nodes ?? 2;
  const primary = await startRedis({ appendOnly: options.primaryAppendOnly ?? false });
  const locals: TestRedis[] = [];
  const nodes: RunningNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.close()));
    await Promise.all([primary, ...locals].map((redis) => redis.dispose()));
  };
  try {
    for (let i = 0; i < count; i++) locals.push(await startRedis());
    for (const [index, local] of locals.entries()) {
      const config = loadConfig({
        KEYWARD_PORT: '0',
        KEYWARD_HOST: '127.0.0.1',
        KEYWARD_REDIS_URL: primary.url,
        KEYWARD_LOCAL_REDIS_URL: options.localOverUnixSocket
          ? (local.socketUrl ?? fail('this Redis has no unix socket'))
          : local.url,
        LOG_LEVEL: 'silent',
        // Two cores run every node, Redis and jest worker of a test run: a 100 ms command deadline
        // misfires when they are saturated. Tests that need the production deadline set it.
        KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '1000',
        ...options.env,
      });
      nodes.push(await startNode(config, pino({ level: 'silent' }), options.nodeOptions?.[index]));
    }
    const admin = createRedis(primary.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000 });
    const newRootKey = async (opts: { workspaceId?: string; permissions?: string[] } = {}) => {
      await connectRedis(admin).catch(() => undefined);
      const created = await createRootKey(new RootKeyStore(admin), opts);
      return { key: created.key, workspaceId: created.workspaceId };
    };
    const first = await newRootKey();
    return {
      primary,
      locals,
      nodes,
      rootKey: first.key,
      workspaceId: first.workspaceId,
      newRootKey,
      stop: async () => {
        await closeRedis(admin);
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function fail(message: string): never {
  throw new Error(message);
}
