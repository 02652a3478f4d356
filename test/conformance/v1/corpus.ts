import { perms, type Answer, type Caller, type ConformanceCase, type Json } from '../types';

/**
 * Unkey v1's route tests, read at commit `ccfc028d326c` (before v1 was removed):
 * `apps/api/src/routes/v1_{apis,keys,identities,ratelimits}_*.{error,security}.test.ts` and the
 * checks every `*.security.test.ts` shares (`runCommonRouteTests`, in
 * `apps/api/src/pkg/testutil/common-tests.ts`). Unkey's error tests also compare `message`;
 * keyward's messages are its own (docs/errors.md), so a case compares the status and `code`.
 * Unkey's "… and more" roles add a random UUID, which keyward's root-key store refuses as a
 * permission (`resource.id.action`): the cases add `unrelated.more.none`, which grants as little.
 * Unkey's override tests name their namespace by `namespaceId`; no keyward answer tells a
 * namespace's id, so the cases name it by `namespaceName`, v1's other field for it.
 */

const MORE = 'unrelated.more.none';
const code = (status: number, name: string): Answer => ({ status, type: name });

/** How a route is called: a POST body or a GET query, with placeholders. */
type Request = { body: Json } | { query: Record<string, string> };

function at(
  from: string,
  route: string,
  caller: Caller,
  request: Request,
  expect: Answer,
  more: Partial<ConformanceCase> = {},
): ConformanceCase {
  return { from, route, caller, ...request, expect, ...more };
}

/**
 * `runCommonRouteTests`: no key and a wrong key are 403 `UNAUTHORIZED` at Unkey (keyward: 401,
 * `v1-unauthorized-401`); a root key without the permission, with other permissions, or with
 * every key permission on another API is 403 `INSUFFICIENT_PERMISSIONS`. ("disabled workspace"
 * is left out: keyward has no disabled workspaces.)
 */
function common(file: string, route: string, request: Request): ConformanceCase[] {
  const from = `${file}.security.test.ts: shared permissions tests`;
  const unauthorized = code(403, 'UNAUTHORIZED');
  const deviation = { id: 'v1-unauthorized-401', keyward: code(401, 'UNAUTHORIZED') };
  const otherApi = 'api_3ZGp4bGXXRq6JbtKLVrCmZrM';
  return [
    at(`${from}/without a key`, route, { header: null }, request, unauthorized, { deviation }),
    at(`${from}/with wrong key`, route, { header: 'Bearer INVALID_KEY' }, request, unauthorized, {
      deviation,
    }),
    ...(
      [
        ['no roles', []],
        ['wrong roles', ['unrelated.one.none', 'unrelated.two.none']],
        [
          'full access to wrong api',
          [
            'read_api',
            'update_api',
            'delete_api',
            'read_key',
            'update_key',
            'delete_key',
            'create_key',
          ].map((action) => `api.${otherApi}.${action}`),
        ],
      ] as [string, string[]][]
    ).map(([name, granted]) =>
      at(
        `${from}/without permission/${name}/should reject`,
        route,
        perms(...granted),
        request,
        code(403, 'INSUFFICIENT_PERMISSIONS'),
      ),
    ),
  ];
}

/** A `correct roles` (or `correct permissions`) table: each is 200. */
function allowed(
  file: string,
  route: string,
  request: Request,
  table: [string, string[]][],
): ConformanceCase[] {
  return table.map(([name, granted]) =>
    at(
      `${file}.security.test.ts: correct roles/${name}/returns 200`,
      route,
      perms(...granted),
      request,
      { status: 200 },
    ),
  );
}

/** Unkey's usual table for an action on an API: legacy, wildcard and the API's own, each alone and with more. */
function apiTable(action: string): [string, string[]][] {
  return [
    ['legacy', ['*']],
    ['legacy and more', ['*', MORE]],
    ['wildcard', [`api.*.${action}`]],
    ['wildcard and more', [`api.*.${action}`, MORE]],
    ['specific apiId', [`api.{api}.${action}`]],
    ['specific apiId and more', [`api.{api}.${action}`, MORE]],
  ];
}

