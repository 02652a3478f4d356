import type { Cluster } from 'ioredis';
import type { RunningNode } from '../../src/node';
import { closeRedis, connectRedis, createCluster } from '../../src/redis/clients';
import { legacy, names } from '../../src/store/names';
import { runCli, runCommand } from '../support/cliProcess';
import { inspectWorkspace } from '../support/invariants';
import { allKeys } from '../support/keyspace';
import { keywardProcess } from '../support/keywardProcess';
import { buildRelease } from '../support/previousRelease';
import { startRedisCluster, type TestCluster } from '../support/redisCluster';
import { client, type Client } from '../support/rpc';
import { createTestRootKey, nodeEnv, startTestNode } from '../support/topology';

/**
 * An upgrade on a Redis Cluster filled by the previous release, built from git: its node writes
 * keys, identities and API records under their workspace's tag; nodes of this release read them
 * as they are (moving each one they read), `keyward migrate` moves the rest while they serve, and
 * is stopped half way (SIGKILL between the steps of a key's move, then of an identity's, then of
 * an API's) and run again. Through all of it every key verifies, lists and reads as it did, and
 * every identity and API reads and lists as it did; keys created after it take fresh numbers.
 */
let cluster: TestCluster;
let admin: Cluster;
let rootKey: string;
let workspaceId: string;

interface Seen {
  verdicts: string[];
  records: string[];
  listing: string[];
  byOwner: string[];
  /** The identity listing's records, then its total. */
  identities: string[];
  /** Each identity read by its externalId. */
  identityReads: string[];
  /** The API read by its id, then the workspace's API listing. */
  apis: string[];
  /** Permissions and roles listed, the role read by its name, a check through the role. */
  rbac: string[];
}

/** `keyward:{<ws>}:api:<apiId>`: an API record of the previous layout (not its key listings). */
const LEGACY_API_RECORD = /^keyward:\{ws_[A-Za-z0-9_]+\}:api:[A-Za-z0-9_]+$/;
const legacyApis = async () =>
  (await allKeys(admin, legacy.apiPattern)).filter((name) => LEGACY_API_RECORD.test(name));

const KEYS = 24;
/** Identities created directly; the keys' owners make two more. */
const IDENTITIES = 3;
const EXTERNAL_IDS = [
  'owner_a',
  'owner_b',
  ...Array.from({ length: IDENTITIES }, (_, i) => `user_${i}`),
];

/** Namespaces the previous release fills, with this many overrides each (and a wildcard). */
const NAMESPACES: readonly [string, number][] = [
  ['legacy.many', 40],
  ['legacy.few', 2],
];

/**
 * What clients see of the namespaces: every override through listOverrides a page of 7 at a
 * time (so pages merge the shards), with the totals, and the limit that decides an identifier.
 */
async function namespacesSeen(api: Client): Promise<string[]> {
  const seen: string[] = [];
  for (const [namespaceName] of NAMESPACES) {
    let cursor: string | undefined;
    do {
      const page = await api.get<{
        overrides: unknown[];
        total: number;
        cursor?: string;
      }>('ratelimits.listOverrides', {
        namespaceName,
        limit: '7',
        ...(cursor === undefined ? {} : { cursor }),
      });
      expect(page.status).toBe(200);
      seen.push(JSON.stringify([page.body.overrides, page.body.total]));
      cursor = page.body.cursor;
    } while (cursor !== undefined);
    for (const identifier of ['user_1', 'user_elsewhere', 'other']) {
      const decided = await api.post<{ limit: number }>('ratelimits.limit', {
        namespace: namespaceName,
        identifier,
        limit: 1000,
        duration: 60_000,
      });
      seen.push(`${namespaceName} ${identifier}: ${decided.status} limit ${decided.body.limit}`);
    }
  }
  return seen;
}

/** The workspace's permissions and roles listed, and its role `billing` read by name. */
async function rbacSeen(api: Client): Promise<string[]> {
  return [
    JSON.stringify((await api.get('permissions.listPermissions', {})).body),
    JSON.stringify((await api.get('permissions.listRoles', {})).body),
    JSON.stringify((await api.get('permissions.getRole', { name: 'billing' })).body),
  ];
}

