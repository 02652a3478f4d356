import type { CacheOptions } from './readThroughCache';
import { ReadThroughCache } from './readThroughCache';
import type { InvalidationTarget } from './invalidationListener';
import { isRedisUnavailable } from '../redis/failures';
import type { ApiStore } from '../store/apiStore';
import type { KeyStore } from '../store/keyStore';
import type { Invalidation } from '../store/names';
import type { ApiRecord, KeyRecord, RootKeyRecord } from '../store/records';
import type { RootKeyStore } from '../store/rootKeyStore';
import type { NamespaceOverrides, RatelimitStore } from '../store/ratelimitStore';
import { OverrideMatcher } from '../limiter/overrides';

export interface CachedNamespace extends NamespaceOverrides {
  matcher: OverrideMatcher;
}

/** What a verification needs of a key: the record without what only management reads. */
export type VerifiableKey = Pick<
  KeyRecord,
  | 'id'
  | 'workspaceId'
  | 'apiId'
  | 'enabled'
  | 'name'
  | 'ownerId'
  | 'meta'
  | 'expires'
  | 'ratelimit'
  | 'credits'
>;

/**
 * A cached lookup by hash: the key itself, or "none in this workspace" (a short-lived negative
 * entry). Keyed by the hash alone, the workspace inside: a million entries must fit in a node's
 * memory, so a found key is stored without any wrapper.
 */
type KeyLookup = VerifiableKey | { workspaceId: string; missing: true };

/** Strings many cached records repeat (workspace and API ids, rate limits) are kept once. */
const INTERN_LIMIT = 100_000;

/**
 * The read side of the hot path: root keys and keys by hash, and APIs by id, from memory when the
 * node can trust its caches, from the primary otherwise (and from what it last knew when the
 * primary cannot be reached).
 */
export class Directory implements InvalidationTarget {
  readonly rootKeys: ReadThroughCache<RootKeyRecord>;
  readonly keys: ReadThroughCache<KeyLookup>;
  private readonly interned = new Map<string, string>();
  private readonly ratelimits = new Map<string, NonNullable<KeyRecord['ratelimit']>>();
  readonly apis: ReadThroughCache<ApiRecord>;
  readonly namespaces: ReadThroughCache<CachedNamespace>;

  constructor(
    private readonly stores: {
      rootKeys: RootKeyStore;
      keys: KeyStore;
      apis: ApiStore;
      ratelimits: RatelimitStore;
    },
    options: CacheOptions,
  ) {
    this.rootKeys = new ReadThroughCache(options, isRedisUnavailable);
    this.keys = new ReadThroughCache<KeyLookup>(
      options,
      isRedisUnavailable,
      (lookup) => 'missing' in lookup,
    );
    this.apis = new ReadThroughCache(options, isRedisUnavailable);
    this.namespaces = new ReadThroughCache(options, isRedisUnavailable);
  }

  rootKeyByHash(hash: string): Promise<RootKeyRecord | undefined> {
    return this.rootKeys.get(hash, () => this.stores.rootKeys.findByHash(hash));
  }

  /** The key with this hash in this workspace, unless it or its API is gone. */
  async keyByHash(ws: string, hash: string): Promise<VerifiableKey | undefined> {
    const load = async (): Promise<KeyLookup> => {
      const record = await this.stores.keys.findByHash(ws, hash);
      return record ? this.compact(record) : { workspaceId: this.intern(ws), missing: true };
    };
    let lookup = await this.keys.get(hash, load);
    // The same key imported into two workspaces: rare enough to read the other one uncached.
    if (lookup?.workspaceId !== ws) lookup = await load();
    if ('missing' in lookup) return undefined;
    const key = lookup;
    const api = await this.liveApi(ws, key.apiId);
    return api ? key : undefined;
  }

  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    if (this.interned.size >= INTERN_LIMIT) this.interned.clear();
    this.interned.set(text, text);
    return text;
  }

  private compact(record: KeyRecord): VerifiableKey {
    const key: VerifiableKey = {
      id: record.id,
      workspaceId: this.intern(record.workspaceId),
      apiId: this.intern(record.apiId),
      enabled: record.enabled,
    };
    if (record.name !== undefined) key.name = record.name;
    if (record.ownerId !== undefined) key.ownerId = record.ownerId;
    if (record.meta !== undefined) key.meta = record.meta;
    if (record.expires !== undefined) key.expires = record.expires;
    if (record.credits !== undefined) key.credits = record.credits;
    if (record.ratelimit !== undefined) {
      const { type, limit, refillRate, refillInterval } = record.ratelimit;
      const name = `${type} ${limit} ${refillRate} ${refillInterval}`;
      let shared = this.ratelimits.get(name);
      if (!shared) {
        if (this.ratelimits.size >= INTERN_LIMIT) this.ratelimits.clear();
        shared = Object.freeze({ ...record.ratelimit });
        this.ratelimits.set(name, shared);
      }
      key.ratelimit = shared;
    }
    return key;
  }

  /** The API unless it does not exist or is being deleted. */
  async liveApi(ws: string, apiId: string): Promise<ApiRecord | undefined> {
    const api = await this.apis.get(`${ws} ${apiId}`, () => this.stores.apis.get(ws, apiId));
    return api && api.deletedAt === undefined ? api : undefined;
  }

  /** A rate-limit namespace and its overrides, or undefined when it was never used. */
  namespace(ws: string, name: string): Promise<CachedNamespace | undefined> {
    return this.namespaces.get(`${ws} ${name}`, async () => {
      const namespace = await this.stores.ratelimits.loadNamespace(ws, name);
      return namespace && { ...namespace, matcher: new OverrideMatcher(namespace.overrides) };
    });
  }

  apply(message: Invalidation): void {
    switch (message.kind) {
      case 'root':
        this.rootKeys.invalidate(message.hash);
        break;
      case 'key':
        this.keys.invalidate(message.hash);
        break;
      case 'api':
        this.apis.invalidate(`${message.workspaceId} ${message.apiId}`);
        break;
      case 'ns':
        this.namespaces.invalidate(`${message.workspaceId} ${message.name}`);
        break;
    }
  }

  setListening(listening: boolean): void {
    this.rootKeys.reset(listening);
    this.keys.reset(listening);
    this.apis.reset(listening);
    this.namespaces.reset(listening);
  }
}
