import { INVALID_TOKEN, MALFORMED_HEADER, MISSING_HEADER, headerCases, named } from './auth';
import {
  perms,
  bodyCase as at,
  INSUFFICIENT,
  INVALID_INPUT,
  notFound,
  type Answer,
  type ConformanceCase,
  type Json,
} from '../types';

/**
 * ratelimit.* from Unkey's `svc/api/routes/v2_ratelimit_*` tests. Where Unkey's test names a
 * namespace by a random `uid.New("test")`, the case names one that does not exist either.
 */

const noLeak: Partial<ConformanceCase> = {
  deviation: { id: 'no-permission-404', keyward: { status: 403 } },
};
const noLeakTyped: Partial<ConformanceCase> = {
  deviation: { id: 'no-permission-404', keyward: { status: 403, type: INSUFFICIENT } },
};
const bad: Answer = { status: 400, type: INVALID_INPUT };
const noNamespace: Answer = { status: 404, type: notFound('ratelimit_namespace') };
const noOverride: Answer = { status: 404, type: notFound('ratelimit_override') };
const limitBody = {
  namespace: 'test_namespace',
  identifier: 'user_123',
  limit: 100,
  duration: 60000,
};
const authCases = (from: string, route: string, body: Json, typed: boolean) =>
  headerCases(
    from,
    route,
    body,
    [MISSING_HEADER, named('malformed authorization header', MALFORMED_HEADER)],
    typed,
  );
const invalidToken = (from: string, route: string, body: Json) =>
  headerCases(from, route, body, [named('invalid authorization token', INVALID_TOKEN)]);

const L = 'v2_ratelimit_limit';
export const limit: ConformanceCase[] = [
  at(
    `${L}/400_test.go: TestBadRequests/negative cost`,
    'ratelimit.limit',
    perms('ratelimit.{namespace}.limit'),
    { namespace: '{namespace}', identifier: 'user_123', limit: 100, duration: 60000, cost: -5 },
    bad,
  ),
  at(
    `${L}/400_test.go: TestBadRequests/missing namespace in request`,
    'ratelimit.limit',
    perms('ratelimit.*.limit'),
    { identifier: 'user_123', limit: 100, duration: 60000 },
    bad,
  ),
  ...authCases(
    `${L}/400_test.go: TestMissingAuthorizationHeader`,
    'ratelimit.limit',
    limitBody,
    true,
  ),
  ...invalidToken(`${L}/401_test.go: TestUnauthorizedAccess`, 'ratelimit.limit', limitBody),
  at(
    `${L}/403_test.go: TestWorkspacePermissions`,
    'ratelimit.limit',
    { otherWorkspace: [] },
    { ...limitBody, namespace: '{namespace}' },
    { status: 403 },
  ),
];

const M = 'v2_ratelimit_multi_limit';
export const multiLimit: ConformanceCase[] = [
  at(
    `${M}/400_test.go: TestBadRequests/empty request array`,
    'ratelimit.multiLimit',
    perms('ratelimit.*.limit'),
    [],
    bad,
  ),
  at(
    `${M}/400_test.go: TestBadRequests/negative cost`,
    'ratelimit.multiLimit',
    perms('ratelimit.{namespace}.limit'),
    [{ namespace: '{namespace}', identifier: 'user_123', limit: 100, duration: 60000, cost: -5 }],
    bad,
  ),
  at(
    `${M}/400_test.go: TestBadRequests/missing namespace in request`,
    'ratelimit.multiLimit',
    perms('ratelimit.*.limit'),
    [{ namespace: '', identifier: 'user_123', limit: 100, duration: 60000 }],
    bad,
  ),
  ...authCases(
    `${M}/400_test.go: TestMissingAuthorizationHeader`,
    'ratelimit.multiLimit',
    [limitBody],
    true,
  ),
  ...invalidToken(`${M}/401_test.go: TestUnauthorizedAccess`, 'ratelimit.multiLimit', [limitBody]),
  at(
    `${M}/403_test.go: TestWorkspacePermissions`,
    'ratelimit.multiLimit',
    { otherWorkspace: [] },
    [{ ...limitBody, namespace: '{namespace}' }],
    { status: 403 },
  ),
];

const S = 'v2_ratelimit_set_override';
const SET = perms('ratelimit.*.set_override');
const overrideBody = (more: Record<string, Json>) => ({
  namespace: 'test_namespace_id',
  identifier: 'user_123',
  limit: 10,
  duration: 1000,
  ...more,
});
export const setOverride: ConformanceCase[] = [
  at(
    `${S}/400_test.go: TestBadRequests/missing all required fields`,
    'ratelimit.setOverride',
    SET,
    {},
    bad,
  ),
  ...(
    [
      ['missing identifier', { namespace: 'test_namespace_id', limit: 10, duration: 1000 }],
      ['empty identifier', overrideBody({ identifier: '' })],
      ['missing duration', { namespace: 'test_namespace_id', identifier: 'user_123', limit: 10 }],
      ['invalid limit (negative)', overrideBody({ limit: -10 })],
      ['invalid duration (negative)', overrideBody({ duration: -1000 })],
      ['neither namespace ID nor name provided', overrideBody({ namespace: '' })],
    ] as [string, Json][]
  ).map(([name, body]) =>
    at(`${S}/400_test.go: TestBadRequests/${name}`, 'ratelimit.setOverride', SET, body, bad),
  ),
  ...headerCases(
    `${S}/400_test.go: TestBadRequests`,
    'ratelimit.setOverride',
    overrideBody({ namespace: 'test_missing_ns', identifier: 'test_identifier' }),
    [named('malformed authorization header', MALFORMED_HEADER)],
  ),
  ...invalidToken(
    `${S}/401_test.go: TestUnauthorizedAccess`,
    'ratelimit.setOverride',
    overrideBody({ namespace: 'test_missing_ns', identifier: 'test_identifier' }),
  ),
  at(
    `${S}/403_test.go: TestWorkspacePermissions`,
    'ratelimit.setOverride',
    { otherWorkspace: [] },
    overrideBody({ namespace: '{namespace}', identifier: 'test_identifier' }),
    { status: 404 },
    noLeak,
  ),
  at(
    `${S}/404_test.go: TestNamespaceNotFound/namespace id not found`,
    'ratelimit.setOverride',
    perms(),
    overrideBody({ namespace: 'ns_nonexistent', identifier: 'some_identifier' }),
    noNamespace,
    noLeakTyped,
  ),
  at(
    `${S}/404_test.go: TestNamespaceNotFound/namespace name not found`,
    'ratelimit.setOverride',
    perms(),
    overrideBody({ namespace: 'nonexistent_namespace', identifier: 'some_identifier' }),
    noNamespace,
    noLeakTyped,
  ),
];