/** The two-permission table of the reads (listKeys, getKey, whoami). */
const readTable: [string, string[]][] = [
  ['legacy', ['*']],
  ['legacy and more', ['*', MORE]],
  ['wildcard api', ['api.*.read_key', 'api.*.read_api']],
  ['wildcard mixed', ['api.*.read_key', 'api.{api}.read_api']],
  ['wildcard mixed 2', ['api.*.read_api', 'api.{api}.read_key']],
  ['wildcard and more', ['api.*.read_key', 'api.*.read_api', MORE]],
  ['specific apiId', ['api.{api}.read_key', 'api.{api}.read_api']],
  ['specific apiId and more', ['api.{api}.read_key', 'api.{api}.read_api', MORE]],
];
const legacy: [string, string[]][] = [
  ['legacy', ['*']],
  ['legacy and more', ['*', MORE]],
];
const ALL = perms('*');
const MISSING_KEY = 'key_3ZGp4bGXXRq6JbtKLVrCmZrM';
const MISSING_API = 'api_3ZGp4bGXXRq6JbtKLVrCmZrM';

const f = (route: string) => `v1_${route.replace('.', '_')}`;

/** Marks the case whose Unkey test is `from` as the documented deviation `id`. */
function deviate(
  cases: ConformanceCase[],
  from: string,
  id: string,
  keyward: Answer,
): ConformanceCase[] {
  return cases.map((entry) =>
    entry.from === from ? { ...entry, deviation: { id, keyward } } : entry,
  );
}

export const apis: ConformanceCase[] = deviate(
  [
    ...common(f('apis.createApi'), 'apis.createApi', { body: { name: 'conformance' } }),
    ...allowed(f('apis.createApi'), 'apis.createApi', { body: { name: 'conformance' } }, [
      ...legacy,
      ['wildcard', ['api.*.create_api']],
      ['wildcard and more', ['api.*.create_api', MORE]],
    ]),
    ...[
      ['empty name', ''],
      ['short name', 'ab'],
    ].map(([name, apiName]) =>
      at(
        `${f('apis.createApi')}.error.test.ts: ${name}/reject`,
        'apis.createApi',
        ALL,
        { body: { name: apiName! } },
        code(400, 'BAD_REQUEST'),
      ),
    ),
    ...common(f('apis.deleteApi'), 'apis.deleteApi', { body: { apiId: '{api}' } }),
    ...allowed(
      f('apis.deleteApi'),
      'apis.deleteApi',
      { body: { apiId: '{api}' } },
      apiTable('delete_api'),
    ),
    at(
      `${f('apis.deleteApi')}.error.test.ts: api does not exist`,
      'apis.deleteApi',
      ALL,
      { body: { apiId: MISSING_API } },
      code(404, 'NOT_FOUND'),
    ),
    ...common(f('apis.deleteKeys'), 'apis.deleteKeys', { body: { apiId: '{api}' } }),
    ...allowed(
      f('apis.deleteKeys'),
      'apis.deleteKeys',
      { body: { apiId: '{api}' } },
      apiTable('delete_key'),
    ),
    ...common(f('apis.getApi'), 'apis.getApi', { query: { apiId: '{api}' } }),
    ...allowed(
      f('apis.getApi'),
      'apis.getApi',
      { query: { apiId: '{api}' } },
      apiTable('read_api'),
    ),
    at(
      `${f('apis.getApi')}.error.test.ts: api does not exist`,
      'apis.getApi',
      ALL,
      { query: { apiId: MISSING_API } },
      code(404, 'NOT_FOUND'),
    ),
    ...common(f('apis.listKeys'), 'apis.listKeys', { query: { apiId: '{api}' } }),
    ...allowed(f('apis.listKeys'), 'apis.listKeys', { query: { apiId: '{api}' } }, readTable),
    at(
      `${f('apis.listKeys')}.error.test.ts: when the api does not exist`,
      'apis.listKeys',
      ALL,
      { query: { apiId: MISSING_API } },
      code(404, 'NOT_FOUND'),
    ),
  ],
  `${f('apis.createApi')}.error.test.ts: short name/reject`,
  'contract-bounds',
  { status: 200 },
);

