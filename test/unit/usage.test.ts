import {
  bucketStart,
  bucketStarts,
  expiresAt,
  limitField,
  normalTags,
  parseLimitField,
  parseSpanField,
  parseSpanSubject,
  parseVerificationField,
  spanEnd,
  spanExpiresAt,
  spanField,
  spanStart,
  spanSubject,
  verificationField,
} from '../../src/domain/usage';
import { UsageRecorder } from '../../src/observability/usage';
import {
  partTag,
  type UsageIncrement,
  type UsagePart,
  type UsageStore,
} from '../../src/store/usageStore';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const RETENTION = { minute: 48 * HOUR, hour: 90 * DAY, day: 730 * DAY };
/** 2030-01-01T00:00:00Z */
const T0 = Date.UTC(2030, 0, 1);

describe('buckets', () => {
  test.each([
    ['minute', T0 + 59_999, T0],
    ['minute', T0 + 60_000, T0 + MIN],
    ['hour', T0 + HOUR - 1, T0],
    ['hour', T0 + HOUR, T0 + HOUR],
    ['day', T0 + DAY - 1, T0],
    ['day', T0 + DAY, T0 + DAY],
    ['day', T0 - 1, T0 - DAY],
  ] as const)('%s bucket of %d starts at %d (UTC)', (g, at, start) => {
    expect(bucketStart(g, at)).toBe(start);
  });

  test('a bucket expires its retention after it ends', () => {
    expect(expiresAt('minute', T0, RETENTION)).toBe((T0 + MIN + 48 * HOUR) / 1000);
    expect(expiresAt('hour', T0, RETENTION)).toBe((T0 + HOUR + 90 * DAY) / 1000);
    expect(expiresAt('day', T0, RETENTION)).toBe((T0 + DAY + 730 * DAY) / 1000);
  });

  test('a range reads each bucket it touches, both ends truncated and included', () => {
    const now = T0 + 10 * DAY;
    expect(bucketStarts('day', T0 + 5, T0 + 2 * DAY + 5, now, RETENTION)).toEqual([
      T0,
      T0 + DAY,
      T0 + 2 * DAY,
    ]);
    expect(bucketStarts('hour', T0 + HOUR - 1, T0 + HOUR, now, RETENTION)).toEqual([T0, T0 + HOUR]);
  });

  test('buckets past their retention are not read', () => {
    const now = T0 + 3 * DAY;
    const starts = bucketStarts('minute', T0, now, now, RETENTION);
    expect(starts[0]).toBe(now - 48 * HOUR);
    expect(starts).toHaveLength(48 * 60 + 1);
  });

  test('buckets not begun by now are not read, however far the range reaches', () => {
    const now = T0 + 10 * DAY + 5;
    const starts = bucketStarts('day', T0, 8_000_000_000_000_000, now, RETENTION);
    expect(starts).toHaveLength(11);
    expect(starts[10]).toBe(T0 + 10 * DAY);
  });
});

describe('fields', () => {
  test('a verification field round-trips, whatever its tags hold', () => {
    const counter = { keyId: 'key_1', identityId: '', outcome: 'VALID', tags: ['a"b', 'c,d', ' '] };
    expect(parseVerificationField(verificationField(counter))).toEqual(counter);
    expect(parseVerificationField('not json')).toBeUndefined();
    expect(parseVerificationField('[1,2,3]')).toBeUndefined();
  });

  test("a standalone limit's field round-trips; anything else is not one", () => {
    for (const passed of [true, false]) {
      expect(parseLimitField(limitField('a"b,c', passed))).toEqual({ identifier: 'a"b,c', passed });
    }
    for (const field of [
      'not json',
      '["a"]',
      '["a","maybe"]',
      '[1,"passed"]',
      '["a","passed",1]',
    ]) {
      expect(parseLimitField(field)).toBeUndefined();
    }
  });

  test('tags are a set: sorted, each once', () => {
    expect(normalTags(['b', 'a', 'b'])).toEqual(['a', 'b']);
    expect(normalTags(undefined)).toEqual([]);
  });
});

/**
 * A store whose writes fail on demand (every part, or the parts `failOnly` names), and whose
 * "landed" answer follows each part's marker.
 */
class FakeStore {
  written: { part: UsagePart; increments: UsageIncrement[]; seq: number }[] = [];
  failWrites = false;
  failOnly: ((part: UsagePart) => boolean) | undefined;
  applyDespiteFailure = false;
  failLanded = false;
  private marker = new Map<string, number>();

  async write(part: UsagePart, increments: readonly UsageIncrement[], _node: string, seq: number) {
    const fails = this.failWrites && (this.failOnly?.(part) ?? true);
    if (!fails || this.applyDespiteFailure) {
      this.written.push({ part, increments: increments.map((i) => ({ ...i })), seq });
      this.marker.set(partTag(part), seq);
    }
    if (fails) throw new Error('connection lost');
  }

