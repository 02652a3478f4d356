import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startTopology, type Topology } from './topology';
import { client, get, post, type RpcResponse, type Client } from './rpc';
import {
  adminRedis,
  closeRedis,
  diffKeyspace,
  dumpKeyspace,
  lastingWrites,
  writeWatcher,
  type WriteWatcher,
} from './keyspace';
import { expectErrorEnvelope, expectSecurityHeaders, type ErrorEnvelope } from './envelope';
import { createRootKey, revokeRootKey } from '../../src/operations/rootKeys';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { operations as routes } from '../../src/operations/registry';
import type { Operation as Declared, Resource } from '../../src/operations/operation';
import { operations as registry } from '../../src/operations/registry';
import { names } from '../../src/store/names';
import { sleep } from './helpers';

/**
 * Who may do what. Every operation is called by root keys holding `*`, `api.*.<action>`,
 * `api.<apiId>.<action>`, `api.<otherApiId>.<action>`, an unrelated permission, or nothing of the
 * right resource, in the API's own workspace and in another one. Each call is allowed exactly
 * when the contract (and docs/decisions.md, where keyward also accepts `api.<apiId>.<action>`)
 * says so; a denied call is 403 naming the permission, writes nothing, and a resource of another
 * workspace is the same 404 as one that does not exist.
 */
let topology: Topology;
let base: string;
let primary: Redis;
let watcher: WriteWatcher;
let rootKeys: RootKeyStore;
let admin: Client;

beforeAll(async () => {
  topology = await startTopology({
    nodes: 1,
    env: {
      KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000',
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000',
      // Recoverable keys: the calls that seal or open one need a vault.
      KEYWARD_VAULT_KEYS: `matrix:${Buffer.alloc(32, 9).toString('base64')}`,
    },
  });
  base = topology.nodes[0]!.url;
  primary = await adminRedis(topology.primary.url);
  watcher = await writeWatcher(topology.primary.url);
  rootKeys = new RootKeyStore(primary);
  admin = client(base, topology.rootKey);
});

afterAll(async () => {
  if (watcher) await watcher.close();
  if (primary) await closeRedis(primary);
  if (topology) await topology.stop();
});

/** The actions the registry declares, of each resource, in the order it declares them. */
const actionsOf = (resource: Resource): string[] => [
  ...new Set(
    registry.filter((op) => op.permission.resource === resource).map((op) => op.permission.action),
  ),
];
const API_ACTIONS = actionsOf('api');
/**
 * Actions no operation declares, which some calls need besides the declared one (`alsoNeeds`):
 * sealing a recoverable key, opening one.
 */
const CONDITIONAL_API_ACTIONS = ['encrypt_key', 'decrypt_key'];
const RATELIMIT_ACTIONS = actionsOf('ratelimit');
const RBAC_ACTIONS = actionsOf('rbac');
const IDENTITY_ACTIONS = actionsOf('identity');

/**
 * The resources one row of the matrix works on: a fresh API A, another API B, keys in A,
 * rate-limit namespaces N (with an override) and M, permissions and roles, and identities I and J.
 */
interface Scene {
  apiA: string;
  apiB: string;
  /** Read, verified and updated. */
  key1: { keyId: string; key: string };
  /** Deleted. */
  key2: { keyId: string; key: string };
  nsN: string;
  /** N's id: a permission may name a namespace by its id too. */
  nsNId: string;
  nsM: string;
  /** A permission and a role that are read, and a permission and a role that are deleted. */
  permission: string;
  permissionToDelete: string;
  role: string;
  roleToDelete: string;
  /** Identity I (read and updated) and its externalId, another identity J, and one deleted. */
  identity: string;
  identityExternalId: string;
  identityJ: string;
  identityToDelete: string;
}

let scenes = 0;

async function newScene(): Promise<Scene> {
  const api = async (name: string) =>
    (await admin.post<{ apiId: string }>('apis.createApi', { name })).body.apiId;
  const apiA = await api('matrix-a');
  const apiB = await api('matrix-b');
  const key = async () =>
    (await admin.post<{ keyId: string; key: string }>('keys.createKey', { apiId: apiA, name: 'k' }))
      .body;
  const key1 = await key();
  const key2 = await key();
  const nsN = `matrix.${++scenes}`;
  const nsM = `${nsN}.other`;
  for (const [namespaceName, identifier] of [
    [nsN, 'user_1'],
    [nsN, 'user_2'],
    [nsM, 'user_1'],
  ]) {
    const set = await admin.post('ratelimits.setOverride', {
      namespaceName,
      identifier,
      limit: 5,
      duration: 60_000,
    });
    expect(set.status).toBe(200);
  }
  const nsNId = (await primary.hget(names.namespace(topology.workspaceId, nsN), 'id')) ?? '';
  expect(nsNId).toMatch(/^rlns_/);
  const rbac = async (operation: string, name: string, field: string) => {
    const created = await admin.post<Record<string, string>>(operation, { name });
    expect(created.status).toBe(200);
    return created.body[field] ?? '';
  };
  const permission = await rbac('permissions.createPermission', `${nsN}.read`, 'permissionId');
  const permissionToDelete = await rbac(
    'permissions.createPermission',
    `${nsN}.gone`,
    'permissionId',
  );
  const role = await rbac('permissions.createRole', `${nsN} reader`, 'roleId');
  const roleToDelete = await rbac('permissions.createRole', `${nsN} gone`, 'roleId');
  const newIdentity = async (externalId: string) => {
    const created = await admin.post<{ identityId: string }>('identities.createIdentity', {
      externalId,
    });
    expect(created.status).toBe(200);
    return created.body.identityId;
  };
  const identityExternalId = `${nsN}.user`;
  const identity = await newIdentity(identityExternalId);
  const identityJ = await newIdentity(`${nsN}.other`);
  const identityToDelete = await newIdentity(`${nsN}.gone`);
  return {
    apiA,
    apiB,
    key1,
    key2,
    nsN,
    nsNId,
    nsM,
    permission,
    permissionToDelete,
    role,
    roleToDelete,
    identity,
    identityExternalId,
    identityJ,
    identityToDelete,
  };
}

