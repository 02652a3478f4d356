import { v1Routes } from '../../src/dialects/v1/routes';
import { v2ListKeys } from '../../src/dialects/v2/apis/listKeys';
import { v2ErrorType } from '../../src/dialects/v2/errors';
import { heldBody, linkRefs } from '../../src/dialects/v2/keys/links';
import { updateKeyInput, v2UpdateKey } from '../../src/dialects/v2/keys/updateKey';
import { v2UpdateCredits } from '../../src/dialects/v2/keys/updateRemaining';
import { toKeyFields } from '../../src/operations/keys/fields';
import { inV2Terms } from '../../src/dialects/v2/route';
import type { KeyRecord } from '../../src/domain/key';
import {
  AnalyticsNotConfiguredError,
  BadRequestError,
  NotFoundError,
  PreconditionFailedError,
} from '../../src/errors';
import { addPermissions } from '../../src/operations/keys/addPermissions';
import type { LinkAnswer } from '../../src/operations/keys/linkOperation';
import { removePermissions } from '../../src/operations/keys/removePermissions';
import { setPermissions } from '../../src/operations/keys/setPermissions';
import { updateRemaining } from '../../src/operations/keys/updateRemaining';
import { runOperation, type Operation } from '../../src/operations/operation';
import type { Services } from '../../src/operations/services';
import type { KeyView } from '../../src/operations/views';
import { callerWith, NOW, WS } from './operations/fakes';

