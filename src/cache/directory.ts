import type { CacheEntry, CacheOptions } from './readThroughCache';
import { NOT_CACHED, ReadThroughCache } from './readThroughCache';
import type { InvalidationTarget } from './invalidationListener';
import { isRedisUnavailable } from '../redis/failures';
import type { ApiStore } from '../store/apiStore';
import type { KeyStore } from '../store/keyStore';
import type { Invalidation } from '../store/names';
import { VERDICT_DETAIL_NAMES, type KeyRecord, type VerifiableKey } from '../domain/key';
import type { NamespaceOverrides } from '../domain/overrides';
import type { ApiRecord, RootKeyRecord } from '../domain/records';
import type { RootKeyStore } from '../store/rootKeyStore';
import type { RatelimitStore } from '../store/ratelimitStore';
import type { RbacCatalogue, RbacStore } from '../store/rbacStore';
import type { IdentityRecord } from '../domain/identity';
import type { IdentityStore } from '../store/identityStore';
import { OverrideMatcher } from '../limiter/overrides';

export interface CachedNamespace extends NamespaceOverrides {
  matcher: OverrideMatcher;
}

type CachedDetails = Pick<KeyRecord, (typeof CACHED_DETAIL_NAMES)[number]>;

/**
 * A cached key, which is also its own cache entry (`value`, `generation`, `until`). A node holds
 * up to a million of these, so the layout is chosen for size: one fixed shape for all (every
 * field assigned in the constructor), the common fields inline, the optional ones in a second
 * object only when a key has any, and no separate entry object. For a key without optional
 * fields that is about 90 bytes instead of about 145 (docs/performance.md). The optional fields'
 * getters are made from the key's one definition (src/domain/key.ts), below the class.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class CachedKey implements CacheEntry<KeyLookup> {
  readonly id: string;
  readonly workspaceId: string;
  readonly apiId: string;
  readonly enabled: boolean;
  readonly ratelimit: KeyRecord['ratelimit'];
  readonly details: Readonly<CachedDetails> | undefined;
  generation = 0;
  until = 0;

  constructor(
    record: KeyRecord,
    workspaceId: string,
    apiId: string,
    ratelimit: KeyRecord['ratelimit'],
  ) {
    this.id = record.id;
    this.workspaceId = workspaceId;
    this.apiId = apiId;
    this.enabled = record.enabled;
    this.ratelimit = ratelimit;
    let details: CachedDetails | undefined;
    for (const name of CACHED_DETAIL_NAMES) {
      if (record[name] === undefined) continue;
      details ??= {};
      (details as Record<string, unknown>)[name] = record[name];
    }
    this.details = details;
  }

  get credits(): KeyRecord['credits'] {
    return this.details?.credits;
  }
  get permissionIds(): KeyRecord['permissionIds'] {
    return this.details?.permissionIds;
  }
  get roleIds(): KeyRecord['roleIds'] {
    return this.details?.roleIds;
  }
  get ratelimits(): KeyRecord['ratelimits'] {
    return this.details?.ratelimits;
  }
  get identityId(): KeyRecord['identityId'] {
    return this.details?.identityId;
  }
  get value(): this {
    return this;
  }
}

// The getters of VerifiableKey's details are defined on the prototype just below.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
interface CachedKey extends VerifiableKey {}

const CACHED_DETAIL_NAMES = [
  ...VERDICT_DETAIL_NAMES,
  'credits',
  'permissionIds',
  'roleIds',
  'ratelimits',
  'identityId',
] as const;

for (const name of VERDICT_DETAIL_NAMES) {
  Object.defineProperty(CachedKey.prototype, name, {
    get(this: CachedKey) {
      return this.details?.[name];
    },
  });
}

/**
 * A cached lookup by hash: the key itself, or "none in this workspace" (a short-lived negative
 * entry). Keyed by the hash alone, the workspace inside.
 */
type KeyLookup = VerifiableKey | { workspaceId: string; missing: true };

/** A found key is stamped and kept as its own entry; "none" is wrapped as usual. */
function keyEntry(
  lookup: KeyLookup | undefined,
  generation: number,
  until: number,
): CacheEntry<KeyLookup> {
  if (lookup instanceof CachedKey) {
    lookup.generation = generation;
    lookup.until = until;
    return lookup;
  }
  return { value: lookup, generation, until };
}

