import { InvalidationListener } from '../../src/cache/invalidationListener';
import { closeRedis, connectRedis, createRedis, SUBSCRIBER_OPTIONS } from '../../src/redis/clients';
import type { RedisClient } from '../../src/redis/clients';
import type Redis from 'ioredis';
import { startRedis, type TestRedis } from '../support/redisServer';
import { eventually, sleep } from '../support/helpers';

/**
 * The connection policy of src/redis/clients.ts on a real Redis. Writes (coalesce.ts): on an idle
 * connection a command is written at once; once commands await replies, what follows in the same
 * turn of the event loop is held in the corked socket and leaves in one write at the end of the
 * turn, in the order it was sent. Deadlines (ioredis commandTimeout): every command fails by its own
 * deadline when Redis does not answer, and a command answered in time is never failed later.
 */
let server: TestRedis;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  const client: RedisClient = createRedis(server.url, {
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  await connectRedis(client);
  redis = client as Redis;
});
afterAll(async () => {
  await closeRedis(redis);
  await server.dispose();
});

test('a command on an idle connection is written at once', async () => {
  expect(redis.commandQueue.length).toBe(0);
  const reply = redis.ping();
  expect(redis.stream.writableCorked).toBe(0);
  expect(redis.stream.writableLength).toBe(0);
  expect(await reply).toBe('PONG');
});

test('commands issued while others await replies leave together, in order', async () => {
  const first = redis.ping();
  const echoes = Array.from({ length: 100 }, (_, i) => redis.echo(`m${i}`));
  // Held in the socket until the end of this turn, not written one by one.
  expect(redis.stream.writableCorked).toBe(1);
  expect(redis.stream.writableLength).toBeGreaterThan(100 * 'm0'.length);
  await new Promise((resolve) => setImmediate(resolve));
  expect(redis.stream.writableCorked).toBe(0);
  expect(await first).toBe('PONG');
  expect(await Promise.all(echoes)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
});

test('a command that times out in the cork still fails by its deadline, not later', async () => {
  const slow = createRedis(server.url, { commandTimeoutMs: 50, connectTimeoutMs: 2000 }) as Redis;
  try {
    // Inside the try: a client that failed to connect goes on reconnecting until disconnected.
    await connectRedis(slow);
    // Blocks the server for 300 ms; the commands behind it are corked, then wait on the server.
    const blocker = slow.eval(
      "local t = redis.call('TIME'); while true do local n = redis.call('TIME'); if (n[1] - t[1]) * 1e6 + (n[2] - t[2]) > 1000000 then break end end return 1",
      0,
    );
    const behind = slow.ping();
    const [blocked, queued] = await Promise.allSettled([blocker, behind]);
    expect(blocked).toMatchObject({ status: 'rejected', reason: { message: 'Command timed out' } });
    expect(queued).toMatchObject({ status: 'rejected', reason: { message: 'Command timed out' } });
    // Both failed although Redis answers both once the 1 s script ends: their deadlines fired.
    // Let the script finish before the server is used again.
    await sleep(1000);
  } finally {
    slow.disconnect();
  }
});

test('commands behind a stalled one each fail at their own deadline; answered ones stay answered', async () => {
  const slow = createRedis(server.url, { commandTimeoutMs: 80, connectTimeoutMs: 2000 }) as Redis;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await connectRedis(slow);
    expect(await slow.ping()).toBe('PONG'); // answered: must not be failed at its deadline
    const started = performance.now();
    const stall = slow.eval(
      "local t = redis.call('TIME'); while true do local n = redis.call('TIME'); if (n[1] - t[1]) * 1e6 + (n[2] - t[2]) > 1000000 then break end end return 1",
      0,
    );
    const failedAt: number[] = [];
    const behind: Promise<unknown>[] = [];
    for (let i = 0; i < 3; i++) {
      // Sent 40 ms apart: their deadlines are 40 ms apart too.
      behind.push(slow.ping().catch(() => failedAt.push(performance.now() - started)));
      await sleep(40);
    }
    await Promise.allSettled([stall, ...behind]);
    expect(failedAt).toHaveLength(3);
    // Each failed (Redis would have answered all once the 1 s script ended), in the order sent,
    // and none before its own deadline.
    failedAt.forEach((at, i) => expect(at).toBeGreaterThanOrEqual(80 + 40 * i - 5));
    expect([...failedAt].sort((a, b) => a - b)).toEqual(failedAt);
    await sleep(1000);
    expect(await slow.ping()).toBe('PONG');
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    slow.disconnect();
  }
});

test('a subscriber whose connection drops again before its resubscription is confirmed leaves no unhandled rejection', async () => {
  const subscriber = createRedis(
    server.url,
    { commandTimeoutMs: 2000, connectTimeoutMs: 2000 },
    SUBSCRIBER_OPTIONS,
  ) as Redis;
  const listener = new InvalidationListener(subscriber, {
    apply: () => undefined,
    setListening: () => undefined,
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await listener.start();
    // On the first reconnection's 'ready', what was subscribed on it is still unanswered: the
    // socket is destroyed there (a flapping Redis, a network cut), which fails it.
    let drops = 0;
    subscriber.on('ready', () => {
      if (drops++ === 0) subscriber.stream.destroy();
    });
    await redis.client('KILL', 'TYPE', 'pubsub');
    await eventually(() => drops === 2 && listener.isSubscribed, {
      what: 'subscribed again after two drops',
    });
    // An unhandled rejection is reported a turn after it happens.
    await sleep(50);
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    subscriber.disconnect();
  }
});
