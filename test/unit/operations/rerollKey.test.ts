import type { KeyRecord } from '../../../src/domain/key';
import { ConflictError, InsufficientPermissionsError, NotFoundError } from '../../../src/errors';
import { hashKey } from '../../../src/keys/keyMaterial';
import { runOperation } from '../../../src/operations/operation';
import { carriedFields, rerollKey, rerolledExpiry } from '../../../src/operations/keys/rerollKey';
import type { Services } from '../../../src/operations/services';
import type {
  CreditState,
  RerolledKey,
  RerollOutcome,
  RerollPlan,
} from '../../../src/store/keyStore';
import { keyFieldChanges } from '../../../src/store/records';
import { callerWith, NOW, thrownBy, WS } from './fakes';

const bare: KeyRecord = {
  id: 'key_old',
  workspaceId: WS,
  apiId: 'api_1',
  hash: 'h_old',
  start: 'sk_live_M8Vu',
  createdAt: NOW - 1000,
  enabled: true,
  version: 4,
  seq: 7,
};

const full: KeyRecord = {
  ...bare,
  name: 'rotated',
  ownerId: 'acme',
  identityId: 'id_acme',
  meta: { plan: 'pro' },
  updatedAt: NOW - 10,
  expires: NOW + 60_000,
  environment: 'production',
  ratelimit: { type: 'fast', limit: 10, refillRate: 1, refillInterval: 1000 },
  ratelimits: [{ name: 'tokens', type: 'consistent', limit: 5, duration: 1000, autoApply: false }],
  credits: {
    reset: { nonce: '1', value: 100, at: NOW - 1000 },
    refill: { interval: 'monthly', amount: 100, refillDay: 3 },
  },
  permissionIds: ['perm_1'],
  roleIds: ['role_1'],
};

describe('carriedFields', () => {
  test('carries everything a client set, the identity, the limits and the credits left', () => {
    expect(carriedFields(full, { remaining: 42 })).toEqual({
      enabled: true,
      name: 'rotated',
      ownerId: 'acme',
      identityId: 'id_acme',
      meta: { plan: 'pro' },
      expires: NOW + 60_000,
      environment: 'production',
      ratelimit: { type: 'fast', limit: 10, refillRate: 1, refillInterval: 1000 },
      ratelimits: [
        { name: 'tokens', type: 'consistent', limit: 5, duration: 1000, autoApply: false },
      ],
      credits: { resetTo: 42, refill: { interval: 'monthly', amount: 100, refillDay: 3 } },
    });
  });

  test('not the key’s own: no id, hash, start, times, version, nor what it holds', () => {
    const fields = carriedFields(full, { remaining: 42 }) as Record<string, unknown>;
    for (const own of ['id', 'hash', 'start', 'createdAt', 'updatedAt', 'version', 'seq']) {
      expect(fields[own]).toBeUndefined();
    }
    // Permissions and roles are sets the script copies; the record never holds them.
    expect(fields.permissionIds).toBeUndefined();
    expect(fields.roleIds).toBeUndefined();
    expect(keyFieldChanges(carriedFields(full, { remaining: 0 }), '1', NOW).set).toContainEqual([
      'creditsResetTo',
      '0',
    ]);
  });

  test('a bare key gives a bare key; a disabled one a disabled one', () => {
    expect(carriedFields(bare, undefined)).toEqual({ enabled: true });
    expect(carriedFields({ ...bare, enabled: false }, undefined)).toEqual({ enabled: false });
  });

  test('credits that never refill stay so', () => {
    const once = { ...bare, credits: { reset: { nonce: '2', value: 5, at: NOW } } };
    expect(carriedFields(once, { remaining: 3 }).credits).toEqual({ resetTo: 3 });
  });
});