const EMPTY_CATALOGUE: RbacCatalogue = { permissions: new Map(), roles: new Map() };

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
  /** Each workspace's permissions and roles, by id: what a key's ids resolve to. */
  readonly rbac: ReadThroughCache<RbacCatalogue>;
  /** Identities by workspace and id: what a key linked to one shares with its other keys. */
  readonly identities: ReadThroughCache<IdentityRecord>;

  constructor(
    private readonly stores: {
      rootKeys: RootKeyStore;
      keys: KeyStore;
      apis: ApiStore;
      ratelimits: RatelimitStore;
      rbac: RbacStore;
      identities: IdentityStore;
    },
    options: CacheOptions,
  ) {
    this.rootKeys = new ReadThroughCache(options, isRedisUnavailable);
    this.keys = new ReadThroughCache<KeyLookup>(
      options,
      isRedisUnavailable,
      (lookup) => 'missing' in lookup,
      keyEntry,
    );
    this.apis = new ReadThroughCache(options, isRedisUnavailable);
    this.namespaces = new ReadThroughCache(options, isRedisUnavailable);
    this.rbac = new ReadThroughCache(options, isRedisUnavailable);
    this.identities = new ReadThroughCache(options, isRedisUnavailable);
  }

  rootKeyByHash(hash: string): Promise<RootKeyRecord | undefined> | RootKeyRecord | undefined {
    return this.rootKeys.getNow(hash, () => this.stores.rootKeys.findByHash(hash));
  }

  /**
   * The key with this hash in this workspace, unless it or its API is gone: the answer itself when
   * memory holds both (the warm verification path takes no promise), else a promise of it.
   */
  keyByHash(
    ws: string,
    hash: string,
  ): Promise<VerifiableKey | undefined> | VerifiableKey | undefined {
    const cached = this.keys.peek(hash);
    if (cached === NOT_CACHED) return this.loadKeyByHash(ws, hash);
    if (cached === undefined || cached.workspaceId !== ws) return this.liveKey(ws, hash);
    if ('missing' in cached) return undefined;
    const api = this.apis.peek(`${ws} ${cached.apiId}`);
    if (api === NOT_CACHED) {
      return this.liveApi(ws, cached.apiId).then((live) => (live ? cached : undefined));
    }
    return api && api.deletedAt === undefined ? cached : undefined;
  }

  private keyLoader(ws: string, hash: string): () => Promise<KeyLookup> {
    return async () => {
      const record = await this.stores.keys.findByHash(ws, hash);
      return record ? this.compact(record) : { workspaceId: this.intern(ws), missing: true };
    };
  }

  private async loadKeyByHash(ws: string, hash: string): Promise<VerifiableKey | undefined> {
    const lookup = await this.keys.get(hash, this.keyLoader(ws, hash));
    // The same key imported into two workspaces: rare enough to read the other one uncached.
    if (lookup?.workspaceId !== ws) return this.liveKey(ws, hash);
    if ('missing' in lookup) return undefined;
    return (await this.liveApi(ws, lookup.apiId)) ? lookup : undefined;
  }

  /** The key read past the cache, unless it or its API is gone. */
  private async liveKey(ws: string, hash: string): Promise<VerifiableKey | undefined> {
    const lookup = await this.keyLoader(ws, hash)();
    if ('missing' in lookup) return undefined;
    return (await this.liveApi(ws, lookup.apiId)) ? lookup : undefined;
  }

  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    if (this.interned.size >= INTERN_LIMIT) this.interned.clear();
    this.interned.set(text, text);
    return text;
  }

  private compact(record: KeyRecord): VerifiableKey {
    let ratelimit = record.ratelimit;
    if (ratelimit !== undefined) {
      const { type, limit, refillRate, refillInterval } = ratelimit;
      const name = `${type} ${limit} ${refillRate} ${refillInterval}`;
      let shared = this.ratelimits.get(name);
      if (!shared) {
        if (this.ratelimits.size >= INTERN_LIMIT) this.ratelimits.clear();
        shared = Object.freeze({ ...ratelimit });
        this.ratelimits.set(name, shared);
      }
      ratelimit = shared;
    }
    return new CachedKey(
      record,
      this.intern(record.workspaceId),
      this.intern(record.apiId),
      ratelimit,
    );
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

  /** The workspace's permissions and roles by id (never undefined: an empty one has none). */
  async catalogue(ws: string): Promise<RbacCatalogue> {
    return (await this.rbac.get(ws, () => this.stores.rbac.catalogue(ws))) ?? EMPTY_CATALOGUE;
  }

  /** The identity, or undefined when it does not exist (remembered for the negative TTL). */
  identity(
    ws: string,
    identityId: string,
  ): Promise<IdentityRecord | undefined> | IdentityRecord | undefined {
    // A warm identity is answered without a promise, as keyByHash answers a warm key: a key with
    // an identity looks it up on every verification.
    return this.identities.getNow(`${ws} ${identityId}`, () =>
      this.stores.identities.byId(ws, identityId),
    );
  }

  apply(message: Invalidation): void {
    switch (message.kind) {
      case 'root':
        this.rootKeys.invalidate(message.hash);
        break;
      case 'key':
        if (message.created) {
          this.keys.invalidateUnless(
            message.hash,
            (lookup) => lookup !== undefined && !('missing' in lookup),
          );
        } else this.keys.invalidate(message.hash);
        break;
      case 'api':
        this.apis.invalidate(`${message.workspaceId} ${message.apiId}`);
        break;
      case 'ns':
        this.namespaces.invalidate(`${message.workspaceId} ${message.name}`);
        break;
      case 'rbac':
        this.rbac.invalidate(message.workspaceId);
        break;
      case 'identity':
        this.identities.invalidate(`${message.workspaceId} ${message.identityId}`);
        break;
    }
  }

  setListening(listening: boolean): void {
    this.rootKeys.reset(listening);
    this.keys.reset(listening);
    this.apis.reset(listening);
    this.namespaces.reset(listening);
    this.rbac.reset(listening);
    this.identities.reset(listening);
  }
}
