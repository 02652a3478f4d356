import type { Namespace } from '../../../src/domain/overrides';
import { BadRequestError, InsufficientPermissionsError, NotFoundError } from '../../../src/errors';
import {
  authorize,
  bindOperation,
  defineOperation,
  runOperation,
  type PermissionRule,
} from '../../../src/operations/operation';
import {
  exactlyOneNamespace,
  requireNamespacePermission,
  resolveNamespace,
} from '../../../src/operations/ratelimits/namespaces';
import type { Services } from '../../../src/operations/services';
import type { RatelimitStore } from '../../../src/store/ratelimitStore';
import { callerWith, NOW, thrownBy, WS } from './fakes';

type NamespaceLookups = Pick<
  RatelimitStore,
  'namespaceById' | 'namespaceByName' | 'ensureNamespace'
>;

class FakeNamespaces implements NamespaceLookups {
  readonly calls: string[] = [];
  readonly ensured: [string, string, string, number][] = [];
  constructor(private readonly known: Namespace[]) {}
  async namespaceById(ws: string, id: string): Promise<Namespace | undefined> {
    this.calls.push(`byId ${id}`);
    return ws === WS ? this.known.find((ns) => ns.id === id) : undefined;
  }
  async namespaceByName(ws: string, name: string): Promise<Namespace | undefined> {
    this.calls.push(`byName ${name}`);
    return ws === WS ? this.known.find((ns) => ns.name === name) : undefined;
  }
  async ensureNamespace(ws: string, name: string, newId: string, now: number): Promise<Namespace> {
    this.calls.push(`ensure ${name}`);
    this.ensured.push([ws, name, newId, now]);
    return { id: newId, name };
  }
}

const PAYMENTS: Namespace = { id: 'rlns_pay', name: 'payments.eu' };

function setup(known: Namespace[] = [PAYMENTS]) {
  const ratelimits = new FakeNamespaces(known);
  return { ratelimits, deps: { ratelimits, now: () => NOW } };
}

async function refusedPermission(run: () => unknown): Promise<string> {
  const error = await thrownBy(run);
  expect(error).toBeInstanceOf(InsufficientPermissionsError);
  const refused = error as InsufficientPermissionsError;
  expect(refused.code).toBe('INSUFFICIENT_PERMISSIONS');
  expect(refused.status).toBe(403);
  expect(refused.message).toBe(`this root key lacks the permission ${refused.permission}`);
  return refused.permission;
}

describe('exactlyOneNamespace', () => {
  test.each([
    ['both', { namespaceId: 'rlns_1', namespaceName: 'n' }],
    ['neither', {}],
  ])('%s → refused', async (_name, input) => {
    const error = await thrownBy(() => exactlyOneNamespace(input));
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toBe(
      'namespaceId: give either namespaceId or namespaceName',
    );
  });

  test.each([
    ['id', { namespaceId: 'rlns_1' }],
    ['name', { namespaceName: 'n' }],
    ['empty name still counts as given', { namespaceName: '' }],
  ])('%s only → accepted', (_name, input) => {
    expect(exactlyOneNamespace(input)).toBeUndefined();
  });
});

describe('requireNamespacePermission', () => {
  test.each<[string, string[]]>([
    ['by name', ['ratelimit.payments.eu.set_override']],
    ['by id', ['ratelimit.rlns_pay.set_override']],
    ['every namespace', ['ratelimit.*.set_override']],
    ['everything', ['*']],
  ])('granted %s', (_name, permissions) => {
    expect(
      requireNamespacePermission(callerWith(permissions), PAYMENTS, 'set_override'),
    ).toBeUndefined();
  });

  test.each<[string, string[]]>([
    ['none', []],
    [
      'another action',
      ['ratelimit.payments.eu.read_override', 'ratelimit.rlns_pay.delete_override'],
    ],
    ['another namespace', ['ratelimit.payments.set_override', 'ratelimit.rlns_other.set_override']],
    ['another resource', ['api.*.set_override']],
  ])('refused with %s, naming the namespace by name', async (_name, permissions) => {
    const caller = callerWith(permissions);
    expect(
      await refusedPermission(() => requireNamespacePermission(caller, PAYMENTS, 'set_override')),
    ).toBe('ratelimit.payments.eu.set_override');
  });
});