  async landed(part: UsagePart, _node: string, seq: number) {
    if (this.failLanded) throw new Error('still away');
    return this.marker.get(partTag(part)) === seq;
  }

  total(): number {
    return this.written.flatMap((w) => w.increments).reduce((sum, i) => sum + i.count, 0);
  }

  /** Counts written per key id (verifications of api_1 only). */
  byKey(): Record<string, number> {
    const sums: Record<string, number> = {};
    for (const { increments } of this.written) {
      for (const { field, count } of increments) {
        const keyId = (JSON.parse(field) as string[])[0]!;
        sums[keyId] = (sums[keyId] ?? 0) + count;
      }
    }
    return sums;
  }
}

function recorder(store: FakeStore, maxPending = 100) {
  const dropped: [string, number][] = [];
  const usage = new UsageRecorder(store as unknown as UsageStore, {
    enabled: true,
    flushMs: 1000,
    maxPending,
    nodeId: 'n1',
    dropped: (kind, count) => dropped.push([kind, count]),
  });
  return { usage, dropped };
}

const verification = (code: string, keyId = 'key_1', tags?: string[]) => ({
  apiId: 'api_1',
  keyId,
  identityId: undefined,
  code,
  tags,
  credits: 0,
});

describe('spans (time in the field)', () => {
  test('an hour holds its minutes, a day its hours, a calendar month its days, in UTC', () => {
    const at = Date.UTC(2030, 1, 14, 13, 27, 5);
    expect(spanStart('hour', at)).toBe(Date.UTC(2030, 1, 14, 13));
    expect(spanStart('day', at)).toBe(Date.UTC(2030, 1, 14));
    expect(spanStart('month', at)).toBe(Date.UTC(2030, 1, 1));
    // February 2030 has 28 days; December ends the year.
    expect(spanEnd('month', Date.UTC(2030, 1, 1))).toBe(Date.UTC(2030, 2, 1));
    expect(spanEnd('month', Date.UTC(2030, 11, 1))).toBe(Date.UTC(2031, 0, 1));
    expect(spanEnd('day', T0)).toBe(T0 + DAY);
  });

  test("a span's hash expires with its last bucket's retention", () => {
    expect(spanExpiresAt('minute', T0, RETENTION)).toBe((T0 + HOUR + 48 * HOUR) / 1000);
    expect(spanExpiresAt('hour', T0, RETENTION)).toBe((T0 + DAY + 90 * DAY) / 1000);
    // January: 31 days, then 730 days of retention.
    expect(spanExpiresAt('day', T0, RETENTION)).toBe((T0 + 31 * DAY + 730 * DAY) / 1000);
  });

  test.each([
    [7, 'VALID', [], '7'],
    [0, 'VALID', [], '0'],
    [7, 'CREDITS', [], '7:CREDITS'],
    [59, 'RATE_LIMITED', [], '59:RATE_LIMITED'],
    [3, 'VALID', ['path=/a'], '3:VALID:["path=/a"]'],
    [3, 'NOT_FOUND', ['a:b', 'x"y'], '3:NOT_FOUND:["a:b","x\\"y"]'],
  ] as const)('offset %d, %s, %j is the field %s and back', (offset, outcome, tags, field) => {
    expect(spanField(offset, outcome, tags)).toBe(field);
    expect(parseSpanField(field)).toEqual({ offset, outcome, tags });
  });

  test.each(['', 'x', '-1', '1.5', '3:', '3:VALID:nope', '3:VALID:[1]', '3:VALID:"a"'])(
    'the field %j is not a counter',
    (field) => {
      expect(parseSpanField(field)).toBeUndefined();
    },
  );

  test("a subject is a key's id and its identity's", () => {
    expect(spanSubject('key_1', 'id_2')).toBe('key_1:id_2');
    expect(parseSpanSubject('key_1:id_2')).toEqual({ keyId: 'key_1', identityId: 'id_2' });
    expect(parseSpanSubject(spanSubject('', ''))).toEqual({ keyId: '', identityId: '' });
    expect(parseSpanSubject(spanSubject('key_1', ''))).toEqual({ keyId: 'key_1', identityId: '' });
  });
});

