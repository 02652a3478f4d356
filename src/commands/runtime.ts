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

/** The Redis servers a command may use: `analytics` holds the usage counts. */
export type RedisRole = 'primary' | 'local' | 'analytics';

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

  /** As a node decides: without KEYWARD_ANALYTICS_REDIS_URL, usage counts live in the primary. */
  get analyticsIsPrimary(): boolean {
    const url = this.config.analytics.redisUrl;
    return url === undefined || url === this.config.redisUrl;
  }

  /** The role whose Redis serves `role`: the primary's when it is the same server. */
  private effective(role: RedisRole): RedisRole {
    if (role === 'local' && this.localIsPrimary) return 'primary';
    if (role === 'analytics' && this.analyticsIsPrimary) return 'primary';
    return role;
  }

  private urlOf(role: Exclude<RedisRole, 'primary'>): string {
    return role === 'local' ? this.config.localRedisUrl : this.config.analytics.redisUrl!;
  }

  describe(role: RedisRole): string {
    const effective = this.effective(role);
    if (effective === 'primary') {
      const nodes = this.config.redisClusterNodes;
      if (nodes) return `cluster ${nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
      const sentinel = this.config.redisSentinel;
      if (sentinel) {
        const via = sentinel.sentinels.map((n) => `${n.host}:${n.port}`).join(',');
        return `master ${sentinel.name} of the sentinels ${via}`;
      }
      return displayUrl(this.config.redisUrl);
    }
    return displayUrl(this.urlOf(effective));
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
    const effective = this.effective(role);
    // The operator's writes (root keys, imports) wait for the replicas as a node's do.
    const client =
      effective === 'primary'
        ? withReplicaAcks(createPrimary(config, extra), config)
        : createRedis(this.urlOf(effective), options, extra);
    this.clients.add(client);
    return client;
  }

  /** A connected client; the primary's when the role's Redis is the primary. */
  redis(role: RedisRole): Promise<RedisClient> {
    const effective = this.effective(role);
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
