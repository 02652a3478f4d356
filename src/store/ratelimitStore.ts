import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import type { Namespace, NamespaceOverrides, Override } from '../domain/overrides';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { auditArgument } from './auditLog';
import { invalidation, isStorableId, names, type Announce } from './names';

const setOverrideOutcome = resultDecoder('setOverride');
const deleteOverrideOutcome = resultDecoder('deleteOverride');

/** Rate-limit namespaces and their overrides on the primary, all under the workspace's tag. */
export class RatelimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every override write appends to. */
    private readonly auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {}

  /** The namespace's id, creating the namespace on first use. */
  async ensureNamespace(ws: string, name: string, newId: string, now: number): Promise<Namespace> {
    const id = await this.redis.ensureNamespaceV1(
      names.namespace(ws, name),
      names.namespaceName(ws, newId),
      newId,
      name,
      now,
    );
    // Nothing is published: other nodes may go on believing the namespace unused until their
    // entry expires, which only costs them an idempotent ensureNamespace of their own.
    this.announce({ kind: 'ns', workspaceId: ws, name });
    return { id, name };
  }

  async namespaceByName(ws: string, name: string): Promise<Namespace | undefined> {
    const id = await this.redis.hget(names.namespace(ws, name), 'id');
    return id === null ? undefined : { id, name };
  }

  async namespaceById(ws: string, id: string): Promise<Namespace | undefined> {
    if (!isStorableId(id)) return undefined;
    const name = await this.redis.get(names.namespaceName(ws, id));
    return name === null ? undefined : { id, name };
  }

  /** The namespace and every override of it, or undefined when it was never used. */
  async loadNamespace(ws: string, name: string): Promise<NamespaceOverrides | undefined> {
    const namespace = await this.namespaceByName(ws, name);
    if (!namespace) return undefined;
    const all = await this.redis.hgetall(names.overrides(ws, namespace.id));
    return {
      ...namespace,
      overrides: Object.entries(all).map(([identifier, json]) => parseOverride(identifier, json)),
    };
  }

  /** Creates or replaces; the id of an existing override is kept. Undefined: no such namespace. */
  async setOverride(
    ws: string,
    namespace: Namespace,
    override: Omit<Override, 'id'>,
    newId: string,
    audit: AuditEntry,
  ): Promise<string | undefined> {
    const { identifier, ...rest } = override;
    const id = await this.redis.setOverrideV2(
      names.overrides(ws, namespace.id),
      names.overrideOrder(ws, namespace.id),
      names.namespace(ws, namespace.name),
      names.audit(ws),
      identifier,
      newId,
      JSON.stringify(rest),
      names.invalidationChannel,
      invalidation.namespace(ws, namespace.name),
      auditArgument(audit, this.auditMaxEntries),
    );
    // Any other answer is the override's id.
    if (setOverrideOutcome(id) === 'namespace_not_found') return undefined;
    this.announce({ kind: 'ns', workspaceId: ws, name: namespace.name });
    return id;
  }

  async getOverride(
    ws: string,
    namespace: Namespace,
    identifier: string,
  ): Promise<Override | undefined> {
    const json = await this.redis.hget(names.overrides(ws, namespace.id), identifier);
    return json === null ? undefined : parseOverride(identifier, json);
  }

  /** False when there was no such override (and no entry appended). */
  async deleteOverride(
    ws: string,
    namespace: Namespace,
    identifier: string,
    audit: AuditEntry,
  ): Promise<boolean> {
    const result = await this.redis.deleteOverrideV1(
      names.overrides(ws, namespace.id),
      names.overrideOrder(ws, namespace.id),
      names.audit(ws),
      identifier,
      names.invalidationChannel,
      invalidation.namespace(ws, namespace.name),
      auditArgument(audit, this.auditMaxEntries),
    );
    if (deleteOverrideOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'ns', workspaceId: ws, name: namespace.name });
    return true;
  }

  /** A page of overrides ordered by identifier, after `after`, with the exact total. */
  async listOverrides(
    ws: string,
    namespace: Namespace,
    options: { limit: number; after?: string },
  ): Promise<{ overrides: Override[]; total: number; more: boolean }> {
    const order = names.overrideOrder(ws, namespace.id);
    const min = options.after === undefined ? '-' : `(${options.after}`;
    const [found, total] = execResults(
      await this.redis
        .multi()
        .zrangebylex(order, min, '+', 'LIMIT', 0, options.limit + 1)
        .zcard(order)
        .exec(),
    ) as [string[], number];
    const identifiers = found.slice(0, options.limit);
    const values =
      identifiers.length === 0
        ? []
        : await this.redis.hmget(names.overrides(ws, namespace.id), ...identifiers);
    const overrides: Override[] = [];
    identifiers.forEach((identifier, i) => {
      const json = values[i];
      if (json) overrides.push(parseOverride(identifier, json));
    });
    return { overrides, total, more: found.length > options.limit };
  }
}

function parseOverride(identifier: string, json: string): Override {
  const parsed = JSON.parse(json) as Omit<Override, 'identifier'>;
  return { ...parsed, identifier };
}