describe('UsageRecorder', () => {
  test('counts add up per counter, and one flush writes them', async () => {
    const store = new FakeStore();
    const { usage } = recorder(store);
    for (let i = 0; i < 5; i++) usage.verification('ws_1', T0, verification('VALID'));
    usage.verification('ws_1', T0, verification('RATE_LIMITED'));
    usage.verification('ws_1', T0, { ...verification('VALID'), credits: 3 });
    usage.verification('ws_2', T0 + MIN, { ...verification('NOT_FOUND'), keyId: undefined });
    usage.limit('ws_1', T0, 'rlns_1', 'user', false);
    expect(await usage.flush()).toBe(true);
    const fields = Object.fromEntries(
      store.written.flatMap((w) => w.increments.map((i) => [`${w.part.ws} ${i.field}`, i.count])),
    );
    expect(fields).toEqual({
      'ws_1 ["key_1","","VALID"]': 6,
      'ws_1 ["key_1","","RATE_LIMITED"]': 1,
      'ws_1 ["key_1","","CREDITS"]': 3,
      'ws_2 ["","","NOT_FOUND"]': 1,
      'ws_1 ["user","blocked"]': 1,
    });
    expect(usage.held).toBe(0);
  });

  test('a flush that failed before landing is written again, once', async () => {
    const store = new FakeStore();
    const { usage } = recorder(store);
    usage.verification('ws_1', T0, verification('VALID'));
    store.failWrites = true;
    expect(await usage.flush()).toBe(false);
    usage.verification('ws_1', T0, verification('VALID'));
    store.failWrites = false;
    expect(await usage.flush()).toBe(true);
    expect(store.total()).toBe(2);
  });

  test('a flush that landed but whose answer was lost is not written twice', async () => {
    const store = new FakeStore();
    const { usage } = recorder(store);
    usage.verification('ws_1', T0, verification('VALID'));
    store.failWrites = true;
    store.applyDespiteFailure = true;
    expect(await usage.flush()).toBe(false);
    store.failWrites = false;
    store.applyDespiteFailure = false;
    expect(await usage.flush()).toBe(true);
    expect(store.total()).toBe(1);
  });

  test('one flush writes a part per shard; a part that landed is not written again, one that did not is', async () => {
    const store = new FakeStore();
    const { usage } = recorder(store);
    // key_b and key_c are in different shards (0 and 6): two parts, two markers.
    usage.verification('ws_1', T0, verification('VALID', 'key_b'));
    usage.verification('ws_1', T0, verification('VALID', 'key_c'));
    store.failWrites = true;
    store.applyDespiteFailure = true;
    store.failOnly = (part) => part.shard === 6;
    // key_b's part landed; key_c's landed too but its answer was lost.
    expect(await usage.flush()).toBe(false);
    expect(new Set(store.written.map((w) => w.part.shard))).toEqual(new Set([0, 6]));
    store.failWrites = false;
    usage.verification('ws_1', T0, verification('VALID', 'key_c'));
    expect(await usage.flush()).toBe(true);
    expect(store.byKey()).toEqual({ key_b: 1, key_c: 2 });

    // Now key_c's part fails before landing, key_b's lands: only key_c's is written again.
    usage.verification('ws_1', T0, verification('VALID', 'key_b'));
    usage.verification('ws_1', T0, verification('VALID', 'key_c'));
    store.failWrites = true;
    store.applyDespiteFailure = false;
    expect(await usage.flush()).toBe(false);
    store.failWrites = false;
    expect(await usage.flush()).toBe(true);
    expect(store.byKey()).toEqual({ key_b: 2, key_c: 3 });
    expect(usage.held).toBe(0);
  });

  test('while Redis is away counts wait, bounded; what does not fit is dropped and counted', async () => {
    const store = new FakeStore();
    const { usage, dropped } = recorder(store, 3);
    store.failWrites = true;
    store.failLanded = true;
    for (const key of ['key_1', 'key_2'])
      usage.verification('ws_1', T0, verification('VALID', key));
    expect(await usage.flush()).toBe(false);
    usage.verification('ws_1', T0, verification('VALID', 'key_3'));
    usage.verification('ws_1', T0, verification('VALID', 'key_3'));
    usage.verification('ws_1', T0, verification('VALID', 'key_4'));
    expect(dropped).toEqual([['verification', 1]]);
    expect(await usage.flush()).toBe(false);
    store.failWrites = false;
    store.failLanded = false;
    expect(await usage.flush()).toBe(true);
    expect(store.total()).toBe(4);
  });

  test('stop() flushes what is pending', async () => {
    const store = new FakeStore();
    const { usage } = recorder(store);
    usage.verification('ws_1', T0, verification('VALID'));
    expect(await usage.stop(1000)).toBe(0);
    expect(store.total()).toBe(1);
  });

  test('switched off, nothing is counted', async () => {
    const store = new FakeStore();
    const usage = new UsageRecorder(store as unknown as UsageStore, {
      enabled: false,
      flushMs: 1000,
      maxPending: 10,
      nodeId: 'n1',
    });
    usage.verification('ws_1', T0, verification('VALID'));
    expect(usage.held).toBe(0);
  });
});
