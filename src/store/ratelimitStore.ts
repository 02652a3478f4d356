import type { ChainableCommander } from 'ioredis';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import type { Namespace, NamespaceOverrides, Override } from '../domain/overrides';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { crc32 } from '../keys/crc32';
import { AuditOutbox, outboxArgument } from './auditOutbox';
import { noSteps, type StepHook } from './faults';
import { LEGACY_NAMESPACES, LegacyLayout } from './legacyLayout';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';

const deleteOverrideOutcome = resultDecoder('deleteOverride');
const dropLegacyOutcome = resultDecoder('dropLegacyNamespace');

/** A move retries its removal of the old names this often while an old node keeps writing. */
const MAX_DROP_ATTEMPTS = 5;

/**
 * A namespace's overrides are kept in 16 shards by identifier, so that a namespace of many
 * overrides spreads over the masters of a cluster; an override's write touches its shard alone.
 */
export const OVERRIDE_SHARDS = 16;

/** The shard of a namespace's overrides that holds this identifier's. */
export function overrideShard(identifier: string): number {
  return crc32(identifier) % OVERRIDE_SHARDS;
}

const SHARDS = Array.from({ length: OVERRIDE_SHARDS }, (_, shard) => shard);

/** ZRANGEBYLEX orders members by their bytes; a page merged across shards must do the same. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Rate-limit namespaces and their overrides on the primary, each placed by its own identity
 * (docs/redis.md, "Hash tags"): a namespace by its workspace and name, its id entry by its id,
 * its overrides in 16 shards by identifier. A namespace of the previous layout (under its
 * workspace's tag) is moved to this one when a read finds it there (moveLegacyNamespace).
 */