export const keys: ConformanceCase[] = deviate(
  [
    ...common(f('keys.createKey'), 'keys.createKey', { body: { apiId: '{api}' } }),
    ...allowed(f('keys.createKey'), 'keys.createKey', { body: { apiId: '{api}' } }, [
      ...legacy,
      ['wildcard api', ['api.*.create_key']],
      ['wildcard and more', ['api.*.create_key', MORE]],
      ['specific apiId', ['api.{api}.create_key']],
      ['specific apiId and more', ['api.{api}.create_key', MORE]],
    ]),
    at(
      `${f('keys.createKey')}.error.test.ts: when the api does not exist`,
      'keys.createKey',
      ALL,
      { body: { apiId: MISSING_API } },
      code(404, 'NOT_FOUND'),
    ),
    at(
      `${f('keys.createKey')}.error.test.ts: reject invalid ratelimit config`,
      'keys.createKey',
      ALL,
      { body: { byteLength: 16, apiId: '{api}', ratelimit: { type: 'x' } } },
      { status: 400 },
    ),
    at(
      `${f('keys.createKey')}.error.test.ts: when key recovery is not enabled`,
      'keys.createKey',
      ALL,
      { body: { apiId: '{api}', recoverable: true } },
      code(412, 'PRECONDITION_FAILED'),
    ),
    at(
      `${f('keys.createKey')}.error.test.ts: reject invalid refill config when daily interval has non-null refillDay`,
      'keys.createKey',
      ALL,
      {
        body: {
          apiId: '{api}',
          remaining: 10,
          refill: { interval: 'daily', amount: 100, refillDay: 4 },
        },
      },
      code(400, 'BAD_REQUEST'),
    ),
    ...common(f('keys.getKey'), 'keys.getKey', { query: { keyId: '{key}' } }),
    ...allowed(f('keys.getKey'), 'keys.getKey', { query: { keyId: '{key}' } }, readTable),
    at(
      `${f('keys.getKey')}.error.test.ts: when the key does not exist`,
      'keys.getKey',
      ALL,
      { query: { keyId: MISSING_KEY } },
      code(404, 'NOT_FOUND'),
    ),
    ...common(f('keys.deleteKey'), 'keys.deleteKey', { body: { keyId: '{key}' } }),
    ...common(f('keys.getVerifications'), 'keys.getVerifications', { query: { keyId: '{key}' } }),
    ...allowed(f('keys.getVerifications'), 'keys.getVerifications', { query: { keyId: '{key}' } }, [
      ...legacy,
      ['wildcard api', ['api.*.read_key']],
      ['wildcard and more', ['api.*.read_key', 'api.*.read_api', MORE]],
      ['specific apiId', ['api.{api}.read_key']],
      ['specific apiId and more', ['api.{api}.read_key', MORE]],
    ]),
    at(
      `${f('keys.getVerifications')}.error.test.ts: when the key does not exist`,
      'keys.getVerifications',
      ALL,
      { query: { keyId: MISSING_KEY } },
      { status: 404 },
    ),
    at(
      `${f('keys.getVerifications')}.error.test.ts: without keyId or ownerId`,
      'keys.getVerifications',
      ALL,
      { query: {} },
      { status: 400 },
    ),
    ...common(f('keys.updateKey'), 'keys.updateKey', { body: { keyId: '{key}', name: 'changed' } }),
    ...allowed(
      f('keys.updateKey'),
      'keys.updateKey',
      { body: { keyId: '{key}', name: 'changed' } },
      [
        ...legacy,
        ['wildcard api', ['api.*.update_key']],
        ['wildcard and more', ['api.*.update_key', MORE]],
        ['specific apiId', ['api.{api}.update_key']],
        ['specific apiId and more', ['api.{api}.update_key', MORE]],
      ],
    ),
    at(
      `${f('keys.updateKey')}.error.test.ts: when the key does not exist`,
      'keys.updateKey',
      ALL,
      { body: { keyId: MISSING_KEY, name: 'x' } },
      code(404, 'NOT_FOUND'),
    ),
    at(
      `${f('keys.updateKey')}.error.test.ts: reject invalid refill config`,
      'keys.updateKey',
      ALL,
      {
        body: {
          keyId: '{key}',
          remaining: 10,
          refill: { amount: 100, refillDay: 4, interval: 'daily' },
        },
      },
      code(400, 'BAD_REQUEST'),
    ),
    at(
      `${f('keys.updateKey')}.error.test.ts: when the key has been deleted`,
      'keys.updateKey',
      ALL,
      { body: { keyId: '{deletedKey}', name: 'x' } },
      code(404, 'NOT_FOUND'),
    ),
    ...common(f('keys.updateRemaining'), 'keys.updateRemaining', {
      body: { keyId: '{key}', op: 'set', value: 10 },
    }),
    ...allowed(
      f('keys.updateRemaining'),
      'keys.updateRemaining',
      { body: { keyId: '{key}', op: 'set', value: 10 } },
      [
        ...legacy,
        ['wildcard api', ['api.*.update_key']],
        ['wildcard and more', ['api.*.update_key', MORE]],
        ['specific apiId', ['api.{api}.update_key']],
        ['specific apiId and more', ['api.{api}.update_key', MORE]],
      ],
    ),
    at(
      `${f('keys.updateRemaining')}.error.test.ts: when the key does not exist`,
      'keys.updateRemaining',
      ALL,
      { body: { keyId: MISSING_KEY, op: 'set', value: 10 } },
      code(404, 'NOT_FOUND'),
    ),
    ...common(f('keys.whoami'), 'keys.whoami', { body: { key: '{keyString}' } }),
    ...allowed(f('keys.whoami'), 'keys.whoami', { body: { key: '{keyString}' } }, readTable),
    at(
      `${f('keys.whoami')}.error.test.ts: when the key does not exist`,
      'keys.whoami',
      ALL,
      { body: { key: 'unknown_3ZGp4bGXXRq6JbtKLVrCmZrM' } },
      code(404, 'NOT_FOUND'),
    ),
  ],
  `${f('keys.whoami')}.security.test.ts: shared permissions tests/without permission/full access to wrong api/should reject`,
  'whoami-hidden-404',
  code(404, 'NOT_FOUND'),
);

