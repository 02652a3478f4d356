import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config';
import { coalesceWritesWhenBusy } from './coalesce';
import { acknowledgeAfterClusterReplicas, acknowledgeAfterReplicas } from './replicatedAcks';
import { defineScripts } from './scripts';

/** A standalone Redis or a Redis Cluster: the stores work on either (one slot per write). */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** Per-command deadline: a Redis that is slow is treated like one that is down. */
  commandTimeoutMs: number;
  connectTimeoutMs: number;
}

/** Clients being closed on purpose, which must not be brought back. */
const closing = new WeakSet<RedisClient>();

const retryStrategy = (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000);

/**
 * A client that fails fast instead of queueing: no offline queue (a command sent while
 * disconnected fails at once rather than running late) and no per-command retries (a retried
 * bucket script could charge a request twice). Reconnection continues in the background.
 */
function clientOptions(options: RedisClientOptions): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy,
    // How long a client that is closed waits for its connection to end before destroying it:
    // after QUIT, only a connection that failed is left. Not ioredis's 2 s, a timer that nothing
    // clears when the connection had already dropped (its Redis down, a reconnection pending):
    // it kept a process that was done, a shutting-down node or a test worker, alive for 2 s.
    disconnectTimeout: 100,
    // No auto-pipelining: it holds every command back to the next turn of the event loop
    // (setImmediate), which added 15-30 µs to each fast check at low load, and it bought no
    // throughput once verifications stopped going through Koa (docs/performance.md).
    enableAutoPipelining: false,
  };
}

/**
 * A subscriber connection's policy: its commands wait across reconnects (SUBSCRIBE is
 * idempotent), and whoever subscribed subscribes again on every 'ready' (InvalidationListener,
 * ClusterSubscriber). Not ioredis's own resubscription: it leaves its SUBSCRIBE's promise
 * unhandled, and a connection that drops again before Redis confirms it rejects that promise,
 * which ends a Node process (an unhandled rejection) on a flapping Redis or at shutdown.
 */
export const SUBSCRIBER_OPTIONS: RedisOptions = {
  enableOfflineQueue: true,
  commandTimeout: undefined,
  enableAutoPipelining: false,
  autoResubscribe: false,
};

function prepare<C extends RedisClient>(client: C): C {
  defineScripts(client);
  // Errors surface on the commands that fail; without a listener ioredis would print each one.
  client.on('error', () => undefined);
  return client;
}

/** `unix:///path/to/redis.sock` names a unix socket (ioredis takes only a bare path for it). */
const UNIX_SOCKET = /^unix:\/\/(\/.+)$/;

export function createRedis(
  url: string,
  options: RedisClientOptions,
  extra: RedisOptions = {},
): Redis {
  const socket = UNIX_SOCKET.exec(url)?.[1];
  const redisOptions = { ...clientOptions(options), ...extra };
  const redis = prepare(
    socket === undefined
      ? new Redis(url, redisOptions)
      : new Redis({ ...redisOptions, path: socket }),
  );
  coalesceWritesWhenBusy(redis);
  return redis;
}

/** A Redis Cluster client with the same fail-fast policy as `createRedis`. */
export function createCluster(
  nodes: readonly { host: string; port: number }[],
  options: RedisClientOptions,
  extra: RedisOptions = {},
): Cluster {
  const redisOptions = { ...clientOptions(options), ...extra };
  return prepare(
    new Cluster([...nodes], {
      lazyConnect: true,
      enableOfflineQueue: redisOptions.enableOfflineQueue ?? false,
      enableAutoPipelining: redisOptions.enableAutoPipelining ?? false,
      clusterRetryStrategy: retryStrategy,
      // A moved slot or a failover answers MOVED/ASK/TRYAGAIN: follow them, they are not retries
      // of a command that ran.
      maxRedirections: 16,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      redisOptions,
    }),
  );
}

/**
 * A client of the master a set of Sentinels names, with the same fail-fast policy: ioredis asks
 * the Sentinels for the master on every (re)connection, and drops its connection when the master
 * it reached turns into a replica, so after a failover it reconnects to the promoted one.
 */
export function createSentinelClient(
  sentinel: NonNullable<Config['redisSentinel']>,
  options: RedisClientOptions,
  extra: RedisOptions = {},
): Redis {
  const redis = prepare(
    new Redis({
      ...clientOptions(options),
      sentinels: sentinel.sentinels,
      name: sentinel.name,
      role: 'master',
      sentinelRetryStrategy: retryStrategy,
      // Listen for +switch-master: follow a promotion as soon as the Sentinels announce it,
      // rather than when the old master's connection finally breaks.
      failoverDetector: true,
      ...extra,
    }),
  );
  coalesceWritesWhenBusy(redis);
  // ioredis gives up for good ('end') when the Sentinels' failover message interrupts a
  // reconnection it has begun: its connector then fails the attempt instead of retrying. Only
  // closeRedis ends a client on purpose, so any other end starts over, as a retry would.
  redis.on('end', () => {
    if (closing.has(redis)) return;
    setTimeout(() => {
      if (!closing.has(redis) && redis.status === 'end') redis.connect().catch(() => undefined);
    }, retryStrategy(1));
  });
  return redis;
}

/**
 * `KEYWARD_CONSISTENT_DURABILITY=replicated`: writes on this client answer once the replicas the
 * config asks for hold them. With `local`, the client as it is.
 */
export function withReplicaAcks<C extends RedisClient>(client: C, config: Config): C {
  const { durability } = config;
  if (durability.mode === 'local') return client;
  if (client instanceof Cluster) acknowledgeAfterClusterReplicas(client, durability);
  else acknowledgeAfterReplicas(client, durability);
  return client;
}

/**
 * The primary of a node's config: a Redis Cluster when KEYWARD_REDIS_CLUSTER_NODES is set, the
 * Sentinels' master when KEYWARD_REDIS_SENTINELS is, else KEYWARD_REDIS_URL.
 */
export function createPrimary(config: Config, extra: RedisOptions = {}): RedisClient {
  const options = {
    commandTimeoutMs: config.redisCommandTimeoutMs,
    connectTimeoutMs: config.redisConnectTimeoutMs,
  };
  if (config.redisClusterNodes) return createCluster(config.redisClusterNodes, options, extra);
  if (config.redisSentinel) return createSentinelClient(config.redisSentinel, options, extra);
  return createRedis(config.redisUrl, options, extra);
}

/** Connects and waits until Redis answers, or fails with the connection error. */
export async function connectRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'wait') await redis.connect();
  await redis.ping();
}

export async function closeRedis(redis: RedisClient): Promise<void> {
  closing.add(redis);
  if (redis.status !== 'end') {
    try {
      await redis.quit();
    } catch {
      // Closed below all the same.
    }
  }
  // QUIT leaves a Sentinel client's failover watchers connected; disconnect closes them too.
  // Not on other clients: on a stream QUIT closed already it arms a 2 s timer for nothing.
  if (redis instanceof Redis && redis.options.sentinels) redis.disconnect();
  else if (redis.status !== 'end') redis.disconnect();
}
