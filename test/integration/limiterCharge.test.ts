import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { Limiter, type LimitCharge } from '../../src/limiter/limiter';
import { decide } from '../../src/limiter/tokenBucket';
import { names } from '../../src/store/names';
import { startRedis, type TestRedis } from '../support/redisServer';
import { hour } from '../support/helpers';

/**
 * Limiter.charge against real Redis: a node-local one for `fast` buckets and a primary for the
 * rest and the credits. Buckets refill once an hour, so nothing refills while a case runs and a
 * bucket's tokens before and after a call can be compared exactly.
 */
let servers: TestRedis[];
let local: Redis;
let primary: Redis;
let limiter: Limiter;

beforeAll(async () => {
  servers = await Promise.all([startRedis(), startRedis()]);
  const options = { commandTimeoutMs: 2000, connectTimeoutMs: 2000 };
  local = createRedis(servers[0]!.url, options);
  primary = createRedis(servers[1]!.url, options);
  await Promise.all([connectRedis(local), connectRedis(primary)]);
  limiter = new Limiter({ local, primary });
});
afterAll(async () => {
  await Promise.all([closeRedis(local), closeRedis(primary)]);
  await Promise.all(servers.map((server) => server.dispose()));
});

let caseNumber = 0;

interface LimitCase {
  fast: boolean;
  /** Owned by the key (its tag) or by its identity. */
  ofIdentity: boolean;
  limit: number;
  /** Tokens spent before the call under test. */
  spent: number;
  cost: number;
}

const limitCase = fc
  .record({
    fast: fc.boolean(),
    ofIdentity: fc.boolean(),
    limit: fc.integer({ min: 1, max: 10 }),
    spentShare: fc.double({ min: 0, max: 1, noNaN: true }),
    cost: fc.integer({ min: 0, max: 12 }),
  })
  .map(({ spentShare, ...rest }): LimitCase => ({
    ...rest,
    spent: Math.floor(spentShare * rest.limit),
  }));

const creditsCase = fc.option(
  fc.record({ remaining: fc.integer({ min: 0, max: 5 }), cost: fc.integer({ min: 0, max: 3 }) }),
  { nil: undefined },
);

/** Tokens a bucket holds now, read without spending. */
async function tokensOf(charge: LimitCharge): Promise<number> {
  const redis = charge.config.type === 'fast' ? local : primary;
  const keys = { bucket: charge.bucketKey, credits: charge.bucketKey };
  return (await decide(redis, keys, charge.config, 0)).remaining;
}

async function creditsOf(keyId: string): Promise<number | undefined> {
  const value = await primary.hget(names.credits(keyId), 'remaining');
  return value === null ? undefined : Number(value);
}

test('a refused charge leaves every bucket and the credits as they were; an admitted one takes every cost', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(limitCase, { minLength: 1, maxLength: 5 }),
      creditsCase,
      async (limits, credits) => {
        caseNumber += 1;
        const keyId = `key_p${caseNumber}`;
        const identityId = `identity_p${caseNumber}`;
        const charges: LimitCharge[] = limits.map((limit, index) => {
          const owner = limit.ofIdentity ? identityId : keyId;
          return {
            bucketKey: names.namedBucket(owner, `l${index}`),
            tag: owner,
            config: {
              type: limit.fast ? 'fast' : 'consistent',
              limit: limit.limit,
              refillRate: 1,
              refillInterval: hour,
            },
            cost: limit.cost,
          };
        });
        for (const [index, limit] of limits.entries()) {
          if (limit.spent > 0) await limiter.charge([{ ...charges[index]!, cost: limit.spent }]);
        }
        const spend = credits && {
          key: {
            owner: keyId,
            spend: { cost: credits.cost, reset: { nonce: '1', value: credits.remaining, at: 0 } },
          },
        };
        const before = await Promise.all(charges.map(tokensOf));
        const outcome = await limiter.charge(charges, spend);

        const bucketsPay = limits.every((limit, index) => limit.cost <= before[index]!);
        const creditsPay = !credits || credits.cost <= credits.remaining;
        expect(outcome.allowed).toBe(bucketsPay && creditsPay);
        expect(outcome.usageExceeded).toBe(bucketsPay && !creditsPay);
        const after = await Promise.all(charges.map(tokensOf));
        const creditsAfter = await creditsOf(keyId);
        if (outcome.allowed) {
          expect(after).toEqual(before.map((tokens, index) => tokens - limits[index]!.cost));
          if (credits) expect(creditsAfter).toBe(credits.remaining - credits.cost);
        } else {
          expect(after).toEqual(before);
          // Refused: the credits were either never reached or only had their reset applied.
          if (credits && creditsAfter !== undefined) expect(creditsAfter).toBe(credits.remaining);
        }
        // Every answered standing tells the truth about its bucket.
        outcome.standings.forEach((standing, index) => {
          if (standing) expect(standing.remaining).toBe(after[index]);
        });
      },
    ),
    { numRuns: 150 },
  );
});

