import type { IdentityRecord } from '../../../src/domain/identity';
import type { VerifiableKey } from '../../../src/domain/key';
import { BadRequestError, InsufficientPermissionsError } from '../../../src/errors';
import { generateKey, hashKey } from '../../../src/keys/keyMaterial';
import type { ChargeOutcome, Limiter } from '../../../src/limiter/limiter';
import { DECIDED_AT, type BucketDecision } from '../../../src/limiter/tokenBucket';
import type { RatelimitConfig } from '../../../src/domain/ratelimit';
import { KEY_API } from '../../../src/operations/keys/verification';
import {
  BAD_CHECKSUM,
  decideVerification,
  type VerifyDeps,
  type VerifyKeyInput,
} from '../../../src/operations/keys/verifyKey';
import { isRedisUnavailable } from '../../../src/redis/failures';
import type { RbacCatalogue } from '../../../src/store/rbacStore';
import { callerWith, NOW, thrownBy, WS } from './fakes';

const PLAINTEXT = 'kw_3ZbqPlaintextSecret';
const RATELIMIT: RatelimitConfig = {
  type: 'consistent',
  limit: 10,
  refillRate: 10,
  refillInterval: 1000,
};
const CREDITS: NonNullable<VerifiableKey['credits']> = {
  reset: { nonce: 'n1', value: 5, at: NOW - 1000 },
};

function keyWith(overrides: Partial<VerifiableKey> = {}): VerifiableKey {
  return { id: 'key_1', workspaceId: WS, apiId: 'api_1', enabled: true, ...overrides };
}

type CheckArgs = Parameters<Limiter['check']>;
type ChargeArgs = Parameters<Limiter['charge']>;

class FakeLimiter implements Pick<Limiter, 'check' | 'charge'> {
  readonly calls: CheckArgs[] = [];
  readonly charges: ChargeArgs[] = [];
  constructor(private readonly outcome: BucketDecision | Error) {}
  async check(...args: CheckArgs): Promise<BucketDecision> {
    this.calls.push(args);
    if (this.outcome instanceof Error) throw this.outcome;
    return this.outcome;
  }
  /** Every charged limit stands as the single-bucket outcome says. */
  async charge(...args: ChargeArgs): Promise<ChargeOutcome> {
    this.charges.push(args);
    if (this.outcome instanceof Error) throw this.outcome;
    const { allowed, usageExceeded, remaining, reset, now, creditsRemaining } = this.outcome;
    return {
      allowed,
      usageExceeded,
      standings: args[0].map(() => ({ remaining, reset, exceeded: !allowed && !usageExceeded })),
      now,
      ...(creditsRemaining !== undefined ? { creditsRemaining } : {}),
    };
  }
}

type DirectoryLookup = VerifyDeps['directory'];

class FakeDirectory implements DirectoryLookup {
  readonly lookups: [string, string][] = [];
  /** The workspace's permissions and roles: `read.docs` held through the role `reader`. */
  readonly rbac: RbacCatalogue = {
    permissions: new Map([
      ['perm_read', 'read.docs'],
      ['perm_write', 'write.docs'],
    ]),
    roles: new Map([
      ['role_reader', { name: 'reader', permissionIds: ['perm_read', 'perm_gone'] }],
    ]),
  };
  /** One identity, `identity_1`, with a shared limit and one the key overrides. */
  readonly identities = new Map<string, IdentityRecord>([
    [
      'identity_1',
      {
        id: 'identity_1',
        workspaceId: WS,
        externalId: 'user_1',
        createdAt: NOW - 1,
        ratelimits: [
          { name: 'shared', type: 'consistent', limit: 3, duration: 1000, autoApply: true },
          { name: 'tokens', type: 'consistent', limit: 99, duration: 1000, autoApply: false },
        ],
      },
    ],
  ]);
  constructor(private readonly stored: VerifiableKey | undefined) {}
  async identity(ws: string, id: string): Promise<IdentityRecord | undefined> {
    return ws === WS ? this.identities.get(id) : undefined;
  }
  async catalogue(ws: string): Promise<RbacCatalogue> {
    expect(ws).toBe(WS);
    return this.rbac;
  }
  async keyByHash(ws: string, hash: string): Promise<VerifiableKey | undefined> {
    this.lookups.push([ws, hash]);
    return ws === WS && hash === hashKey(PLAINTEXT) ? this.stored : undefined;
  }
}

