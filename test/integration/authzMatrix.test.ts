import type { Redis } from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, get, post, type RpcResponse, type Client } from '../support/rpc';
import { adminRedis, closeRedis, diffKeyspace, dumpKeyspace } from '../support/keyspace';
import {
  expectErrorEnvelope,
  expectSecurityHeaders,
  type ErrorEnvelope,
} from '../support/envelope';
import { createRootKey } from '../../src/operations/rootKeys';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { routes } from '../../src/http/routes';
import { names } from '../../src/store/names';
import { sleep } from '../support/helpers';

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
let rootKeys: RootKeyStore;
let admin: Client;

beforeAll(async () => {
  topology = await startTopology({
    nodes: 1,
    env: { KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000', KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000' },
  });
  base = topology.nodes[0]!.url;
  primary = await adminRedis(topology.primary.url);
  rootKeys = new RootKeyStore(primary);
  admin = client(base, topology.rootKey);
});

afterAll(async () => {
  if (primary) await closeRedis(primary);
  if (topology) await topology.stop();
});

const API_ACTIONS = [
  'create_api',
  'read_api',
  'delete_api',
  'read_key',
  'create_key',
  'verify_key',
  'update_key',
  'delete_key',
] as const;
const RATELIMIT_ACTIONS = ['limit', 'set_override', 'read_override', 'delete_override'] as const;
type Action = (typeof API_ACTIONS)[number] | (typeof RATELIMIT_ACTIONS)[number];
type Resource = 'api' | 'ratelimit';

/**
 * The resources one row of the matrix works on: a fresh API A, another API B, keys in A, and
 * rate-limit namespaces N (with an override) and M.
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
  return { apiA, apiB, key1, key2, nsN, nsNId, nsM };
}

interface Principal {
  label: string;
  workspace: 'own' | 'other';
  permissions: (scene: Scene) => string[];
}

/** Every action of both resources, on `apiId` and on the namespace `ns`. */
const every = (apiId: string, ns: string) => [
  ...API_ACTIONS.map((action) => `api.${apiId}.${action}`),
  ...RATELIMIT_ACTIONS.map((action) => `ratelimit.${ns}.${action}`),
];

