import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { invalidation, names } from './names';
import type { RootKeyRecord } from '../domain/records';
import { rootKeyFromHash } from './records';

/**
 * Root keys live under their hash (`keyward:rootkey:{<sha256>}`), since a request presents the key
 * before anyone knows its workspace; the workspace keeps an id → hash index for listing and
 * revoking. The two are in different slots, so they are written in an order that is safe to
 * interrupt: the index entry first (an entry without a record authenticates nothing), then the
 * record; revocation in the reverse order.
 */
export class RootKeyStore {
  constructor(private readonly redis: Redis) {}

  async workspaceExists(ws: string): Promise<boolean> {
    return (await this.redis.exists(names.workspace(ws))) === 1;
  }

  async createWorkspace(ws: string, createdAt: number): Promise<void> {
    await this.redis.hset(names.workspace(ws), { id: ws, createdAt: String(createdAt) });
  }

  async create(record: RootKeyRecord, hash: string): Promise<void> {
    const ws = record.workspaceId;
    await this.redis.hset(names.rootKeyIds(ws), record.id, hash);
    const fields: Record<string, string> = {
      id: record.id,
      workspaceId: ws,
      permissions: record.permissions.join(' '),
      createdAt: String(record.createdAt),
    };
    if (record.name !== undefined) fields.name = record.name;
    execResults(
      await this.redis
        .multi()
        .hset(names.rootKey(hash), fields)
        .publish(names.invalidationChannel, invalidation.rootKey(hash))
        .exec(),
    );
  }

  async findByHash(hash: string): Promise<RootKeyRecord | undefined> {
    return rootKeyFromHash(await this.redis.hgetall(names.rootKey(hash)));
  }

  async list(ws: string): Promise<RootKeyRecord[]> {
    const hashes = Object.values(await this.redis.hgetall(names.rootKeyIds(ws)));
    const records = await Promise.all(hashes.map((hash) => this.findByHash(hash)));
    return records.filter((record): record is RootKeyRecord => record !== undefined);
  }

  /** False when the workspace has no such root key. */
  async revoke(ws: string, rootKeyId: string): Promise<boolean> {
    const hash = await this.redis.hget(names.rootKeyIds(ws), rootKeyId);
    if (hash === null) return false;
    execResults(
      await this.redis
        .multi()
        .del(names.rootKey(hash))
        .publish(names.invalidationChannel, invalidation.rootKey(hash))
        .exec(),
    );
    await this.redis.hdel(names.rootKeyIds(ws), rootKeyId);
    return true;
  }
}
