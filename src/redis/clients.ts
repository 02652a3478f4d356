import Redis, { type RedisOptions } from 'ioredis';
import { defineScripts } from './scripts';

export type RedisRole = 'primary' | 'local';

export interface RedisClientOptions {
  /** Per-command deadline: a Redis that is slow is treated like one that is down. */
  commandTimeoutMs: number;
  connectTimeoutMs: number;
}

/**
 * A client that fails fast instead of queueing: no offline queue (a command sent while
 * disconnected fails at once rather than running late) and no per-command retries (a retried
 * bucket script could charge a request twice). Reconnection continues in the background.
 */
export function createRedis(
  url: string,
  options: RedisClientOptions,
  extra: RedisOptions = {},
): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000),
    ...extra,
  });
  defineScripts(redis);
  // Errors surface on the commands that fail; without a listener ioredis would print each one.
  redis.on('error', () => undefined);
  return redis;
}

/** Connects and waits until Redis answers, or fails with the connection error. */
export async function connectRedis(redis: Redis): Promise<void> {
  if (redis.status === 'wait') await redis.connect();
  await redis.ping();
}

export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