/** Names of namespace records of the previous layout left in the cluster. */
const legacyNamespaces = async () => (await allKeys(admin, legacy.namespacePattern)).sort();

beforeAll(async () => {
  cluster = await startRedisCluster(3, 0);
  admin = createCluster(cluster.nodes, { commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
  await connectRedis(admin);
  ({ key: rootKey, workspaceId } = await createTestRootKey(admin));
}, 60_000);

afterAll(async () => {
  if (admin) await closeRedis(admin);
  await cluster?.stop();
});

/** What clients see of the workspace: verdicts, records, listings, in a form to compare. */
async function seen(
  api: Client,
  apiId: string,
  plaintexts: readonly string[],
  /** Read each identity by its externalId (which moves it), not only list them. */
  readIdentities = true,
): Promise<Seen> {
  const verdicts: string[] = [];
  for (const key of plaintexts) {
    const body = (await api.post<Record<string, unknown>>('keys.verifyKey', { key })).body;
    delete body.requestId;
    // A consistent bucket's spend is the point of verifying; its count is compared below.
    if (body.ratelimit) delete (body.ratelimit as Record<string, unknown>).reset;
    verdicts.push(JSON.stringify(body));
  }
  const listing = await api.get<{ keys: { id: string }[]; total: number }>('apis.listKeys', {
    apiId,
    limit: '100',
  });
  const records: string[] = [];
  for (const { id } of listing.body.keys) {
    const record = (await api.get<Record<string, unknown>>('keys.getKey', { keyId: id })).body;
    delete record.remaining; // spent by the verifications above, one per round
    delete record.ratelimit;
    delete record.lastUsedAt; // moved on by the verifications above, on each node's timer
    records.push(JSON.stringify(record));
  }
  const byOwner = await api.get<{ keys: { id: string }[] }>('apis.listKeys', {
    apiId,
    ownerId: 'owner_a',
  });
  // The listing first: the reads by externalId after it move what they read.
  const identities = await api.get<{ identities: unknown[]; total: number }>(
    'identities.listIdentities',
    { limit: '100' },
  );
  const identityReads: string[] = [];
  for (const externalId of readIdentities ? EXTERNAL_IDS : []) {
    const read = await api.get('identities.getIdentity', { externalId });
    identityReads.push(JSON.stringify([read.status, read.body]));
  }
  // The listing reads records of either layout where they are; only the read by id moves one.
  const apis = [
    JSON.stringify((await api.get('apis.getApi', { apiId })).body),
    JSON.stringify((await api.get('apis.listApis', {})).body),
  ];
  const rbac = [
    JSON.stringify((await api.get('permissions.listPermissions', {})).body),
    JSON.stringify((await api.get('permissions.listRoles', {})).body),
    JSON.stringify((await api.get('permissions.getRole', { name: 'editor' })).body),
  ];
  for (const key of plaintexts.slice(0, 3)) {
    const checked = await api.post<{ code: string }>('keys.verifyKey', {
      key,
      authorization: { permissions: 'docs.write' },
    });
    rbac.push(`${checked.status} ${checked.body.code}`);
  }
  return {
    apis,
    rbac,
    verdicts: verdicts.map((v) => v.replace(/"remaining":\d+/g, '"remaining":"n"')),
    records,
    listing: [...listing.body.keys.map((k) => k.id), `total ${listing.body.total}`],
    byOwner: byOwner.body.keys.map((k) => k.id),
    identities: [
      ...identities.body.identities.map((identity) => JSON.stringify(identity)),
      `total ${identities.body.total}`,
    ],
    identityReads,
  };
}

test('keys, identities, namespaces, APIs, permissions and roles written by the previous release verify, list and read the same through and after `keyward migrate`', async () => {
  const oldCli = await buildRelease();
  const env = nodeEnv({ clusterSeeds: cluster.seeds });
  const old = await keywardProcess({ env, cli: oldCli, name: 'previous release' });
  await old.start();
  let apiId: string;
  let before: Seen;
  let namespacesBefore: string[];
  const plaintexts: string[] = [];
  /** An API no node of this release reads before `keyward migrate` moves it, and its one key. */
  let untouched: { apiId: string; key: string };
  try {
    const api = client(old.url, rootKey);
    apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'upgraded' })).body.apiId;
    const untouchedId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'untouched' }))
      .body.apiId;
    untouched = {
      apiId: untouchedId,
      key: (await api.post<{ key: string }>('keys.createKey', { apiId: untouchedId })).body.key,
    };
    await api.post('permissions.createPermission', { name: 'docs.read' });
    const role = await api.post('permissions.createRole', {
      name: 'editor',
      permissions: ['docs.read', 'docs.write'],
    });
    expect(role.status).toBe(200);
    for (let i = 0; i < KEYS; i++) {
      const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
        apiId,
        name: `key ${i}`,
        ...(i % 3 === 0 ? { ownerId: 'owner_a' } : i % 3 === 1 ? { ownerId: 'owner_b' } : {}),
        ...(i % 4 === 0 ? { permissions: ['docs.read'] } : {}),
        ...(i % 8 === 1 ? { roles: ['editor'] } : {}),
        ...(i % 5 === 0 ? { remaining: 1000 } : {}),
        ...(i % 6 === 0
          ? { ratelimit: { type: 'consistent', limit: 100, refillRate: 1, refillInterval: 60_000 } }
          : {}),
        meta: { i },
      });
      expect(created.status).toBe(200);
      plaintexts.push(created.body.key);
    }
    for (let i = 0; i < IDENTITIES; i++) {
      const created = await api.post('identities.createIdentity', {
        externalId: `user_${i}`,
        meta: { i },
        ...(i === 0
          ? { ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }] }
          : {}),
      });
      expect(created.status).toBe(200);
    }
    const disabled = (await api.get<{ keys: { id: string }[] }>('apis.listKeys', { apiId })).body
      .keys[1]!.id;
    await api.post('keys.updateKey', { keyId: disabled, enabled: false });
    before = await seen(api, apiId, plaintexts);
    for (const [namespaceName, count] of NAMESPACES) {
      for (let i = 0; i < count; i++) {
        const set = await api.post('ratelimits.setOverride', {
          namespaceName,
          identifier: `user_${i}`,
          limit: 10 + i,
          duration: 60_000,
          ...(i % 4 === 0 ? { async: true } : {}),
        });
        expect(set.status).toBe(200);
      }
      await api.post('ratelimits.setOverride', {
        namespaceName,
        identifier: 'user_*',
        limit: 5,
        duration: 1000,
      });
    }
    namespacesBefore = await namespacesSeen(api);
  } finally {
    await old.dispose();
  }
  expect(before.verdicts.filter((v) => v.includes('"code":"VALID"'))).toHaveLength(KEYS - 1);
  expect(before.listing).toHaveLength(KEYS + 1);
  expect(before.byOwner).toHaveLength(KEYS / 3);
  // The previous layout, as that release wrote it.
  const legacyRecords = (await allKeys(admin, legacy.keyPattern)).filter(
    (name) => !/:(perms|roles)$/.test(name),
  );
  // The untouched API's key too.
  expect(legacyRecords).toHaveLength(KEYS + 1);
  expect(before.identities).toHaveLength(IDENTITIES + 2 + 1);
  expect(before.identityReads.every((read) => read.startsWith('[200,'))).toBe(true);
  expect(await allKeys(admin, legacy.identityPattern)).toHaveLength(IDENTITIES + 2);
  expect(await legacyNamespaces()).toEqual(
    NAMESPACES.map(([name]) => legacy.namespace(workspaceId, name)).sort(),
  );
  expect(namespacesBefore).toContain('legacy.many user_1: 200 limit 11');
  expect(namespacesBefore).toContain('legacy.many user_elsewhere: 200 limit 5');
  const fewId = (await admin.hget(legacy.namespace(workspaceId, 'legacy.few'), 'id'))!;
  expect(await legacyApis()).toHaveLength(2);

  const nodes: RunningNode[] = [await startTestNode({ clusterSeeds: cluster.seeds })];
  try {
    const api = client(nodes[0]!.url, rootKey);
    // A node of this release reads keys of the previous layout as they are (and moves each).
    for (const [i, key] of plaintexts.slice(0, 4).entries()) {
      const { code } = (await api.post<{ code: string }>('keys.verifyKey', { key })).body;
      expect(code).toBe((JSON.parse(before.verdicts[i]!) as { code: string }).code);
    }
    expect(
      (await allKeys(admin, legacy.keyPattern)).filter((name) => !/:(perms|roles)$/.test(name)),
    ).toHaveLength(KEYS + 1 - 4);
    // And the identities those keys name (owner_a's and owner_b's), loaded by id and moved.
    expect(await allKeys(admin, legacy.identityPattern)).toHaveLength(IDENTITIES);
    // And a namespace of the previous layout by its id, moving it; the other stays where it was.
    const found = await api.get<{ limit: number }>('ratelimits.getOverride', {
      namespaceId: fewId,
      identifier: 'user_1',
    });
    expect({ status: found.status, limit: found.body.limit }).toEqual({ status: 200, limit: 11 });
    expect(await legacyNamespaces()).toEqual([legacy.namespace(workspaceId, 'legacy.many')]);
    expect(await admin.hget(names.namespace(workspaceId, 'legacy.few'), 'id')).toBe(fewId);
    // And their API, whose record a cold verification reads.
    expect(await legacyApis()).toEqual([legacy.api(workspaceId, untouched.apiId)]);

    // keyward doctor says what is left to do, on the masters that hold it.
    const layoutChecks = async () =>
      (
        JSON.parse((await runCommand(['doctor', '--json'], env)).stdout) as {
          checks: { check: string; status: string }[];
        }
      ).checks
        .filter((check) => check.check === 'layout')
        .map((check) => check.status);
    expect(await layoutChecks()).toContain('warn');
    // Stopped between the steps of a move, then run again: nothing lost, nothing doubled.
    const migrateEnv = { ...env, KEYWARD_FAULT_HALT_AT: 'moveKey:copied' };
    const halted = await runCli(['migrate'], migrateEnv).catch((error: Error) => error);
    expect(halted).toBeInstanceOf(Error);
    // The key whose move was cut short is in both listings until a move finishes it: listed
    // once, but counted twice in the total meanwhile (docs/redis.md, "Upgrading the layout").
    // (SCAN decides which key that is: the untouched API's leaves this API's total as it was.)
    const halfMovedKeys = (await allKeys(admin, legacy.keyPattern))
      .map((name) => /^keyward:\{[^}]+\}:key:([A-Za-z0-9_]+)$/.exec(name)?.[1])
      .filter((keyId): keyId is string => keyId !== undefined);
    const cutShort = [];
    for (const keyId of halfMovedKeys) {
      const apiOf = await admin.hget(names.key(keyId), 'apiId');
      if (apiOf !== null) cutShort.push(apiOf);
    }
    expect(cutShort).toHaveLength(1);
    const during = await seen(api, apiId, plaintexts, false);
    expect(during.listing.pop()).toBe(`total ${KEYS + (cutShort[0] === apiId ? 1 : 0)}`);
    expect({ ...during, listing: [...during.listing, `total ${KEYS}`] }).toEqual({
      ...before,
      identityReads: [],
    });
    // Stopped again, in the identities step this time (the keys step finishes first): the
    // identity whose move was cut short is in both listings, counted twice the same way.
    const identityHalted = await runCli(['migrate'], {
      ...env,
      KEYWARD_FAULT_HALT_AT: 'moveIdentity:copied',
    }).catch((error: Error) => error);
    expect(identityHalted).toBeInstanceOf(Error);
    expect(await allKeys(admin, legacy.identityPattern)).toHaveLength(IDENTITIES);
    const halfMoved = await seen(api, apiId, plaintexts);
    expect(halfMoved.identities.pop()).toBe(`total ${IDENTITIES + 2 + 1}`);
    expect({
      ...halfMoved,
      identities: [...halfMoved.identities, `total ${IDENTITIES + 2}`],
    }).toEqual(before);
    // Stopped again, between a namespace's copied overrides and its record: the namespace is not
    // yet under its own name (no node loads it without its overrides); the next run finishes it.
    const haltedNamespace = await runCli(['migrate'], {
      ...env,
      KEYWARD_FAULT_HALT_AT: 'moveNamespace:overridesCopied',
    }).catch((error: Error) => error);
    expect(haltedNamespace).toBeInstanceOf(Error);
    expect(await legacyNamespaces()).toEqual([legacy.namespace(workspaceId, 'legacy.many')]);
    expect(await admin.exists(names.namespace(workspaceId, 'legacy.many'))).toBe(0);
    // Stopped in the apis step (the others finish first): the untouched API's record is in
    // both layouts, read and listed once (its index did not move).
    const apiHalted = await runCli(['migrate'], {
      ...env,
      KEYWARD_FAULT_HALT_AT: 'moveApi:copied',
    }).catch((error: Error) => error);
    expect(apiHalted).toBeInstanceOf(Error);
    expect(await legacyApis()).toHaveLength(1);
    expect(await admin.exists(names.api(untouched.apiId))).toBe(1);
    expect(await seen(api, apiId, plaintexts)).toEqual(before);
    // That run's namespaces step (before its apis step) finished the namespace cut short.
    expect(await legacyNamespaces()).toEqual([]);
    // Nodes moved the role and its permissions as they read them (a check reads every role).
    expect(await allKeys(admin, legacy.permissionPattern)).toEqual([]);
    expect(await allKeys(admin, legacy.rolePattern)).toEqual([]);
    // The runs that halt kill their process: spawned. The others run here (runCommand).
    const finished = await runCommand(['migrate', '--json'], env);
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toEqual({
      steps: [
        { step: 'keys', moved: expect.any(Number) },
        { step: 'identities', moved: expect.any(Number) },
        { step: 'namespaces', moved: 0 },
        { step: 'apis', moved: 1 },
        { step: 'permissions', moved: 0 },
        { step: 'roles', moved: 0 },
        { step: 'usage', moved: expect.any(Number) },
      ],
    });
    const again = await runCommand(['migrate', '--json'], env);
    expect(JSON.parse(again.stdout)).toEqual({
      steps: [
        { step: 'keys', moved: 0 },
        { step: 'identities', moved: 0 },
        { step: 'namespaces', moved: 0 },
        { step: 'apis', moved: 0 },
        { step: 'permissions', moved: 0 },
        { step: 'roles', moved: 0 },
        { step: 'usage', moved: 0 },
      ],
    });
    expect(await legacyNamespaces()).toEqual([]);
    expect(await admin.exists(names.namespacesMigrated)).toBe(1);
    expect(await namespacesSeen(api)).toEqual(namespacesBefore);
    expect(await legacyApis()).toEqual([]);
    expect(await admin.exists(names.apiLayoutMigrated)).toBe(1);

    expect(await allKeys(admin, legacy.keyPattern)).toEqual([]);
    expect(await admin.exists(names.layoutMigrated)).toBe(1);
    expect(await allKeys(admin, `keyward:{${workspaceId}}:identit*`)).toEqual([]);
    expect(await admin.exists(names.identityLayoutMigrated)).toBe(1);
    expect(await allKeys(admin, legacy.rolePattern)).toEqual([]);
    expect(await admin.exists(names.permissionsMigrated)).toBe(1);
    expect(await admin.exists(names.rolesMigrated)).toBe(1);
    expect(new Set(await layoutChecks())).toEqual(new Set(['ok']));
    expect((await inspectWorkspace(admin, workspaceId, { exact: true })).violations).toEqual([]);
    expect(await seen(api, apiId, plaintexts)).toEqual(before);
    // A node started now reads no legacy names at all, and sees the same.
    nodes.push(await startTestNode({ clusterSeeds: cluster.seeds }));
    expect(await seen(client(nodes[1]!.url, rootKey), apiId, plaintexts)).toEqual(before);
    expect(await namespacesSeen(client(nodes[1]!.url, rootKey))).toEqual(namespacesBefore);

    // Keys created now take the numbers after the previous release's: none is handed out twice.
    expect(
      (await api.post<{ code: string }>('keys.verifyKey', { key: untouched.key })).body.code,
    ).toBe('VALID');
    for (const [id, seq] of [
      [apiId, KEYS + 1],
      [untouched.apiId, 2],
    ] as const) {
      const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
        apiId: id,
      });
      expect(created.status).toBe(200);
      expect(await admin.hget(names.key(created.body.keyId), 'seq')).toBe(String(seq));
      expect(
        (await api.post<{ code: string }>('keys.verifyKey', { key: created.body.key })).body.code,
      ).toBe('VALID');
    }
    expect((await inspectWorkspace(admin, workspaceId, { exact: true })).violations).toEqual([]);
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
  }
}, 120_000);