const links: [string, string, Json, Json][] = [
  [
    'keys.addPermissions',
    'permissions',
    [{ name: 'hello', create: true }],
    [
      { name: 'hello', create: true },
      { name: 'there', create: true },
    ],
  ],
  [
    'keys.setPermissions',
    'permissions',
    [{ name: 'hello', create: true }],
    [
      { name: 'hello', create: true },
      { name: 'there', create: true },
    ],
  ],
  [
    'keys.removePermissions',
    'permissions',
    [{ name: 'hello' }],
    [{ name: 'hello' }, { name: 'there' }],
  ],
  [
    'keys.addRoles',
    'roles',
    [{ name: 'hello', create: true }],
    [
      { name: 'hello', create: true },
      { name: 'there', create: true },
    ],
  ],
  [
    'keys.setRoles',
    'roles',
    [{ name: 'hello', create: true }],
    [
      { name: 'hello', create: true },
      { name: 'there', create: true },
    ],
  ],
  ['keys.removeRoles', 'roles', [{ name: 'hello' }], [{ name: 'hello' }, { name: 'there' }]],
];

export const keyLinks: ConformanceCase[] = links.flatMap(([route, field, one, two]) => [
  ...common(f(route), route, { body: { keyId: '{key}', [field]: one } }),
  ...allowed(f(route), route, { body: { keyId: '{key}', [field]: two } }, legacy).map((entry) => ({
    ...entry,
    from: entry.from.replace('correct roles', 'correct permissions'),
  })),
  at(
    `${f(route)}.error.test.ts: empty keyId`,
    route,
    ALL,
    { body: { keyId: '', [field]: one } },
    code(400, 'BAD_REQUEST'),
  ),
  at(
    `${f(route)}.error.test.ts: empty ${field}`,
    route,
    ALL,
    { body: { keyId: '{key}', [field]: [] } },
    code(400, 'BAD_REQUEST'),
  ),
]);

