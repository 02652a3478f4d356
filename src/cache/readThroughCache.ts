import { Lru } from './lru';

export interface CacheOptions {
  maxEntries: number;
  /** A safety net: entries are kept fresh by invalidation messages, this bounds a missed one. */
  ttlMs: number;
  /** How long "does not exist" is remembered, so a flood of unknown keys cannot hammer Redis. */
  negativeTtlMs: number;
}

/** What the cache keeps per key: the value (undefined: known not to exist) and its stamps. */
export interface CacheEntry<V> {
  readonly value: V | undefined;
  /** The trust generation the value was loaded in; only the current one answers from memory. */
  generation: number;
  /**
   * When the entry is gone, even as a fallback: ms since the cache was made, a small integer V8
   * keeps inline (a unix timestamp would cost every entry a boxed number).
   */
  until: number;
}

/**
 * Makes the entry for a loaded value. The default wraps it; a value with `generation` and `until`
 * fields of its own may be its own entry, one object per cached key instead of two.
 */
export type EntryFactory<V> = (
  value: V | undefined,
  generation: number,
  until: number,
) => CacheEntry<V>;

const wrap = <V>(value: V | undefined, generation: number, until: number): CacheEntry<V> => ({
  value,
  generation,
  until,
});

/** What `peek` answers when memory cannot answer for the key. */
export const NOT_CACHED: unique symbol = Symbol('not cached');

interface InFlight<V> {
  promise: Promise<V | undefined>;
  invalidated: boolean;
}

/**
 * A bounded LRU in front of a loader. Concurrent misses of one key share a single load, and a load
 * that an invalidation overtook is returned to its callers but neither stored nor joined by later
 * reads, so a stale read can never outlive the message that announced the change.
 *
 * Trust comes in generations. While the node cannot hear invalidations (`trusted` false), and for
 * everything stored before it could hear them again, reads go to the loader; such older entries
 * are kept only as a fallback for when the loader's store is unreachable (`isUnavailable`), so a
 * node cut off from the primary keeps answering for the keys it knew.
 */
export class ReadThroughCache<V extends object> {
  private readonly entries: Lru<string, CacheEntry<V>>;
  private readonly inFlight = new Map<string, InFlight<V>>();
  private trusted = false;
  private generation = 0;
  hits = 0;
  misses = 0;
  invalidations = 0;
  staleServed = 0;

  constructor(
    private readonly options: CacheOptions,
    private readonly isUnavailable: (error: unknown) => boolean = () => false,
    /** A value that stands for "not found" may ask for the short negative TTL. */
    private readonly isNegative: (value: V) => boolean = () => false,
    private readonly makeEntry: EntryFactory<V> = wrap,
  ) {
    this.entries = new Lru(options.maxEntries);
  }

  private readonly epoch = Date.now();

  private clock(): number {
    return Date.now() - this.epoch;
  }

  private entry(key: string): CacheEntry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.until > this.clock()) return entry;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * The value memory can answer for now (undefined: known not to exist), or NOT_CACHED when only
   * the loader can: `get` without a promise, for the verification path's warm lookups.
   */
  peek(key: string): V | undefined | typeof NOT_CACHED {
    const entry = this.entry(key);
    if (entry === undefined || !this.trusted || entry.generation !== this.generation) {
      return NOT_CACHED;
    }
    this.hits++;
    return entry.value;
  }

  /** `get`, answered at once (no promise) when memory can: what `peek` finds, else the load. */
  getNow(key: string, load: () => Promise<V | undefined>): V | undefined | Promise<V | undefined> {
    const known = this.peek(key);
    return known === NOT_CACHED ? this.get(key, load) : known;
  }

  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const entry = this.entry(key);
    if (entry !== undefined && this.trusted && entry.generation === this.generation) {
      this.hits++;
      return Promise.resolve(entry.value);
    }
    this.misses++;
    const loading = this.load(key, load);
    if (entry === undefined) return loading;
    return loading.catch((error: unknown) => {
      if (!this.isUnavailable(error)) throw error;
      this.staleServed++;
      return entry.value;
    });
  }

  private load(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const pending = this.inFlight.get(key);
    if (pending) return pending.promise;
    const flight: InFlight<V> = { promise: load(), invalidated: false };
    const generation = this.generation;
    this.inFlight.set(key, flight);
    const settle = () => {
      if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
    };
    flight.promise.then((value) => {
      settle();
      if (flight.invalidated) return;
      const ttl =
        value === undefined || this.isNegative(value)
          ? this.options.negativeTtlMs
          : this.options.ttlMs;
      this.entries.set(key, this.makeEntry(value, generation, this.clock() + ttl));
    }, settle);
    return flight.promise;
  }

  /** Drops the entry; a load already under way is neither stored nor joined by later reads. */
  invalidate(key: string): void {
    this.invalidations++;
    this.entries.delete(key);
    this.abandon(key);
  }

  /**
   * Like `invalidate`, but a stored value that `keep` accepts stays. A load under way is still
   * abandoned: it may have read the state from before the change.
   */
  invalidateUnless(key: string, keep: (value: V | undefined) => boolean): void {
    this.invalidations++;
    const entry = this.entries.get(key);
    if (entry !== undefined && !keep(entry.value)) this.entries.delete(key);
    this.abandon(key);
  }

  private abandon(key: string): void {
    const pending = this.inFlight.get(key);
    if (!pending) return;
    pending.invalidated = true;
    this.inFlight.delete(key);
  }

  /**
   * Starts a new trust generation: whatever is stored stops answering from memory (messages may
   * have been missed) and stays only as the fallback for an unreachable store.
   */
  reset(trusted: boolean): void {
    this.trusted = trusted;
    this.generation++;
    for (const key of [...this.inFlight.keys()]) this.abandon(key);
  }

  get size(): number {
    return this.entries.size;
  }

  get isTrusted(): boolean {
    return this.trusted;
  }
}