test('`keyward migrate` moves identities and roles no node read: each reads the same after', async () => {
  const other = await createTestRootKey(admin);
  const env = nodeEnv({ clusterSeeds: cluster.seeds });
  const old = await keywardProcess({ env, cli: await buildRelease(), name: 'previous release' });
  await old.start();
  const before: string[] = [];
  try {
    const api = client(old.url, other.key);
    for (const externalId of ['org_1', 'org_2']) {
      const { identityId } = (
        await api.post<{ identityId: string }>('identities.createIdentity', {
          externalId,
          meta: { externalId },
        })
      ).body;
      before.push(JSON.stringify((await api.get('identities.getIdentity', { identityId })).body));
    }
    before.push(JSON.stringify((await api.get('identities.listIdentities', {})).body));
    expect(
      (await api.post('permissions.createRole', { name: 'billing', permissions: ['b.r', 'b.w'] }))
        .status,
    ).toBe(200);
    before.push(...(await rbacSeen(api)));
  } finally {
    await old.dispose();
  }
  expect(await allKeys(admin, `keyward:{${other.workspaceId}}:identit*`)).toHaveLength(4);
  expect(await allKeys(admin, `keyward:{${other.workspaceId}}:role:*`)).toHaveLength(2);
  // Stopped in the roles step (the others finish first): the role is in both layouts, its
  // permission ids copied with it in one step; the next run finishes it.
  const halted = await runCli(['migrate'], { ...env, KEYWARD_FAULT_HALT_AT: 'moveRole:copied' })
    .then(() => 'finished')
    .catch(() => 'halted');
  expect(halted).toBe('halted');
  expect(await allKeys(admin, `keyward:{${other.workspaceId}}:perm:*`)).toEqual([]);
  const roleId = /:role:([A-Za-z0-9_]+)$/.exec(
    (await allKeys(admin, `keyward:{${other.workspaceId}}:role:*`)).find(
      (name) => !name.endsWith(':perms'),
    )!,
  )![1]!;
  expect(await admin.scard(names.rolePermissions(roleId))).toBe(2);

  const finished = await runCommand(['migrate', '--json'], env);
  expect(JSON.parse(finished.stdout)).toMatchObject({
    steps: [
      { step: 'keys' },
      { step: 'identities', moved: 0 },
      { step: 'namespaces' },
      { step: 'apis' },
      { step: 'permissions', moved: 0 },
      { step: 'roles', moved: 1 },
      { step: 'usage' },
    ],
  });
  expect(await allKeys(admin, `keyward:{${other.workspaceId}}:identit*`)).toEqual([]);
  expect(await allKeys(admin, `keyward:{${other.workspaceId}}:role:*`)).toEqual([]);
  expect((await inspectWorkspace(admin, other.workspaceId, { exact: true })).violations).toEqual(
    [],
  );
  const node = await startTestNode({ clusterSeeds: cluster.seeds });
  try {
    const api = client(node.url, other.key);
    const after: string[] = [];
    for (const externalId of ['org_1', 'org_2']) {
      after.push(JSON.stringify((await api.get('identities.getIdentity', { externalId })).body));
    }
    after.push(JSON.stringify((await api.get('identities.listIdentities', {})).body));
    after.push(...(await rbacSeen(api)));
    expect(after).toEqual(before);
  } finally {
    await node.close();
  }
}, 60_000);
