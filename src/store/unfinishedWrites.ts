import { randomUUID } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/clients';
import { crc32 } from '../keys/crc32';
import { names } from './names';

/**
 * The journal of writes that span slots (docs/redis.md, "Writes across slots"). A write enters
 * it before its first step and leaves it after its last; what a node that died in between left
 * there, a repair finds and finishes or undoes. The journal is spread over shards so that no one
 * slot takes every management write; an entry's shard follows from its token.
 */
export const UNFINISHED_SHARDS = 16;

/** A key as the steps of a multi-slot write need it: where its record and index entries are. */
export interface KeyPlacement {
  keyId: string;
  hash: string;
  apiId: string;
  ownerId?: string;
}

export type UnfinishedWrite =
  | {
      op: 'createKeys';
      ws: string;
      keys: KeyPlacement[];
      /**
       * Set once every key is prepared (pending record, hash entry, listing entries): from
       * then on a repair commits them all; before, it undoes them all.
       */
      committing?: boolean;
      /** Each key's audit outbox argument, for a repair that commits: the entries go with it. */
      audit?: string[];
    }
  | { op: 'deleteKey'; ws: string; key: KeyPlacement }
  /** `owners`: the owner indexes the key leaves and joins, when its owner changes. */
  | { op: 'updateKey'; ws: string; keyId: string; apiId: string; owners: string[] }
  | {
      op: 'reroll';
      ws: string;
      oldKeyId: string;
      key: KeyPlacement;
      /** The new key's audit outbox argument, for a repair that commits it. */
      audit: string;
    }
  /**
   * An identity's creation (src/store/identityStore.ts): its point of no return is the claim of
   * its externalId entry, so a repair commits it when that entry names it and undoes it
   * otherwise. The audit entry travels in the pending record.
   */
  | { op: 'createIdentity'; ws: string; identityId: string; externalId: string }
  /** An identity's deletion: once its record is a tombstone, a repair frees its entries. */
  | { op: 'deleteIdentity'; ws: string; identityId: string; externalId: string }
  /**
   * An identity's rename (src/store/identityStore.ts, `rename`): its point of no return is the
   * claim of the new name's entry, so a repair finishes it (with this audit entry and these
   * fields) when that entry names it and the record is still marked, and undoes it otherwise.
   */
  | {
      op: 'renameIdentity';
      ws: string;
      identityId: string;
      from: string;
      to: string;
      /** The write's audit outbox argument. */
      audit: string;
      set: [string, string][];
      del: string[];
    }
  /**
   * An API's creation (src/store/apiStore.ts): its record, with its audit entry, is its point of
   * no return, so a repair adds the index entry when the record is there and does nothing else.
   */
  | { op: 'createApi'; ws: string; apiId: string }
  /** An API's deletion: once its record is marked deleted, a repair takes its index entry. */
  | { op: 'deleteApi'; ws: string; apiId: string }
  /**
   * A permission's or a role's creation (src/store/rbacStore.ts): the claim of its name in the
   * workspace's index is the point of no return, so a repair commits it when the index names it
   * and undoes it otherwise. The audit entry travels in the pending record.
   */
  | { op: 'createRbac'; kind: RbacKind; ws: string; id: string; name: string }
  /**
   * Its deletion: once its name is released (the point of no return), a repair tombstones the
   * record and appends `audit`, the deletion's outbox argument.
   */
  | { op: 'deleteRbac'; kind: RbacKind; ws: string; id: string; name: string; audit: string };

export type RbacKind = 'permission' | 'role';

/** A journal entry as stored: the write, and the token that makes it unique. */
export interface Ticket {
  readonly member: string;
  readonly shard: number;
}

interface Stored {
  token: string;
  write: UnfinishedWrite;
}

export class UnfinishedWrites {
  constructor(
    private readonly redis: Redis,
    /** Wall-clock time in unix ms: entries are compared across nodes. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a write before its first step. */
  async begin(write: UnfinishedWrite): Promise<Ticket> {
    const token = randomUUID();
    const ticket = { member: JSON.stringify({ token, write }), shard: shardOf(token) };
    await this.redis.zadd(names.unfinished(ticket.shard), this.now(), ticket.member);
    return ticket;
  }

  /** Replaces the entry with the write at a later phase (keeps its time), in one step. */
  async advance(ticket: Ticket, write: UnfinishedWrite): Promise<Ticket> {
    const { token } = JSON.parse(ticket.member) as Stored;
    const next = { member: JSON.stringify({ token, write }), shard: ticket.shard };
    const key = names.unfinished(ticket.shard);
    const replies = await this.redis
      .multi()
      .zscore(key, ticket.member)
      .zrem(key, ticket.member)
      .exec();
    const score = replies?.[0]?.[1];
    await this.redis.zadd(key, typeof score === 'string' ? score : this.now(), next.member);
    return next;
  }

  /** The write's last step is done. */
  async end(ticket: Ticket): Promise<void> {
    await this.redis.zrem(names.unfinished(ticket.shard), ticket.member);
  }

  /** Entries begun before `olderThan` (unix ms), every shard read at once. */
  async *stale(olderThan: number): AsyncGenerator<{ ticket: Ticket; write: UnfinishedWrite }> {
    const shards = await Promise.all(
      Array.from({ length: UNFINISHED_SHARDS }, (_, shard) =>
        this.redis.zrangebyscore(names.unfinished(shard), '-inf', olderThan, 'LIMIT', 0, 500),
      ),
    );
    for (const [shard, members] of shards.entries()) {
      for (const member of members) {
        const parsed = parseStored(member);
        // Not ours to repair (a future release's entry, or garbage): left to whoever wrote it.
        if (parsed) yield { ticket: { member, shard }, write: parsed.write };
      }
    }
  }
}

function shardOf(token: string): number {
  return crc32(token) % UNFINISHED_SHARDS;
}

function parseStored(member: string): Stored | undefined {
  try {
    const parsed = JSON.parse(member) as Partial<Stored>;
    if (typeof parsed.token !== 'string' || typeof parsed.write?.op !== 'string') return undefined;
    return parsed as Stored;
  } catch {
    return undefined;
  }
}
