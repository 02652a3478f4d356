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
import type { Scene } from './authzScene';
import { casesMismatch, casesOf } from '../cases';
import type { AuthzCall } from '../cases/types';

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
const WEBHOOK_ACTIONS = actionsOf('webhook');

let scenes = 0;
/** The scene's webhook that is read: one per run, since a workspace has at most 100. */
let sceneWebhook: Promise<string> | undefined;

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
  const newWebhook = async () => {
    const created = await admin.post<{ webhookId: string }>('webhooks.createWebhook', {
      url: 'https://203.0.113.10/matrix',
      events: ['key.credits.exhausted'],
    });
    expect(created.status).toBe(200);
    return created.body.webhookId;
  };
  sceneWebhook ??= newWebhook();
  const webhook = await sceneWebhook;
  const webhookToDelete = await newWebhook();
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
    webhook,
    webhookToDelete,
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
      [
        ...API_ACTIONS,
        ...RATELIMIT_ACTIONS,
        ...RBAC_ACTIONS,
        ...IDENTITY_ACTIONS,
        ...WEBHOOK_ACTIONS,
      ].map((action) => `key.*.${action}`),
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
  ...WEBHOOK_ACTIONS.map((action): Principal => ({
    label: `only webhook.*.${action}`,
    workspace: 'own',
    permissions: () => [`webhook.*.${action}`],
  })),
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
 * Every operation of the registry, in the order the matrix calls them: each keeps the scene usable
 * for the next ones. How each is called is its cases file's `authz` (test/cases/); `every
 * operation … is in the matrix` checks the names against the registry.
 */
const ORDER: readonly string[] = [
  'apis.createApi',
  'apis.listApis',
  'apis.getApi',
  'analytics.getVerifications',
  'analytics.queryVerifications',
  'analytics.queryRatelimits',
  'apis.listKeys',
  'keys.createKey',
  'migrations.createKeys',
  'keys.getKey',
  'keys.getBucket',
  'keys.getVerifications',
  'keys.getRecentVerifications',
  'keys.verifyKey',
  'keys.updateKey',
  'keys.updateRemaining',
  'keys.whoami',
  'keys.addPermissions',
  'keys.removePermissions',
  'keys.setPermissions',
  'keys.addRoles',
  'keys.removeRoles',
  'keys.setRoles',
  'keys.deleteKey',
  'keys.rerollKey',
  'ratelimits.getOverride',
  'ratelimits.listOverrides',
  'ratelimits.getUsage',
  'ratelimits.deleteOverride',
  // After the reads: in another workspace these create the caller's own namespace N.
  'ratelimits.limit',
  'ratelimits.multiLimit',
  'ratelimits.setOverride',
  'permissions.createPermission',
  'permissions.getPermission',
  'permissions.listPermissions',
  'permissions.deletePermission',
  'permissions.createRole',
  'permissions.getRole',
  'permissions.listRoles',
  'permissions.setRolePermissions',
  'permissions.deleteRole',
  'identities.createIdentity',
  'identities.getIdentity',
  'auditLogs.list',
  'identities.listIdentities',
  'identities.updateIdentity',
  'identities.updateCredits',
  'identities.deleteIdentity',
  'webhooks.listWebhooks',
  'webhooks.listDeliveries',
  'webhooks.createWebhook',
  'webhooks.deleteWebhook',
  // Last two: they take API A's keys, then API A itself away.
  'apis.deleteKeys',
  'apis.deleteApi',
];

/** One row of the matrix: a declared operation and one way of calling it. */
interface Row {
  name: string;
  op: Declared;
  call: AuthzCall;
}

/** Every call of every operation, in ORDER; an operation the matrix cannot call fails here. */
function rows(): Row[] {
  const unordered = registry.filter((op) => !ORDER.includes(op.name)).map((op) => op.name);
  if (unordered.length > 0) {
    throw new Error(`no place in the matrix for ${unordered.join(', ')}: add it to ORDER`);
  }
  return ORDER.flatMap((name) => {
    const op = registry.find((declared) => declared.name === name);
    if (!op) throw new Error(`${name} is in the matrix but not in the registry`);
    return casesOf(name).authz.map((call) => ({
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
      if (row.call.filtered && !holdsAnywhere(permissions, resource, action)) {
        return forbidden('*');
      }
      if (row.call.filtered) return { kind: 'allowed' };
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
      // Each has a cases file (test/cases/) and a place in ORDER, and nothing else has either.
      expect({
        ...casesMismatch(),
        unordered: names.filter((name) => !ORDER.includes(name)),
        unknown: ORDER.filter((name) => !names.includes(name)),
      }).toEqual({ withoutCases: [], withoutOperation: [], unordered: [], unknown: [] });
      // The registry is what the routes are: the matrix covers what is served.
      expect(names).toEqual(registry.map((op) => op.name));
      // The declarations say what docs/security.md's authorization matrix documents: its resource,
      // action and scope (`*`: any; the input's `<apiId>` or `<environment>`: input; an id found by
      // the lookup: resource).
      const documented = new Map<string, string>();
      const doc = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8');
      for (const line of doc.split('\n')) {
        const [, ops, needed] = line.split('|').map((cell) => cell.trim());
        const permission = /^`(api|ratelimit|rbac|identity|audit|webhook)\.([^`]+)\.(\w+)`/.exec(
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
          row.call.lookup !== undefined || row.call.filtered === true,
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
              expect(response.status).toBe(row.call.allowedStatus ?? 200);
              await row.call.effect(scene, response, admin);
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
        webhook: 'wh_x',
        webhookToDelete: 'wh_y',
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