export class RatelimitStore {
  /** Where override writes leave their audit entries for the workspace's log. */
  private readonly outbox: AuditOutbox;
  readonly legacy: LegacyLayout;

  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every override write appends to. */
    auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
    /** Called between the steps of a write across slots: where the tests kill a node. */
    private readonly step: StepHook = noSteps,
  ) {
    this.outbox = new AuditOutbox(redis, auditMaxEntries);
    this.legacy = new LegacyLayout(redis, LEGACY_NAMESPACES);
  }

  /**
   * The namespace's id, creating the namespace on first use. The record (by name) and the id's
   * entry are in two slots: the fresh id's entry is written first, and only the record decides
   * which id a name has, so a node that dies between the two, or loses a race for the name,
   * leaves an entry no read believes (namespaceById).
   */
  async ensureNamespace(ws: string, name: string, newId: string, now: number): Promise<Namespace> {
    const found = await this.namespaceByName(ws, name);
    if (found) {
      // This node may remember the name as absent: its caller would not have come here otherwise.
      this.announce({ kind: 'ns', workspaceId: ws, name });
      return found;
    }
    const entry = names.namespaceName(ws, newId);
    await this.redis.set(entry, name, 'NX');
    this.step('ensureNamespace:idWritten');
    const id = await this.redis.ensureNamespaceV2(names.namespace(ws, name), newId, name, now);
    // The fresh id was never answered to anyone: its entry can only mislead.
    if (id !== newId) await this.redis.del(entry);
    // Nothing is published: other nodes may go on believing the namespace unused until their
    // entry expires, which only costs them an idempotent ensureNamespace of their own.
    this.announce({ kind: 'ns', workspaceId: ws, name });
    return { id, name };
  }

  async namespaceByName(ws: string, name: string): Promise<Namespace | undefined> {
    const id = await this.redis.hget(names.namespace(ws, name), 'id');
    if (id !== null) return { id, name };
    if (!(await this.legacy.mayRemain())) return undefined;
    return this.moveLegacyNamespace(ws, name);
  }

  /**
   * The namespace with this id. Its entry counts only while the namespace's record names the
   * same id: an entry of a creation that died before its record, or lost the name to another
   * id, reads as not found. Such an entry is not deleted here, since it may be a creation still
   * under way.
   */
  async namespaceById(ws: string, id: string): Promise<Namespace | undefined> {
    if (!isStorableId(id)) return undefined;
    const name = await this.redis.get(names.namespaceName(ws, id));
    if (name !== null && (await this.redis.hget(names.namespace(ws, name), 'id')) === id) {
      return { id, name };
    }
    if (!(await this.legacy.mayRemain())) return undefined;
    const legacyName = await this.redis.get(legacy.namespaceName(ws, id));
    if (legacyName === null) return undefined;
    const moved = await this.moveLegacyNamespace(ws, legacyName);
    return moved?.id === id ? moved : undefined;
  }

  /** The namespace and every override of it, or undefined when it was never used. */
  async loadNamespace(ws: string, name: string): Promise<NamespaceOverrides | undefined> {
    const namespace = await this.namespaceByName(ws, name);
    if (!namespace) return undefined;
    const shards = await Promise.all(
      SHARDS.map((shard) => this.redis.hgetall(names.overrides(namespace.id, shard))),
    );
    return {
      ...namespace,
      overrides: shards.flatMap((all) =>
        Object.entries(all).map(([identifier, json]) => parseOverride(identifier, json)),
      ),
    };
  }

  /**
   * Creates or replaces; the id of an existing override is kept. Undefined: no such namespace.
   * The namespace is checked before the script, in its own slot: namespaces are never deleted,
   * so one that exists still does when the script runs.
   */
  async setOverride(
    ws: string,
    namespace: Namespace,
    override: Omit<Override, 'id'>,
    newId: string,
    audit: AuditEntry,
  ): Promise<string | undefined> {
    if ((await this.redis.hget(names.namespace(ws, namespace.name), 'id')) !== namespace.id) {
      return undefined;
    }
    const { identifier, ...rest } = override;
    const shard = overrideShard(identifier);
    const outbox = names.auditOutbox(names.overrideTag(namespace.id, shard));
    await this.outbox.register(outbox);
    const id = await this.redis.setOverrideV3(
      names.overrides(namespace.id, shard),
      names.overrideOrder(namespace.id, shard),
      outbox,
      identifier,
      newId,
      JSON.stringify(rest),
      names.invalidationChannel,
      invalidation.namespace(ws, namespace.name),
      outboxArgument(ws, audit),
    );
    await this.outbox.relayAfterWrite(outbox);
    this.announce({ kind: 'ns', workspaceId: ws, name: namespace.name });
    return id;
  }

  async getOverride(
    _ws: string,
    namespace: Namespace,
    identifier: string,
  ): Promise<Override | undefined> {
    const shard = overrideShard(identifier);
    const json = await this.redis.hget(names.overrides(namespace.id, shard), identifier);
    return json === null ? undefined : parseOverride(identifier, json);
  }

  /** False when there was no such override (and no entry appended). */
  async deleteOverride(
    ws: string,
    namespace: Namespace,
    identifier: string,
    audit: AuditEntry,
  ): Promise<boolean> {
    if (await this.legacy.mayRemain()) {
      // A move of this namespace that a node left half done copies what the old layout still
      // holds when it is run again (keyward migrate): without this, the deleted override would
      // come back with it.
      execResults(
        await this.redis
          .multi()
          .hdel(legacy.overrides(ws, namespace.id), identifier)
          .zrem(legacy.overrideOrder(ws, namespace.id), identifier)
          .exec(),
      );
    }
    const shard = overrideShard(identifier);
    const outbox = names.auditOutbox(names.overrideTag(namespace.id, shard));
    await this.outbox.register(outbox);
    const result = await this.redis.deleteOverrideV2(
      names.overrides(namespace.id, shard),
      names.overrideOrder(namespace.id, shard),
      outbox,
      identifier,
      names.invalidationChannel,
      invalidation.namespace(ws, namespace.name),
      outboxArgument(ws, audit),
    );
    if (deleteOverrideOutcome(result) !== 'deleted') return false;
    await this.outbox.relayAfterWrite(outbox);
    this.announce({ kind: 'ns', workspaceId: ws, name: namespace.name });
    return true;
  }

  /**
   * A page of overrides ordered by identifier (byte order), after `after`, with the exact total:
   * a range of each shard, read in a MULTI of its own, merged.
   */
  async listOverrides(
    _ws: string,
    namespace: Namespace,
    options: { limit: number; after?: string },
  ): Promise<{ overrides: Override[]; total: number; more: boolean }> {
    const min = options.after === undefined ? '-' : `(${options.after}`;
    const reads = await Promise.all(
      SHARDS.map(async (shard) => {
        const order = names.overrideOrder(namespace.id, shard);
        const [found, size] = execResults(
          await this.redis
            .multi()
            // One more than asked for, to tell whether another page follows.
            .zrangebylex(order, min, '+', 'LIMIT', 0, options.limit + 1)
            .zcard(order)
            .exec(),
        ) as [string[], number];
        return { found, size };
      }),
    );
    const total = reads.reduce((sum, { size }) => sum + size, 0);
    const merged = reads.flatMap(({ found }) => found).sort(byBytes);
    const identifiers = merged.slice(0, options.limit);
    const byShard = new Map<number, string[]>();
    for (const identifier of identifiers) {
      const shard = overrideShard(identifier);
      byShard.set(shard, [...(byShard.get(shard) ?? []), identifier]);
    }
    const values = new Map<string, string>();
    await Promise.all(
      [...byShard].map(async ([shard, wanted]) => {
        const found = await this.redis.hmget(names.overrides(namespace.id, shard), ...wanted);
        wanted.forEach((identifier, i) => {
          const json = found[i];
          if (json) values.set(identifier, json);
        });
      }),
    );
    const overrides: Override[] = [];
    for (const identifier of identifiers) {
      const json = values.get(identifier);
      if (json) overrides.push(parseOverride(identifier, json));
    }
    return { overrides, total, more: merged.length > options.limit };
  }

  /**
   * Moves a namespace of the previous layout (its record, id entry and overrides under the
   * workspace's tag) to this one, in an order whose every prefix is safe (docs/redis.md,
   * "Upgrading the layout"): the id's entry, then the overrides into the id's shards (never over
   * one written since), then the record, which makes it visible with all of them, then the old
   * names go, unless a node of the previous release changed an override since they were read:
   * then what it changed is copied too, and the removal tried again. Run twice, or interrupted
   * and run again, it ends the same. Undefined when there is no such namespace in the old layout.
   */
  async moveLegacyNamespace(ws: string, name: string): Promise<Namespace | undefined> {
    const record = await this.redis.hgetall(legacy.namespace(ws, name));
    const legacyId = record.id;
    if (legacyId === undefined) return undefined;
    let copied = await this.redis.hgetall(legacy.overrides(ws, legacyId));
    await this.redis.set(names.namespaceName(ws, legacyId), name, 'NX');
    await this.copyOverrides(legacyId, copied);
    this.step('moveNamespace:overridesCopied');
    const id = await this.redis.ensureNamespaceV2(
      names.namespace(ws, name),
      legacyId,
      name,
      record.createdAt ?? String(Date.now()),
    );
    if (id !== legacyId) {
      // A node of this release created the name first (an old node had made it again after a
      // move): its id stays, and gets the old overrides it has none of.
      await this.copyOverrides(id, copied);
      await this.redis.del(names.namespaceName(ws, legacyId));
      await this.tell(ws, name);
    }
    this.step('moveNamespace:recorded');
    for (let attempt = 1; ; attempt++) {
      const dropped = await this.redis.dropLegacyNamespaceV1(
        legacy.namespace(ws, name),
        legacy.namespaceName(ws, legacyId),
        legacy.overrides(ws, legacyId),
        legacy.overrideOrder(ws, legacyId),
        JSON.stringify(copied),
      );
      // A namespace an old node keeps writing to stays in both layouts (this one is read, since
      // its record exists) until a later move, keyward migrate's, finds it quiet.
      if (dropLegacyOutcome(dropped) === 'dropped' || attempt === MAX_DROP_ATTEMPTS) break;
      const now = await this.redis.hgetall(legacy.overrides(ws, legacyId));
      await this.copyChanges(id, copied, now, id === legacyId);
      copied = now;
      await this.tell(ws, name);
    }
    return { id, name };
  }

  /**
   * Applies to a namespace's shards what a node of the previous release changed in its old
   * overrides hash between `before` and `after`: what it wrote is newer than the copy; what it
   * deleted goes too, from the namespace it was copied into (`ownCopy`) only, since another id's
   * override of the same identifier is its own.
   */
  private async copyChanges(
    namespaceId: string,
    before: Record<string, string>,
    after: Record<string, string>,
    ownCopy: boolean,
  ): Promise<void> {
    const writes = new Map<number, ChainableCommander>();
    const multi = (identifier: string): [ChainableCommander, number] => {
      const shard = overrideShard(identifier);
      let found = writes.get(shard);
      if (!found) writes.set(shard, (found = this.redis.multi()));
      return [found, shard];
    };
    for (const [identifier, json] of Object.entries(after)) {
      if (before[identifier] === json) continue;
      const [write, shard] = multi(identifier);
      write
        .hset(names.overrides(namespaceId, shard), identifier, json)
        .zadd(names.overrideOrder(namespaceId, shard), 0, identifier);
    }
    if (ownCopy) {
      for (const identifier of Object.keys(before)) {
        if (identifier in after) continue;
        const [write, shard] = multi(identifier);
        write
          .hdel(names.overrides(namespaceId, shard), identifier)
          .zrem(names.overrideOrder(namespaceId, shard), identifier);
      }
    }
    await Promise.all([...writes.values()].map(async (write) => execResults(await write.exec())));
  }

  /** Every node's cached copy of the namespace is stale: a move changed its overrides. */
  private async tell(ws: string, name: string): Promise<void> {
    await this.redis.publish(names.invalidationChannel, invalidation.namespace(ws, name));
    this.announce({ kind: 'ns', workspaceId: ws, name });
  }

  /** Adds overrides to a namespace's shards, leaving any identifier a shard already has. */
  private async copyOverrides(
    namespaceId: string,
    overrides: Record<string, string>,
  ): Promise<void> {
    const byShard = new Map<number, [string, string][]>();
    for (const entry of Object.entries(overrides)) {
      const shard = overrideShard(entry[0]);
      byShard.set(shard, [...(byShard.get(shard) ?? []), entry]);
    }
    await Promise.all(
      [...byShard].map(async ([shard, entries]) => {
        const multi = this.redis.multi();
        for (const [identifier, json] of entries) {
          multi
            .hsetnx(names.overrides(namespaceId, shard), identifier, json)
            .zadd(names.overrideOrder(namespaceId, shard), 0, identifier);
        }
        execResults(await multi.exec());
      }),
    );
  }
}

function parseOverride(identifier: string, json: string): Override {
  const parsed = JSON.parse(json) as Omit<Override, 'identifier'>;
  return { ...parsed, identifier };
}
