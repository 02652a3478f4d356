import { creditsAt, latestRefillPoint } from '../../src/limiter/credits';

const at = (iso: string) => Date.parse(iso);

describe('latestRefillPoint', () => {
  test.each([
    ['2026-11-21T13:45:00Z', '2026-11-21T00:00:00Z'],
    ['2026-11-21T00:00:00Z', '2026-11-21T00:00:00Z'],
    ['2026-11-20T23:59:59.999Z', '2026-11-20T00:00:00Z'],
  ])('daily: %s → %s', (now, point) => {
    expect(latestRefillPoint(at(now), { interval: 'daily' })).toBe(at(point));
  });

  test.each([
    // refillDay, now, latest point
    [1, '2026-11-21T10:00:00Z', '2026-11-01T00:00:00Z'],
    [undefined, '2026-11-21T10:00:00Z', '2026-11-01T00:00:00Z'],
    [25, '2026-11-21T10:00:00Z', '2026-10-25T00:00:00Z'],
    [21, '2026-11-21T00:00:00Z', '2026-11-21T00:00:00Z'],
    // Shorter months refill on their last day.
    [31, '2026-11-30T12:00:00Z', '2026-11-30T00:00:00Z'],
    [31, '2026-11-29T12:00:00Z', '2026-10-31T00:00:00Z'],
    [30, '2027-02-28T01:00:00Z', '2027-02-28T00:00:00Z'],
    [30, '2028-02-29T01:00:00Z', '2028-02-29T00:00:00Z'],
    [30, '2027-03-15T00:00:00Z', '2027-02-28T00:00:00Z'],
    // Across the year boundary.
    [15, '2027-01-10T00:00:00Z', '2026-12-15T00:00:00Z'],
  ])('monthly on day %s: %s → %s', (refillDay, now, point) => {
    const refill =
      refillDay === undefined
        ? { interval: 'monthly' as const }
        : { interval: 'monthly' as const, refillDay };
    expect(latestRefillPoint(at(now), refill)).toBe(at(point));
  });
});

describe('creditsAt', () => {
  const refill = { interval: 'daily' as const, amount: 100 };

  test('a refill point after the last one applied resets remaining to the amount', () => {
    const stored = { remaining: 3, lastRefillAt: at('2026-11-20T08:00:00Z') };
    expect(creditsAt(at('2026-11-21T09:00:00Z'), stored, refill)).toEqual({
      remaining: 100,
      lastRefillAt: at('2026-11-21T00:00:00Z'),
    });
  });

  test('no refill point since the last one: unchanged', () => {
    const stored = { remaining: 3, lastRefillAt: at('2026-11-21T08:00:00Z') };
    expect(creditsAt(at('2026-11-21T23:00:00Z'), stored, refill)).toEqual(stored);
  });

  test('without a refill, never changes', () => {
    const stored = { remaining: 0, lastRefillAt: 0 };
    expect(creditsAt(at('2030-01-01T00:00:00Z'), stored, undefined)).toEqual(stored);
  });
});
