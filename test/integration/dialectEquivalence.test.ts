import { Unkey } from 'unkey-api-v2';
import { adminRedis, closeRedis, snapshotKeyspace } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { hour, sleep } from '../support/helpers';
import { startTopology, type Topology } from '../support/topology';

/**
 * One core, two dialects (issue 15): the same scenario, once through v1 and once through v2 (each
 * on a deployment of its own), leaves the same Redis state: every record, index, bucket and
 * credit, with the ids, hashes and clock readings that differ between any two runs normalised.
 */
let v1: Topology;
let v2: Topology;
/** What started, stopped after all even when the other failed to start. */
const running: Topology[] = [];

beforeAll(async () => {
  const started = await Promise.allSettled([
    startTopology({ nodes: 1 }),
    startTopology({ nodes: 1 }),
  ]);
  for (const result of started) if (result.status === 'fulfilled') running.push(result.value);
  // One that failed to start (a command timeout on a loaded machine) must not leave the other's
  // Redis servers running after the file.
  for (const result of started) if (result.status === 'rejected') throw result.reason;
  [v1, v2] = running as [Topology, Topology];
});
afterAll(async () => {
  await Promise.all(running.map((topology) => topology.stop()));
});

/** One step of the scenario, as each dialect says it; ids found so far are in `ids`. */
interface Step {
  v1(api: Client, ids: Record<string, string>): Promise<void>;
  v2(unkey: Unkey, ids: Record<string, string>): Promise<void>;
}

const steps: Step[] = [
  {
    v1: async (api) => {
      const created = await api.post('identities.createIdentity', {
        externalId: 'customer_1',
        meta: { tier: 'gold' },
        ratelimits: [{ name: 'org', limit: 50, duration: hour, autoApply: true }],
      });
      expect(created.status).toBe(200);
    },
    v2: async (unkey) => {
      await unkey.identities.createIdentity({
        externalId: 'customer_1',
        meta: { tier: 'gold' },
        ratelimits: [{ name: 'org', limit: 50, duration: hour, autoApply: true }],
      });
    },
  },
  {
    v1: async (api, ids) => {
      await api.post('permissions.createPermission', { name: 'docs.read' });
      const role = await api.post<{ roleId: string }>('permissions.createRole', { name: 'reader' });
      ids.roleId = role.body.roleId;
      const set = await api.post('permissions.setRolePermissions', {
        roleId: ids.roleId,
        permissions: ['docs.read'],
      });
      expect(set.status).toBe(200);
    },
    v2: async (unkey, ids) => {
      await unkey.permissions.createPermission({ name: 'docs.read', slug: 'docs.read' });
      ids.roleId = (await unkey.permissions.createRole({ name: 'reader' })).data.roleId;
      await unkey.permissions.setRolePermissions({
        roleId: ids.roleId,
        permissions: ['docs.read'],
      });
    },
  },
  {
    v1: async (api, ids) => {
      ids.apiId = (
        await api.post<{ apiId: string }>('apis.createApi', { name: 'same' })
      ).body.apiId;
    },
    v2: async (unkey, ids) => {
      ids.apiId = (await unkey.apis.createApi({ name: 'same' })).data.apiId;
    },
  },
  {
    v1: async (api, ids) => {
      const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
        apiId: ids.apiId,
        prefix: 'same',
        name: 'one',
        externalId: 'customer_1',
        meta: { plan: 'pro' },
        remaining: 10,
        refill: { interval: 'daily', amount: 10 },
        ratelimits: [
          { name: 'requests', limit: 5, duration: hour, autoApply: true },
          { name: 'tokens', limit: 100, duration: hour },
        ],
      });
      expect(created.status).toBe(200);
      ids.key = created.body.key;
      ids.keyId = created.body.keyId;
    },
    v2: async (unkey, ids) => {
      const { data } = await unkey.keys.createKey({
        apiId: ids.apiId!,
        prefix: 'same',
        name: 'one',
        externalId: 'customer_1',
        meta: { plan: 'pro' },
        credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } },
        ratelimits: [
          { name: 'requests', limit: 5, duration: hour, autoApply: true },
          // The v2 client sends only v2's fields (no `type`): both limits are consistent.
          { name: 'tokens', limit: 100, duration: hour, autoApply: false },
        ],
      });
      ids.key = data.key;
      ids.keyId = data.keyId;
    },
  },
  {
    v1: async (api, ids) => {
      expect(
        (await api.post('keys.addRoles', { keyId: ids.keyId, roles: [{ name: 'reader' }] })).status,
      ).toBe(200);
      expect(
        (
          await api.post('keys.updateKey', {
            keyId: ids.keyId,
            name: 'renamed',
            meta: { plan: 'team' },
          })
        ).status,
      ).toBe(200);
      expect(
        (await api.post('keys.updateRemaining', { keyId: ids.keyId, op: 'increment', value: 4 }))
          .status,
      ).toBe(200);
    },
    v2: async (unkey, ids) => {
      await unkey.keys.addRoles({ keyId: ids.keyId!, roles: ['reader'] });
      await unkey.keys.updateKey({ keyId: ids.keyId!, name: 'renamed', meta: { plan: 'team' } });
      await unkey.keys.updateCredits({ keyId: ids.keyId!, operation: 'increment', value: 4 });
    },
  },
  {
    v1: async (api, ids) => {
      for (const cost of [1, 3, 20]) {
        await api.post('keys.verifyKey', {
          key: ids.key,
          remaining: { cost },
          ratelimits: [{ name: 'tokens', cost: cost * 10 }],
          authorization: { permissions: 'docs.read' },
        });
      }
    },
    v2: async (unkey, ids) => {
      for (const cost of [1, 3, 20]) {
        await unkey.keys.verifyKey({
          key: ids.key!,
          credits: { cost },
          ratelimits: [{ name: 'tokens', cost: cost * 10 }],
          permissions: 'docs.read',
        });
      }
    },
  },
  {
    v1: async (api) => {
      const limit = () =>
        api.post('ratelimits.limit', {
          namespace: 'same.ns',
          identifier: 'user_1',
          limit: 2,
          duration: 60_000,
        });
      await limit(); // makes the namespace
      const override = await api.post('ratelimits.setOverride', {
        namespaceName: 'same.ns',
        identifier: 'user_*',
        limit: 3,
        duration: 60_000,
      });
      expect(override.status).toBe(200);
      for (let i = 0; i < 3; i++) await limit();
    },
    v2: async (unkey) => {
      const limit = () =>
        unkey.ratelimit.limit({
          namespace: 'same.ns',
          identifier: 'user_1',
          limit: 2,
          duration: 60_000,
        });
      await limit();
      await unkey.ratelimit.setOverride({
        namespace: 'same.ns',
        identifier: 'user_*',
        limit: 3,
        duration: 60_000,
      });
      for (let i = 0; i < 3; i++) await limit();
    },
  },
];