test('one script call per Redis: fast buckets on the local one, the rest with the credits on the primary', async () => {
  const calls: string[] = [];
  const watch = (name: string, redis: Redis) => ({
    tokenBucketV1Buffer: (key: string, ...args: (string | number)[]) => {
      calls.push(`${name} single`);
      return redis.tokenBucketV1Buffer(key, ...args);
    },
    multiBucketV1Buffer: (count: number, ...args: (string | number)[]) => {
      calls.push(`${name} multi`);
      return redis.multiBucketV1Buffer(count, ...args);
    },
  });
  const watched = new Limiter({ local: watch('local', local), primary: watch('primary', primary) });
  const bucket = (owner: string, name: string, type: 'fast' | 'consistent'): LimitCharge => ({
    bucketKey: names.namedBucket(owner, name),
    tag: owner,
    config: { type, limit: 5, refillRate: 1, refillInterval: hour },
    cost: 1,
  });
  const outcome = await watched.charge(
    [
      bucket('key_calls', 'a', 'fast'),
      bucket('key_calls', 'b', 'fast'),
      bucket('key_calls', 'c', 'consistent'),
      bucket('identity_calls', 'd', 'consistent'),
    ],
    { key: { owner: 'key_calls', spend: { cost: 1, reset: { nonce: '1', value: 3, at: 0 } } } },
  );
  expect(outcome).toMatchObject({ allowed: true, creditsRemaining: 2 });
  expect(calls).toEqual(['local multi', 'primary multi']);

  // On a cluster the identity's bucket lives in another slot: a call of its own, before the
  // credits' call.
  calls.length = 0;
  const cluster = new Limiter({
    local: watch('local', local),
    primary: watch('primary', primary),
    primaryIsCluster: true,
  });
  await cluster.charge(
    [bucket('key_calls', 'c', 'consistent'), bucket('identity_calls', 'd', 'consistent')],
    { key: { owner: 'key_calls', spend: { cost: 1, reset: { nonce: '1', value: 3, at: 0 } } } },
  );
  expect(calls).toEqual(['primary single', 'primary single']);
});

test('a primary that cannot be reached: the fast tokens already taken are given back', async () => {
  const unreachable = {
    tokenBucketV1Buffer: () =>
      Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })),
    multiBucketV1Buffer: () =>
      Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })),
  };
  const broken = new Limiter({ local, primary: unreachable });
  const fast: LimitCharge = {
    bucketKey: names.namedBucket('key_down', 'f'),
    tag: 'key_down',
    config: { type: 'fast', limit: 4, refillRate: 1, refillInterval: hour },
    cost: 3,
  };
  const consistent: LimitCharge = {
    ...fast,
    bucketKey: names.namedBucket('key_down', 'c'),
    config: { ...fast.config, type: 'consistent' },
  };
  await expect(broken.charge([fast, consistent])).rejects.toThrow('down');
  expect(await tokensOf(fast)).toBe(4);
});
