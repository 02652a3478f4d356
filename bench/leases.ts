/**
 * Issue 27's figures, one step of `make bench`: consistent verification in a region 50 ms from
 * the primary with leases on and off (one request at a time), what each costs the primary, and
 * the under-admission of leases at 80 % load and in a worst case (virtual time, so exact and the
 * same every run).
 *
 * Its own Redis servers and nodes: a primary, a relay that holds every chunk 25 ms each way (the
 * test suite's delay proxy), a region Redis, and two far nodes on it, one with
 * KEYWARD_CONSISTENT_LEASES=on, one without. Everything is stopped before it returns.
 */
import type Redis from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../src/redis/clients';
import type { BucketShape } from '../src/limiter/tokenBucket';
import { startDelayProxy } from '../test/support/delayProxy';
import { underAdmission, type LoadResult } from '../test/support/leaseLoad';
import { leaseRig } from '../test/support/leaseRig';
import { rpcTarget, sequential, type SequentialResult } from './load';
import { commandCounts } from './redisClient';
import { stop } from './procs';
import {
  createRootKey,
  HUGE,
  rpc,
  startKeyward,
  startRedis,
  type RedisInstance,
  type Server,
} from './setup';

export interface LeaseFigures {
  roundTripMs: number;
  ttlMs: number;
  maxPercent: number;
  /** Leases on first, then off. */
  latency: SequentialResult[];
  /** Script calls the primary ran per 1,000 far verifications, leases on and off. */
  primaryCallsPer1000: { on: number; off: number };
  steady: LoadResult & { description: string };
  worst: LoadResult & { description: string };
}

const ONE_WAY_MS = 25;
const TTL_MS = 5000;
const MAX_PERCENT = 25;

/** The primary's script calls so far (EVALSHA and EVAL). */
async function scriptCalls(redis: Redis): Promise<number> {
  const counts = await commandCounts(redis);
  return (counts.evalsha ?? 0) + (counts.eval ?? 0);
}

/** Verifications one at a time; the primary's script calls per 1,000 of them. */
async function primaryCalls(
  primary: Redis,
  url: string,
  rootKey: string,
  key: string,
  count: number,
): Promise<number> {
  const before = await scriptCalls(primary);
  for (let i = 0; i < count; i++) {
    await rpc(url, rootKey, 'keys.verifyKey', { key });
  }
  return ((await scriptCalls(primary)) - before) * (1000 / count);
}

/** Under-admission on the virtual clock, against a Redis of its own (databases 0, 1, 2). */
async function simulate(redis: RedisInstance): Promise<Pick<LeaseFigures, 'steady' | 'worst'>> {
  const open = async (db: number) => {
    const client = createRedis(`${redis.url}/${db}`, {
      commandTimeoutMs: 5000,
      connectTimeoutMs: 5000,
    });
    await connectRedis(client);
    return client;
  };
  const [primary, a, b] = [await open(0), await open(1), await open(2)];
  try {
    const settings = { ttlMs: TTL_MS, maxShare: MAX_PERCENT / 100 };
    const shape: BucketShape = { limit: 100, refillRate: 10, refillInterval: 100 };
    const steady = await underAdmission(
      leaseRig(primary, { a, b }, settings),
      'keyward:bucket:{steady}',
      'keyward:bucket:{steady-reference}',
      shape,
      [{ ms: 120_000, load: { a: 0.4, b: 0.4 } }],
    );
    // The worst case: a region takes its lease and falls silent while the other asks for more
    // than the bucket gives; the silent region's lease is out of reach until it ends.
    const worst = await underAdmission(
      leaseRig(primary, { a, b }, settings),
      'keyward:bucket:{worst}',
      'keyward:bucket:{worst-reference}',
      shape,
      Array.from(
        { length: 12 },
        (_, i) =>
          [
            { ms: 1_000, load: { a: 1, b: 0 } },
            { ms: TTL_MS, load: { a: 0, b: 3 } },
          ][i % 2]!,
      ),
    );
    return {
      steady: {
        ...steady,
        description: `two regions at a steady 40 % of the refill rate each (Poisson), ${shape.limit} tokens refilled ${shape.refillRate} every ${shape.refillInterval} ms, 120 s`,
      },
      worst: {
        ...worst,
        description: `a region verifies at the full rate for 1 s (and takes a lease), then falls silent for ${TTL_MS / 1000} s while the other asks for 3 × the refill rate; 6 times`,
      },
    };
  } finally {
    await Promise.all([primary, a, b].map((client) => closeRedis(client)));
  }
}

