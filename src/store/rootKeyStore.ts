import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { AuditOutbox, appendToOutbox, outboxArgument } from './auditOutbox';
import { invalidation, names } from './names';
import type { RootKeyRecord } from '../domain/records';
import { rootKeyFromHash } from './records';

/**
 * Root keys live under their hash (`keyward:rootkey:{<sha256>}`), since a request presents the key
 * before anyone knows its workspace; the workspace keeps an id → hash index for listing and
 * revoking. The two are in different slots, so they are written in an order that is safe to
 * interrupt: the index entry first (an entry without a record authenticates nothing), then the
 * record; revocation in the reverse order. The record's step is the one that counts, so it appends
 * the audit entry, to the outbox under the root key's tag (src/store/auditOutbox.ts).
 */
export class RootKeyStore {
  private readonly outbox: AuditOutbox;

  constructor(
    private readonly redis: Redis,
    auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {
    this.outbox = new AuditOutbox(redis, auditMaxEntries);
  }

  async workspaceExists(ws: string): Promise<boolean> {
    return (await this.redis.exists(names.workspace(ws))) === 1;
  }

  async createWorkspace(ws: string, createdAt: number): Promise<void> {
    await this.redis.hset(names.workspace(ws), { id: ws, createdAt: String(createdAt) });
  }

  async create(record: RootKeyRecord, hash: string, audit: AuditEntry): Promise<void> {
    const ws = record.workspaceId;
    await this.redis.hset(names.rootKeyIds(ws), record.id, hash);
    const fields: Record<string, string> = {
      id: record.id,
      workspaceId: ws,
      permissions: record.permissions.join(' '),
      createdAt: String(record.createdAt),
    };
    if (record.name !== undefined) fields.name = record.name;
    const outbox = names.auditOutbox(hash);
    await this.outbox.register(outbox);
    const multi = this.redis.multi().hset(names.rootKey(hash), fields);
    execResults(
      await appendToOutbox(multi, outbox, ws, audit)
        .publish(names.invalidationChannel, invalidation.rootKey(hash))
        .exec(),
    );
    await this.outbox.relayAfterWrite(outbox);
  }

  async findByHash(hash: string): Promise<RootKeyRecord | undefined> {
    return rootKeyFromHash(await this.redis.hgetall(names.rootKey(hash)));
  }

  async list(ws: string): Promise<RootKeyRecord[]> {
    const hashes = Object.values(await this.redis.hgetall(names.rootKeyIds(ws)));
    const records = await Promise.all(hashes.map((hash) => this.findByHash(hash)));
    return records.filter((record): record is RootKeyRecord => record !== undefined);
  }

  /**
   * False when the workspace has no such root key. A revocation interrupted after the record's
   * step left only the index entry: run again, it deletes that and appends no second entry.
   */
  async revoke(ws: string, rootKeyId: string, audit: AuditEntry): Promise<boolean> {
    const hash = await this.redis.hget(names.rootKeyIds(ws), rootKeyId);
    if (hash === null) return false;
    const outbox = names.auditOutbox(hash);
    await this.outbox.register(outbox);
    await this.redis.revokeRootKeyV1(
      names.rootKey(hash),
      outbox,
      names.invalidationChannel,
      invalidation.rootKey(hash),
      outboxArgument(ws, audit),
    );
    // Also when the record was gone: then the entry waiting may be the interrupted revocation's.
    await this.outbox.relayAfterWrite(outbox);
    await this.redis.hdel(names.rootKeyIds(ws), rootKeyId);
    return true;
  }
}
