import type { RedisOptions } from 'ioredis';
import { loadConfig, type Config } from '../config';
import {
  closeRedis,
  createPrimary,
  createRedis,
  withReplicaAcks,
  type RedisClient,
  type RedisClientOptions,
} from '../redis/clients';

/** Not found, unreachable, refused: exit code 1 with a one-line message. */
export class OperationalError extends Error {}

/**
 * An operator command is not on the hot path: a slow answer is better than a spurious timeout on
 * a busy machine, so commands wait at least this long for a reply. KEYWARD_REDIS_CONNECT_TIMEOUT_MS
 * still bounds how long an unreachable Redis can keep the operator waiting.
 */
export const CLI_COMMAND_TIMEOUT_FLOOR_MS = 2000;

/** Shows where a Redis is without the password a URL may carry. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(unparsable URL)';
  }
}

export type RedisRole = 'primary' | 'local';

/**
 * What commands run against: the node's configuration (read from KEYWARD_* on first use, so that
 * `--help` works without any) and Redis connections opened on first use and closed at the end.
 */
export class Runtime {
  private loaded: Config | undefined;
  private readonly connections = new Map<RedisRole, Promise<RedisClient>>();
  private readonly clients = new Set<RedisClient>();

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  get config(): Config {
    this.loaded ??= loadConfig(this.env);
    return this.loaded;
  }

  /** As a node decides: without a local Redis of its own, fast buckets live in the primary. */
  get localIsPrimary(): boolean {
    return this.config.localRedisUrl === this.config.redisUrl;
  }

  describe(role: RedisRole): string {
    if (role === 'primary' && this.config.redisClusterNodes) {
      return `cluster ${this.config.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    }
    const sentinel = this.config.redisSentinel;
    if (sentinel && (role === 'primary' || this.localIsPrimary)) {
      const via = sentinel.sentinels.map((n) => `${n.host}:${n.port}`).join(',');
      return `master ${sentinel.name} of the sentinels ${via}`;
    }
    return displayUrl(role === 'primary' ? this.config.redisUrl : this.config.localRedisUrl);
  }

  /**
   * A new, unconnected client for a role. No reconnection: a one-shot command should report an
   * unreachable Redis, not keep retrying it.
   */
  createClient(role: RedisRole): RedisClient {
    const config = this.config;
    const options: RedisClientOptions = {
      commandTimeoutMs: Math.max(config.redisCommandTimeoutMs, CLI_COMMAND_TIMEOUT_FLOOR_MS),
      connectTimeoutMs: config.redisConnectTimeoutMs,
    };
    const extra: RedisOptions = {
      commandTimeout: options.commandTimeoutMs,
      retryStrategy: () => null,
    };
    // The operator's writes (root keys, imports) wait for the replicas as a node's do.
    const client =
      role === 'primary' || this.localIsPrimary
        ? withReplicaAcks(createPrimary(config, extra), config)
        : createRedis(config.localRedisUrl, options, extra);
    this.clients.add(client);
    return client;
  }

  /** A connected client; the primary's when the local Redis is the primary. */
  redis(role: RedisRole): Promise<RedisClient> {
    const effective: RedisRole = role === 'local' && this.localIsPrimary ? 'primary' : role;
    let connection = this.connections.get(effective);
    if (!connection) {
      connection = connect(
        this.createClient(effective),
        `${effective} Redis (${this.describe(effective)})`,
      );
      this.connections.set(effective, connection);
    }
    return connection;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients].map(closeRedis));
  }
}

/**
 * Connects and PINGs. ioredis rejects a failed connect with a bare "Connection is closed"; the
 * cause (ECONNREFUSED, a DNS failure, …) arrives as an error event, so that is what is reported.
 */
export async function connectClient(client: RedisClient): Promise<void> {
  let cause: Error | undefined;
  const remember = (error: Error) => {
    cause ??= error;
  };
  client.on('error', remember);
  try {
    if (client.status === 'wait') await client.connect();
    await client.ping();
  } catch (error) {
    const message = (cause ?? (error instanceof Error ? error : new Error(String(error)))).message;
    throw new OperationalError(message);
  } finally {
    client.off('error', remember);
  }
}

async function connect(client: RedisClient, what: string): Promise<RedisClient> {
  try {
    await connectClient(client);
  } catch (error) {
    throw new OperationalError(
      `${what} is unreachable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return client;
}
