import Redis from 'ioredis';

/**
 * A plain ioredis client for the benchmark's own processes (comparison servers, the round-trip
 * floor): ioredis defaults, not keyward's client policy, so the baselines stay bare.
 * `unix:///path` names a unix socket, anything else is a redis:// URL.
 */
export function connectRedis(url: string): Redis {
  const socket = /^unix:\/\/(\/.+)$/.exec(url)?.[1];
  const redis = socket
    ? new Redis({ path: socket, maxRetriesPerRequest: 1 })
    : new Redis(url, { maxRetriesPerRequest: 1 });
  // A failed call shows up where it is awaited; without a listener ioredis prints every error.
  redis.on('error', () => undefined);
  return redis;
}

/** Calls per command since the last CONFIG RESETSTAT (our own INFO and CONFIG left out). */
export async function commandCounts(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),.*failed_calls=(\d+)/gm)) {
    const name = match[1] as string;
    if (/^(info|config)/.test(name)) continue;
    counts[name] = Number(match[2]);
    if (Number(match[3]) > 0) counts[`${name} FAILED`] = Number(match[3]);
  }
  return counts;
}
