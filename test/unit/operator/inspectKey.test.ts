import type { Directory } from '../../../src/cache/directory';
import { Metrics } from '../../../src/observability/metrics';
import type { ApiRecord } from '../../../src/domain/records';
import type { KeyRecord } from '../../../src/domain/key';
import type { RatelimitConfig } from '../../../src/domain/ratelimit';
import { InsufficientPermissionsError, NotFoundError } from '../../../src/errors';
import {
  bucketPlaces,
  type BucketReading,
  type BucketRedisRole,
} from '../../../src/limiter/bucketProbe';
import { inspectKey, type InspectDeps } from '../../../src/operations/keys/inspectKey';
import type { Caller } from '../../../src/operations/operation';
import type { CreditState, KeyStore } from '../../../src/store/keyStore';

const WS = 'ws_test';
const NOW = 1_700_000_000_000;
const FAST: RatelimitConfig = { type: 'fast', limit: 10, refillRate: 5, refillInterval: 1000 };

function callerWith(permissions: string[]): Caller {
  return {
    rootKey: { id: 'operator', workspaceId: WS, permissions, createdAt: 0 },
    requestId: 'req_test',
    logFields: {},
  };
}

function keyWith(overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: 'key_1',
    workspaceId: WS,
    apiId: 'api_1',
    hash: 'h',
    start: 'kw_3Zb',
    createdAt: NOW - 60_000,
    enabled: true,
    version: 1,
    seq: 1,
    ...overrides,
  };
}

const READING: BucketReading = {
  exists: true,
  stored: { tokens: 3, last: NOW - 500 },
  pttlMs: 1400,
  now: NOW,
  tokens: 3,
  nextRefillAt: NOW + 500,
  leases: [],
  regionLease: null,
};
const EMPTY: BucketReading = {
  exists: false,
  stored: null,
  pttlMs: null,
  now: NOW,
  tokens: null,
  nextRefillAt: null,
  leases: [],
  regionLease: null,
};

interface Fakes {
  deps: InspectDeps;
  probes: [BucketRedisRole, string, RatelimitConfig | undefined][];
}

function fakes(options: {
  key?: KeyRecord;
  credits?: CreditState;
  apiLive?: boolean;
  localIsPrimary?: boolean;
}): Fakes {
  const probes: Fakes['probes'] = [];
  const keys: Pick<KeyStore, 'get' | 'readCredits'> = {
    get: async (ws, keyId) =>
      options.key && ws === options.key.workspaceId && keyId === options.key.id
        ? options.key
        : undefined,
    readCredits: async () => options.credits,
  };
  const api: ApiRecord = { id: 'api_1', workspaceId: WS, name: 'a', createdAt: 0 };
  const directory: Pick<Directory, 'liveApi'> = {
    liveApi: async (ws, apiId) =>
      options.apiLive !== false && ws === WS && apiId === 'api_1' ? api : undefined,
  };
  return {
    probes,
    deps: {
      // getKey's handler is typed over the whole store and directory; it calls only these.
      keys: keys as KeyStore,
      directory: directory as Directory,
      now: () => NOW,
      // Only a getKey with `decrypt` counts; an inspection never decrypts.
      metrics: new Metrics(),
      places: bucketPlaces(options.localIsPrimary ?? false),
      probe: async (redis, keyId, ratelimit) => {
        probes.push([redis, keyId, ratelimit]);
        return redis === 'local' ? READING : EMPTY;
      },
    },
  };
}