const ADMIT: BucketDecision = {
  allowed: true,
  usageExceeded: false,
  limit: 10,
  remaining: 9,
  reset: NOW + 100,
  now: NOW + 1,
  creditsRemaining: 4,
};

function setup(
  stored: VerifiableKey | undefined,
  outcome: BucketDecision | Error = ADMIT,
  limiterFailure: VerifyDeps['limiterFailure'] = 'closed',
) {
  const limiter = new FakeLimiter(outcome);
  const directory = new FakeDirectory(stored);
  const deps: VerifyDeps = { directory, limiter, limiterFailure, now: () => NOW };
  return { deps, limiter, directory };
}

const verify = (input: Partial<VerifyKeyInput> = {}) => ({ key: PLAINTEXT, ...input });

describe('decideVerification: the first failing check decides, in contract order', () => {
  const failingEverything: Partial<VerifiableKey> = {
    enabled: false,
    expires: NOW - 1,
    ratelimit: RATELIMIT,
    credits: CREDITS,
  };
  test.each<[string, VerifiableKey | undefined, Partial<VerifyKeyInput>, string]>([
    [
      'unknown key, with every other failure asked for',
      undefined,
      { apiId: 'api_2', authorization: { permissions: 'p' } },
      'NOT_FOUND',
    ],
    [
      'disabled + wrong api + expired + permissions',
      keyWith(failingEverything),
      { apiId: 'api_2', authorization: { permissions: 'p' } },
      'DISABLED',
    ],
    ['disabled + expired', keyWith({ enabled: false, expires: NOW - 1 }), {}, 'DISABLED'],
    [
      'wrong api + expired + permissions',
      keyWith({ ...failingEverything, enabled: true }),
      { apiId: 'api_2', authorization: { permissions: 'p' } },
      'FORBIDDEN',
    ],
    [
      'expired + permissions',
      keyWith({ ...failingEverything, enabled: true }),
      { apiId: 'api_1', authorization: { permissions: 'p' } },
      'EXPIRED',
    ],
    ['expires exactly now', keyWith({ expires: NOW, ratelimit: RATELIMIT }), {}, 'EXPIRED'],
    [
      'permissions only',
      keyWith({ ratelimit: RATELIMIT, credits: CREDITS }),
      { authorization: { permissions: { and: ['a'] } } },
      'INSUFFICIENT_PERMISSIONS',
    ],
    [
      'a query in the v2 string grammar, not held',
      keyWith({ ratelimit: RATELIMIT }),
      { authorization: { permissions: 'a.read OR (b.write AND c.admin)' } },
      'INSUFFICIENT_PERMISSIONS',
    ],
  ])('%s → %s, and the limiter is never called', async (_name, stored, input, code) => {
    const { deps, limiter } = setup(stored);
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify(input));
    expect(result.code).toBe(code);
    expect(result.valid).toBe(false);
    expect(limiter.calls).toHaveLength(0);
  });

  test.each<[string, Partial<VerifiableKey>, Partial<VerifyKeyInput>]>([
    ['ratelimit only', { ratelimit: RATELIMIT }, {}],
    ['credits only', { credits: CREDITS }, {}],
    [
      'both, apiId matching, expiring later',
      { ratelimit: RATELIMIT, credits: CREDITS, expires: NOW + 1 },
      { apiId: 'api_1' },
    ],
  ])('every check passes (%s) → the limiter is asked exactly once', async (_name, props, input) => {
    const { deps, limiter } = setup(keyWith(props));
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify(input));
    expect(result.code).toBe('VALID');
    expect(result.valid).toBe(true);
    expect(limiter.calls).toHaveLength(1);
  });

  test.each([
    ['an empty `and`', { and: [] }],
    ['an unknown operator', 'a XOR b'],
    ['a stray parenthesis', 'a)'],
  ])('a malformed query (%s) is a 400 before any lookup', async (_name, permissions) => {
    const { deps, limiter, directory } = setup(keyWith({ ratelimit: RATELIMIT }));
    await expect(
      decideVerification(
        deps,
        callerWith(['api.*.verify_key']),
        verify({ authorization: { permissions } }),
      ),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect([directory.lookups.length, limiter.calls.length]).toEqual([0, 0]);
  });

  test('a key with neither ratelimit nor credits is VALID without reaching the limiter', async () => {
    const { deps, limiter } = setup(keyWith({ expires: NOW + 1 }), new Error('must not be called'));
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result).toEqual({
      valid: true,
      code: 'VALID',
      keyId: 'key_1',
      enabled: true,
      requestId: 'req_test',
      expires: NOW + 1,
      // Never answered (a symbol): what usage analytics count the verification under.
      [KEY_API]: 'api_1',
    });
    expect(limiter.calls).toHaveLength(0);
  });

  test('NOT_FOUND holds only valid, code and requestId', async () => {
    const { deps, directory } = setup(undefined);
    const caller = callerWith(['api.*.verify_key']);
    const result = await decideVerification(deps, caller, verify());
    expect(Object.keys(result)).toEqual(['valid', 'code', 'requestId']);
    expect(result).toEqual({ valid: false, code: 'NOT_FOUND', requestId: 'req_test' });
    expect(directory.lookups).toEqual([[WS, hashKey(PLAINTEXT)]]);
    expect(caller.logFields).toEqual({});
  });
});

