import {
  EMPTY_BEARER,
  INVALID_TOKEN,
  MALFORMED_HEADER,
  MISSING_HEADER,
  headerCases,
  named,
} from './auth';
import {
  perms,
  bodyCase as at,
  INSUFFICIENT,
  INVALID_INPUT,
  alreadyExists,
  notFound,
  type Answer,
  type ConformanceCase,
  type Json,
} from '../types';

/** identities.* from Unkey's `svc/api/routes/v2_identities_*` tests. */

const bad: Answer = { status: 400, type: INVALID_INPUT };
const forbidden: Answer = { status: 403, type: INSUFFICIENT };
const missing: Answer = { status: 404, type: notFound('identity') };
const limit = (name: string | undefined, limit: number, duration: number) => ({
  ...(name === undefined ? {} : { name }),
  limit,
  duration,
});
/** Unkey's "metadata exceeds maximum size limit": (1 MiB / 15) + 1,000 small entries. */
const hugeMeta = (): Json =>
  Object.fromEntries(
    Array.from({ length: Math.floor((1024 * 1024) / 15) + 1000 }, (_, i) => [
      `key_${i}`,
      `some_${i}`,
    ]),
  );

const C = 'v2_identities_create_identity';
const CREATE = perms('identity.*.create_identity');
export const createIdentity: ConformanceCase[] = [
  at(
    `${C}/400_test.go: TestBadRequests/missing external id`,
    'identities.createIdentity',
    CREATE,
    {},
    bad,
  ),
  at(
    `${C}/400_test.go: TestBadRequests/empty external id`,
    'identities.createIdentity',
    CREATE,
    { externalId: '' },
    bad,
  ),
  at(
    `${C}/400_test.go: TestBadRequests/metadata exceeds maximum size limit`,
    'identities.createIdentity',
    CREATE,
    { externalId: 'test_meta_too_large', meta: hugeMeta() },
    bad,
    { deviation: { id: 'body-too-large-413', keyward: { status: 413 } } },
  ),
  ...(
    [
      ['missing rate limit name', limit(undefined, 1, 1000)],
      ['negative rate limit value', limit('test_limit', -10, 1000)],
      ['zero rate limit value', limit('test_limit', 0, 1000)],
      ['duration less than 1000ms', limit('test_limit', 100, 999)],
    ] as [string, Json][]
  ).map(([name, ratelimit]) =>
    at(
      `${C}/400_test.go: TestBadRequests/${name}`,
      'identities.createIdentity',
      CREATE,
      { externalId: 'test_limits', ratelimits: [ratelimit] },
      bad,
    ),
  ),
  ...headerCases(
    `${C}/400_test.go: TestBadRequests`,
    'identities.createIdentity',
    { externalId: 'test_auth' },
    [MISSING_HEADER, MALFORMED_HEADER],
  ),
  ...headerCases(
    `${C}/401_test.go: TestUnauthorizedAccess`,
    'identities.createIdentity',
    { externalId: 'test_auth' },
    [named('invalid authorization token', INVALID_TOKEN)],
  ),
  at(
    `${C}/403_test.go: TestWorkspacePermissions`,
    'identities.createIdentity',
    perms(),
    { externalId: 'test_forbidden' },
    { status: 403 },
  ),
  at(
    `${C}/409_test.go: TestCreateIdentityDuplicate/create identity twice`,
    'identities.createIdentity',
    CREATE,
    { externalId: '{externalId}' },
    { status: 409, type: alreadyExists('identity') },
  ),
];

