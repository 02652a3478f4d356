import { NOT_CACHED, ReadThroughCache } from '../../src/cache/readThroughCache';
import { sleep } from '../support/helpers';

interface Record {
  id: string;
  version: number;
}

/** A promise the test settles by hand, to hold a load in flight. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets the cache's own `.then` bookkeeping run after a load settles. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function newCache(
  options: Partial<{ maxEntries: number; ttlMs: number; negativeTtlMs: number }> = {},
) {
  return new ReadThroughCache<Record>({
    maxEntries: 100,
    ttlMs: 60_000,
    negativeTtlMs: 60_000,
    ...options,
  });
}

/** A loader that counts its calls and returns the current version of the record. */
function counter(version = { value: 1 }) {
  const load = jest.fn(async (): Promise<Record | undefined> => ({
    id: 'a',
    version: version.value,
  }));
  return { load, version };
}

describe('ReadThroughCache', () => {
  test('starts untrusted and empty', () => {
    const cache = newCache();
    expect(cache.isTrusted).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('a trusted cache serves the second read without loading', async () => {
    const cache = newCache();
    cache.reset(true);
    const { load } = counter();
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
    await settle();
    expect(cache.size).toBe(1);
    const again = await cache.get('a', load);
    expect(again).toEqual({ id: 'a', version: 1 });
    expect(load).toHaveBeenCalledTimes(1);
    expect(cache.hits).toBe(1);
    expect(cache.misses).toBe(1);
  });

  test('keys are cached separately', async () => {
    const cache = newCache();
    cache.reset(true);
    const loadA = jest.fn(async () => ({ id: 'a', version: 1 }));
    const loadB = jest.fn(async () => ({ id: 'b', version: 1 }));
    await cache.get('a', loadA);
    await settle();
    expect(await cache.get('b', loadB)).toEqual({ id: 'b', version: 1 });
    expect(loadB).toHaveBeenCalledTimes(1);
  });

  test('an untrusted cache never answers from memory: every read loads', async () => {
    const cache = newCache();
    const { load, version } = counter();
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
    await settle();
    version.value = 2;
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 2 });
    await settle();
    expect(load).toHaveBeenCalledTimes(2);
    expect(cache.hits).toBe(0);
    expect(cache.misses).toBe(2);
  });

  test('an untrusted cache does not answer "absent" from memory either', async () => {
    const cache = newCache();
    const load = jest.fn(async (): Promise<Record | undefined> => undefined);
    await cache.get('a', load);
    await settle();
    await cache.get('a', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  test('reset(false) stops answering from memory', async () => {
    const cache = newCache();
    cache.reset(true);
    const { load, version } = counter();
    await cache.get('a', load);
    await settle();
    cache.reset(false);
    expect(cache.isTrusted).toBe(false);
    version.value = 2;
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 2 });
    expect(load).toHaveBeenCalledTimes(2);
  });

  test('what an untrusted cache loaded is not served once it is trusted (a new generation)', async () => {
    const cache = newCache();
    const { load, version } = counter();
    await cache.get('a', load);
    await settle();
    cache.reset(true);
    version.value = 2;
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 2 });
    expect(load).toHaveBeenCalledTimes(2);
  });

  test('reset(true) stops answering from what was stored before it', async () => {
    const cache = newCache();
    cache.reset(true);
    const { load } = counter();
    await cache.get('a', load);
    await settle();
    cache.reset(true);
    await cache.get('a', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  test.each([true, false])('concurrent misses share one load (trusted: %s)', async (trusted) => {
    const cache = newCache();
    cache.reset(trusted);
    const pending = deferred<Record | undefined>();
    const load = jest.fn(() => pending.promise);
    const reads = [cache.get('a', load), cache.get('a', load), cache.get('a', load)];
    expect(load).toHaveBeenCalledTimes(1);
    pending.resolve({ id: 'a', version: 7 });
    const results = await Promise.all(reads);
    expect(results).toEqual([
      { id: 'a', version: 7 },
      { id: 'a', version: 7 },
      { id: 'a', version: 7 },
    ]);
    expect(cache.misses).toBe(3);
  });

  test('a failed load reaches every waiting caller, is not stored, and the next read retries', async () => {
    const cache = newCache();
    cache.reset(true);
    const pending = deferred<Record | undefined>();
    const failing = jest.fn(() => pending.promise);
    const first = cache.get('a', failing);
    const second = cache.get('a', failing);
    pending.reject(new Error('redis down'));
    await expect(first).rejects.toThrow('redis down');
    await expect(second).rejects.toThrow('redis down');
    await settle();
    expect(cache.size).toBe(0);
    const { load } = counter();
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
    expect(load).toHaveBeenCalledTimes(1);
  });

  test('an invalidation during a load: the callers get the value but it is not stored', async () => {
    const cache = newCache();
    cache.reset(true);
    const pending = deferred<Record | undefined>();
    const read = cache.get('a', () => pending.promise);
    cache.invalidate('a');
    pending.resolve({ id: 'a', version: 1 });
    expect(await read).toEqual({ id: 'a', version: 1 });
    await settle();
    expect(cache.size).toBe(0);
    const { load } = counter({ value: 2 });
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 2 });
    expect(load).toHaveBeenCalledTimes(1);
    expect(cache.invalidations).toBe(1);
  });

  test('a reset during a load also keeps the loaded value out', async () => {
    const cache = newCache();
    cache.reset(true);
    const pending = deferred<Record | undefined>();
    const read = cache.get('a', () => pending.promise);
    cache.reset(true);
    pending.resolve({ id: 'a', version: 1 });
    await read;
    await settle();
    expect(cache.size).toBe(0);
  });

  test('an invalidation of another key does not disturb a load', async () => {
    const cache = newCache();
    cache.reset(true);
    const pending = deferred<Record | undefined>();
    const read = cache.get('a', () => pending.promise);
    cache.invalidate('b');
    pending.resolve({ id: 'a', version: 1 });
    await read;
    await settle();
    expect(cache.size).toBe(1);
  });

  test('invalidate drops a stored entry', async () => {
    const cache = newCache();
    cache.reset(true);
    const { load, version } = counter();
    await cache.get('a', load);
    await settle();
    version.value = 2;
    cache.invalidate('a');
    expect(cache.size).toBe(0);
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 2 });
    expect(load).toHaveBeenCalledTimes(2);
  });

  // Regression: a read that started after an invalidation used to join the older load and so
  // return the record as it was before the change the invalidation announced.
  test('a read that starts after an invalidation does not join an older load', async () => {
    const cache = newCache();
    cache.reset(true);
    const before = deferred<Record | undefined>();
    const old = cache.get('a', () => before.promise);
    cache.invalidate('a'); // the record changed in Redis after the old load had read it
    const fresh = jest.fn(async () => ({ id: 'a', version: 2 }));
    const read = cache.get('a', fresh);
    before.resolve({ id: 'a', version: 1 });
    expect(await old).toEqual({ id: 'a', version: 1 });
    expect(await read).toEqual({ id: 'a', version: 2 });
    expect(fresh).toHaveBeenCalledTimes(1);
  });

  test('"absent" is remembered like a value', async () => {
    const cache = newCache();
    cache.reset(true);
    const load = jest.fn(async (): Promise<Record | undefined> => undefined);
    expect(await cache.get('a', load)).toBeUndefined();
    await settle();
    expect(await cache.get('a', load)).toBeUndefined();
    expect(load).toHaveBeenCalledTimes(1);
    expect(cache.hits).toBe(1);
    expect(cache.size).toBe(1);
  });

  test('"absent" is dropped by an invalidation (a key created after a miss)', async () => {
    const cache = newCache();
    cache.reset(true);
    await cache.get('a', async () => undefined);
    await settle();
    cache.invalidate('a');
    const { load } = counter();
    expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
  });

  describe('invalidateUnless (a key created: only "absent" is wrong now)', () => {
    const isPresent = (value: Record | undefined) => value !== undefined;

    test('keeps a stored value it accepts, served from memory as before', async () => {
      const cache = newCache();
      cache.reset(true);
      const { load } = counter();
      await cache.get('a', load);
      await settle();
      cache.invalidateUnless('a', isPresent);
      expect(cache.size).toBe(1);
      expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
      expect(load).toHaveBeenCalledTimes(1);
      expect(cache.invalidations).toBe(1);
    });

    test('drops a stored value it does not accept', async () => {
      const cache = newCache();
      cache.reset(true);
      await cache.get('a', async () => undefined);
      await settle();
      cache.invalidateUnless('a', isPresent);
      expect(cache.size).toBe(0);
      const { load } = counter();
      expect(await cache.get('a', load)).toEqual({ id: 'a', version: 1 });
    });

    test('abandons a load under way, whatever it will return', async () => {
      const cache = newCache();
      cache.reset(true);
      const pending = deferred<Record | undefined>();
      const read = cache.get('a', () => pending.promise);
      cache.invalidateUnless('a', isPresent);
      pending.resolve(undefined); // read before the key existed
      expect(await read).toBeUndefined();
      await settle();
      expect(cache.size).toBe(0);
    });

    test('a kept value still serves as the fallback when the store is unreachable', async () => {
      const unreachable = new Error('down');
      const cache = new ReadThroughCache<Record>(
        { maxEntries: 10, ttlMs: 60_000, negativeTtlMs: 60_000 },
        (error) => error === unreachable,
      );
      cache.reset(true);
      await cache.get('a', async () => ({ id: 'a', version: 1 }));
      await settle();
      cache.invalidateUnless('a', isPresent);
      cache.reset(false); // the primary went away: no trust, fallback only
      expect(
        await cache.get('a', async () => {
          throw unreachable;
        }),
      ).toEqual({ id: 'a', version: 1 });
      expect(cache.staleServed).toBe(1);
    });
  });

  test('"absent" expires after negativeTtlMs while values are kept for ttlMs', async () => {
    const cache = newCache({ ttlMs: 60_000, negativeTtlMs: 1 });
    cache.reset(true);
    const missing = jest.fn(async (): Promise<Record | undefined> => undefined);
    const present = jest.fn(async () => ({ id: 'b', version: 1 }));
    await cache.get('a', missing);
    await cache.get('b', present);
    await settle();
    await sleep(30);
    await cache.get('a', missing);
    await cache.get('b', present);
    expect(missing).toHaveBeenCalledTimes(2);
    expect(present).toHaveBeenCalledTimes(1);
  });

  describe('fallback while untrusted and the store is unreachable', () => {
    class Unreachable extends Error {}
    const unavailable = (error: unknown) => error instanceof Unreachable;
    const down = jest.fn(async (): Promise<Record | undefined> => {
      throw new Unreachable('connect ECONNREFUSED');
    });
    const broken = jest.fn(async (): Promise<Record | undefined> => {
      throw new Error('a bug');
    });

    function fallbackCache() {
      return new ReadThroughCache<Record>(
        { maxEntries: 100, ttlMs: 60_000, negativeTtlMs: 60_000 },
        unavailable,
      );
    }

    test('serves the last known value of a key, once the load has failed', async () => {
      const cache = fallbackCache();
      cache.reset(true);
      await cache.get('a', counter().load);
      await settle();
      cache.reset(false);
      expect(await cache.get('a', down)).toEqual({ id: 'a', version: 1 });
      expect(down).toHaveBeenCalled();
      expect(cache.staleServed).toBe(1);
    });

    test('serves what was loaded while untrusted, too', async () => {
      const cache = fallbackCache();
      await cache.get('a', counter().load);
      await settle();
      expect(await cache.get('a', down)).toEqual({ id: 'a', version: 1 });
    });

    test('serves a remembered "absent" as absent', async () => {
      const cache = fallbackCache();
      await cache.get('a', async () => undefined);
      await settle();
      expect(await cache.get('a', down)).toBeUndefined();
      expect(cache.staleServed).toBe(1);
    });

    test('fails for a key it never saw', async () => {
      const cache = fallbackCache();
      await expect(cache.get('a', down)).rejects.toThrow('connect ECONNREFUSED');
      expect(cache.staleServed).toBe(0);
    });

    test('fails for an error that is not unavailability', async () => {
      const cache = fallbackCache();
      await cache.get('a', counter().load);
      await settle();
      await expect(cache.get('a', broken)).rejects.toThrow('a bug');
    });

    test('does not serve an invalidated key', async () => {
      const cache = fallbackCache();
      await cache.get('a', counter().load);
      await settle();
      cache.invalidate('a');
      await expect(cache.get('a', down)).rejects.toThrow('connect ECONNREFUSED');
    });

    test('serves an entry of an older trust generation when the store is still unreachable', async () => {
      // Resubscribed before the command connection is back: the old record must still answer.
      const cache = fallbackCache();
      cache.reset(true);
      await cache.get('a', counter().load);
      await settle();
      cache.reset(false);
      cache.reset(true);
      expect(await cache.get('a', down)).toEqual({ id: 'a', version: 1 });
    });

    test('without an isUnavailable, never falls back', async () => {
      const cache = newCache();
      await cache.get('a', counter().load);
      await settle();
      await expect(cache.get('a', down)).rejects.toThrow('connect ECONNREFUSED');
    });
  });

  test('holds at most maxEntries, dropping the least recently used', async () => {
    const cache = newCache({ maxEntries: 2 });
    cache.reset(true);
    const load = (id: string) => jest.fn(async () => ({ id, version: 1 }));
    const loadA = load('a');
    await cache.get('a', loadA);
    await settle();
    await cache.get('b', load('b'));
    await settle();
    await cache.get('a', loadA); // a is now the most recent
    await cache.get('c', load('c'));
    await settle();
    expect(cache.size).toBe(2);
    await cache.get('a', loadA);
    expect(loadA).toHaveBeenCalledTimes(1);
    const loadB = load('b');
    await cache.get('b', loadB);
    expect(loadB).toHaveBeenCalledTimes(1);
  });
});