describe('decideVerification: the checksum', () => {
  const issued = generateKey('sk_live').plaintext;
  /** The issued key with its last character changed: the checksum no longer matches. */
  const badChecksum = issued.slice(0, -1) + (issued.endsWith('2') ? '3' : '2');

  test('a wrong checksum is NOT_FOUND without hashing or looking the key up', async () => {
    const { deps, directory, limiter } = setup(keyWith({ ratelimit: RATELIMIT }));
    const caller = callerWith(['api.*.verify_key']);
    const result = await decideVerification(deps, caller, verify({ key: badChecksum }));
    expect(result).toEqual({ valid: false, code: 'NOT_FOUND', requestId: 'req_test' });
    expect([directory.lookups.length, limiter.calls.length]).toEqual([0, 0]);
    // No key id (requestLog counts it as an unknown key); the mode tells why.
    expect(caller.logFields).toEqual({ mode: BAD_CHECKSUM });
  });

  test.each([
    ['an issued key with the right checksum', issued],
    ['a key without one (imported, or older than the format)', PLAINTEXT],
  ])('%s is looked up by its hash', async (_name, key) => {
    const { deps, directory } = setup(undefined);
    const caller = callerWith(['api.*.verify_key']);
    const result = await decideVerification(deps, caller, verify({ key }));
    expect(result.code).toBe('NOT_FOUND');
    expect(directory.lookups).toEqual([[WS, hashKey(key)]]);
    expect(caller.logFields).toEqual({});
  });

  test('the apiId precheck (403) and a malformed query (400) still come first', async () => {
    const { deps, directory } = setup(undefined);
    const refusal = await thrownBy(() =>
      decideVerification(
        deps,
        callerWith(['api.api_1.verify_key']),
        verify({ key: badChecksum, apiId: 'api_2' }),
      ),
    );
    expect(refusal).toBeInstanceOf(InsufficientPermissionsError);
    await expect(
      decideVerification(
        deps,
        callerWith(['api.*.verify_key']),
        verify({ key: badChecksum, authorization: { permissions: 'a)' } }),
      ),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(directory.lookups).toHaveLength(0);
  });
});

describe('decideVerification: the limiter decides last', () => {
  test('the limiter is asked with the key, its ratelimit, ratelimit.cost and the credits spend', async () => {
    const { deps, limiter } = setup(keyWith({ ratelimit: RATELIMIT, credits: CREDITS }));
    const input = verify({ ratelimit: { cost: 3 }, remaining: { cost: 2 } });
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), input);
    expect(limiter.calls).toEqual([['key_1', RATELIMIT, 3, { cost: 2, reset: CREDITS.reset }]]);
    expect(result.ratelimit).toEqual({ limit: 10, remaining: 9, reset: NOW + 100 });
    expect(result.remaining).toBe(4);
    expect(result[DECIDED_AT]).toBe(NOW + 1);
  });

  test('costs default to 1, and a key without credits spends none', async () => {
    const { deps, limiter } = setup(keyWith({ ratelimit: RATELIMIT }), {
      ...ADMIT,
      creditsRemaining: undefined,
    });
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(limiter.calls).toEqual([['key_1', RATELIMIT, 1, undefined]]);
    expect(result).not.toHaveProperty('remaining');
  });

  test.each<[string, string, Partial<BucketDecision>]>([
    [
      'bucket refused',
      'RATE_LIMITED',
      { allowed: false, usageExceeded: false, remaining: 0, creditsRemaining: undefined },
    ],
    [
      'credits refused',
      'USAGE_EXCEEDED',
      { allowed: false, usageExceeded: true, creditsRemaining: 0 },
    ],
    ['admitted', 'VALID', { allowed: true, usageExceeded: false }],
  ])('%s → %s', async (_name, code, decision) => {
    const { deps } = setup(keyWith({ ratelimit: RATELIMIT, credits: CREDITS }), {
      ...ADMIT,
      ...decision,
    });
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result.code).toBe(code);
    expect(result.valid).toBe(code === 'VALID');
    expect(result.keyId).toBe('key_1');
    expect(result.evaluated).toBeUndefined();
  });

  test('asking for the list of limits, naming none, takes the same one-bucket path and lists the seed', async () => {
    const { deps, limiter } = setup(keyWith({ ratelimit: RATELIMIT }), {
      ...ADMIT,
      creditsRemaining: undefined,
    });
    const caller = callerWith(['api.*.verify_key']);
    const listed = await decideVerification(deps, caller, verify({ ratelimits: [] }));
    const plain = await decideVerification(deps, caller, verify());
    expect(limiter.charges).toEqual([]);
    expect(limiter.calls).toEqual([
      ['key_1', RATELIMIT, 1, undefined],
      ['key_1', RATELIMIT, 1, undefined],
    ]);
    expect(listed.ratelimits).toEqual([
      {
        name: 'default',
        limit: 10,
        duration: 1000,
        autoApply: true,
        owner: 'key_1',
        remaining: 9,
        reset: NOW + 100,
        exceeded: false,
      },
    ]);
    expect(plain).not.toHaveProperty('ratelimits');
    expect(listed.ratelimit).toEqual(plain.ratelimit);
  });

  test('a refused bucket reports no credits (they were not spent)', async () => {
    const { deps } = setup(keyWith({ ratelimit: RATELIMIT, credits: CREDITS }), {
      ...ADMIT,
      allowed: false,
      remaining: 0,
      creditsRemaining: undefined,
    });
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result.code).toBe('RATE_LIMITED');
    expect(result).not.toHaveProperty('remaining');
    expect(result.ratelimit).toEqual({ limit: 10, remaining: 0, reset: NOW + 100 });
  });
});