describe('inspectKey', () => {
  test('a fast key with credits: the view, its credits as stored and now, a bucket per Redis', async () => {
    const key = keyWith({
      ratelimit: FAST,
      credits: { reset: { nonce: 'n1', value: 50, at: NOW - 10_000 } },
    });
    const { deps, probes } = fakes({
      key,
      credits: { remaining: 42, lastRefillAt: NOW - 10_000, appliedReset: 'n1' },
    });
    const caller = callerWith(['*']);
    const inspection = await inspectKey(deps, caller, 'key_1');
    expect(inspection).toEqual({
      key: {
        id: 'key_1',
        start: 'kw_3Zb',
        workspaceId: WS,
        apiId: 'api_1',
        createdAt: NOW - 60_000,
        enabled: true,
        ratelimit: { ...FAST, async: true, duration: 1000 },
        remaining: 42,
      },
      credits: {
        remaining: 42,
        stored: { remaining: 42, lastRefillAt: NOW - 10_000, appliedReset: 'n1' },
      },
      buckets: [
        { redis: 'primary', holds: ['consistent'], inUse: false, ...EMPTY },
        { redis: 'local', holds: ['fast'], inUse: true, ...READING },
      ],
      namedBuckets: [],
    });
    // The command prints these objects as JSON: the order of their fields is its output.
    expect(Object.keys(inspection)).toEqual(['key', 'credits', 'buckets', 'namedBuckets']);
    expect(Object.keys(inspection.buckets[0] ?? {})).toEqual([
      'redis',
      'holds',
      'inUse',
      'exists',
      'stored',
      'pttlMs',
      'now',
      'tokens',
      'nextRefillAt',
      'leases',
      'regionLease',
    ]);
    // The probe is handed the view's rate limit, as the command always did.
    const shown = { ...FAST, async: true, duration: 1000 };
    expect(probes).toEqual([
      ['primary', 'keyward:bucket:{key_1}', shown],
      ['local', 'keyward:bucket:{key_1}', shown],
    ]);
    expect(caller.logFields).toEqual({ keyId: 'key_1' });
  });

  test('credits whose reset the hash has not applied yet: now is the reset, stored as it is', async () => {
    const key = keyWith({
      credits: {
        reset: { nonce: 'n2', value: 7, at: NOW - 1000 },
        refill: { interval: 'daily', amount: 100 },
      },
    });
    const stale: CreditState = { remaining: 1, lastRefillAt: NOW - 5000, appliedReset: 'n1' };
    const { deps } = fakes({ key, credits: stale });
    const { credits } = await inspectKey(deps, callerWith(['*']), 'key_1');
    // The reset (NOW - 1 s) is later than the day's refill point (midnight UTC), so it stands.
    expect(credits).toEqual({
      remaining: 7,
      refill: { interval: 'daily', amount: 100, lastRefillAt: NOW - 1000 },
      stored: stale,
    });
  });

  test('no rate limit, no credits, one Redis for both modes: credits null, no bucket in use', async () => {
    const { deps, probes } = fakes({ key: keyWith(), localIsPrimary: true });
    const inspection = await inspectKey(deps, callerWith(['*']), 'key_1');
    expect(inspection.credits).toBeNull();
    expect(inspection.buckets).toEqual([
      { redis: 'primary', holds: ['consistent', 'fast'], inUse: false, ...EMPTY },
    ]);
    expect(probes).toEqual([['primary', 'keyward:bucket:{key_1}', undefined]]);
    expect(inspection.namedBuckets).toEqual([]);
  });

  test('named limits: each bucket read in the Redis of its mode, the key’s own by its id', async () => {
    const key = keyWith({
      ratelimits: [
        { name: 'tokens', type: 'fast', limit: 50, duration: 60_000, autoApply: false },
        { name: 'daily', type: 'consistent', limit: 7, duration: 86_400_000, autoApply: true },
      ],
    });
    const { deps, probes } = fakes({ key });
    const { namedBuckets } = await inspectKey(deps, callerWith(['*']), 'key_1');
    expect(probes.slice(2)).toEqual([
      [
        'local',
        'keyward:bucket:{key_1}:tokens',
        expect.objectContaining({
          type: 'fast',
          limit: 50,
          refillRate: 50,
          refillInterval: 60_000,
        }),
      ],
      [
        'primary',
        'keyward:bucket:{key_1}:daily',
        expect.objectContaining({ type: 'consistent', limit: 7 }),
      ],
    ]);
    expect(
      namedBuckets.map(({ name, owner, redis, tokens }) => [name, owner, redis, tokens]),
    ).toEqual([
      ['tokens', 'key', 'local', READING.tokens],
      ['daily', 'key', 'primary', EMPTY.tokens],
    ]);
  });

  test("a consistent key uses the primary's bucket; with one Redis, it is in use too", async () => {
    const consistent = { ...FAST, type: 'consistent' as const };
    const split = await inspectKey(
      fakes({ key: keyWith({ ratelimit: consistent }) }).deps,
      callerWith(['*']),
      'key_1',
    );
    expect(split.buckets.map((b) => [b.redis, b.inUse])).toEqual([
      ['primary', true],
      ['local', false],
    ]);
    const single = await inspectKey(
      fakes({ key: keyWith({ ratelimit: consistent }), localIsPrimary: true }).deps,
      callerWith(['*']),
      'key_1',
    );
    expect(single.buckets.map((b) => [b.redis, b.holds, b.inUse])).toEqual([
      ['primary', ['consistent', 'fast'], true],
    ]);
  });

  test("runs getKey's checks: unknown key, key of a deleted API, no read_key on its API", async () => {
    const unknown = fakes({ key: keyWith() });
    await expect(inspectKey(unknown.deps, callerWith(['*']), 'key_2')).rejects.toThrow(
      new NotFoundError('key', 'key key_2 not found'),
    );
    const deleted = fakes({ key: keyWith(), apiLive: false });
    await expect(inspectKey(deleted.deps, callerWith(['*']), 'key_1')).rejects.toThrow(
      'key key_1 not found',
    );
    // The permission precheck of scope `resource` refuses before any read.
    const none = fakes({ key: keyWith() });
    await expect(
      inspectKey(none.deps, callerWith(['api.*.verify_key']), 'key_1'),
    ).rejects.toBeInstanceOf(InsufficientPermissionsError);
    // read_key on another API only: found, then refused for this key's API.
    const other = fakes({ key: keyWith() });
    await expect(
      inspectKey(other.deps, callerWith(['api.api_2.read_key']), 'key_1'),
    ).rejects.toThrow(InsufficientPermissionsError);
    for (const fake of [unknown, deleted, none, other]) expect(fake.probes).toEqual([]);
  });
});