export async function measureLeases(options: {
  outDir: string;
  app: string;
  cwd: string;
  ports: [number, number, number, number];
  log: (message: string) => void;
}): Promise<LeaseFigures> {
  const { outDir, log } = options;
  const [primaryPort, regionPort, onPort, offPort] = options.ports;
  const primary = await startRedis(outDir, 'redis-lease-primary', primaryPort);
  const region = await startRedis(outDir, 'redis-lease-region', regionPort);
  const proxy = await startDelayProxy(primary.port, ONE_WAY_MS);
  const servers: Server[] = [];
  try {
    // The far nodes reach the primary through the relay only.
    const far: RedisInstance = { ...primary, url: proxy.url };
    const node = async (name: string, port: number, env: Record<string, string>) => {
      const server = await startKeyward({
        app: options.app,
        outDir,
        cwd: options.cwd,
        name,
        port,
        logLevel: 'warn',
        primary: far,
        local: region,
        transport: 'tcp',
        env: { KEYWARD_REGION: 'eu-west-1', KEYWARD_ANALYTICS: 'off', ...env },
      });
      servers.push(server);
      return server;
    };
    const on = await node('keyward-leases-on', onPort, {
      KEYWARD_CONSISTENT_LEASES: 'on',
      KEYWARD_LEASE_TTL_MS: String(TTL_MS),
      KEYWARD_LEASE_MAX_PERCENT: String(MAX_PERCENT),
    });
    const off = await node('keyward-leases-off', offPort, {});
    const root = createRootKey(options.app, primary, 'leases');
    const { apiId } = await rpc<{ apiId: string }>(on.url, root.key, 'apis.createApi', {
      name: 'leases',
    });
    const { key } = await rpc<{ key: string }>(on.url, root.key, 'keys.createKey', {
      apiId,
      ratelimit: { type: 'consistent', ...HUGE },
    });
    const target = (server: Server) =>
      rpcTarget(server.url, '/v1/keys.verifyKey', root.key, { key });
    const valid = (body: string) => (JSON.parse(body) as { valid: boolean }).valid;
    log(`leases: far region ${2 * ONE_WAY_MS} ms from the primary, one request at a time`);
    // Each on its own: alternating blocks would give the fast node a few hundred requests in the
    // time the slow one takes for its own.
    const latency = [
      ...(await sequential([{ name: 'consistent, leases on', target: target(on), check: valid }], {
        seconds: 10,
        warmupRequests: 50,
        block: 100,
      })),
      ...(await sequential(
        [{ name: 'consistent, leases off', target: target(off), check: valid }],
        { seconds: 10, warmupRequests: 5, block: 20 },
      )),
    ];
    const primaryCallsPer1000 = {
      on: await primaryCalls(primary.client, on.url, root.key, key, 1000),
      off: await primaryCalls(primary.client, off.url, root.key, key, 100),
    };
    for (const server of servers) await stop(server.child);
    servers.length = 0;
    log('leases: under-admission on the virtual clock');
    const simulated = await simulate(region);
    return {
      roundTripMs: 2 * ONE_WAY_MS,
      ttlMs: TTL_MS,
      maxPercent: MAX_PERCENT,
      latency,
      primaryCallsPer1000,
      ...simulated,
    };
  } finally {
    for (const server of servers) await stop(server.child);
    await proxy.close();
    for (const redis of [primary, region]) {
      redis.client.disconnect();
      await stop(redis.child);
    }
  }
}