const G = 'v2_ratelimit_get_override';
const lookupCases = (
  dir: string,
  route: string,
  action: string,
  fn404: string,
): ConformanceCase[] => [
  at(`${dir}/400_test.go: TestBadRequests/missing all required fields`, route, perms(), {}, bad),
  at(
    `${dir}/400_test.go: TestBadRequests/missing identifier`,
    route,
    perms(),
    { namespace: 'not_empty' },
    bad,
  ),
  at(
    `${dir}/400_test.go: TestBadRequests/empty identifier`,
    route,
    perms(),
    { namespace: 'not_empty', identifier: '' },
    bad,
  ),
  at(
    `${dir}/400_test.go: TestBadRequests/neither namespace ID nor name provided`,
    route,
    perms(),
    { namespace: '', identifier: 'user_123' },
    bad,
  ),
  ...authCases(
    `${dir}/400_test.go: TestBadRequests`,
    route,
    { namespace: 'test_missing_ns', identifier: 'test_identifier' },
    false,
  ),
  ...invalidToken(`${dir}/401_test.go: TestUnauthorizedAccess`, route, {
    namespace: 'test_missing_ns',
    identifier: 'test_identifier',
  }),
  at(
    `${dir}/403_test.go: TestWorkspacePermissions`,
    route,
    { otherWorkspace: [] },
    { namespace: '{namespace}', identifier: '{overrideIdentifier}' },
    { status: 404 },
    noLeak,
  ),
  at(
    `${dir}/404_test.go: ${fn404}/override not found`,
    route,
    perms(`ratelimit.{namespace}.${action}`),
    { namespace: '{namespace}', identifier: 'non_existent_identifier' },
    noOverride,
  ),
  at(
    `${dir}/404_test.go: ${fn404}/namespace not found`,
    route,
    perms(`ratelimit.{namespace}.${action}`),
    { namespace: 'ns_nonexistent', identifier: 'some_identifier' },
    noNamespace,
  ),
  at(
    `${dir}/404_test.go: ${fn404}/namespace name not found`,
    route,
    perms(`ratelimit.{namespace}.${action}`),
    { namespace: 'nonexistent_namespace', identifier: 'some_identifier' },
    noNamespace,
  ),
];
export const getOverride: ConformanceCase[] = [
  ...lookupCases(G, 'ratelimit.getOverride', 'read_override', 'TestOverrideNotFound'),
  at(
    `${G}/404_test.go: TestOverrideResponsesDoNotLeakExistence`,
    'ratelimit.getOverride',
    perms(),
    { namespace: '{namespace}', identifier: '{overrideIdentifier}' },
    { status: 404 },
    noLeak,
  ),
];

const D = 'v2_ratelimit_delete_override';
export const deleteOverride: ConformanceCase[] = lookupCases(
  D,
  'ratelimit.deleteOverride',
  'delete_override',
  'TestNotFound',
);

const LO = 'v2_ratelimit_list_overrides';
export const listOverrides: ConformanceCase[] = [
  at(
    `${LO}/400_test.go: TestBadRequests/missing all required fields`,
    'ratelimit.listOverrides',
    perms(),
    {},
    bad,
  ),
  at(
    `${LO}/400_test.go: TestBadRequests/neither namespace ID nor name provided`,
    'ratelimit.listOverrides',
    perms(),
    { namespace: '' },
    bad,
  ),
  ...authCases(
    `${LO}/400_test.go: TestBadRequests`,
    'ratelimit.listOverrides',
    { namespace: 'test_namespace' },
    false,
  ),
  ...invalidToken(`${LO}/401_test.go: TestUnauthorizedAccess`, 'ratelimit.listOverrides', {
    namespace: 'test_namespace',
  }),
  at(
    `${LO}/403_test.go: TestWorkspacePermissions`,
    'ratelimit.listOverrides',
    { otherWorkspace: [] },
    { namespace: '{namespace}' },
    { status: 404 },
    noLeak,
  ),
  at(
    `${LO}/404_test.go: TestOverrideNotFound/namespace id not found`,
    'ratelimit.listOverrides',
    perms('ratelimit.*.read_override'),
    { namespace: 'rlns_3ZGp4bGXXRq6JbtKLVrCmZrM' },
    noNamespace,
  ),
  at(
    `${LO}/404_test.go: TestOverrideNotFound/namespace name not found`,
    'ratelimit.listOverrides',
    perms('ratelimit.*.read_override'),
    { namespace: 'nonexistent_namespace' },
    noNamespace,
  ),
];
