import Redis from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';
import { sleep, hour } from '../support/helpers';
import { names } from '../../src/store/names';

type Outcome = {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  overrideId?: string;
};
type OverrideBody = {
  id: string;
  identifier: string;
  limit: number;
  duration: number;
  async?: boolean;
};

let topology: Topology;
let nodes: Client[];
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
  api = nodes[0]!;
});
afterAll(() => topology.stop());

const limit = async (body: Record<string, unknown>, node = api) =>
  api && (await node.post<Outcome>('ratelimits.limit', body));

describe('ratelimits.limit', () => {
  test('admits limit per duration for an identifier, 200 with success false beyond', async () => {
    const outcomes = [];
    for (let i = 0; i < 4; i++)
      outcomes.push((await limit({ identifier: 'alice', limit: 3, duration: hour })).body);
    expect(outcomes.map((o) => [o.success, o.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(outcomes[0]).toMatchObject({ limit: 3, reset: expect.any(Number) });
    // Identifiers and namespaces have buckets of their own.
    expect((await limit({ identifier: 'bob', limit: 3, duration: hour })).body.remaining).toBe(2);
    expect(
      (await limit({ namespace: 'email.outbound', identifier: 'alice', limit: 3, duration: hour }))
        .body.success,
    ).toBe(true);
  });

  test('consistent by default (shared by all nodes); async: true is per node', async () => {
    const consistent = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limit({ identifier: 'shared', limit: 4, duration: hour }, nodes[i % 2]),
      ),
    );
    expect(consistent.filter((r) => r.body.success)).toHaveLength(4);
    const fast = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        limit({ identifier: 'edge', limit: 4, duration: hour, async: true }, nodes[i % 2]),
      ),
    );
    expect(fast.filter((r) => r.body.success)).toHaveLength(8);
  });

  test('cost spends that many; refused answers carry Retry-After', async () => {
    expect(
      (await limit({ identifier: 'costly', limit: 10, duration: hour, cost: 7 })).body.remaining,
    ).toBe(3);
    const refused = await limit({ identifier: 'costly', limit: 10, duration: hour, cost: 4 });
    expect(refused.body).toMatchObject({ success: false, remaining: 3 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-limit')).toBe('10');
  });

  test.each([
    [{ limit: 1, duration: 1 }, 'identifier: is required'],
    [{ identifier: 'x', duration: 1 }, 'limit: is required'],
    [{ identifier: 'x', limit: 0, duration: 1 }, 'limit: must be >= 1'],
    [
      { identifier: 'x', limit: 1, duration: 1, namespace: 'has space' },
      'namespace: must match ^[A-Za-z0-9_.:/-]{1,128}$',
    ],
  ])('refuses %j', async (body, message) => {
    const response = await api.post<ErrorBody>('ratelimits.limit', body);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(message);
  });

  test('needs ratelimit.<namespace>.limit or ratelimit.*.limit', async () => {
    const scoped = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['ratelimit.sms.limit'],
    });
    const limited = client(topology.nodes[0]!.url, scoped.key);
    expect(
      (
        await limited.post('ratelimits.limit', {
          namespace: 'sms',
          identifier: 'a',
          limit: 1,
          duration: 1000,
        })
      ).status,
    ).toBe(200);
    const denied = await limited.post<ErrorBody>('ratelimits.limit', {
      namespace: 'email',
      identifier: 'a',
      limit: 1,
      duration: 1000,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('ratelimit.email.limit');
    const none = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['api.*.read_key'],
    });
    expect(
      (
        await client(topology.nodes[0]!.url, none.key).post('ratelimits.limit', {
          identifier: 'a',
          limit: 1,
          duration: 1,
        })
      ).status,
    ).toBe(403);
  });
});

type MultiOutcome = {
  success: boolean;
  limits: (Outcome & { namespace: string; identifier: string; evaluated?: false })[];
};