interface Principal {
  label: string;
  workspace: 'own' | 'other';
  permissions: (scene: Scene) => string[];
}

/**
 * Every action of every resource: on `apiId`, on the namespace `ns`, on `rbac` (whose
 * permissions and roles a root key is granted as a whole, `rbac.*.<action>`, or not at all), and
 * on the identity `identity`.
 */
const every = (apiId: string, ns: string, identity: string) => [
  ...API_ACTIONS.map((action) => `api.${apiId}.${action}`),
  ...CONDITIONAL_API_ACTIONS.map((action) => `api.${apiId}.${action}`),
  ...RATELIMIT_ACTIONS.map((action) => `ratelimit.${ns}.${action}`),
  ...RBAC_ACTIONS.map((action) => `rbac.*.${action}`),
  ...IDENTITY_ACTIONS.map((action) => `identity.${identity}.${action}`),
];

const principals: Principal[] = [
  { label: '*', workspace: 'own', permissions: () => ['*'] },
  { label: 'every action on *', workspace: 'own', permissions: () => every('*', '*', '*') },
  {
    label: 'every action on A, N and I',
    workspace: 'own',
    permissions: (s) => every(s.apiA, s.nsN, s.identity),
  },
  {
    label: 'every action on A and N by its id, and on I',
    workspace: 'own',
    permissions: (s) => every(s.apiA, s.nsNId, s.identity),
  },
  {
    label: 'every action on B, M and J',
    workspace: 'own',
    permissions: (s) => every(s.apiB, s.nsM, s.identityJ),
  },
  {
    label: 'every declared action on A, N and I, without encrypt_key and decrypt_key',
    workspace: 'own',
    permissions: (s) =>
      every(s.apiA, s.nsN, s.identity).filter(
        (permission) =>
          !CONDITIONAL_API_ACTIONS.some((action) => permission.endsWith(`.${action}`)),
      ),
  },
  { label: 'an unrelated permission', workspace: 'own', permissions: () => ['analytics.*.read'] },
  {
    label: 'the right actions on another resource',
    workspace: 'own',
    permissions: () =>
      [...API_ACTIONS, ...RATELIMIT_ACTIONS, ...RBAC_ACTIONS, ...IDENTITY_ACTIONS].map(
        (action) => `key.*.${action}`,
      ),
  },
  ...API_ACTIONS.flatMap((action): Principal[] => [
    { label: `only api.*.${action}`, workspace: 'own', permissions: () => [`api.*.${action}`] },
    {
      label: `only api.<A>.${action}`,
      workspace: 'own',
      permissions: (s) => [`api.${s.apiA}.${action}`],
    },
  ]),
  ...RATELIMIT_ACTIONS.flatMap((action): Principal[] => [
    {
      label: `only ratelimit.*.${action}`,
      workspace: 'own',
      permissions: () => [`ratelimit.*.${action}`],
    },
    {
      label: `only ratelimit.<N>.${action}`,
      workspace: 'own',
      permissions: (s) => [`ratelimit.${s.nsN}.${action}`],
    },
  ]),
  ...RBAC_ACTIONS.map((action): Principal => ({
    label: `only rbac.*.${action}`,
    workspace: 'own',
    permissions: () => [`rbac.*.${action}`],
  })),
  ...IDENTITY_ACTIONS.flatMap((action): Principal[] => [
    {
      label: `only identity.*.${action}`,
      workspace: 'own',
      permissions: () => [`identity.*.${action}`],
    },
    {
      label: `only identity.<I>.${action}`,
      workspace: 'own',
      permissions: (s) => [`identity.${s.identity}.${action}`],
    },
  ]),
  { label: '* in another workspace', workspace: 'other', permissions: () => ['*'] },
  {
    label: 'every action on A, N and I in another workspace',
    workspace: 'other',
    permissions: (s) => every(s.apiA, s.nsN, s.identity),
  },
  {
    label: 'every action on A and N by its id, and on I, in another workspace',
    workspace: 'other',
    permissions: (s) => every(s.apiA, s.nsNId, s.identity),
  },
];

/**
 * How to call one operation against a scene: the one thing of the matrix its declaration cannot
 * say. Who may make the call is derived from the operation's declared permission
 * (src/operations/operation.ts, docs/decisions.md):
 * - scope `any`: only `<resource>.*.<action>` (or `*`) grants it (createApi: the API does not
 *   exist yet);
 * - scope `input`: `<resource>.<id>.<action>` for each id the input names (the rule's own `ids`),
 *   checked before any lookup;
 * - scope `resource`: first "holds the action on some id" (403 naming `<resource>.*.<action>`),
 *   then the resource is looked up (404) and `<resource>.<its id>.<action>` checked; `lookup`
 *   says which resource of the scene that is.
 */
interface Call {
  /** Which way of calling it, after the operation's name. */
  variant?: string;
  /**
   * For a rule of scope `any` whose input names a resource of the scene (a permission or role by
   * its id): in another workspace it is not there, a 404.
   */
  namesResource?: true;
  /**
   * For a rule of scope `input` whose ids name no resource (listIdentities' environment): in
   * another workspace it lists that workspace's own, not a 404.
   */
  workspaceWide?: true;
  /** The query of a GET, the body of a POST: what the rule's `ids` read. */
  input: (scene: Scene) => object;
  /** For a rule of scope `resource`: what the handler looks up and checks. */
  lookup?: {
    /** The ids a permission may name it by; the first is the one a 403 names. */
    ids: (scene: Scene) => string[];
    /** Ids of the input the handler checks before the lookup (verifyKey's apiId). */
    inputIds?: (scene: Scene) => string[];
    /**
     * In another workspace it is not there: a 404, the verdict NOT_FOUND (keys.verifyKey), or it
     * is created there (ratelimits.limit, setOverride), which only a permission by its first id
     * (the name: there is no other id yet) can allow.
     */
    elsewhere: 'not found' | 'verdict NOT_FOUND' | 'created';
    /**
     * The exact permission missing after the lookup is answered as not found (keys.whoami: a
     * plaintext must not tell which keys exist beyond what the root key may read).
     */
    hidden?: true;
  };
  /**
   * An action on the same resource this call needs besides the declared one (`recoverable`:
   * encrypt_key; `decrypt`: decrypt_key), checked right after it: before the lookup for a rule
   * of scope `input`, after it for scope `resource` (src/operations/keys/recoverable.ts).
   */
  alsoNeeds?: string;
  /** A write that was allowed happened; a read returned the resource. */
  effect: (scene: Scene, response: RpcResponse) => Promise<void>;
}