const principals: Principal[] = [
  { label: '*', workspace: 'own', permissions: () => ['*'] },
  { label: 'every action on *', workspace: 'own', permissions: () => every('*', '*') },
  { label: 'every action on A and N', workspace: 'own', permissions: (s) => every(s.apiA, s.nsN) },
  {
    label: 'every action on A and N by its id',
    workspace: 'own',
    permissions: (s) => every(s.apiA, s.nsNId),
  },
  { label: 'every action on B and M', workspace: 'own', permissions: (s) => every(s.apiB, s.nsM) },
  { label: 'an unrelated permission', workspace: 'own', permissions: () => ['analytics.*.read'] },
  {
    label: 'the right actions on another resource',
    workspace: 'own',
    permissions: () => [...API_ACTIONS, ...RATELIMIT_ACTIONS].map((action) => `key.*.${action}`),
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
  { label: '* in another workspace', workspace: 'other', permissions: () => ['*'] },
  {
    label: 'every action on A and N in another workspace',
    workspace: 'other',
    permissions: (s) => every(s.apiA, s.nsN),
  },
  {
    label: 'every action on A and N by its id in another workspace',
    workspace: 'other',
    permissions: (s) => every(s.apiA, s.nsNId),
  },
];

type Call = (rootKey: string, scene: Scene) => Promise<RpcResponse>;

interface Operation {
  name: string;
  resource: Resource;
  action: Action;
  /**
   * How the permission is checked (src/operations, docs/decisions.md):
   * - `wildcard`: only `api.*.<action>` (or `*`) grants it (createApi: the API does not exist yet);
   * - `input`: `api.<apiId>.<action>` for the apiId in the input, checked before any lookup;
   * - `lookup`: first "holds the action on some API" (403 naming `api.*.<action>`), then the key
   *   is looked up (404) and `api.<its apiId>.<action>` checked;
   * - `namespace`: first "holds the action on some namespace", then the namespace is looked up
   *   (404) and `ratelimit.<name or id>.<action>` checked;
   * - `namespace-create`: the same, but a namespace that does not exist is created, which needs
   *   the permission by name (there is no id yet).
   */
  check: 'wildcard' | 'input' | 'lookup' | 'namespace' | 'namespace-create';
  call: Call;
  /** A write that was allowed happened; a read returned the resource. */
  effect: (scene: Scene, response: RpcResponse) => Promise<void>;
}

const operations: Operation[] = [
  {
    name: 'apis.createApi',
    resource: 'api',
    action: 'create_api',
    check: 'wildcard',
    call: (rk) => post(base, 'apis.createApi', { name: 'by-matrix' }, rk),
    effect: async (_, response) => {
      expect(response.body).toEqual({ apiId: expect.stringMatching(/^api_/), name: 'by-matrix' });
    },
  },
  {
    name: 'apis.listApis',
    resource: 'api',
    action: 'read_api',
    check: 'wildcard',
    call: (rk) => get(base, 'apis.listApis', {}, rk),
    effect: async (_, response) => expect(response.body.total).toEqual(expect.any(Number)),
  },
  {
    name: 'apis.getApi',
    resource: 'api',
    action: 'read_api',
    check: 'input',
    call: (rk, s) => get(base, 'apis.getApi', { apiId: s.apiA }, rk),
    effect: async (s, response) => expect(response.body.id).toBe(s.apiA),
  },
  {
    name: 'apis.listKeys',
    resource: 'api',
    action: 'read_key',
    check: 'input',
    call: (rk, s) => get(base, 'apis.listKeys', { apiId: s.apiA }, rk),
    effect: async (_, response) => expect(response.body.total).toBe(2),
  },
  {
    name: 'keys.createKey',
    resource: 'api',
    action: 'create_key',
    check: 'input',
    call: (rk, s) => post(base, 'keys.createKey', { apiId: s.apiA }, rk),
    effect: async (s, response) => {
      const got = await admin.get('keys.getKey', { keyId: String(response.body.keyId) });
      expect(got.body.apiId).toBe(s.apiA);
    },
  },
  {
    name: 'migrations.createKeys',
    resource: 'api',
    action: 'create_key',
    check: 'input',
    call: (rk, s) =>
      post(base, 'migrations.createKeys', [{ apiId: s.apiA, plaintext: `imported_${s.nsN}` }], rk),
    effect: async (s, response) => {
      expect(response.body).toEqual({ keyIds: [expect.stringMatching(/^key_/)] });
      const verdict = await admin.post('keys.verifyKey', { key: `imported_${s.nsN}` });
      expect(verdict.body.code).toBe('VALID');
    },
  },
  {
    name: 'keys.getKey',
    resource: 'api',
    action: 'read_key',
    check: 'lookup',
    call: (rk, s) => get(base, 'keys.getKey', { keyId: s.key1.keyId }, rk),
    effect: async (s, response) => expect(response.body.id).toBe(s.key1.keyId),
  },
  {
    name: 'keys.getBucket',
    resource: 'api',
    action: 'read_key',
    check: 'lookup',
    call: (rk, s) => get(base, 'keys.getBucket', { keyId: s.key1.keyId }, rk),
    effect: async (_, response) => expect(response.body).toEqual({}),
  },
  {
    name: 'keys.getVerifications',
    resource: 'api',
    action: 'read_key',
    check: 'lookup',
    call: (rk, s) => get(base, 'keys.getVerifications', { keyId: s.key1.keyId }, rk),
    effect: async (_, response) => expect(response.body.verifications).toEqual(expect.any(Array)),
  },
  {
    name: 'keys.verifyKey',
    resource: 'api',
    action: 'verify_key',
    check: 'lookup',
    call: (rk, s) => post(base, 'keys.verifyKey', { key: s.key1.key }, rk),
    effect: async (s, response) => {
      expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
    },
  },
  {
    name: 'keys.verifyKey with apiId',
    resource: 'api',
    action: 'verify_key',
    check: 'input',
    call: (rk, s) => post(base, 'keys.verifyKey', { key: s.key1.key, apiId: s.apiA }, rk),
    effect: async (s, response) => {
      expect(response.body).toMatchObject({ valid: true, code: 'VALID', keyId: s.key1.keyId });
    },
  },
  {
    name: 'keys.updateKey',
    resource: 'api',
    action: 'update_key',
    check: 'lookup',
    call: (rk, s) => post(base, 'keys.updateKey', { keyId: s.key1.keyId, name: 'updated' }, rk),
    effect: async (s) => {
      expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.name).toBe('updated');
    },
  },
  {
    name: 'keys.updateRemaining',
    resource: 'api',
    action: 'update_key',
    check: 'lookup',
    call: (rk, s) =>
      post(base, 'keys.updateRemaining', { keyId: s.key1.keyId, op: 'set', value: 7 }, rk),
    effect: async (s, response) => {
      expect(response.body).toEqual({ remaining: 7 });
      expect((await admin.get('keys.getKey', { keyId: s.key1.keyId })).body.remaining).toBe(7);
    },
  },
  {
    name: 'keys.deleteKey',
    resource: 'api',
    action: 'delete_key',
    check: 'lookup',
    call: (rk, s) => post(base, 'keys.deleteKey', { keyId: s.key2.keyId }, rk),
    effect: async (s) => {
      expect((await admin.get('keys.getKey', { keyId: s.key2.keyId })).status).toBe(404);
    },
  },
  {
    name: 'ratelimits.getOverride',
    resource: 'ratelimit',
    action: 'read_override',
    check: 'namespace',
    call: (rk, s) =>
      get(base, 'ratelimits.getOverride', { namespaceName: s.nsN, identifier: 'user_1' }, rk),
    effect: async (_, response) =>
      expect(response.body).toMatchObject({ identifier: 'user_1', limit: 5 }),
  },
  {
    name: 'ratelimits.getOverride by namespaceId',
    resource: 'ratelimit',
    action: 'read_override',
    check: 'namespace',
    call: (rk, s) =>
      get(base, 'ratelimits.getOverride', { namespaceId: s.nsNId, identifier: 'user_1' }, rk),
    effect: async (_, response) => expect(response.body).toMatchObject({ identifier: 'user_1' }),
  },
  {
    name: 'ratelimits.listOverrides',
    resource: 'ratelimit',
    action: 'read_override',
    check: 'namespace',
    call: (rk, s) => get(base, 'ratelimits.listOverrides', { namespaceName: s.nsN }, rk),
    effect: async (_, response) => expect(response.body.total).toBe(2),
  },
  {
    name: 'ratelimits.deleteOverride',
    resource: 'ratelimit',
    action: 'delete_override',
    check: 'namespace',
    call: (rk, s) =>
      post(base, 'ratelimits.deleteOverride', { namespaceName: s.nsN, identifier: 'user_2' }, rk),
    effect: async (s) => {
      const gone = await admin.get('ratelimits.getOverride', {
        namespaceName: s.nsN,
        identifier: 'user_2',
      });
      expect(gone.status).toBe(404);
    },
  },
  // After the reads: in another workspace these create the caller's own namespace N.
  {
    name: 'ratelimits.limit',
    resource: 'ratelimit',
    action: 'limit',
    check: 'namespace-create',
    call: (rk, s) =>
      post(
        base,
        'ratelimits.limit',
        { namespace: s.nsN, identifier: 'u', limit: 3, duration: 60_000 },
        rk,
      ),
    effect: async (_, response) => expect(response.body).toMatchObject({ success: true, limit: 3 }),
  },
  {
    name: 'ratelimits.setOverride',
    resource: 'ratelimit',
    action: 'set_override',
    check: 'namespace-create',
    call: (rk, s) =>
      post(
        base,
        'ratelimits.setOverride',
        { namespaceName: s.nsN, identifier: 'user_9', limit: 9, duration: 1000 },
        rk,
      ),
    effect: async (s, response) => {
      expect(response.body.overrideId).toMatch(/^rlor_/);
    },
  },
  // Last: it takes API A and its keys away.
  {
    name: 'apis.deleteApi',
    resource: 'api',
    action: 'delete_api',
    check: 'input',
    call: (rk, s) => post(base, 'apis.deleteApi', { apiId: s.apiA }, rk),
    effect: async (s) => {
      expect((await admin.get('apis.getApi', { apiId: s.apiA })).status).toBe(404);
    },
  },
];