describe('rerolledExpiry', () => {
  test.each<[string, number | undefined, number, number]>([
    ['no expiry: now + expiration', undefined, 300, NOW + 300],
    ['0: now', undefined, 0, NOW],
    ['a later expiry is brought forward', NOW + 10_000, 300, NOW + 300],
    ['a sooner one stays', NOW + 100, 300, NOW + 100],
    ['an expiry already past stays', NOW - 5, 0, NOW - 5],
    ['the largest expiration', undefined, 4_102_444_800_000, NOW + 4_102_444_800_000],
  ])('%s', (_, expires, expiration, expected) => {
    expect(rerolledExpiry(expires, NOW, expiration)).toBe(expected);
  });
});

/** The services rerollKey uses, over one key, with the store's reroll answering `outcome`. */
function fakes(key: KeyRecord | undefined, outcome: RerollOutcome = 'rerolled') {
  const calls: { rerolled: RerolledKey; plan: RerollPlan }[] = [];
  const credits: CreditState = { remaining: 17, lastRefillAt: NOW - 1, appliedReset: '1' };
  const deps = {
    keys: {
      get: async (ws: string, id: string) => (ws === WS && id === key?.id ? key : undefined),
      readCredits: async () => credits,
      reroll: async (
        _ws: string,
        _id: string,
        rerolled: RerolledKey,
        plan: (current: KeyRecord) => Promise<RerollPlan>,
      ) => {
        calls.push({ rerolled, plan: await plan(key!) });
        return outcome;
      },
    },
    directory: { liveApi: async () => true },
    now: () => NOW,
  } as unknown as Pick<Services, 'keys' | 'directory' | 'now' | 'vault'>;
  return { deps, calls };
}

describe('keys.rerollKey', () => {
  const caller = () => callerWith([`api.${bare.apiId}.create_key`]);

  test('answers the new id and a plaintext of the old prefix, whose hash and start it stored', async () => {
    const { deps, calls } = fakes(full);
    const answer = await runOperation(rerollKey, deps, caller(), {
      keyId: full.id,
      expiration: 300,
    });
    expect(answer.keyId).toMatch(/^key_/);
    expect(answer.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{16,}0kw10[1-9A-HJ-NP-Za-km-z]{6}$/);
    const [call] = calls;
    expect(call!.rerolled).toEqual({
      keyId: answer.keyId,
      hash: hashKey(answer.key),
      start: answer.key.slice(0, 'sk_live_'.length + 4),
      createdAt: NOW,
    });
    // The old key's later expiry is brought forward; the new key has the credits as read.
    expect(call!.plan.expires).toBe(NOW + 300);
    expect(call!.plan.fields.credits).toMatchObject({ resetTo: 17 });
  });

  test('needs create_key on the key’s API', async () => {
    const { deps, calls } = fakes(bare);
    const refused = await thrownBy(() =>
      runOperation(rerollKey, deps, callerWith(['api.api_other.create_key']), {
        keyId: bare.id,
        expiration: 0,
      }),
    );
    expect(refused).toEqual(new InsufficientPermissionsError('api.api_1.create_key'));
    const updater = await thrownBy(() =>
      runOperation(rerollKey, deps, callerWith(['api.*.update_key']), {
        keyId: bare.id,
        expiration: 0,
      }),
    );
    expect(updater).toEqual(new InsufficientPermissionsError('api.*.create_key'));
    expect(calls).toEqual([]);
  });

  test.each<[RerollOutcome | 'unknown', unknown]>([
    ['unknown', NotFoundError],
    ['not_found', NotFoundError],
    ['api_not_found', NotFoundError],
    ['hash_exists', ConflictError],
  ])('%s is refused', async (outcome, kind) => {
    const { deps } = fakes(
      outcome === 'unknown' ? undefined : bare,
      outcome === 'unknown' ? 'rerolled' : outcome,
    );
    const refused = await thrownBy(() =>
      runOperation(rerollKey, deps, caller(), { keyId: bare.id, expiration: 0 }),
    );
    expect(refused).toBeInstanceOf(kind);
  });
});
