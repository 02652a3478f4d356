import type { Redis } from 'ioredis';
import { adminRedis, closeRedis, writeWatcher, type WriteWatcher } from '../support/keyspace';
import { startRedis, type TestRedis } from '../support/redisServer';
import { sleep } from '../support/helpers';

// The authorization matrix trusts this watcher to say "a refused call wrote nothing": it must see
// every kind of write, and nothing that is not one.
let server: TestRedis;
let redis: Redis;
let watcher: WriteWatcher;

beforeAll(async () => {
  server = await startRedis();
  redis = await adminRedis(server.url);
  watcher = await writeWatcher(server.url);
});

afterAll(async () => {
  await watcher?.close();
  if (redis) await closeRedis(redis);
  await server?.dispose();
});

test('nothing written, nothing reported', async () => {
  await redis.set('keyward:record', 'v');
  await watcher.start();
  await redis.get('keyward:record');
  await redis.hgetall('keyward:other');
  expect(await watcher.writes()).toEqual([]);
});

test('commands and scripts that write are reported in order, even when nothing changes', async () => {
  await watcher.start();
  await redis.hset('keyward:h', 'f', '1');
  await redis.eval("redis.call('SET', KEYS[1], 'x'); return 1", 1, 'keyward:scripted');
  await redis.set('keyward:record', 'v');
  await redis.pexpire('keyward:record', 60_000);
  expect(await watcher.writes()).toEqual([
    'hset keyward:h',
    'set keyward:scripted',
    'set keyward:record',
    'expire keyward:record',
  ]);
});

test("a TTL running out is not a write; the timers' usage counts are left out", async () => {
  await redis.set('keyward:short', 'v', 'PX', 20);
  await watcher.start();
  await sleep(50);
  await redis.get('keyward:short');
  await redis.hincrby('keyward:usage:{ws:v:api}:day:1', 'valid', 1);
  expect(await watcher.writes()).toEqual([]);
});

test('a server stopped and started again is watched again', async () => {
  await server.restart();
  const again = await adminRedis(server.url);
  try {
    await watcher.start();
    await again.set('keyward:after-restart', 'v');
    expect(await watcher.writes()).toEqual(['set keyward:after-restart']);
  } finally {
    await closeRedis(again);
  }
});
