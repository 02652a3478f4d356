import { LRUCache } from 'lru-cache';

export interface CacheOptions {
  maxEntries: number;
  /** A safety net: entries are kept fresh by invalidation messages, this bounds a missed one. */
  ttlMs: number;
  /** How long "does not exist" is remembered, so a flood of unknown keys cannot hammer Redis. */
  negativeTtlMs: number;
}

const ABSENT = Symbol('absent');

interface InFlight<V> {
  promise: Promise<V | undefined>;
  invalidated: boolean;
}

/**
 * A bounded LRU in front of a loader. Concurrent misses of one key share a single load, and a load
 * that an invalidation overtook is returned to its callers but not stored, so a stale read can
 * never outlive the message that announced the change.
 *
 * While the node cannot hear invalidations (`trusted` false) every read goes to the loader; what
 * was cached before is kept only as a fallback for when the loader's store is unreachable
 * (`isUnavailable`), so a node cut off from the primary keeps answering for keys it knew.
 */
export class ReadThroughCache<V extends object> {
  private readonly entries: LRUCache<string, V | typeof ABSENT>;
  private readonly inFlight = new Map<string, InFlight<V>>();
  private trusted = false;
  hits = 0;
  misses = 0;
  invalidations = 0;

  staleServed = 0;

  constructor(
    private readonly options: CacheOptions,
    private readonly isUnavailable: (error: unknown) => boolean = () => false,
  ) {
    this.entries = new LRUCache({ max: options.maxEntries, ttl: options.ttlMs });
  }

  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.trusted) {
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        this.hits++;
        return Promise.resolve(entry === ABSENT ? undefined : entry);
      }
      this.misses++;
      return this.load(key, load);
    }
    this.misses++;
    return this.load(key, load).catch((error: unknown) => {
      const stale = this.isUnavailable(error) ? this.entries.get(key) : undefined;
      if (stale === undefined) throw error;
      this.staleServed++;
      return stale === ABSENT ? undefined : stale;
    });
  }

  private load(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const pending = this.inFlight.get(key);
    if (pending) return pending.promise;
    const flight: InFlight<V> = { promise: load(), invalidated: false };
    this.inFlight.set(key, flight);
    const settle = () => {
      if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
    };
    flight.promise.then((value) => {
      settle();
      if (flight.invalidated) return;
      if (value === undefined) this.entries.set(key, ABSENT, { ttl: this.options.negativeTtlMs });
      else this.entries.set(key, value);
    }, settle);
    return flight.promise;
  }

  /** Drops the entry; a load already under way is neither stored nor joined by later reads. */
  invalidate(key: string): void {
    this.invalidations++;
    this.entries.delete(key);
    this.abandon(key);
  }

  private abandon(key: string): void {
    const pending = this.inFlight.get(key);
    if (!pending) return;
    pending.invalidated = true;
    this.inFlight.delete(key);
  }

  /**
   * Trust from now on (forgetting everything, since messages may have been missed), or stop
   * trusting (keeping entries only as the fallback for an unreachable store).
   */
  reset(trusted: boolean): void {
    this.trusted = trusted;
    if (trusted) this.entries.clear();
    for (const key of [...this.inFlight.keys()]) this.abandon(key);
  }

  get size(): number {
    return this.entries.size;
  }

  get isTrusted(): boolean {
    return this.trusted;
  }
}