describe('resolveNamespace', () => {
  const all = () => callerWith(['ratelimit.*.read_override']);

  test('by id looks up only by id', async () => {
    const { deps, ratelimits } = setup();
    await expect(
      resolveNamespace(deps, all(), { namespaceId: 'rlns_pay' }, 'read_override'),
    ).resolves.toEqual(PAYMENTS);
    expect(ratelimits.calls).toEqual(['byId rlns_pay']);
  });

  test('by name looks up only by name', async () => {
    const { deps, ratelimits } = setup();
    await expect(
      resolveNamespace(deps, all(), { namespaceName: 'payments.eu' }, 'read_override'),
    ).resolves.toEqual(PAYMENTS);
    expect(ratelimits.calls).toEqual(['byName payments.eu']);
  });

  test.each<[string, { namespaceId?: string; namespaceName?: string }, string]>([
    ['unknown id', { namespaceId: 'rlns_nope' }, 'namespace rlns_nope not found'],
    ['unknown name', { namespaceName: 'nope' }, 'namespace nope not found'],
  ])('%s → NotFoundError', async (_name, input, message) => {
    const { deps } = setup();
    const error = await thrownBy(() => resolveNamespace(deps, all(), input, 'read_override'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toBe(message);
  });

  test.each<[string, string[]]>([
    ['by name', ['ratelimit.payments.eu.read_override']],
    ['by id', ['ratelimit.rlns_pay.read_override']],
  ])(
    'a permission naming the namespace %s resolves it, whichever way the input names it',
    async (_name, permissions) => {
      for (const input of [{ namespaceId: 'rlns_pay' }, { namespaceName: 'payments.eu' }]) {
        const { deps } = setup();
        await expect(
          resolveNamespace(deps, callerWith(permissions), input, 'read_override'),
        ).resolves.toEqual(PAYMENTS);
      }
    },
  );

  test('a found namespace the caller may not touch is refused by its name', async () => {
    const { deps } = setup();
    const caller = callerWith(['ratelimit.rlns_other.read_override']);
    expect(
      await refusedPermission(() =>
        resolveNamespace(deps, caller, { namespaceId: 'rlns_pay' }, 'read_override'),
      ),
    ).toBe('ratelimit.payments.eu.read_override');
  });

  test('create makes a missing namespace by name, with a fresh rlns id and the clock', async () => {
    const { deps, ratelimits } = setup([]);
    const caller = callerWith(['ratelimit.fresh.set_override']);
    const namespace = await resolveNamespace(
      deps,
      caller,
      { namespaceName: 'fresh' },
      'set_override',
      true,
    );
    expect(ratelimits.calls).toEqual(['byName fresh', 'ensure fresh']);
    expect(ratelimits.ensured).toHaveLength(1);
    const [ws, name, id, now] = ratelimits.ensured[0]!;
    expect([ws, name, now]).toEqual([WS, 'fresh', NOW]);
    expect(id).toMatch(/^rlns_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(namespace).toEqual({ id, name: 'fresh' });
  });

  test('create without the permission is refused before anything is made', async () => {
    const { deps, ratelimits } = setup([]);
    const caller = callerWith(['ratelimit.other.set_override', 'ratelimit.fresh.read_override']);
    expect(
      await refusedPermission(() =>
        resolveNamespace(deps, caller, { namespaceName: 'fresh' }, 'set_override', true),
      ),
    ).toBe('ratelimit.fresh.set_override');
    expect(ratelimits.ensured).toHaveLength(0);
  });

  test('create never makes a namespace by id', async () => {
    const { deps, ratelimits } = setup([]);
    const error = await thrownBy(() =>
      resolveNamespace(deps, callerWith(['*']), { namespaceId: 'rlns_new' }, 'set_override', true),
    );
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toBe('namespace rlns_new not found');
    expect(ratelimits.ensured).toHaveLength(0);
  });

  test('without create a missing name is not made', async () => {
    const { deps, ratelimits } = setup([]);
    await expect(
      thrownBy(() =>
        resolveNamespace(deps, callerWith(['*']), { namespaceName: 'fresh' }, 'set_override'),
      ),
    ).resolves.toBeInstanceOf(NotFoundError);
    expect(ratelimits.calls).toEqual(['byName fresh']);
  });

  test('create on an existing namespace does not make it again', async () => {
    const { deps, ratelimits } = setup();
    const caller = callerWith(['ratelimit.rlns_pay.set_override']);
    await expect(
      resolveNamespace(deps, caller, { namespaceName: 'payments.eu' }, 'set_override', true),
    ).resolves.toEqual(PAYMENTS);
    expect(ratelimits.ensured).toHaveLength(0);
  });
});

interface Probe {
  apiIds: string[];
  bad?: boolean;
}

describe('authorize', () => {
  const any: PermissionRule<Probe> = { resource: 'api', action: 'create_api', scope: 'any' };
  const input: PermissionRule<Probe> = {
    resource: 'api',
    action: 'create_key',
    scope: 'input',
    ids: (probe) => probe.apiIds,
  };
  const resource: PermissionRule<Probe> = {
    resource: 'ratelimit',
    action: 'limit',
    scope: 'resource',
  };
  const probe: Probe = { apiIds: ['api_1', 'api_2'] };

  test.each<[string, PermissionRule<Probe>, string[]]>([
    ['any: the wildcard', any, ['api.*.create_api']],
    ['any: everything', any, ['*']],
    ['input: every id named', input, ['api.api_2.create_key', 'api.api_1.create_key']],
    ['input: the wildcard', input, ['api.*.create_key']],
    ['resource: one id', resource, ['ratelimit.rlns_1.limit']],
    ['resource: a name with dots', resource, ['ratelimit.a.b.c.limit']],
    ['resource: everything', resource, ['*']],
  ])('%s → allowed', (_name, rule, permissions) => {
    expect(authorize(callerWith(permissions), rule, probe)).toBeUndefined();
  });

  test.each<[string, PermissionRule<Probe>, string[], string]>([
    ['any: one id is not enough', any, ['api.api_1.create_api'], 'api.*.create_api'],
    ['any: another action', any, ['api.*.read_api'], 'api.*.create_api'],
    ['input: nothing held names the first id', input, [], 'api.api_1.create_key'],
    ['input: one id missing', input, ['api.api_1.create_key'], 'api.api_2.create_key'],
    ['input: another resource', input, ['ratelimit.*.create_key'], 'api.api_1.create_key'],
    ['resource: another resource', resource, ['api.*.limit'], 'ratelimit.*.limit'],
    ['resource: another action', resource, ['ratelimit.*.set_override'], 'ratelimit.*.limit'],
    ['resource: nothing held', resource, [], 'ratelimit.*.limit'],
  ])('%s → refused as %s', async (_name, rule, permissions, permission) => {
    expect(await refusedPermission(() => authorize(callerWith(permissions), rule, probe))).toBe(
      permission,
    );
  });
});

/** Every service name, checked against Services at compile time (a missing one fails tsc). */
const SERVICE_NAMES = [
  'apis',
  'keys',
  'rootKeys',
  'ratelimits',
  'rbac',
  'identities',
  'auditLog',
  'directory',
  'limiter',
  'management',
  'limiterFailure',
  'now',
  'metrics',
  'recent',
  'lastUse',
  'usage',
  'usageCounts',
  'vault',
  'analyticsReader',
  'verificationLog',
  'webhooks',
  'webhookEvents',
  'webhookAllowPrivate',
] as const satisfies readonly (keyof Services)[];
const everyServiceListed: Exclude<keyof Services, (typeof SERVICE_NAMES)[number]> extends never
  ? true
  : false = true;

describe('bindOperation', () => {
  const sentinels = Object.fromEntries(SERVICE_NAMES.map((name) => [name, { sentinel: name }]));
  // Sentinels stand in for every service: the operation under test must only pass them along.
  const services = sentinels as unknown as Services;

  function probeOperation() {
    const order: string[] = [];
    const seen: object[] = [];
    const operation = defineOperation({
      name: 'test.probe',
      method: 'POST',
      plane: 'management',
      summary: 'records what it is handed',
      permission: {
        resource: 'api',
        action: 'create_key',
        scope: 'input',
        ids: (input: Probe) => {
          order.push('authorize');
          return input.apiIds;
        },
      },
      input: {},
      output: {},
      uses: ['directory', 'now'],
      check(input: Probe) {
        order.push('check');
        if (input.bad) throw new BadRequestError('bad: refused');
      },
      async handle(deps, _caller, input: Probe): Promise<{ handled: string[] }> {
        order.push('handle');
        seen.push(deps);
        return { handled: input.apiIds };
      },
    });
    return { operation, order, seen };
  }

  test('every service name is listed', () => {
    expect(everyServiceListed).toBe(true);
    expect(Object.keys(sentinels)).toHaveLength(SERVICE_NAMES.length);
  });

  test('hands the operation exactly the services it uses', async () => {
    const { operation, seen } = probeOperation();
    const bound = bindOperation(operation, services);
    const probe: Probe = { apiIds: ['api_1'] };
    await expect(bound(callerWith(['*']), probe as never)).resolves.toEqual({ handled: ['api_1'] });
    expect(seen).toHaveLength(1);
    const deps = seen[0] as Record<string, unknown>;
    expect(Object.keys(deps).sort()).toEqual(['directory', 'now']);
    expect(deps.directory).toBe(sentinels.directory);
    expect(deps.now).toBe(sentinels.now);
  });

  test('runs check, then authorize, then handle', async () => {
    const { operation, order } = probeOperation();
    await runOperation(operation, services, callerWith(['api.api_1.create_key']), {
      apiIds: ['api_1'],
    });
    expect(order).toEqual(['check', 'authorize', 'handle']);
  });

  test('a failing check stops before authorize', async () => {
    const { operation, order } = probeOperation();
    // No permission at all: were authorize run, it would refuse with a 403 instead.
    const error = await thrownBy(() =>
      runOperation(operation, services, callerWith([]), { apiIds: ['api_1'], bad: true }),
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect(order).toEqual(['check']);
  });

  test('a failing authorize stops before handle', async () => {
    const { operation, order, seen } = probeOperation();
    const caller = callerWith(['api.api_1.create_key']);
    const permission = await refusedPermission(() =>
      runOperation(operation, services, caller, { apiIds: ['api_1', 'api_9'] }),
    );
    expect(permission).toBe('api.api_9.create_key');
    expect(order).toEqual(['check', 'authorize']);
    expect(seen).toHaveLength(0);
  });
});