type Outcome =
  | { kind: 'allowed' }
  | { kind: 'forbidden'; permission: string }
  | { kind: 'not found' }
  | { kind: 'verdict NOT_FOUND' };

/** `*`, `<resource>.*.<action>`, or one of `ids` in the id position. */
function holds(permissions: readonly string[], resource: Resource, action: Action, ids: string[]) {
  return permissions.some(
    (p) =>
      p === '*' ||
      p === `${resource}.*.${action}` ||
      ids.some((id) => p === `${resource}.${id}.${action}`),
  );
}

function holdsAnywhere(permissions: readonly string[], resource: Resource, action: Action) {
  return permissions.some(
    (p) => p === '*' || (p.startsWith(`${resource}.`) && p.endsWith(`.${action}`)),
  );
}

/** What the contract and docs/decisions.md say this principal gets from this operation. */
function expected(principal: Principal, op: Operation, scene: Scene): Outcome {
  const permissions = principal.permissions(scene);
  const own = principal.workspace === 'own';
  const { resource, action } = op;
  const anywhere = `${resource}.*.${action}`;
  const missing = (): Outcome =>
    op.name.startsWith('keys.verifyKey') ? { kind: 'verdict NOT_FOUND' } : { kind: 'not found' };
  switch (op.check) {
    case 'wildcard':
      return holds(permissions, resource, action, [])
        ? { kind: 'allowed' }
        : { kind: 'forbidden', permission: anywhere };
    case 'input':
      if (
        op.name === 'keys.verifyKey with apiId' &&
        !holdsAnywhere(permissions, resource, action)
      ) {
        return { kind: 'forbidden', permission: anywhere };
      }
      if (!holds(permissions, resource, action, [scene.apiA])) {
        return { kind: 'forbidden', permission: `api.${scene.apiA}.${action}` };
      }
      return own ? { kind: 'allowed' } : missing();
    case 'lookup':
      if (!holdsAnywhere(permissions, resource, action)) {
        return { kind: 'forbidden', permission: anywhere };
      }
      // Another workspace's key is looked up in the caller's own workspace: it is not there.
      if (!own) return missing();
      return holds(permissions, resource, action, [scene.apiA])
        ? { kind: 'allowed' }
        : { kind: 'forbidden', permission: `api.${scene.apiA}.${action}` };
    case 'namespace':
    case 'namespace-create': {
      if (!holdsAnywhere(permissions, resource, action)) {
        return { kind: 'forbidden', permission: anywhere };
      }
      const byName = `ratelimit.${scene.nsN}.${action}`;
      if (!own) {
        // N does not exist in the other workspace: reads find nothing; limit and setOverride
        // create the caller's own N there, which only a permission by name can allow.
        if (op.check === 'namespace') return { kind: 'not found' };
        return holds(permissions, resource, action, [scene.nsN])
          ? { kind: 'allowed' }
          : { kind: 'forbidden', permission: byName };
      }
      return holds(permissions, resource, action, [scene.nsN, scene.nsNId])
        ? { kind: 'allowed' }
        : { kind: 'forbidden', permission: byName };
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

test('every route of src/http/routes.ts is in the matrix', () => {
  const covered = new Set(operations.map((op) => op.name.split(' ')[0]));
  expect([...covered].sort()).toEqual(routes.map((route) => route.name).sort());
});

describe('the authorization matrix', () => {
  test.each(principals.map((p) => [p.label, p]))('%s', async (_, principal) => {
    const scene = await newScene();
    const rootKey = await rootKeyFor(principal, scene);
    const seen: string[] = [];
    for (const op of operations) {
      const outcome = expected(principal, op, scene);
      const before = await dumpKeyspace(primary);
      const response = await op.call(rootKey, scene);
      const line = `${op.name}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`;
      seen.push(line);
      expectSecurityHeaders(response.headers);
      try {
        switch (outcome.kind) {
          case 'allowed':
            expect(response.status).toBe(200);
            await op.effect(scene, response);
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
              expect(error.message).toBe(
                `this root key lacks the permission ${outcome.permission}`,
              );
            } else expect(error.code).toBe('NOT_FOUND');
            // Nothing gets in: a refused call writes nothing to the primary.
            expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
            break;
          }
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(
          `${principal.label} × ${op.name}: expected ${JSON.stringify(outcome)}\n` +
            `${seen.join('\n')}\n${message}`,
        );
      }
    }
  });
});

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
    const deletedKey = (await admin.post<{ keyId: string }>('keys.createKey', { apiId: mine.apiA }))
      .body.keyId;
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
    const before = await dumpKeyspace(primary);
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
      expect(verdict).toEqual({ valid: false, code: 'NOT_FOUND', requestId: expect.any(String) });
    }
    // Probing wrote nothing, in my workspace or theirs.
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
    // Their things are still theirs.
    expect((await other.post('keys.verifyKey', { key: theirKey.key })).body.code).toBe('VALID');
  });
});