const D = 'v2_identities_delete_identity';
const DELETE = perms('identity.*.delete_identity');
export const deleteIdentity: ConformanceCase[] = [
  at(
    `${D}/400_test.go: TestBadRequests/missing externalID`,
    'identities.deleteIdentity',
    DELETE,
    {},
    bad,
  ),
  at(
    `${D}/400_test.go: TestBadRequests/empty identity`,
    'identities.deleteIdentity',
    DELETE,
    { identity: '' },
    bad,
  ),
  at(
    `${D}/400_test.go: TestBadRequests/identity with special characters`,
    'identities.deleteIdentity',
    DELETE,
    { identity: '@#$%' },
    missing,
  ),
  ...headerCases(
    `${D}/401_test.go: TestDeleteIdentityUnauthorized`,
    'identities.deleteIdentity',
    { identity: '{externalId}' },
    [
      MISSING_HEADER,
      named('malformed authorization header', ['', 'InvalidFormat xyz', 400]),
      named('invalid auth token', ['', 'Bearer invalid_token', 401]),
      EMPTY_BEARER,
      named('bearer token with invalid format', ['', 'Bearer not-a-valid-key-format', 401]),
      named('token with wrong format', ['', 'Bearer random_string_not_a_key', 401]),
    ],
    true,
  ),
  at(
    `${D}/401_test.go: TestDeleteIdentityUnauthorized/key from wrong workspace`,
    'identities.deleteIdentity',
    { otherWorkspace: ['identity.*.delete_identity'] },
    { identity: '{externalId}' },
    missing,
  ),
  ...(
    [
      ['insufficient permissions - no permissions', []],
      ['insufficient permissions - wrong permission', ['identity.*.create_identity']],
      ['insufficient permissions - different resource permission', ['key.*.delete_key']],
      ['read-only permission', ['identity.*.read_identity']],
    ] as [string, string[]][]
  ).map(([name, granted]) =>
    at(
      `${D}/403_test.go: TestDeleteIdentityForbidden/${name}`,
      'identities.deleteIdentity',
      perms(...granted),
      { identity: '{externalId}' },
      forbidden,
    ),
  ),
  at(
    `${D}/404_test.go: TestDeleteIdentityNotFound/delete identity with non-existent external ID`,
    'identities.deleteIdentity',
    DELETE,
    { identity: 'test_does_not_exist' },
    missing,
  ),
  at(
    `${D}/404_test.go: TestDeleteIdentityNotFound/delete identity with external ID from different workspace`,
    'identities.deleteIdentity',
    DELETE,
    { identity: '{foreignExternalId}' },
    missing,
  ),
  at(
    `${D}/404_test.go: TestDeleteIdentityNotFound/delete already deleted identity`,
    'identities.deleteIdentity',
    DELETE,
    { identity: '{deletedExternalId}' },
    missing,
  ),
  at(
    `${D}/404_test.go: TestDeleteIdentityNotFound/delete identity using very long non-existent external ID`,
    'identities.deleteIdentity',
    DELETE,
    {
      identity:
        'very_long_external_id_that_does_not_exist_test_3ZGp4bGXXRq6JbtKLVrCmZrM_test2_3ZGp4bGXXRq6JbtKLVrCmZrM',
    },
    missing,
  ),
];

const G = 'v2_identities_get_identity';
const READ = perms('identity.*.read_identity');
export const getIdentity: ConformanceCase[] = [
  at(`${G}/400_test.go: TestBadRequests/missing identity`, 'identities.getIdentity', READ, {}, bad),
  at(
    `${G}/400_test.go: TestBadRequests/empty identity`,
    'identities.getIdentity',
    READ,
    { identity: '' },
    bad,
  ),
  ...headerCases(
    `${G}/400_test.go: TestBadRequests`,
    'identities.getIdentity',
    { identity: '{externalId}' },
    [
      named('missing Authorization header', MISSING_HEADER),
      named('malformed Authorization header', ['', 'malformed_header', 400]),
    ],
    true,
  ),
  ...headerCases(
    `${G}/401_test.go: TestUnauthorized`,
    'identities.getIdentity',
    { identity: '{externalId}' },
    [named('invalid root key', ['', 'Bearer invalid_key', 401])],
    true,
  ),
  at(
    `${G}/403_test.go: TestForbidden/no permission to read any identity`,
    'identities.getIdentity',
    perms(),
    { identity: '{externalId}' },
    forbidden,
  ),
  at(
    `${G}/403_test.go: TestForbidden/permission by external ID but not by ID`,
    'identities.getIdentity',
    perms('identity.id_3ZGp4bGXXRq6JbtKLVrCmZrM.read_identity'),
    { identity: '{externalId}' },
    forbidden,
    {
      note: 'Unkey grants read_identity on another identity of the workspace; the case names an id no identity has',
      deviation: {
        id: 'identity-externalId-404',
        keyward: { status: 404, type: notFound('identity') },
      },
    },
  ),
  at(
    `${G}/404_test.go: TestNotFound/external ID does not exist`,
    'identities.getIdentity',
    READ,
    { identity: 'test_does_not_exist' },
    missing,
  ),
  at(
    `${G}/404_test.go: TestNotFound/deleted identity`,
    'identities.getIdentity',
    READ,
    { identity: '{deletedExternalId}' },
    { status: 404 },
  ),
];