const ID = /\b(ws|api|key|rk|id|perm|role|rlns|rlor|req|aud)_[1-9A-HJ-NP-Za-km-z]{22}\b/g;
const HASH = /[A-Za-z0-9+/]{43}=/g;
const CLOCK = /\b1[7-9]\d{11}\b/g;

/**
 * A keyspace with what differs between any two runs made alike: ids become `<kind#n>` in
 * creation order (ids lead with their creation time, and the scenario waits between creations;
 * request ids and audit tokens, one per request, become `<req>` and `<aud>`),
 * key hashes become the hash of the key they index, `start` values and clock readings a marker.
 */
function normalise(snapshot: Map<string, string>): Record<string, string> {
  const text = JSON.stringify([...snapshot]);
  const ids = [...new Set(text.match(ID) ?? [])].sort();
  const byKind = new Map<string, number>();
  const names = new Map<string, string>();
  for (const id of ids) {
    const kind = id.slice(0, id.indexOf('_'));
    // One per request: two requests of a step may share a millisecond, and then their ids sort
    // by chance. What they name is compared through the entries that carry them.
    if (kind === 'req' || kind === 'aud') {
      names.set(id, `<${kind}>`);
      continue;
    }
    const n = (byKind.get(kind) ?? 0) + 1;
    byKind.set(kind, n);
    names.set(id, `<${kind}#${n}>`);
  }
  const hashes = new Map<string, string>();
  for (const [name, value] of snapshot) {
    const entry = /^keyward:keyhash:\{(.+)\}:/.exec(name);
    if (!entry) continue;
    const keyId = JSON.parse(value.slice('string '.length)) as string;
    hashes.set(entry[1] as string, `<hash of ${names.get(keyId)}>`);
  }
  const rewrite = (s: string) =>
    s
      .replace(ID, (id) => names.get(id)!)
      .replace(HASH, (hash) => hashes.get(hash) ?? '<hash>')
      .replace(CLOCK, '<ms>')
      .replace(/"start","[^"]*"/g, '"start","<start>"')
      // A key's (identity's) listing shard and an audit entry's shard follow from an id, and
      // ids differ between the runs.
      .replace(/^(keyward:(?:apikeys|identities|audit):\{[^}.]*)\.[^}]*\}/, '$1.<shard>}');
  return Object.fromEntries(
    [...snapshot]
      // The root key's management bucket refills with time, and expires once full again: what
      // is left of it, and whether it is there at all, depend on how long the scenario took,
      // not on the dialect.
      .filter(([name]) => !name.startsWith('keyward:bucket:{mgmt:'))
      .map(([name, value]) => [rewrite(name), rewrite(value)]),
  );
}

async function stateOf(topology: Topology) {
  const redises = await Promise.all(
    [topology.primary, ...topology.locals].map((r) => adminRedis(r.url)),
  );
  try {
    return await Promise.all(
      redises.map(async (redis) => normalise(await snapshotKeyspace(redis))),
    );
  } finally {
    await Promise.all(redises.map(closeRedis));
  }
}

test('the same scenario through v1 and through v2 leaves the same Redis state', async () => {
  const api = client(v1.nodes[0]!.url, v1.rootKey);
  const unkey = new Unkey({ rootKey: v2.rootKey, serverURL: v2.nodes[0]!.url });
  const v1Ids: Record<string, string> = {};
  const v2Ids: Record<string, string> = {};
  for (const step of steps) {
    await step.v1(api, v1Ids);
    await step.v2(unkey, v2Ids);
    await sleep(3); // ids of consecutive creations never share a millisecond
  }
  const [v1State, v2State] = await Promise.all([stateOf(v1), stateOf(v2)]);
  expect(v2State).toEqual(v1State);
  // The comparison has something to compare: records, the identity, buckets in both Redis.
  const primary = Object.keys(v1State[0]!).join('\n');
  expect(primary).toMatch(/keyward:key:\{<key#1>\}\n/);
  expect(primary).toMatch(/keyward:identity:\{<id#1>\}/);
  expect(primary).toMatch(/keyward:bucket:\{<key#1>\}:requests/);
  expect(primary).toMatch(/keyward:bucket:\{<key#1>\}:tokens/);
  expect(primary).toMatch(/keyward:credits:\{<key#1>\}/);
  expect(primary).toMatch(/keyward:bucket:\{<id#1>\}:org/);
  expect(primary).toMatch(/keyward:key:\{<key#1>\}:roles/);
  expect(primary).toMatch(/keyward:overrides:\{<rlns#1>\.[0-9a-f]{3}\}/);
});
