import type { RedisClient } from '../../src/redis/clients';
import { RedisClock, redisTimeMs, redisTimeMsExact } from '../../src/redis/clock';

describe('Redis TIME as unix ms', () => {
  test('whole ms drop the sub-millisecond microseconds, as the token-bucket script does', () => {
    expect(redisTimeMs(['1700000000', '123456'])).toBe(1_700_000_000_123);
    expect(redisTimeMs(['1700000000', '999999'])).toBe(1_700_000_000_999);
    expect(redisTimeMs(['1700000000', '0'])).toBe(1_700_000_000_000);
    expect(redisTimeMs(['1700000000', '999'])).toBe(1_700_000_000_000);
  });

  test('ioredis declares the reply as numbers; they read the same as the strings on the wire', () => {
    expect(redisTimeMs([1700000000, 123456])).toBe(redisTimeMs(['1700000000', '123456']));
  });

  test('the exact form keeps the microseconds as a fraction of a ms', () => {
    expect(redisTimeMsExact(['1700000000', '123456'])).toBeCloseTo(1_700_000_000_123.456, 3);
    expect(redisTimeMsExact(['1700000000', '500'])).toBeCloseTo(1_700_000_000_000.5, 3);
  });

  test("RedisClock's offset is TIME in whole ms against the middle of the round trip", async () => {
    const redis = { time: async () => ['1700000000', '123999'] };
    // This machine is 10 s behind: before and after the round trip, then once more for now().
    const local = [1_699_999_990_000, 1_699_999_990_010, 1_699_999_990_020];
    const clock = new RedisClock(redis as unknown as RedisClient, () => local.shift() ?? NaN);
    await clock.sync();
    // Offset: 1_700_000_000_123 - 1_699_999_990_005; 15 ms have passed since the middle.
    expect(clock.now()).toBe(1_700_000_000_123 + 15);
  });
});