/** A key of API A, looked up by its id. */
const keyOfA = { ids: (s: Scene) => [s.apiA], elsewhere: 'not found' } as const;
/** Namespace N, by its name or its id. */
const namespaceN = { ids: (s: Scene) => [s.nsN, s.nsNId], elsewhere: 'not found' } as const;
/** Identity I, by its id. */
const identityI = { ids: (s: Scene) => [s.identity], elsewhere: 'not found' } as const;

/**
 * Every operation of the registry, in the order the matrix calls them (each keeps the scene usable
 * for the next ones); `every route … is in the matrix` checks the names against the registry.
 */
const calls: Readonly<Record<string, readonly Call[]>> = {
  'apis.createApi': [
    {
      input: () => ({ name: 'by-matrix' }),
      effect: async (_, response) => {
        expect(response.body).toEqual({ apiId: expect.stringMatching(/^api_/), name: 'by-matrix' });
      },
    },
  ],
  'apis.listApis': [
    {
      input: () => ({}),
      effect: async (_, response) => expect(response.body.total).toEqual(expect.any(Number)),
    },
  ],
  'apis.getApi': [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response) => expect(response.body.id).toBe(s.apiA),
    },
  ],
  'analytics.getVerifications': [
    {
      input: (s) => ({ apiId: s.apiA, start: 0 }),
      effect: async (_, response) => expect(response.body).toEqual(expect.any(Array)),
    },
  ],
  'apis.listKeys': [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
    {
      variant: 'with decrypt',
      input: (s) => ({ apiId: s.apiA, decrypt: true }),
      alsoNeeds: 'decrypt_key',
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
  ],
  'keys.createKey': [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response) => {
        const got = await admin.get('keys.getKey', { keyId: String(response.body.keyId) });
        expect(got.body.apiId).toBe(s.apiA);
      },
    },
    {
      variant: 'recoverable',
      input: (s) => ({ apiId: s.apiA, recoverable: true }),
      alsoNeeds: 'encrypt_key',
      effect: async (_, response) => {
        const got = await admin.get('keys.getKey', {
          keyId: String(response.body.keyId),
          decrypt: 'true',
        });
        expect(got.body.plaintext).toBe(response.body.key);
      },
    },
  ],
  'migrations.createKeys': [
    {
      input: (s) => [{ apiId: s.apiA, plaintext: `imported_${s.nsN}` }],
      effect: async (s, response) => {
        expect(response.body).toEqual({ keyIds: [expect.stringMatching(/^key_/)] });
        const verdict = await admin.post('keys.verifyKey', { key: `imported_${s.nsN}` });
        expect(verdict.body.code).toBe('VALID');
      },
    },
  ],
  'keys.getKey': [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
    {
      variant: 'with decrypt',
      input: (s) => ({ keyId: s.key1.keyId, decrypt: true }),
      lookup: keyOfA,
      alsoNeeds: 'decrypt_key',
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
  ],
  'keys.getBucket': [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body).toEqual({}),
    },
  ],
  'keys.getVerifications': [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body.verifications).toEqual(expect.any(Array)),
    },
  ],
  'keys.getRecentVerifications': [
    {
      input: (s) => ({ keyId: s.key1.keyId }),
      lookup: keyOfA,
      effect: async (_, response) => expect(response.body.scope).toBe('node'),
    },
  ],
  'keys.verifyKey': [
    {
      input: (s) => ({ key: s.key1.key }),
      lookup: { ...keyOfA, elsewhere: 'verdict NOT_FOUND' },
      effect: async (s, response) => {
        expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
      },
    },
    {
      variant: 'with apiId',
      input: (s) => ({ key: s.key1.key, apiId: s.apiA }),
      lookup: { ...keyOfA, inputIds: (s) => [s.apiA], elsewhere: 'verdict NOT_FOUND' },
      effect: async (s, response) => {
        expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
      },
    },
  ],
  'keys.updateKey': [
    {
      input: (s) => ({ keyId: s.key1.keyId, name: 'updated' }),
      lookup: keyOfA,
      effect: async (s) => {
        expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.name).toBe('updated');
      },
    },
  ],
  'keys.updateRemaining': [
    {
      input: (s) => ({ keyId: s.key1.keyId, op: 'set', value: 7 }),
      lookup: keyOfA,
      effect: async (s, response) => {
        expect(response.body).toEqual({ remaining: 7 });
        expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.remaining).toBe(7);
      },
    },
  ],
  'keys.whoami': [
    {
      input: (s) => ({ key: s.key1.key }),
      lookup: { ...keyOfA, hidden: true },
      effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
    },
  ],
  'keys.addPermissions': [
    {
      input: (s) => ({ keyId: s.key1.keyId, permissions: [{ id: s.permission }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.permissions;
        expect(held ?? []).toEqual([expect.any(String)]);
      },
    },
  ],
  'keys.removePermissions': [
    {
      input: (s) => ({ keyId: s.key1.keyId, permissions: [{ id: s.permission }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.permissions;
        expect(held ?? []).toEqual([]);
      },
    },
  ],
  'keys.setPermissions': [
    {
      input: (s) => ({ keyId: s.key1.keyId, permissions: [{ id: s.permission }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.permissions;
        expect(held ?? []).toEqual([expect.any(String)]);
      },
    },
  ],
  'keys.addRoles': [
    {
      input: (s) => ({ keyId: s.key1.keyId, roles: [{ id: s.role }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.roles;
        expect(held ?? []).toEqual([expect.any(String)]);
      },
    },
  ],
  'keys.removeRoles': [
    {
      input: (s) => ({ keyId: s.key1.keyId, roles: [{ id: s.role }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.roles;
        expect(held ?? []).toEqual([]);
      },
    },
  ],
  'keys.setRoles': [
    {
      input: (s) => ({ keyId: s.key1.keyId, roles: [{ id: s.role }] }),
      namesResource: true,
      effect: async (s) => {
        const held = (await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.roles;
        expect(held ?? []).toEqual([expect.any(String)]);
      },
    },
  ],
  'keys.deleteKey': [
    {
      input: (s) => ({ keyId: s.key2.keyId }),
      lookup: keyOfA,
      effect: async (s) => {
        expect((await admin.get('keys.getKey', { keyId: s.key2.keyId })).status).toBe(404);
      },
    },
  ],
  // A grace period of an hour: key 1 keeps verifying for the rows after this one.
  'keys.rerollKey': [
    {
      input: (s) => ({ keyId: s.key1.keyId, expiration: 3_600_000 }),
      lookup: keyOfA,
      effect: async (s, response) => {
        expect(response.body).toEqual({
          keyId: expect.stringMatching(/^key_/),
          key: expect.any(String),
        });
        const rerolled = await admin.get('keys.getKey', { keyId: String(response.body.keyId) });
        expect(rerolled.body.apiId).toBe(s.apiA);
        const verdict = await admin.post('keys.verifyKey', { key: String(response.body.key) });
        expect(verdict.body.code).toBe('VALID');
        const old = await admin.get('keys.getKey', { keyId: s.key1.keyId });
        expect(old.body.expires).toEqual(expect.any(Number));
      },
    },
  ],
  'ratelimits.getOverride': [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_1' }),
      lookup: namespaceN,
      effect: async (_, response) =>
        expect(response.body).toMatchObject({ identifier: 'user_1', limit: 5 }),
    },
    {
      variant: 'by namespaceId',
      input: (s) => ({ namespaceId: s.nsNId, identifier: 'user_1' }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body).toMatchObject({ identifier: 'user_1' }),
    },
  ],
  'ratelimits.listOverrides': [
    {
      input: (s) => ({ namespaceName: s.nsN }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body.total).toBe(2),
    },
  ],
  'ratelimits.getUsage': [
    {
      input: (s) => ({ namespaceName: s.nsN }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body.usage).toHaveLength(25),
    },
    {
      variant: 'by namespaceId',
      input: (s) => ({ namespaceId: s.nsNId, groupBy: 'identifier' }),
      lookup: namespaceN,
      effect: async (_, response) => expect(response.body).toEqual({ usage: [] }),
    },
  ],
  'ratelimits.deleteOverride': [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_2' }),
      lookup: namespaceN,
      effect: async (s) => {
        const gone = await admin.get('ratelimits.getOverride', {
          namespaceName: s.nsN,
          identifier: 'user_2',
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  // After the reads: in another workspace these create the caller's own namespace N.
  'ratelimits.limit': [
    {
      input: (s) => ({ namespace: s.nsN, identifier: 'u', limit: 3, duration: 60_000 }),
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) =>
        expect(response.body).toMatchObject({ success: true, limit: 3 }),
    },
  ],
  'ratelimits.multiLimit': [
    {
      input: (s) => [{ namespace: s.nsN, identifier: 'multi', limit: 3, duration: 60_000 }],
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) =>
        expect(response.body).toMatchObject({
          success: true,
          limits: [{ namespace: expect.any(String), success: true, limit: 3, remaining: 2 }],
        }),
    },
  ],
  'ratelimits.setOverride': [
    {
      input: (s) => ({ namespaceName: s.nsN, identifier: 'user_9', limit: 9, duration: 1000 }),
      lookup: { ...namespaceN, elsewhere: 'created' },
      effect: async (_, response) => {
        expect(response.body.overrideId).toMatch(/^rlor_/);
      },
    },
  ],
  'permissions.createPermission': [
    {
      // In the caller's own workspace, whichever that is (as createApi).
      input: (s) => ({ name: `${s.nsN}.new` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ permissionId: expect.stringMatching(/^perm_/) }),
    },
  ],
  'permissions.getPermission': [
    {
      input: (s) => ({ permissionId: s.permission }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.permission),
    },
    {
      variant: 'by name',
      input: (s) => ({ name: `${s.nsN}.read` }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.permission),
    },
  ],
  'permissions.listPermissions': [
    {
      // The caller's own workspace's, whichever that is (as listApis).
      input: () => ({}),
      effect: async (_, response) => expect(Array.isArray(response.body)).toBe(true),
    },
  ],
  'permissions.deletePermission': [
    {
      input: (s) => ({ permissionId: s.permissionToDelete }),
      namesResource: true,
      effect: async (s) => {
        const gone = await admin.get('permissions.getPermission', {
          permissionId: s.permissionToDelete,
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  'permissions.createRole': [
    {
      input: (s) => ({ name: `${s.nsN} new role` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ roleId: expect.stringMatching(/^role_/) }),
    },
  ],
  'permissions.getRole': [
    {
      input: (s) => ({ roleId: s.role }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.role),
    },
    {
      variant: 'by name',
      input: (s) => ({ name: `${s.nsN} reader` }),
      namesResource: true,
      effect: async (s, response) => expect(response.body.id).toBe(s.role),
    },
  ],
  'permissions.listRoles': [
    {
      // The caller's own workspace's, whichever that is (as listApis).
      input: () => ({}),
      effect: async (_, response) => expect(Array.isArray(response.body)).toBe(true),
    },
  ],
  'permissions.setRolePermissions': [
    {
      input: (s) => ({ roleId: s.role, permissions: [`${s.nsN}.read`] }),
      namesResource: true,
      effect: async (s, response) => {
        expect(response.body).toEqual([expect.objectContaining({ id: s.permission })]);
        const got = await admin.get('permissions.getRole', { roleId: s.role });
        expect(got.body.permissions).toEqual([`${s.nsN}.read`]);
      },
    },
  ],
  'permissions.deleteRole': [
    {
      input: (s) => ({ roleId: s.roleToDelete }),
      namesResource: true,
      effect: async (s) => {
        expect((await admin.get('permissions.getRole', { roleId: s.roleToDelete })).status).toBe(
          404,
        );
      },
    },
  ],
  'identities.createIdentity': [
    {
      // In the caller's own workspace, whichever that is (as createApi).
      input: (s) => ({ externalId: `${s.nsN}.new` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ identityId: expect.stringMatching(/^id_/) }),
    },
  ],
  'identities.getIdentity': [
    {
      input: (s) => ({ identityId: s.identity }),
      lookup: identityI,
      effect: async (s, response) => expect(response.body.id).toBe(s.identity),
    },
    {
      variant: 'by externalId',
      input: (s) => ({ externalId: s.identityExternalId }),
      // A 403 would tell the id behind the externalId.
      lookup: { ...identityI, hidden: true },
      effect: async (s, response) => expect(response.body.id).toBe(s.identity),
    },
  ],
  'auditLogs.list': [
    {
      // The caller's own workspace's log, newest first: the scene's writes are in it.
      input: () => ({ limit: 5 }),
      effect: async (_, response) => {
        const entries = response.body.entries as { rootKeyId: string }[];
        expect(entries.length).toBeGreaterThan(0);
        expect(entries[0]).toMatchObject({ rootKeyId: expect.any(String) });
      },
    },
  ],
  'identities.listIdentities': [
    {
      // The caller's own workspace's, whichever that is (as listApis); `default` when unnamed.
      input: () => ({}),
      workspaceWide: true,
      effect: async (_, response) => expect(response.body.total).toEqual(expect.any(Number)),
    },
    {
      variant: 'of another environment',
      input: () => ({ environment: 'staging' }),
      workspaceWide: true,
      effect: async (_, response) => expect(response.body).toEqual({ identities: [], total: 0 }),
    },
  ],
  'identities.updateIdentity': [
    {
      input: (s) => ({ identityId: s.identity, meta: { by: 'id' } }),
      lookup: identityI,
      effect: async (s, response) => {
        expect(response.body.meta).toEqual({ by: 'id' });
        const got = await admin.get('identities.getIdentity', { identityId: s.identity });
        expect(got.body.meta).toEqual({ by: 'id' });
      },
    },
    {
      variant: 'by externalId',
      input: (s) => ({ externalId: s.identityExternalId, meta: { by: 'externalId' } }),
      lookup: { ...identityI, hidden: true },
      effect: async (s) => {
        const got = await admin.get('identities.getIdentity', { identityId: s.identity });
        expect(got.body.meta).toEqual({ by: 'externalId' });
      },
    },
  ],
  'identities.deleteIdentity': [
    {
      input: (s) => ({ identityId: s.identityToDelete }),
      lookup: { ids: (s) => [s.identityToDelete], elsewhere: 'not found' },
      effect: async (s) => {
        const gone = await admin.get('identities.getIdentity', {
          identityId: s.identityToDelete,
        });
        expect(gone.status).toBe(404);
      },
    },
  ],
  // Last two: they take API A's keys, then API A itself away.
  'apis.deleteKeys': [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s, response) => {
        expect(response.body.deletedKeys).toEqual(expect.any(Number));
        expect((await admin.get('apis.listKeys', { apiId: s.apiA })).body.total).toBe(0);
      },
    },
  ],
  'apis.deleteApi': [
    {
      input: (s) => ({ apiId: s.apiA }),
      effect: async (s) => {
        expect((await admin.get('apis.getApi', { apiId: s.apiA })).status).toBe(404);
      },
    },
  ],
};

/** One row of the matrix: a declared operation and one way of calling it. */
interface Row {
  name: string;
  op: Declared;
  call: Call;
}

/** Every call of `calls`, with its declaration; an operation the matrix cannot call fails here. */
function rows(): Row[] {
  const uncalled = registry.filter((op) => !(op.name in calls)).map((op) => op.name);
  if (uncalled.length > 0) {
    throw new Error(`no call in the matrix for ${uncalled.join(', ')}: add it to \`calls\``);
  }
  return Object.entries(calls).flatMap(([name, list]) => {
    const op = registry.find((declared) => declared.name === name);
    if (!op) throw new Error(`${name} is in the matrix but not in the registry`);
    return list.map((call) => ({
      name: call.variant === undefined ? name : `${name} ${call.variant}`,
      op,
      call,
    }));
  });
}

/** A GET's query: the input's fields as strings. */
function queryOf(input: object): Record<string, string> {
  return Object.fromEntries(Object.entries(input).map(([name, value]) => [name, String(value)]));
}

function callRow(row: Row, rootKey: string, scene: Scene): Promise<RpcResponse> {
  const input = row.call.input(scene);
  return row.op.method === 'GET'
    ? get(base, row.op.name, queryOf(input), rootKey)
    : post(base, row.op.name, input, rootKey);
}

type Outcome =
  | { kind: 'allowed' }
  | { kind: 'forbidden'; permission: string }
  | { kind: 'not found' }
  | { kind: 'verdict NOT_FOUND' };

/** `*`, `<resource>.*.<action>`, or one of `ids` in the id position. */
function holds(permissions: readonly string[], resource: Resource, action: string, ids: string[]) {
  return permissions.some(
    (p) =>
      p === '*' ||
      p === `${resource}.*.${action}` ||
      ids.some((id) => p === `${resource}.${id}.${action}`),
  );
}

function holdsAnywhere(permissions: readonly string[], resource: Resource, action: string) {
  return permissions.some(
    (p) => p === '*' || (p.startsWith(`${resource}.`) && p.endsWith(`.${action}`)),
  );
}

/**
 * What the contract and docs/decisions.md say this principal gets from this call, computed from
 * the operation's declared permission rule.
 */
function expected(principal: Principal, row: Row, scene: Scene): Outcome {
  const permissions = principal.permissions(scene);
  const own = principal.workspace === 'own';
  const rule = row.op.permission;
  const { resource, action } = rule;
  const allowedWith = (ids: string[]) => holds(permissions, resource, action, ids);
  const forbidden = (id: string): Outcome => ({
    kind: 'forbidden',
    permission: `${resource}.${id}.${action}`,
  });
  switch (rule.scope) {
    case 'any':
      if (!allowedWith([])) return forbidden('*');
      return own || !row.call.namesResource ? { kind: 'allowed' } : { kind: 'not found' };
    case 'input': {
      const ids = rule.ids(row.call.input(scene) as never);
      for (const id of ids) {
        if (!allowedWith([id])) return forbidden(id);
      }
      const also = row.call.alsoNeeds;
      if (also !== undefined) {
        for (const id of ids) {
          if (!holds(permissions, resource, also, [id])) {
            return { kind: 'forbidden', permission: `${resource}.${id}.${also}` };
          }
        }
      }
      // Another workspace's API is looked up in the caller's own workspace: it is not there.
      return own || row.call.workspaceWide ? { kind: 'allowed' } : { kind: 'not found' };
    }
    case 'resource': {
      const { lookup } = row.call;
      if (!lookup) throw new Error(`${row.name}: a rule of scope 'resource' needs a lookup`);
      if (!holdsAnywhere(permissions, resource, action)) return forbidden('*');
      for (const id of lookup.inputIds?.(scene) ?? []) {
        if (!allowedWith([id])) return forbidden(id);
      }
      const [first, ...others] = lookup.ids(scene);
      if (first === undefined) throw new Error(`${row.name}: the lookup names no id`);
      if (!own) {
        // Not there: a read finds nothing; a write creates the caller's own, by its name.
        if (lookup.elsewhere !== 'created') return { kind: lookup.elsewhere };
        return allowedWith([first]) ? { kind: 'allowed' } : forbidden(first);
      }
      if (!allowedWith([first, ...others])) {
        return lookup.hidden ? { kind: 'not found' } : forbidden(first);
      }
      const also = row.call.alsoNeeds;
      if (also !== undefined && !holds(permissions, resource, also, [first, ...others])) {
        return { kind: 'forbidden', permission: `${resource}.${first}.${also}` };
      }
      return { kind: 'allowed' };
    }
  }
}

async function rootKeyFor(principal: Principal, scene: Scene): Promise<string> {
  const created = await createRootKey(rootKeys, {
    permissions: principal.permissions(scene),
    ...(principal.workspace === 'own' ? { workspaceId: topology.workspaceId } : {}),
  });
  return created.key;
}

/**
 * The matrix in two parts, one per test file (authzMatrix.test.ts, authzMatrix2.test.ts), so that
 * jest's two workers share it: every other principal each; the other checks in part 0.
 */
export function authzMatrix(part: 0 | 1): void {
  if (part === 0)
    test('every operation of src/operations/registry.ts is in the matrix', () => {
      const names = routes.map((route): string => route.name);
      expect({
        uncalled: names.filter((name) => !(name in calls)),
        unknown: Object.keys(calls).filter((name) => !names.includes(name)),
      }).toEqual({ uncalled: [], unknown: [] });
      // The registry is what the routes are: the matrix covers what is served.
      expect(names).toEqual(registry.map((op) => op.name));
      // The declarations say what docs/security.md's authorization matrix documents: its resource,
      // action and scope (`*`: any; the input's `<apiId>` or `<environment>`: input; an id found by
      // the lookup: resource).
      const documented = new Map<string, string>();
      const doc = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8');
      for (const line of doc.split('\n')) {
        const [, ops, needed] = line.split('|').map((cell) => cell.trim());
        const permission = /^`(api|ratelimit|rbac|identity|audit)\.([^`]+)\.(\w+)`/.exec(
          needed ?? '',
        );
        if (!ops || !permission) continue;
        const [, resource, id, action] = permission;
        const scope =
          id === '*' ? 'any' : id === '<apiId>' || id === '<environment>' ? 'input' : 'resource';
        for (const [, name] of ops.matchAll(/`([a-z][A-Za-z]*\.[A-Za-z]+)`/g)) {
          documented.set(name!, `${resource}.${action} (${scope})`);
        }
      }
      expect(registry.map((op) => [op.name, documented.get(op.name) ?? 'not documented'])).toEqual(
        registry.map(({ name, permission: { resource, action, scope } }) => [
          name,
          `${resource}.${action} (${scope})`,
        ]),
      );
      // Each is called at least once, and a rule of scope 'resource' says what it looks up.
      for (const row of rows()) {
        expect([row.name, row.op.permission.scope === 'resource']).toEqual([
          row.name,
          row.call.lookup !== undefined,
        ]);
      }
    });

  describe('the authorization matrix', () => {
    const mine = principals.filter((_, i) => i % 2 === part);
    test.each(mine.map((p) => [p.label, p]))('%s', async (_, principal) => {
      const scene = await newScene();
      const rootKey = await rootKeyFor(principal, scene);
      const seen: string[] = [];
      for (const row of rows()) {
        const outcome = expected(principal, row, scene);
        await watcher.start();
        const response = await callRow(row, rootKey, scene);
        const line = `${row.name}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`;
        seen.push(line);
        expectSecurityHeaders(response.headers);
        try {
          switch (outcome.kind) {
            case 'allowed':
              expect(response.status).toBe(200);
              await row.call.effect(scene, response);
              break;
            case 'verdict NOT_FOUND':
              expect(response.status).toBe(200);
              expect(response.body).toEqual({
                valid: false,
                code: 'NOT_FOUND',
                requestId: response.headers.get('x-request-id'),
              });
              break;
            case 'forbidden':
            case 'not found': {
              const status = outcome.kind === 'forbidden' ? 403 : 404;
              expect(response.status).toBe(status);
              const { error } = expectErrorEnvelope(
                status,
                response.headers,
                JSON.stringify(response.body),
              );
              if (outcome.kind === 'forbidden') {
                expect(error.code).toBe('INSUFFICIENT_PERMISSIONS');
                // Exactly the permission the declared rule implies, of its resource and action
                // (or the action the call also needs).
                const { resource, action } = row.op.permission;
                const actions = [action, ...(row.call.alsoNeeds ? [row.call.alsoNeeds] : [])];
                expect(outcome.permission).toMatch(
                  new RegExp(`^${resource}\\.[^.]+(\\.[^.]+)*\\.(${actions.join('|')})$`),
                );
                expect(error.message).toBe(
                  `this root key lacks the permission ${outcome.permission}`,
                );
              } else expect(error.code).toBe('NOT_FOUND');
              // Nothing gets in: a refused call writes nothing to the primary.
              expect(await lastingWrites(watcher, primary)).toEqual([]);
              break;
            }
          }
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          throw new Error(
            `${principal.label} × ${row.name}: expected ${JSON.stringify(outcome)}\n` +
              `${seen.join('\n')}\n${message}`,
          );
        }
      }
    });
  });

  if (part === 0)
    describe('not found looks the same whatever the reason', () => {
      /** The answer with the id taken out: what a caller could compare. */
      const shape = (response: RpcResponse, id: string) => {
        const { error } = response.body as unknown as ErrorEnvelope;
        return {
          status: response.status,
          keys: Object.keys(error).sort(),
          code: error.code,
          message: error.message.split(id).join('<id>'),
          docs: error.docs,
        };
      };

      test('a missing id, another workspace’s id, a deleted one: the same 404', async () => {
        const mine = await newScene();
        const theirs = await topology.newRootKey();
        const other = client(base, theirs.key);
        const theirApi = (await other.post<{ apiId: string }>('apis.createApi', { name: 'theirs' }))
          .body.apiId;
        const theirKey = (
          await other.post<{ keyId: string; key: string }>('keys.createKey', { apiId: theirApi })
        ).body;
        // A deleted API and key of my own workspace.
        const deletedKey = (
          await admin.post<{ keyId: string }>('keys.createKey', { apiId: mine.apiA })
        ).body.keyId;
        expect((await admin.post('keys.deleteKey', { keyId: deletedKey })).status).toBe(200);
        const gone = await newScene();
        expect((await admin.post('apis.deleteApi', { apiId: gone.apiA })).status).toBe(200);

        const missingApi = 'api_1ChFjUFmm4aKezRcXb7fjz';
        const missingKey = 'key_1ChFjUG4o6VLuzbLGABNDC';
        const apiIds = [missingApi, theirApi, gone.apiA];
        // A key of a deleted API is not found either (its record may still be purged).
        const keyIds = [missingKey, theirKey.keyId, deletedKey, gone.key1.keyId];

        const byApi: Record<string, (apiId: string) => Promise<RpcResponse>> = {
          getApi: (apiId) => admin.get('apis.getApi', { apiId }),
          listKeys: (apiId) => admin.get('apis.listKeys', { apiId }),
          createKey: (apiId) => admin.post('keys.createKey', { apiId }),
          deleteApi: (apiId) => admin.post('apis.deleteApi', { apiId }),
        };
        const byKey: Record<string, (keyId: string) => Promise<RpcResponse>> = {
          getKey: (keyId) => admin.get('keys.getKey', { keyId }),
          getBucket: (keyId) => admin.get('keys.getBucket', { keyId }),
          getVerifications: (keyId) => admin.get('keys.getVerifications', { keyId }),
          getRecentVerifications: (keyId) => admin.get('keys.getRecentVerifications', { keyId }),
          updateRemaining: (keyId) =>
            admin.post('keys.updateRemaining', { keyId, op: 'set', value: 1 }),
          updateKey: (keyId) => admin.post('keys.updateKey', { keyId, name: 'x' }),
          deleteKey: (keyId) => admin.post('keys.deleteKey', { keyId }),
        };
        // A namespace of theirs, named by its id, and one that never existed.
        expect(
          (
            await other.post('ratelimits.setOverride', {
              namespaceName: 'theirs',
              identifier: 'x',
              limit: 1,
              duration: 1000,
            })
          ).status,
        ).toBe(200);
        const theirNs = (await primary.hget(names.namespace(theirs.workspaceId, 'theirs'), 'id'))!;
        const namespaceIds = ['rlns_1ChFn6PMC5yVErDBdZFGpo', theirNs];
        const byNamespace: Record<string, (namespaceId: string) => Promise<RpcResponse>> = {
          getOverride: (namespaceId) =>
            admin.get('ratelimits.getOverride', { namespaceId, identifier: 'x' }),
          listOverrides: (namespaceId) => admin.get('ratelimits.listOverrides', { namespaceId }),
          getUsage: (namespaceId) => admin.get('ratelimits.getUsage', { namespaceId }),
          deleteOverride: (namespaceId) =>
            admin.post('ratelimits.deleteOverride', { namespaceId, identifier: 'x' }),
          setOverride: (namespaceId) =>
            admin.post('ratelimits.setOverride', {
              namespaceId,
              identifier: 'x',
              limit: 1,
              duration: 1,
            }),
        };
        // An identity of theirs, a deleted one of mine, and one that never existed.
        const theirIdentity = (
          await other.post<{ identityId: string }>('identities.createIdentity', {
            externalId: 'theirs',
          })
        ).body.identityId;
        expect(
          (await admin.post('identities.deleteIdentity', { identityId: mine.identityToDelete }))
            .status,
        ).toBe(200);
        const identityIds = ['id_1ChFjUG4o6VLuzbLGABNDC', theirIdentity, mine.identityToDelete];
        const byIdentity: Record<string, (identityId: string) => Promise<RpcResponse>> = {
          getIdentity: (identityId) => admin.get('identities.getIdentity', { identityId }),
          updateIdentity: (identityId) =>
            admin.post('identities.updateIdentity', { identityId, meta: { x: 1 } }),
          deleteIdentity: (identityId) => admin.post('identities.deleteIdentity', { identityId }),
        };
        const before = await dumpKeyspace(primary);
        for (const [name, call] of Object.entries(byIdentity)) {
          const shapes = [];
          for (const id of identityIds) shapes.push(shape(await call(id), id));
          expect([name, shapes[0]]).toEqual([name, expect.objectContaining({ status: 404 })]);
          for (const other of shapes) expect([name, other]).toEqual([name, shapes[0]]);
        }
        for (const [name, call] of Object.entries(byNamespace)) {
          const shapes = [];
          for (const id of namespaceIds) shapes.push(shape(await call(id), id));
          expect([name, shapes[0]]).toEqual([name, expect.objectContaining({ status: 404 })]);
          for (const other of shapes) expect([name, other]).toEqual([name, shapes[0]]);
        }
        for (const [name, call] of Object.entries(byApi)) {
          const shapes = [];
          for (const id of apiIds) shapes.push(shape(await call(id), id));
          expect([name, shapes[0]]).toEqual([name, expect.objectContaining({ status: 404 })]);
          for (const other of shapes) expect([name, other]).toEqual([name, shapes[0]]);
        }
        for (const [name, call] of Object.entries(byKey)) {
          const shapes = [];
          for (const id of keyIds) shapes.push(shape(await call(id), id));
          expect([name, shapes[0]]).toEqual([name, expect.objectContaining({ status: 404 })]);
          for (const other of shapes) expect([name, other]).toEqual([name, shapes[0]]);
        }
        // And the verdict for another workspace's key is the one for a key that never existed.
        const verdicts = await Promise.all(
          [theirKey.key, 'never-issued', gone.key1.key].map(
            async (key) => (await admin.post('keys.verifyKey', { key })).body,
          ),
        );
        for (const verdict of verdicts) {
          expect(verdict).toEqual({
            valid: false,
            code: 'NOT_FOUND',
            requestId: expect.any(String),
          });
        }
        // Probing wrote nothing, in my workspace or theirs.
        expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
        // Their things are still theirs.
        expect((await other.post('keys.verifyKey', { key: theirKey.key })).body.code).toBe('VALID');
      });
    });

  if (part === 0)
    describe('authentication', () => {
      /** Ids that name nothing: the 401 comes before any of them is looked at. */
      const nowhere: Scene = {
        apiA: 'api_x',
        apiB: 'api_y',
        key1: { keyId: 'key_x', key: 'x' },
        key2: { keyId: 'key_y', key: 'y' },
        nsN: 'n',
        nsNId: 'rlns_x',
        nsM: 'n.other',
        permission: 'perm_x',
        permissionToDelete: 'perm_y',
        role: 'role_x',
        roleToDelete: 'role_y',
        identity: 'id_x',
        identityExternalId: 'nobody',
        identityJ: 'id_y',
        identityToDelete: 'id_z',
      };
      /** Every call of the matrix, so every operation of the registry. */
      const requests: [
        string,
        (rootKey: string | undefined, headers?: Record<string, string>) => Promise<Response>,
      ][] = rows().map((row) => {
        const input = row.call.input(nowhere);
        return [
          row.name,
          row.op.method === 'GET'
            ? (rk, h) => {
                const query = new URLSearchParams(queryOf(input)).toString();
                return send(
                  'GET',
                  query ? `${row.op.name}?${query}` : row.op.name,
                  undefined,
                  rk,
                  h,
                );
              }
            : (rk, h) => send('POST', row.op.name, input, rk, h),
        ];
      });

      function send(
        method: 'GET' | 'POST',
        path: string,
        body: unknown,
        rootKey: string | undefined,
        extra: Record<string, string> = {},
      ): Promise<Response> {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
        if (rootKey !== undefined) headers.authorization = `Bearer ${rootKey}`;
        return fetch(`${base}/v1/${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(5_000),
        });
      }

      test('every 401 carries WWW-Authenticate: Bearer and one message, whatever was wrong', async () => {
        // A revoked root key: known to the node (cached), then revoked in the store.
        const revoked = await createRootKey(rootKeys, { workspaceId: topology.workspaceId });
        expect((await send('GET', 'apis.getApi?apiId=api_x', undefined, revoked.key)).status).toBe(
          404,
        );
        await revokeRootKey(rootKeys, topology.workspaceId, revoked.keyId);
        // The revocation reaches the node's cache through pub/sub.
        for (let i = 0; i < 50; i++) {
          if ((await send('GET', 'apis.getApi?apiId=api_x', undefined, revoked.key)).status === 401)
            break;
          await sleep(20);
        }
        const failures: [string, string | undefined, Record<string, string>][] = [
          ['no header', undefined, {}],
          ['unknown root key', 'kwroot_4KAT6XdWFUK1MLidyAC3RehpKFVNj7JjN', {}],
          ['revoked root key', revoked.key, {}],
          ['empty bearer', undefined, { authorization: 'Bearer ' }],
          ['wrong scheme', undefined, { authorization: `Basic ${topology.rootKey}` }],
          ['no scheme', undefined, { authorization: topology.rootKey }],
          ['too long', undefined, { authorization: `Bearer ${'k'.repeat(513)}` }],
          ['two tokens', undefined, { authorization: `Bearer ${topology.rootKey} x` }],
        ];
        const messages = new Set<string>();
        const before = await dumpKeyspace(primary);
        for (const [operation, call] of requests) {
          for (const [label, rootKey, headers] of failures) {
            const response = await call(rootKey, headers);
            const text = await response.text();
            expect([operation, label, response.status]).toEqual([operation, label, 401]);
            const { error } = expectErrorEnvelope(401, response.headers, text);
            expect(response.headers.get('www-authenticate')).toBe('Bearer');
            messages.add(error.message);
          }
        }
        expect([...messages]).toEqual([
          'a valid root key is required: Authorization: Bearer <ROOT_KEY>',
        ]);
        expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
      });

      test('the scheme is case-insensitive and the token is not', async () => {
        const ok = await send('GET', 'apis.getApi?apiId=api_x', undefined, undefined, {
          authorization: `bEaReR ${topology.rootKey}`,
        });
        expect(ok.status).toBe(404);
        const wrongCase = await send('GET', 'apis.getApi?apiId=api_x', undefined, undefined, {
          authorization: `Bearer ${topology.rootKey.toUpperCase()}`,
        });
        expect(wrongCase.status).toBe(401);
      });
    });
}
