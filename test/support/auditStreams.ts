import type { Cluster, Redis } from 'ioredis';
import { auditStreams as streams } from '../../src/store/auditLog';

type Client = Redis | Cluster;

/** How many entries a workspace's audit log holds, in all its streams. */
export async function auditLength(redis: Client, ws: string): Promise<number> {
  const lengths = await Promise.all(streams(ws).map((stream) => redis.xlen(stream)));
  return lengths.reduce((sum, length) => sum + length, 0);
}

/** Every entry of a workspace's audit log as Redis holds it, stream by stream. */
export async function auditRaw(redis: Client, ws: string): Promise<[string, string[]][]> {
  const all = await Promise.all(streams(ws).map((stream) => redis.xrange(stream, '-', '+')));
  return all.flat();
}
