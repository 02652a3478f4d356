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

/**
 * The read side of the hot path: root keys and keys by hash, and APIs by id, from memory when the
 * node can trust its caches, from the primary otherwise (and from what it last knew when the
 * primary cannot be reached).
 */
export class Directory implements InvalidationTarget {
  readonly rootKeys: ReadThroughCache<RootKeyRecord>;
  readonly keys: ReadThroughCache<KeyRecord>;
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
    this.keys = new ReadThroughCache(options, isRedisUnavailable);
    this.apis = new ReadThroughCache(options, isRedisUnavailable);
    this.namespaces = new ReadThroughCache(options, isRedisUnavailable);
  }

  rootKeyByHash(hash: string): Promise<RootKeyRecord | undefined> {
    return this.rootKeys.get(hash, () => this.stores.rootKeys.findByHash(hash));
  }

  /** The key with this hash in this workspace, unless it or its API is gone. */
  async keyByHash(ws: string, hash: string): Promise<KeyRecord | undefined> {
    const key = await this.keys.get(`${ws} ${hash}`, () => this.stores.keys.findByHash(ws, hash));
    if (!key) return undefined;
    const api = await this.liveApi(ws, key.apiId);
    return api ? key : undefined;
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
        this.keys.invalidate(`${message.workspaceId} ${message.hash}`);
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