describe('authentication', () => {
  const requests: [
    string,
    (rootKey: string | undefined, headers?: Record<string, string>) => Promise<Response>,
  ][] = [
    ['apis.createApi', (rk, h) => send('POST', 'apis.createApi', { name: 'x' }, rk, h)],
    ['apis.getApi', (rk, h) => send('GET', 'apis.getApi?apiId=api_x', undefined, rk, h)],
    ['apis.listKeys', (rk, h) => send('GET', 'apis.listKeys?apiId=api_x', undefined, rk, h)],
    ['apis.deleteApi', (rk, h) => send('POST', 'apis.deleteApi', { apiId: 'api_x' }, rk, h)],
    ['keys.createKey', (rk, h) => send('POST', 'keys.createKey', { apiId: 'api_x' }, rk, h)],
    ['keys.getKey', (rk, h) => send('GET', 'keys.getKey?keyId=key_x', undefined, rk, h)],
    ['keys.getBucket', (rk, h) => send('GET', 'keys.getBucket?keyId=key_x', undefined, rk, h)],
    [
      'keys.getVerifications',
      (rk, h) => send('GET', 'keys.getVerifications?keyId=key_x', undefined, rk, h),
    ],
    ['apis.listApis', (rk, h) => send('GET', 'apis.listApis', undefined, rk, h)],
    ['keys.verifyKey', (rk, h) => send('POST', 'keys.verifyKey', { key: 'x' }, rk, h)],
    ['keys.updateKey', (rk, h) => send('POST', 'keys.updateKey', { keyId: 'key_x' }, rk, h)],
    ['keys.deleteKey', (rk, h) => send('POST', 'keys.deleteKey', { keyId: 'key_x' }, rk, h)],
    [
      'keys.updateRemaining',
      (rk, h) =>
        send('POST', 'keys.updateRemaining', { keyId: 'key_x', op: 'set', value: 1 }, rk, h),
    ],
    [
      'ratelimits.limit',
      (rk, h) =>
        send('POST', 'ratelimits.limit', { identifier: 'x', limit: 1, duration: 1 }, rk, h),
    ],
    [
      'ratelimits.setOverride',
      (rk, h) =>
        send(
          'POST',
          'ratelimits.setOverride',
          { namespaceName: 'n', identifier: 'x', limit: 1, duration: 1 },
          rk,
          h,
        ),
    ],
    [
      'ratelimits.getOverride',
      (rk, h) =>
        send('GET', 'ratelimits.getOverride?namespaceName=n&identifier=x', undefined, rk, h),
    ],
    [
      'ratelimits.listOverrides',
      (rk, h) => send('GET', 'ratelimits.listOverrides?namespaceName=n', undefined, rk, h),
    ],
    [
      'ratelimits.deleteOverride',
      (rk, h) =>
        send('POST', 'ratelimits.deleteOverride', { namespaceName: 'n', identifier: 'x' }, rk, h),
    ],
    [
      'migrations.createKeys',
      (rk, h) => send('POST', 'migrations.createKeys', [{ apiId: 'api_x', plaintext: 'p' }], rk, h),
    ],
  ];

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
    expect((await send('GET', 'apis.getApi?apiId=api_x', undefined, revoked.key)).status).toBe(404);
    expect(await rootKeys.revoke(topology.workspaceId, revoked.keyId)).toBe(true);
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