describe('decideVerification: an unreachable limiter', () => {
  const unreachable = new Error('connect ECONNREFUSED 127.0.0.1:6379');

  test('the fake error is one isRedisUnavailable recognises', () => {
    expect(isRedisUnavailable(unreachable)).toBe(true);
  });

  test.each<['closed' | 'open', string, boolean]>([
    ['closed', 'LIMITER_UNAVAILABLE', false],
    ['open', 'VALID', true],
  ])('policy %s → %s with evaluated: false', async (policy, code, valid) => {
    const { deps, limiter } = setup(
      keyWith({ ratelimit: RATELIMIT, credits: CREDITS }),
      unreachable,
      policy,
    );
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(limiter.calls).toHaveLength(1);
    expect(result.code).toBe(code);
    expect(result.valid).toBe(valid);
    expect(result.evaluated).toBe(false);
    expect(result.ratelimit).toEqual({ limit: 10, evaluated: false });
    expect(result).not.toHaveProperty('remaining');
  });

  test('credits only, closed → LIMITER_UNAVAILABLE without a ratelimit field', async () => {
    const { deps } = setup(keyWith({ credits: CREDITS }), new Error('Command timed out'), 'closed');
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result.code).toBe('LIMITER_UNAVAILABLE');
    expect(result.evaluated).toBe(false);
    expect(result).not.toHaveProperty('ratelimit');
  });

  test('any other limiter error is not swallowed, whatever the policy', async () => {
    const bug = new Error('ERR Error running script');
    expect(isRedisUnavailable(bug)).toBe(false);
    const { deps } = setup(keyWith({ ratelimit: RATELIMIT }), bug, 'open');
    await expect(decideVerification(deps, callerWith(['api.*.verify_key']), verify())).rejects.toBe(
      bug,
    );
  });
});