export const identities: ConformanceCase[] = [
  ...common(f('identities.createIdentity'), 'identities.createIdentity', {
    body: { externalId: 'conformance_v1' },
  }),
  ...allowed(
    f('identities.createIdentity'),
    'identities.createIdentity',
    { body: { externalId: '{externalId}_new' } },
    [
      ...legacy,
      ['wildcard', ['identity.*.create_identity']],
      ['wildcard and more', ['identity.*.create_identity', MORE]],
    ],
  ),
  ...[
    ['empty externalId', ''],
    ['short externalId', 'ab'],
  ].map(([name, externalId]) =>
    at(
      `${f('identities.createIdentity')}.error.test.ts: ${name}/reject`,
      'identities.createIdentity',
      ALL,
      { body: { externalId: externalId! } },
      code(400, 'BAD_REQUEST'),
    ),
  ),
  at(
    `${f('identities.createIdentity')}.error.test.ts: when identity exists already/should return correct code and message`,
    'identities.createIdentity',
    ALL,
    { body: { externalId: '{externalId}' } },
    code(409, 'CONFLICT'),
  ),
  ...common(f('identities.deleteIdentity'), 'identities.deleteIdentity', {
    body: { identityId: '{identity}' },
  }),
  ...allowed(
    f('identities.deleteIdentity'),
    'identities.deleteIdentity',
    { body: { identityId: '{identity}' } },
    [
      ['wildcard', ['identity.*.delete_identity']],
      ['wildcard and more', ['identity.*.delete_identity', MORE]],
      ['specific identityId', ['identity.{identity}.delete_identity']],
      ['specific identityId and more', ['identity.{identity}.delete_identity', MORE]],
    ],
  ),
  at(
    `${f('identities.deleteIdentity')}.error.test.ts: identity does not exist`,
    'identities.deleteIdentity',
    ALL,
    { body: { identityId: 'id_3ZGp4bGXXRq6JbtKLVrCmZrM' } },
    code(404, 'NOT_FOUND'),
  ),
  ...common(f('identities.getIdentity'), 'identities.getIdentity', {
    query: { identityId: '{identity}' },
  }),
  ...allowed(
    f('identities.getIdentity'),
    'identities.getIdentity',
    { query: { identityId: '{identity}' } },
    [
      ['wildcard', ['identity.*.read_identity']],
      ['wildcard and more', ['identity.*.read_identity', MORE]],
      ['specific identityId', ['identity.{identity}.read_identity']],
      ['specific identityId and more', ['identity.{identity}.read_identity', MORE]],
    ],
  ),
  at(
    `${f('identities.getIdentity')}.error.test.ts: identity does not exist`,
    'identities.getIdentity',
    ALL,
    { query: { identityId: 'id_3ZGp4bGXXRq6JbtKLVrCmZrM' } },
    code(404, 'NOT_FOUND'),
  ),
  ...common(f('identities.listIdentities'), 'identities.listIdentities', { query: {} }),
  ...allowed(f('identities.listIdentities'), 'identities.listIdentities', { query: {} }, [
    ...legacy,
    ['wildcard api', ['identity.*.read_identity']],
    ['wildcard and more', ['identity.*.read_identity', MORE]],
  ]),
  at(
    `${f('identities.updateIdentity')}.error.test.ts: empty identityId`,
    'identities.updateIdentity',
    ALL,
    { body: { identityId: '' } },
    code(400, 'BAD_REQUEST'),
  ),
  at(
    `${f('identities.updateIdentity')}.error.test.ts: updating ratelimits/duplicate ratelimits return an error`,
    'identities.updateIdentity',
    ALL,
    {
      body: {
        identityId: '{identity}',
        ratelimits: [
          { name: 'a', limit: 10, duration: 1000 },
          { name: 'b', limit: 10, duration: 1000 },
          { name: 'a', limit: 10, duration: 1000 },
        ],
      },
    },
    code(409, 'CONFLICT'),
  ),
];