describe('peek: what memory can answer without a promise', () => {
  test('NOT_CACHED until a trusted load is stored; then the value, and undefined for a known miss', async () => {
    const cache = newCache();
    const { load } = counter();
    expect(cache.peek('a')).toBe(NOT_CACHED);
    // Untrusted: stored, but only a fallback, never answered from memory.
    await cache.get('a', load);
    await settle();
    expect(cache.peek('a')).toBe(NOT_CACHED);

    cache.reset(true);
    await cache.get('a', load);
    await settle();
    expect(cache.peek('a')).toEqual({ id: 'a', version: 1 });
    await cache.get('gone', async () => undefined);
    await settle();
    expect(cache.peek('gone')).toBeUndefined();

    cache.invalidate('a');
    expect(cache.peek('a')).toBe(NOT_CACHED);
    // A new trust generation: what was stored before answers from memory no longer.
    await cache.get('a', load);
    await settle();
    cache.reset(true);
    expect(cache.peek('a')).toBe(NOT_CACHED);
    expect(cache.peek('gone')).toBe(NOT_CACHED);
  });

  test('getNow: a promise of the load until memory can answer, then the value itself', async () => {
    const cache = newCache();
    cache.reset(true);
    const { load } = counter();
    const cold = cache.getNow('a', load);
    expect(cold).toBeInstanceOf(Promise);
    expect(await cold).toEqual({ id: 'a', version: 1 });
    await settle();
    expect(cache.getNow('a', load)).toEqual({ id: 'a', version: 1 });
    await cache.get('gone', async () => undefined);
    await settle();
    expect(cache.getNow('gone', load)).toBeUndefined();
  });

  test('an expired entry is NOT_CACHED', async () => {
    const cache = newCache({ ttlMs: 1 });
    cache.reset(true);
    await cache.get('a', counter().load);
    await settle();
    await sleep(5);
    expect(cache.peek('a')).toBe(NOT_CACHED);
  });
});
