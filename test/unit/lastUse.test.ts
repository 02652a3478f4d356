import { LastUseRecorder, type LastUseStore } from '../../src/observability/lastUse';

/** A store that keeps what it is given, and fails while told to. */
function store() {
  const written = new Map<string, number>();
  let failing = false;
  const touch: LastUseStore['touch'] = async (lastUses) => {
    if (failing) throw new Error('redis away');
    for (const [keyId, at] of lastUses) written.set(keyId, Math.max(at, written.get(keyId) ?? 0));
  };
  return { written, touch, fail: (on: boolean) => (failing = on) };
}

describe('LastUseRecorder', () => {
  test('holds the latest time of each key; a failed flush keeps it for the next, the later winning', async () => {
    const target = store();
    const recorder = new LastUseRecorder(target, { enabled: true, flushMs: 1000, maxHeld: 10 });
    recorder.saw('key_a', 200);
    recorder.saw('key_a', 100);
    recorder.saw('key_b', 50);
    target.fail(true);
    expect(await recorder.flush()).toBe(false);
    expect(recorder.held).toBe(2);
    recorder.saw('key_a', 150);
    recorder.saw('key_b', 300);
    target.fail(false);
    expect(await recorder.flush()).toBe(true);
    expect([...target.written]).toEqual([
      ['key_a', 200],
      ['key_b', 300],
    ]);
    expect(recorder.held).toBe(0);
  });

  test('memory is bounded: a key beyond maxHeld waits for a verification after the next flush', async () => {
    const target = store();
    const recorder = new LastUseRecorder(target, { enabled: true, flushMs: 1000, maxHeld: 2 });
    recorder.saw('key_a', 1);
    recorder.saw('key_b', 1);
    recorder.saw('key_c', 1);
    // A key already held still moves on.
    recorder.saw('key_a', 5);
    expect(await recorder.stop()).toBe(0);
    expect([...target.written.keys()].sort()).toEqual(['key_a', 'key_b']);
    expect(target.written.get('key_a')).toBe(5);
  });

  test('off with usage analytics (KEYWARD_ANALYTICS=off): nothing is held or written', async () => {
    const target = store();
    const recorder = new LastUseRecorder(target, { enabled: false, flushMs: 1000, maxHeld: 2 });
    recorder.saw('key_a', 1);
    expect(recorder.held).toBe(0);
    expect(await recorder.stop()).toBe(0);
    expect(target.written.size).toBe(0);
  });
});
