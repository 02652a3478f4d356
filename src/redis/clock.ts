import type { RedisClient as Redis } from './clients';

/**
 * TIME's reply: seconds and microseconds. They arrive as two strings, while ioredis declares
 * `time()` as number[], so either is accepted; Number() reads both.
 */
export type RedisTimeReply = readonly (string | number)[];

/** TIME as unix ms, in whole ms like Date.now() and the token-bucket script's own `now`. */
export function redisTimeMs(reply: RedisTimeReply): number {
  const [seconds, micros] = reply;
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** TIME as unix ms with the microseconds kept as a fraction: for measuring a clock's skew. */
export function redisTimeMsExact(reply: RedisTimeReply): number {
  const [seconds, micros] = reply;
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/**
 * The primary's clock, as seen from this node: node clocks drift and may be wrong by minutes,
 * while every bucket already runs on Redis `TIME`. Expiry checks and timestamps use this clock too,
 * so every node reaches the same decision. The offset is re-measured in the background; the hot
 * path only adds it.
 */
export class RedisClock {
  private offsetMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly localClock: () => number = Date.now,
    private readonly resyncMs = 10_000,
  ) {}

  /** Measures once (so the first answer is already right), then keeps measuring. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => {
      this.sync().catch(() => undefined); // keep the last offset while the primary is away
    }, this.resyncMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  readonly now = (): number => this.localClock() + this.offsetMs;

  async sync(): Promise<void> {
    const before = this.localClock();
    const reply = await this.redis.time();
    const after = this.localClock();
    const redisNow = redisTimeMs(reply);
    // The reading was taken somewhere within the round trip; its middle is the best guess.
    this.offsetMs = redisNow - Math.round((before + after) / 2);
  }
}