export const ratelimits: ConformanceCase[] = [
  ...common(f('ratelimits.getOverride'), 'ratelimits.getOverride', {
    query: { namespaceName: '{namespace}', identifier: '{overrideIdentifier}' },
  }),
  ...allowed(
    f('ratelimits.getOverride'),
    'ratelimits.getOverride',
    { query: { namespaceName: '{namespace}', identifier: '{overrideIdentifier}' } },
    [['get override', ['ratelimit.*.read_override']]],
  ),
  at(
    `${f('ratelimits.getOverride')}.error.test.ts: Missing Namespace`,
    'ratelimits.getOverride',
    ALL,
    { query: { namespaceId: '', identifier: 'conf_user' } },
    code(400, 'BAD_REQUEST'),
  ),
  ...common(f('ratelimits.setOverride'), 'ratelimits.setOverride', {
    body: { namespaceName: '{namespace}', identifier: 'conf_other', limit: 10, duration: 6500 },
  }),
  ...allowed(
    f('ratelimits.setOverride'),
    'ratelimits.setOverride',
    { body: { namespaceName: '{namespace}', identifier: 'conf_other', limit: 10, duration: 6500 } },
    [['set override', ['ratelimit.*.set_override']]],
  ),
  ...(
    [
      ['empty roles', []],
      ['invalid role', ['wrong.role.none']],
      ['insufficient role', ['ratelimit.*.view']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${f('ratelimits.setOverride')}.security.test.ts: incorrect roles/${name}`,
      'ratelimits.setOverride',
      perms(...granted),
      {
        body: { namespaceName: '{namespace}', identifier: 'conf_other', limit: 10, duration: 6500 },
      },
      code(403, 'INSUFFICIENT_PERMISSIONS'),
    ),
  ),
  at(
    `${f('ratelimits.setOverride')}.error.test.ts: Missing Namespace`,
    'ratelimits.setOverride',
    perms('ratelimit.*.set_override', 'ratelimit.*.create_namespace', 'ratelimit.*.read_override'),
    {
      body: {
        namespaceId: 'rlns_3ZGp4bGXXRq6JbtKLVrCmZrM',
        identifier: 'conf_user',
        limit: 10,
        duration: 6500,
      },
    },
    code(404, 'NOT_FOUND'),
  ),
  at(
    `${f('ratelimits.setOverride')}.error.test.ts: Empty Identifier string`,
    'ratelimits.setOverride',
    ALL,
    { body: { namespaceName: '{namespace}', identifier: '', limit: 10, duration: 6500 } },
    code(400, 'BAD_REQUEST'),
  ),
  ...common(f('ratelimits.deleteOverride'), 'ratelimits.deleteOverride', {
    body: { namespaceName: '{namespace}', identifier: '{overrideIdentifier}' },
  }),
  ...allowed(
    f('ratelimits.deleteOverride'),
    'ratelimits.deleteOverride',
    { body: { namespaceName: '{namespace}', identifier: '{overrideIdentifier}' } },
    [['delete override', ['ratelimit.*.delete_override']]],
  ),
  at(
    `${f('ratelimits.deleteOverride')}.security.test.ts: incorrect roles/delete override`,
    'ratelimits.deleteOverride',
    perms('ratelimit.*.create_override'),
    { body: { namespaceName: '{namespace}', identifier: '{overrideIdentifier}' } },
    { status: 403 },
  ),
  at(
    `${f('ratelimits.deleteOverride')}.error.test.ts: Missing Namespace`,
    'ratelimits.deleteOverride',
    ALL,
    { body: { identifier: 'conf_user' } },
    code(400, 'BAD_REQUEST'),
  ),
  ...common(f('ratelimits.listOverrides'), 'ratelimits.listOverrides', {
    query: { namespaceName: '{namespace}' },
  }),
  ...allowed(
    f('ratelimits.listOverrides'),
    'ratelimits.listOverrides',
    { query: { namespaceName: '{namespace}' } },
    [['list override', ['ratelimit.*.read_override']]],
  ),
  at(
    `${f('ratelimits.listOverrides')}.error.test.ts: Missing Namespace`,
    'ratelimits.listOverrides',
    ALL,
    { query: { identifier: 'conf_user' } },
    code(400, 'BAD_REQUEST'),
  ),
];

/**
 * `v1_keys_verifyKey.test.ts`. Unkey v1 verified without a root key; keyward's contract asks one
 * with `verify_key` (the deviation `v1-verify-root-key`, held by the first case), so the others
 * send one with `api.*.verify_key` and compare the verdict.
 */
const V = 'v1_keys_verifyKey.test.ts';
const VERIFY = perms('api.*.verify_key');
const verdict = (data: Record<string, Json>): Answer => ({ status: 200, data });
export const verifyKey: ConformanceCase[] = [
  at(
    `${V}: returns 200`,
    'keys.verifyKey',
    { header: null },
    { body: { key: '{keyString}', apiId: '{api}' } },
    verdict({ valid: true }),
    { deviation: { id: 'v1-verify-root-key', keyward: code(401, 'UNAUTHORIZED') } },
  ),
  at(
    `${V}: returns 200 (with a root key)`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}' } },
    verdict({ valid: true }),
  ),
  at(
    `${V}: bad request/returns 400`,
    'keys.verifyKey',
    VERIFY,
    { body: { something: 'else' } },
    { status: 400 },
  ),
  at(
    `${V}: with remaining/custom cost works`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}', remaining: { cost: 2 } } },
    verdict({ valid: true, remaining: 8 }),
    { setup: { key: { credits: { remaining: 10 } } } },
  ),
  at(
    `${V}: with remaining/cost=0 works even when remaining=0`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}', remaining: { cost: 0 } } },
    verdict({ valid: true, remaining: 0 }),
    { setup: { key: { credits: { remaining: 1 } }, keyUpdate: { credits: { remaining: 0 } } } },
  ),
  at(
    `${V}: with ratelimit/with used up key/returns valid=false`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}' } },
    verdict({ valid: false, code: 'USAGE_EXCEEDED' }),
    { setup: { key: { credits: { remaining: 1 } }, keyUpdate: { credits: { remaining: 0 } } } },
  ),
  at(
    `${V}: with enabled key/returns valid`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}' } },
    verdict({ valid: true }),
    {
      setup: { key: { enabled: true } },
    },
  ),
  at(
    `${V}: with disabled key/returns invalid`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{keyString}', apiId: '{api}' } },
    verdict({ valid: false, code: 'DISABLED' }),
    { setup: { key: { enabled: false } } },
  ),
  at(
    `${V}: key is soft deleted/returns NOT_FOUND`,
    'keys.verifyKey',
    VERIFY,
    { body: { key: '{deletedKeyString}', apiId: '{api}' } },
    verdict({ valid: false, code: 'NOT_FOUND' }),
  ),
];