describe('ratelimits.multiLimit', () => {
  const multi = (checks: Record<string, unknown>[], node = api) =>
    node.post<MultiOutcome>('ratelimits.multiLimit', checks);

  test('every bucket pays or none does; each check says whether its own could', async () => {
    const checks = [
      { namespace: 'multi.a', identifier: 'u1', limit: 5, duration: hour },
      { namespace: 'multi.b', identifier: 'u1', limit: 2, duration: hour, cost: 2 },
      { identifier: 'u1', limit: 3, duration: hour },
    ];
    const first = await multi(checks);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      limits: [
        {
          namespace: 'multi.a',
          identifier: 'u1',
          success: true,
          limit: 5,
          remaining: 4,
          reset: expect.any(Number),
        },
        {
          namespace: 'multi.b',
          identifier: 'u1',
          success: true,
          limit: 2,
          remaining: 0,
          reset: expect.any(Number),
        },
        {
          namespace: 'default',
          identifier: 'u1',
          success: true,
          limit: 3,
          remaining: 2,
          reset: expect.any(Number),
        },
      ],
    });
    // multi.b has nothing left: refused, and the others keep their tokens.
    const second = await multi(checks, nodes[1]);
    expect(second.body.success).toBe(false);
    expect(second.body.limits.map((l) => [l.success, l.remaining])).toEqual([
      [true, 4],
      [false, 0],
      [true, 2],
    ]);
    // The same buckets as ratelimits.limit's.
    expect(
      (await limit({ namespace: 'multi.a', identifier: 'u1', limit: 5, duration: hour })).body
        .remaining,
    ).toBe(3);
  });

  test('fast and consistent buckets together: a refusal on either Redis charges neither', async () => {
    const fast = {
      namespace: 'multi.mixed',
      identifier: 'fast',
      limit: 2,
      duration: hour,
      async: true,
    };
    const consistent = {
      namespace: 'multi.mixed',
      identifier: 'consistent',
      limit: 1,
      duration: hour,
    };
    expect((await multi([fast, consistent])).body.success).toBe(true);
    // The consistent bucket (the primary, decided second) refuses: the fast one is given back.
    const refused = await multi([fast, consistent]);
    expect(refused.body.success).toBe(false);
    expect(refused.body.limits.map((l) => [l.identifier, l.success, l.remaining])).toEqual([
      ['fast', true, 1],
      ['consistent', false, 0],
    ]);
    const fastAlone = await multi([{ ...fast, cost: 1 }]);
    expect(fastAlone.body.limits[0]).toMatchObject({ success: true, remaining: 0 });
    // Now the fast one (the local Redis, decided first) refuses: the consistent one is only read.
    const other = { ...consistent, identifier: 'fresh', limit: 4 };
    const stopped = await multi([fast, other]);
    expect(stopped.body.success).toBe(false);
    expect(stopped.body.limits).toEqual([
      expect.objectContaining({ identifier: 'fast', success: false, remaining: 0 }),
      expect.objectContaining({ identifier: 'fresh', success: true, remaining: 4 }),
    ]);
    expect(stopped.body.limits[1]).not.toHaveProperty('evaluated');
  });

  test('overrides decide as in ratelimits.limit; a bucket named twice is a 400', async () => {
    const set = await api.post<{ overrideId: string }>('ratelimits.setOverride', {
      namespaceName: 'multi.vip',
      identifier: 'vip_*',
      limit: 100,
      duration: hour,
    });
    const answer = await multi([
      { namespace: 'multi.vip', identifier: 'vip_1', limit: 1, duration: 1000 },
      { namespace: 'multi.vip', identifier: 'plain', limit: 1, duration: 1000 },
    ]);
    expect(answer.body.limits).toEqual([
      expect.objectContaining({ limit: 100, remaining: 99, overrideId: set.body.overrideId }),
      expect.not.objectContaining({ overrideId: expect.anything() }),
    ]);

    const twice = await api.post<ErrorBody>('ratelimits.multiLimit', [
      { identifier: 'same', limit: 1, duration: 1000 },
      { namespace: 'default', identifier: 'same', limit: 2, duration: 1000 },
    ]);
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toBe(
      '[1].identifier: the same namespace and identifier as [0]; name a bucket once',
    );
    for (const body of [[], {}, [{ identifier: 'x', limit: 0, duration: 1 }]]) {
      expect((await api.post('ratelimits.multiLimit', body)).status).toBe(400);
    }
  });

  test('needs ratelimit.<namespace>.limit for every namespace, before anything is spent or made', async () => {
    const scoped = await topology.newRootKey({
      workspaceId: topology.workspaceId,
      permissions: ['ratelimit.multi.sms.limit'],
    });
    const limited = client(topology.nodes[0]!.url, scoped.key);
    const sms = { namespace: 'multi.sms', identifier: 'a', limit: 1, duration: hour };
    const denied = await limited.post<ErrorBody>('ratelimits.multiLimit', [
      sms,
      { namespace: 'multi.never', identifier: 'a', limit: 1, duration: hour },
    ]);
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('ratelimit.multi.never.limit');
    // Nothing was spent, nor was multi.never made.
    expect((await limited.post<MultiOutcome>('ratelimits.multiLimit', [sms])).body.success).toBe(
      true,
    );
    expect(
      (await api.get('ratelimits.listOverrides', { namespaceName: 'multi.never' })).status,
    ).toBe(404);
  });
});