describe('updateKeyInput (v2 keys.updateKey → updateKey)', () => {
  test('nulls pass through as "clear"; absent fields stay absent', () => {
    expect(updateKeyInput({ keyId: 'key_1' })).toEqual({ keyId: 'key_1' });
    expect(
      updateKeyInput({ keyId: 'key_1', name: null, externalId: null, meta: null, expires: null }),
    ).toEqual({ keyId: 'key_1', name: null, externalId: null, meta: null, expires: null });
    expect(
      updateKeyInput({ keyId: 'key_1', enabled: false, roles: ['r'], permissions: ['p.x'] }),
    ).toEqual({ keyId: 'key_1', enabled: false, roles: ['r'], permissions: ['p.x'] });
  });

  test.each([
    [null, { remaining: null }],
    [{ remaining: null }, { remaining: null }],
    [{}, {}],
    [{ remaining: 0 }, { remaining: 0 }],
    [{ refill: null }, { refill: null }],
    [
      { remaining: 5, refill: { interval: 'monthly', amount: 9, refillDay: 4 } },
      { remaining: 5, refill: { interval: 'monthly', amount: 9, refillDay: 4 } },
    ],
    [{ refill: { interval: 'daily', amount: 2 } }, { refill: { interval: 'daily', amount: 2 } }],
  ] as const)('credits %j become %j', (credits, fields) => {
    expect(updateKeyInput({ keyId: 'key_1', credits })).toEqual({ keyId: 'key_1', ...fields });
  });

  test('credits the operation refuses are its rules, named by their v2 path', () => {
    const refusal = (credits: Parameters<typeof updateKeyInput>[0]['credits']) => {
      try {
        toKeyFields(updateKeyInput({ keyId: 'key_1', credits }), NOW, true);
      } catch (error) {
        return (v2UpdateKey.refusal!(error) as BadRequestError).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal({ remaining: null, refill: { interval: 'daily', amount: 1 } })).toBe(
      'credits.refill: requires remaining',
    );
    expect(refusal({ refill: { interval: 'daily', amount: 1, refillDay: 2 } })).toBe(
      'credits.refill.refillDay: only allowed with interval monthly',
    );
  });

  test('ratelimits are every limit afterwards: without `default`, the seed limit goes too', () => {
    const requests = { name: 'requests', limit: 5, duration: 1000 };
    const seed = { name: 'default', limit: 9, duration: 1000, autoApply: true };
    expect(updateKeyInput({ keyId: 'k', ratelimits: [requests] })).toEqual({
      keyId: 'k',
      ratelimits: [requests],
      ratelimit: null,
    });
    expect(updateKeyInput({ keyId: 'k', ratelimits: [requests, seed] })).toEqual({
      keyId: 'k',
      ratelimits: [requests, seed],
    });
    expect(updateKeyInput({ keyId: 'k', ratelimits: [] })).toEqual({
      keyId: 'k',
      ratelimits: [],
      ratelimit: null,
    });
    expect(updateKeyInput({ keyId: 'k', ratelimits: null })).toEqual({
      keyId: 'k',
      ratelimits: null,
      ratelimit: null,
    });
  });
});

describe('v2 keys.updateCredits', () => {
  test('operation and value become updateRemaining’s op and value', () => {
    expect(v2UpdateCredits.toInput({ keyId: 'k', operation: 'increment', value: 3 })).toEqual({
      keyId: 'k',
      op: 'increment',
      value: 3,
    });
    // Unkey v2's decrement stops at zero.
    expect(v2UpdateCredits.toInput({ keyId: 'k', operation: 'decrement', value: 3 })).toEqual({
      keyId: 'k',
      op: 'decrementToZero',
      value: 3,
    });
  });

  test.each([{ operation: 'set', value: null }, { operation: 'set' }] as const)(
    '%j is set to unlimited usage',
    (body) => {
      expect(v2UpdateCredits.toInput({ keyId: 'k', ...body })).toEqual({
        keyId: 'k',
        op: 'set',
        value: null,
      });
    },
  );

  test.each([[{ operation: 'increment' }], [{ operation: 'decrement', value: null }]] as const)(
    '%j is refused by the operation’s own check, as v1’s would be',
    (body) => {
      const input = v2UpdateCredits.toInput({ keyId: 'k', ...body });
      expect(() => updateRemaining.check!(input)).toThrow(
        'value: is required to increment or decrement',
      );
    },
  );

  test('a key without credits cannot be incremented: v2 answers 400 where v1 answers 412', () => {
    const refusal = v2UpdateCredits.refusal!(
      new PreconditionFailedError('key k has unlimited usage'),
    );
    expect(refusal).toEqual(new BadRequestError('operation: key k has unlimited usage'));
    const other = new NotFoundError('key', 'key k not found');
    expect(v2UpdateCredits.refusal!(other)).toBe(other);
  });

  test('the answer is KeyCreditsData: the count, and the refill when the key has one', () => {
    expect(v2UpdateCredits.toBody({ remaining: 4 }, {} as never)).toEqual({
      data: { remaining: 4 },
    });
    const refilled = { remaining: 4, refill: { interval: 'monthly', amount: 8, refillDay: 1 } };
    expect(v2UpdateCredits.toBody(refilled as never, {} as never)).toEqual({
      data: { remaining: 4, refill: { interval: 'monthly', amount: 8, refillDay: 1 } },
    });
  });
});

describe('v2 permission and role links', () => {
  test('names only: permissions to add or set are created when missing, roles never', () => {
    expect(linkRefs('permissions', 'add', ['a.b'])).toEqual([{ name: 'a.b', create: true }]);
    expect(linkRefs('permissions', 'set', ['a.b'])).toEqual([{ name: 'a.b', create: true }]);
    expect(linkRefs('permissions', 'remove', ['a.b'])).toEqual([{ name: 'a.b' }]);
    for (const op of ['add', 'remove', 'set'] as const) {
      expect(linkRefs('roles', op, ['admin'])).toEqual([{ name: 'admin' }]);
    }
  });

  test('a permission is answered with its name as its slug; a role by id and name', () => {
    const held = [{ id: 'perm_1', name: 'a.read' }];
    expect(heldBody('permissions', held)).toEqual([
      { id: 'perm_1', name: 'a.read', slug: 'a.read' },
    ]);
    expect(heldBody('roles', [{ id: 'role_1', name: 'Admin' }])).toEqual([
      { id: 'role_1', name: 'Admin' },
    ]);
  });
});

describe('the link operations carry what the key holds afterwards, unseen by v1', () => {
  const key = {
    id: 'key_1',
    workspaceId: WS,
    apiId: 'api_1',
    hash: 'h',
    start: 's',
    createdAt: NOW,
    enabled: true,
    permissionIds: ['perm_a', 'perm_gone'],
    version: 1,
    seq: 1,
  } as KeyRecord;
  const catalogue = {
    permissions: new Map([
      ['perm_a', 'a.read'],
      ['perm_b', 'b.read'],
    ]),
    roles: new Map(),
  };
  const changes: unknown[][] = [];
  const deps = {
    keys: { get: async () => key },
    directory: { liveApi: async () => true },
    rbac: {
      catalogue: async () => catalogue,
      changeKeyLinks: async (...args: unknown[]) => void changes.push(args.slice(3, 5)),
    },
    now: () => NOW,
  } as unknown as Services;
  const run = (operation: typeof addPermissions, names: string[]) =>
    runOperation(operation, deps, callerWith(['*']), {
      keyId: key.id,
      permissions: names.map((name) => ({ name })),
    }) as Promise<LinkAnswer>;

  const v1Body = (operation: Operation, answer: LinkAnswer) =>
    JSON.stringify(v1Routes.find((route) => route.operation === operation)!.toBody(answer, {}));

  test('add: v1 answers what it linked, held is everything', async () => {
    const answer = await run(addPermissions, ['b.read']);
    expect(v1Body(addPermissions as Operation, answer)).toBe('[{"id":"perm_b","name":"b.read"}]');
    expect(answer.held).toEqual([
      { id: 'perm_a', name: 'a.read' },
      { id: 'perm_b', name: 'b.read' },
    ]);
  });

  test('remove: v1 answers {}, held is what is left', async () => {
    const answer = await run(removePermissions, ['a.read', 'b.read']);
    expect(v1Body(removePermissions as Operation, answer)).toBe('{}');
    expect(answer.held).toEqual([]);
    expect(changes.at(-1)).toEqual(['remove', ['perm_a']]);
  });

  test('set: both are what the key holds now', async () => {
    const answer = await run(setPermissions, ['b.read']);
    expect(v1Body(setPermissions as Operation, answer)).toBe('[{"id":"perm_b","name":"b.read"}]');
    expect(answer.held).toEqual([{ id: 'perm_b', name: 'b.read' }]);
  });
});

test('updateRemaining answers the refill beside the count; v1 writes only {remaining}', async () => {
  const key = {
    id: 'key_1',
    workspaceId: WS,
    apiId: 'api_1',
    credits: {
      refill: { interval: 'daily', amount: 10 },
      reset: { nonce: '1', value: 5, at: NOW },
    },
  } as KeyRecord;
  const deps = {
    keys: { get: async () => key, updateCredits: async () => 7 },
    directory: { liveApi: async () => true },
    now: () => NOW,
  } as unknown as Services;
  const answer = await runOperation(updateRemaining, deps, callerWith(['*']), {
    keyId: key.id,
    op: 'increment',
    value: 2,
  });
  const v1 = v1Routes.find((route) => route.operation === (updateRemaining as Operation))!;
  expect(JSON.stringify(v1.toBody(answer, {}))).toBe('{"remaining":7}');
  expect(answer.refill).toEqual({ interval: 'daily', amount: 10 });
});

describe('v2 apis.listKeys', () => {
  const view = { id: 'key_1', start: 'ab', enabled: true, createdAt: NOW } as KeyView;

  test('pagination: the cursor and hasMore when more follow, hasMore false alone at the end', () => {
    const body = { apiId: 'api_1' };
    expect(v2ListKeys.toBody({ keys: [view], total: 3, cursor: '7' }, body)).toEqual({
      data: [{ keyId: 'key_1', start: 'ab', enabled: true, createdAt: NOW }],
      pagination: { cursor: '7', hasMore: true },
    });
    expect(v2ListKeys.toBody({ keys: [], total: 0 }, body)).toEqual({
      data: [],
      pagination: { hasMore: false },
    });
  });

  test('externalId filters; revalidateKeysCache changes nothing; decrypt is handed on', () => {
    expect(
      v2ListKeys.toInput({ apiId: 'api_1', externalId: 'u', limit: 5, revalidateKeysCache: true }),
    ).toEqual({ apiId: 'api_1', externalId: 'u', limit: 5 });
    expect(v2ListKeys.toInput({ apiId: 'api_1', decrypt: true })).toEqual({
      apiId: 'api_1',
      decrypt: true,
    });
  });
});

test('a 412 for analytics not configured is Unkey’s analytics_not_configured; any other is precondition_failed', () => {
  expect(v2ErrorType(new AnalyticsNotConfiguredError('not configured'))).toBe(
    'https://unkey.com/docs/errors/unkey/data/analytics_not_configured',
  );
  expect(v2ErrorType(new PreconditionFailedError('key key_1 has unlimited usage'))).toBe(
    'https://unkey.com/docs/errors/unkey/application/precondition_failed',
  );
});

describe('inV2Terms: an operation’s 400 names the field as the v2 client sent it', () => {
  const names = {
    remaining: 'credits.remaining',
    refill: 'credits.refill',
    'authorization.permissions': 'permissions',
  };
  test.each<[(string | number)[], (string | number)[]]>([
    [['refill'], ['credits', 'refill']],
    [
      ['refill', 'refillDay'],
      ['credits', 'refill', 'refillDay'],
    ],
    [['authorization', 'permissions'], ['permissions']],
    [
      ['authorization', 'permissions', 0],
      ['permissions', 0],
    ],
    [['remainingX'], ['remainingX']],
    [['expires'], ['expires']],
    [['authorization'], ['authorization']],
  ])('%j becomes %j', (path, expected) => {
    const renamed = inV2Terms(new BadRequestError([{ path, message: 'm' }]), names);
    expect((renamed as BadRequestError).problems).toEqual([{ path: expected, message: 'm' }]);
  });

  test('every problem is renamed, and the refusal keeps its kind and status', () => {
    const query = new BadRequestError(
      [
        { path: ['authorization', 'permissions'], message: 'unknown operator' },
        { path: ['remaining'], message: 'must be integer' },
      ],
      { kind: 'permission_query' },
    );
    const renamed = inV2Terms(query, names) as BadRequestError;
    expect(renamed.problems.map((problem) => problem.path)).toEqual([
      ['permissions'],
      ['credits', 'remaining'],
    ]);
    expect(renamed.kind).toBe('permission_query');
    expect(renamed.status).toBe(400);
    expect(renamed.message).toBe('permissions: unknown operator');
  });

  test('other errors, and routes without names, pass through as they are', () => {
    const notFound = new NotFoundError('key', 'key key_1 not found');
    expect(inV2Terms(notFound, names)).toBe(notFound);
    const bad = new BadRequestError('refill: requires remaining');
    expect(inV2Terms(bad, undefined)).toBe(bad);
  });
});