const L = 'v2_identities_list_identities';
const LIST = perms('identity.*.read_identity');
export const listIdentities: ConformanceCase[] = [
  ...(
    [
      ['negative limit', { limit: -10 }],
      ['zero limit', { limit: 0 }],
      ['excessive limit value', { limit: 1000 }],
      ['search exceeding max length', { search: 'a'.repeat(257) }],
      ['limit at boundary (200)', { limit: 200 }],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(`${L}/400_test.go: TestBadRequests/${name}`, 'identities.listIdentities', LIST, body, {
      status: 400,
    }),
  ),
  at(
    `${L}/400_test.go: TestBadRequests/malformed JSON body`,
    'identities.listIdentities',
    LIST,
    undefined as never,
    { status: 400 },
    { raw: '{"limit": 5, "cursor": "missing_quote_here}' },
  ),
  ...headerCases(`${L}/401_test.go: TestUnauthorized`, 'identities.listIdentities', {}, [
    named('missing Authorization header', MISSING_HEADER),
    named('malformed Authorization header', ['', 'malformed_header', 400]),
  ]),
  at(
    `${L}/403_test.go: TestForbidden/no permission to read any identity`,
    'identities.listIdentities',
    perms(),
    {},
    forbidden,
  ),
  at(
    `${L}/403_test.go: TestForbidden/with wildcard permission`,
    'identities.listIdentities',
    LIST,
    {},
    { status: 200 },
  ),
];

const U = 'v2_identities_update_identity';
const UPDATE = perms('identity.*.update_identity');
export const updateIdentity: ConformanceCase[] = [
  at(
    `${U}/400_test.go: TestBadRequests/missing externalId`,
    'identities.updateIdentity',
    UPDATE,
    { meta: { test: 'value' } },
    bad,
  ),
  at(
    `${U}/400_test.go: TestBadRequests/empty externalId`,
    'identities.updateIdentity',
    UPDATE,
    { identity: '', meta: { test: 'value' } },
    bad,
  ),
  at(
    `${U}/400_test.go: TestBadRequests/duplicate ratelimit names`,
    'identities.updateIdentity',
    UPDATE,
    {
      identity: '{externalId}',
      ratelimits: [limit('api_calls', 100, 60000), limit('api_calls', 200, 120000)],
    },
    bad,
  ),
  at(
    `${U}/400_test.go: TestBadRequests/metadata too large`,
    'identities.updateIdentity',
    UPDATE,
    { identity: '{externalId}', meta: { data: 'a'.repeat(1024 * 1024) } },
    bad,
    { deviation: { id: 'body-too-large-413', keyward: { status: 413 } } },
  ),
  ...headerCases(
    `${U}/401_test.go: TestUnauthorized`,
    'identities.updateIdentity',
    { identity: '{externalId}', meta: { test: 'value' } },
    [
      named('missing Authorization header', MISSING_HEADER),
      named('malformed Authorization header', ['', 'malformed_header', 400]),
      named('invalid root key', ['', 'Bearer invalid_key', 401]),
      EMPTY_BEARER,
    ],
    true,
  ),
  at(
    `${U}/401_test.go: TestUnauthorized/key from different workspace`,
    'identities.updateIdentity',
    { otherWorkspace: ['identity.*.update_identity'] },
    { identity: '{externalId}', meta: { test: 'value' } },
    missing,
  ),
  at(
    `${U}/403_test.go: TestForbidden/no permission to update identity`,
    'identities.updateIdentity',
    perms(),
    { identity: '{externalId}', meta: { test: 'value' } },
    forbidden,
  ),
  at(
    `${U}/403_test.go: TestForbidden/wrong permission type`,
    'identities.updateIdentity',
    perms('identity.*.create_identity'),
    { identity: '{externalId}', meta: { test: 'value' } },
    forbidden,
  ),
  at(
    `${U}/403_test.go: TestForbidden/with permission to update identity`,
    'identities.updateIdentity',
    UPDATE,
    { identity: '{externalId}', meta: { test: 'value' } },
    { status: 200 },
  ),
  at(
    `${U}/404_test.go: TestNotFound/external ID does not exist`,
    'identities.updateIdentity',
    UPDATE,
    { identity: 'test_does_not_exist', meta: { test: 'value' } },
    missing,
  ),
];