describe('overrides', () => {
  test('set, get, list and delete; exact beats wildcard, longest wildcard wins, on every node', async () => {
    const namespaceName = 'api.requests';
    const set = async (identifier: string, overrideLimit: number) =>
      (
        await api.post<{ overrideId: string }>('ratelimits.setOverride', {
          namespaceName,
          identifier,
          limit: overrideLimit,
          duration: hour,
        })
      ).body.overrideId;
    const broad = await set('user_*', 2);
    await set('user_premium_*', 5);
    await set('user_premium_alice', 9);
    expect(broad).toMatch(/^rlor_/);
    await sleep(100);
    const ask = async (identifier: string) =>
      (await limit({ namespace: namespaceName, identifier, limit: 1, duration: hour }, nodes[1]))
        .body;
    expect(await ask('user_premium_alice')).toMatchObject({ limit: 9, remaining: 8 });
    expect(await ask('user_premium_bob')).toMatchObject({ limit: 5, remaining: 4 });
    expect(await ask('user_carol')).toMatchObject({ limit: 2, remaining: 1, overrideId: broad });
    expect(await ask('team_x')).toMatchObject({ limit: 1, remaining: 0 });

    const got = await api.get<OverrideBody>('ratelimits.getOverride', {
      namespaceName,
      identifier: 'user_*',
    });
    expect(got.body).toEqual({ id: broad, identifier: 'user_*', limit: 2, duration: hour });
    // Replacing keeps the id, and does not reset the caller's bucket.
    expect(await set('user_*', 3)).toBe(broad);
    await sleep(100);
    // 1 token was left under the old limit; a reset bucket would have answered 2.
    expect(await ask('user_carol')).toMatchObject({ limit: 3, remaining: 0 });

    const page1 = await api.get<{ overrides: OverrideBody[]; cursor?: string; total: number }>(
      'ratelimits.listOverrides',
      { namespaceName, limit: 2 },
    );
    expect(page1.body.total).toBe(3);
    expect(page1.body.overrides.map((o) => o.identifier)).toEqual(['user_*', 'user_premium_*']);
    const page2 = await api.get<{ overrides: OverrideBody[]; cursor?: string }>(
      'ratelimits.listOverrides',
      { namespaceName, limit: 2, cursor: page1.body.cursor! },
    );
    expect(page2.body.overrides.map((o) => o.identifier)).toEqual(['user_premium_alice']);
    expect(page2.body.cursor).toBeUndefined();

    expect(
      (await api.post('ratelimits.deleteOverride', { namespaceName, identifier: 'user_premium_*' }))
        .status,
    ).toBe(200);
    await sleep(100);
    expect(await ask('user_premium_dave')).toMatchObject({ limit: 3 });
    expect(
      (await api.post('ratelimits.deleteOverride', { namespaceName, identifier: 'user_premium_*' }))
        .status,
    ).toBe(404);
  });

  test('a namespace is named by id or by name, never both; unknown ones are 404', async () => {
    await limit({ namespace: 'by-id', identifier: 'x', limit: 1, duration: 1000 });
    const created = await api.post<{ overrideId: string }>('ratelimits.setOverride', {
      namespaceName: 'by-id',
      identifier: 'x',
      limit: 2,
      duration: 1000,
    });
    expect(created.status).toBe(200);
    const both = await api.post<ErrorBody>('ratelimits.setOverride', {
      namespaceName: 'by-id',
      namespaceId: 'rlns_x',
      identifier: 'x',
      limit: 2,
      duration: 1000,
    });
    expect(both.status).toBe(400);
    const neither = await api.get<ErrorBody>('ratelimits.getOverride', { identifier: 'x' });
    expect(neither.status).toBe(400);
    expect(
      (await api.get('ratelimits.getOverride', { namespaceId: 'rlns_unknown', identifier: 'x' }))
        .status,
    ).toBe(404);
    expect(
      (await api.get('ratelimits.listOverrides', { namespaceName: 'never-used' })).status,
    ).toBe(404);
  });

  test('another workspace sees none of it', async () => {
    await api.post('ratelimits.setOverride', {
      namespaceName: 'private',
      identifier: 'x',
      limit: 2,
      duration: 1000,
    });
    const stranger = client(topology.nodes[0]!.url, (await topology.newRootKey()).key);
    expect(
      (await stranger.get('ratelimits.getOverride', { namespaceName: 'private', identifier: 'x' }))
        .status,
    ).toBe(404);
    // Its own namespace of the same name is a different one, with its own buckets.
    expect(
      (
        await stranger.post<Outcome>('ratelimits.limit', {
          namespace: 'private',
          identifier: 'x',
          limit: 1,
          duration: 1000,
        })
      ).body,
    ).toMatchObject({ limit: 1 });
  });
});

test('a namespace named like another namespace’s storage cannot touch it', async () => {
  const victim = 'victim';
  await api.post('ratelimits.setOverride', {
    namespaceName: victim,
    identifier: 'x',
    limit: 2,
    duration: 1000,
  });
  const redis = new Redis(topology.primary.url);
  const namespaceId = await redis.hget(names.namespace(topology.workspaceId, victim), 'id');
  await redis.quit();
  expect(namespaceId).toMatch(/^rlns_/);
  // Names shaped like the victim's storage keys, under this and the earlier layouts.
  for (const name of [
    `${namespaceId}:overrides`,
    `id:${namespaceId}:overrides`,
    `id:${namespaceId}:order`,
    `${victim}:overrides`,
    `rlns:${victim}`,
  ]) {
    expect(
      (await limit({ namespace: name, identifier: 'x', limit: 1, duration: 1000 })).status,
    ).toBe(200);
    await api.post('ratelimits.setOverride', {
      namespaceName: name,
      identifier: 'y',
      limit: 5,
      duration: 1000,
    });
  }
  const victimOverrides = await api.get<{ overrides: { identifier: string }[] }>(
    'ratelimits.listOverrides',
    {
      namespaceName: victim,
    },
  );
  expect(victimOverrides.status).toBe(200);
  expect(victimOverrides.body.overrides.map((o) => o.identifier)).toEqual(['x']);
});