describe('decideVerification: root keys scoped to another API', () => {
  const scoped = () => callerWith(['api.api_other.verify_key']);

  test('passing its own apiId for a key of another API → FORBIDDEN with no key details', async () => {
    const { deps, limiter } = setup(
      keyWith({ name: 'n', ownerId: 'o', meta: { a: 1 }, expires: NOW + 5, ratelimit: RATELIMIT }),
    );
    const result = await decideVerification(deps, scoped(), verify({ apiId: 'api_other' }));
    expect(result).toEqual({ valid: false, code: 'FORBIDDEN', requestId: 'req_test' });
    expect(Object.keys(result)).toEqual(['valid', 'code', 'requestId']);
    expect(limiter.calls).toHaveLength(0);
  });

  test('a disabled key of another API is FORBIDDEN too: its state is not revealed', async () => {
    const { deps } = setup(keyWith({ enabled: false }));
    const result = await decideVerification(deps, scoped(), verify({ apiId: 'api_other' }));
    expect(result).toEqual({ valid: false, code: 'FORBIDDEN', requestId: 'req_test' });
  });

  test('a root key of all APIs passing the wrong apiId gets FORBIDDEN with the details', async () => {
    const { deps } = setup(keyWith({ name: 'n' }));
    const result = await decideVerification(
      deps,
      callerWith(['api.*.verify_key']),
      verify({ apiId: 'api_2' }),
    );
    expect(result.code).toBe('FORBIDDEN');
    expect(result.keyId).toBe('key_1');
    expect(result.name).toBe('n');
  });

  test('passing no apiId → InsufficientPermissionsError', async () => {
    const { deps, limiter } = setup(keyWith({ ratelimit: RATELIMIT }));
    const error = await thrownBy(() => decideVerification(deps, scoped(), verify()));
    expect(error).toBeInstanceOf(InsufficientPermissionsError);
    expect((error as InsufficientPermissionsError).code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(limiter.calls).toHaveLength(0);
  });

  test('passing the apiId it lacks → InsufficientPermissionsError before any lookup', async () => {
    const { deps, directory } = setup(keyWith());
    const error = await thrownBy(() =>
      decideVerification(deps, scoped(), verify({ apiId: 'api_1' })),
    );
    expect(error).toBeInstanceOf(InsufficientPermissionsError);
    expect((error as InsufficientPermissionsError).permission).toBe('api.api_1.verify_key');
    expect(directory.lookups).toHaveLength(0);
  });

  test('a root key of exactly the key’s API verifies it', async () => {
    const { deps } = setup(keyWith());
    const result = await decideVerification(deps, callerWith(['api.api_1.verify_key']), verify());
    expect(result.code).toBe('VALID');
  });
});

describe('decideVerification: input and answer shape', () => {
  test('a requested limit the key does not have is a BadRequestError naming it', async () => {
    const { deps, limiter } = setup(keyWith({ ratelimit: RATELIMIT }));
    const input = { key: PLAINTEXT, ratelimits: [{ name: 'tokens' }] };
    const error = await thrownBy(() => decideVerification(deps, callerWith(['*']), input));
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toMatch(
      /^ratelimits\[0\]\.name: ratelimit "tokens" was requested but does not exist for key key_1/,
    );
    expect([limiter.calls, limiter.charges]).toEqual([[], []]);
  });

  test('an identity: answered with the limits the key has none of its own for, the key’s winning on a name', async () => {
    const key = keyWith({
      identityId: 'identity_1',
      ownerId: 'user_1',
      ratelimits: [{ name: 'tokens', type: 'fast', limit: 5, duration: 1000, autoApply: false }],
    });
    const { deps, limiter } = setup(key);
    const input = { key: PLAINTEXT, ratelimits: [{ name: 'tokens', cost: 2 }] };
    const result = await decideVerification(deps, callerWith(['*']), input);
    // Its limits as Unkey v2 lists them: `tokens` is the key's own, so only `shared` is shown.
    expect(result.identity).toEqual({
      id: 'identity_1',
      externalId: 'user_1',
      meta: {},
      ratelimits: [
        { name: 'shared', type: 'consistent', limit: 3, duration: 1000, autoApply: true },
      ],
    });
    const [charges] = limiter.charges[0]!;
    expect(charges.map(({ bucketKey, config, cost }) => [bucketKey, config.type, cost])).toEqual([
      ['keyward:bucket:{identity_1}:shared', 'consistent', 1],
      ['keyward:bucket:{key_1}:tokens', 'fast', 2],
    ]);
  });

  test('a key whose identity is gone verifies without one', async () => {
    const { deps, limiter } = setup(keyWith({ identityId: 'identity_gone' }));
    const result = await decideVerification(deps, callerWith(['*']), verify());
    expect(result).toMatchObject({ code: 'VALID' });
    expect(result.identity).toBeUndefined();
    expect([limiter.calls, limiter.charges]).toEqual([[], []]);
  });

  test('named limits: one charge of every applied limit and the credits, each answered', async () => {
    const key = keyWith({
      ratelimit: RATELIMIT,
      credits: CREDITS,
      ratelimits: [
        { name: 'tokens', type: 'fast', limit: 50, duration: 60_000, autoApply: false },
        { name: 'hourly', type: 'consistent', limit: 7, duration: 3_600_000, autoApply: true },
      ],
    });
    const { deps, limiter } = setup(key);
    const input = { key: PLAINTEXT, ratelimits: [{ name: 'tokens', cost: 5 }] };
    const result = await decideVerification(deps, callerWith(['*']), input);
    expect(limiter.calls).toEqual([]);
    const [charges, credits] = limiter.charges[0]!;
    expect(charges.map(({ bucketKey, tag, cost }) => [bucketKey, tag, cost])).toEqual([
      ['keyward:bucket:{key_1}', 'key_1', 1],
      ['keyward:bucket:{key_1}:hourly', 'key_1', 1],
      ['keyward:bucket:{key_1}:tokens', 'key_1', 5],
    ]);
    expect(credits).toEqual({
      key: { owner: 'key_1', spend: expect.objectContaining({ cost: 1 }) },
    });
    // Each standing names its owner (the key here) for the v2 dialect's limit ids.
    const standing = { remaining: 9, reset: NOW + 100, exceeded: false, owner: 'key_1' };
    expect(result.ratelimits).toEqual([
      { name: 'default', limit: 10, duration: 1000, autoApply: true, ...standing },
      { name: 'hourly', limit: 7, duration: 3_600_000, autoApply: true, ...standing },
      { name: 'tokens', limit: 50, duration: 60_000, autoApply: false, ...standing },
    ]);
    expect(result.ratelimit).toEqual({ limit: 10, remaining: 9, reset: NOW + 100 });
    expect(result.remaining).toBe(4);
  });

  test.each<[string, Partial<VerifiableKey>]>([
    ['VALID', {}],
    ['DISABLED', { enabled: false }],
  ])(
    '%s: fields in the order valid, code, keyId, enabled, requestId, name, ownerId, meta, expires',
    async (code, props) => {
      const { deps } = setup(
        keyWith({
          meta: { plan: 'pro' },
          expires: NOW + 60_000,
          ownerId: 'user_1',
          name: 'web',
          ...props,
        }),
      );
      const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
      expect(result.code).toBe(code);
      expect(Object.keys(result)).toEqual([
        'valid',
        'code',
        'keyId',
        'enabled',
        'requestId',
        'name',
        'ownerId',
        'meta',
        'expires',
      ]);
      expect(result.enabled).toBe(code === 'VALID');
      expect(result.meta).toEqual({ plan: 'pro' });
    },
  );

  test.each<[string, Partial<VerifiableKey>, { keyId?: string; mode?: string }]>([
    [
      'fast ratelimit',
      { ratelimit: { ...RATELIMIT, type: 'fast' } },
      { keyId: 'key_1', mode: 'fast' },
    ],
    ['consistent ratelimit', { ratelimit: RATELIMIT }, { keyId: 'key_1', mode: 'consistent' }],
    ['no ratelimit', { credits: CREDITS }, { keyId: 'key_1' }],
    [
      'disabled, with a ratelimit',
      { enabled: false, ratelimit: RATELIMIT },
      { keyId: 'key_1', mode: 'consistent' },
    ],
  ])('logFields for a key with %s', async (_name, props, logged) => {
    const { deps } = setup(keyWith(props));
    const caller = callerWith(['api.*.verify_key']);
    await decideVerification(deps, caller, verify());
    expect(caller.logFields).toEqual(logged);
  });
});

describe('permissions and roles at verification', () => {
  test.each<[string, Partial<VerifiableKey>, unknown, string]>([
    ['its own permission', { permissionIds: ['perm_write'] }, 'write.docs', 'VALID'],
    ['through a role', { roleIds: ['role_reader'] }, 'read.docs', 'VALID'],
    ['not through a role', { roleIds: ['role_reader'] }, 'write.docs', 'INSUFFICIENT_PERMISSIONS'],
    [
      'both sides of an AND',
      { permissionIds: ['perm_write'], roleIds: ['role_reader'] },
      'read.docs AND write.docs',
      'VALID',
    ],
    [
      'a deleted permission holds nothing',
      { permissionIds: ['perm_gone'] },
      'gone',
      'INSUFFICIENT_PERMISSIONS',
    ],
    [
      'a deleted role holds nothing',
      { roleIds: ['role_gone'] },
      'read.docs',
      'INSUFFICIENT_PERMISSIONS',
    ],
  ])('%s', async (_name, props, permissions, code) => {
    const { deps } = setup(keyWith(props));
    const result = await decideVerification(
      deps,
      callerWith(['api.*.verify_key']),
      verify({ authorization: { permissions } }),
    );
    expect(result.code).toBe(code);
  });

  test('the answer lists every permission the key holds and its roles, sorted', async () => {
    const { deps } = setup(
      keyWith({
        permissionIds: ['perm_write', 'perm_gone'],
        roleIds: ['role_reader', 'role_gone'],
      }),
    );
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result).toMatchObject({ permissions: ['read.docs', 'write.docs'], roles: ['reader'] });
  });

  test('a key that holds nothing answers neither list and never asks for the catalogue', async () => {
    const { deps, directory } = setup(keyWith({}));
    directory.catalogue = () => Promise.reject(new Error('must not be asked'));
    const result = await decideVerification(deps, callerWith(['api.*.verify_key']), verify());
    expect(result).not.toHaveProperty('permissions');
    expect(result).not.toHaveProperty('roles');
  });
});
