import Redis from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';
import { sleep, hour } from '../support/helpers';

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
  const namespaceId = await redis.hget(
    `keyward:{${topology.workspaceId}}:rlns:name:${victim}`,
    'id',
  );
  await redis.quit();
  expect(namespaceId).toMatch(/^rlns_/);
  // Names shaped like the victim's storage keys, under this and the earlier layout.
  for (const name of [
    `${namespaceId}:overrides`,
    `id:${namespaceId}:overrides`,
    `id:${namespaceId}:order`,
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
