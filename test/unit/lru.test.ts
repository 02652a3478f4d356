import { Lru } from '../../src/cache/lru';

describe('Lru', () => {
  test('evicts the least recently used entry, where a read counts as a use', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
  });

  test('setting an existing key replaces it without growing', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('a', 2);
    lru.set('b', 3);
    expect(lru.get('a')).toBe(2);
    expect(lru.size).toBe(2);
    lru.delete('a');
    expect(lru.get('a')).toBeUndefined();
    expect(lru.size).toBe(1);
  });

  test('from half full on, a hit moves its entry; below that, entries keep their insertion order', () => {
    const lru = new Lru<string, number>(6);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('a'); // 2 of 6: not moved
    lru.set('c', 3); // half full from here
    lru.get('b'); // moved behind c
    for (const key of ['d', 'e', 'f']) lru.set(key, 0);
    // Order now a, c, d, e, f, b: a was used before the half-way mark, b after it.
    lru.set('g', 0);
    expect(lru.get('a')).toBeUndefined();
    lru.set('h', 0);
    expect(lru.get('c')).toBeUndefined();
    expect(lru.get('b')).toBe(2);
    expect(lru.size).toBe(6);
  });
});
