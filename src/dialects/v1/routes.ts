import { ConflictError } from '../../errors';
import { updateIdentity } from '../../operations/identities/updateIdentity';
import { listIdentities, type IdentitiesPage } from '../../operations/identities/listIdentities';
import { getRole } from '../../operations/permissions/getRole';
import {
  listPermissions,
  type PermissionsPage,
} from '../../operations/permissions/listPermissions';
import { listRoles, type RolesPage } from '../../operations/permissions/listRoles';
import { permissionOutput, roleOutput } from '../../operations/permissions/schemas';
import type { RoleView } from '../../operations/permissions/views';
import { listKeys, type KeysPage } from '../../operations/apis/listKeys';
import { addPermissions } from '../../operations/keys/addPermissions';
import { addRoles } from '../../operations/keys/addRoles';
import { getKey } from '../../operations/keys/getKey';
import type { LinkAnswer } from '../../operations/keys/linkOperation';
import { linkedOutput } from '../../operations/keys/links';
import { removePermissions } from '../../operations/keys/removePermissions';
import { removeRoles } from '../../operations/keys/removeRoles';
import { setPermissions } from '../../operations/keys/setPermissions';
import { setRoles } from '../../operations/keys/setRoles';
import { updateRemaining, type RemainingAnswer } from '../../operations/keys/updateRemaining';
import type { Verification } from '../../operations/keys/verification';
import { verifyKey } from '../../operations/keys/verifyKey';
import { whoami } from '../../operations/keys/whoami';
import { RepeatedNameError } from '../../operations/namedLimits';
import type { Operation } from '../../operations/operation';
import { operations } from '../../operations/registry';
import { empty, object } from '../../operations/schemas';
import type { KeyView } from '../../operations/views';
import { withKeywords, type AnyRoute, type DialectRoute } from '../dialect';
import { v1IdentitiesPage, v1KeysPage, v1KeyView, v1Role, v1Verification } from './views';

type Difference = readonly [Operation, Partial<AnyRoute>];

/** Unkey v1's add and set answered what they linked, its remove `{}`. */
function linkAnswer(op: 'add' | 'remove' | 'set', operation: Operation): Difference {
  return [
    operation,
    op === 'remove'
      ? { output: empty, toBody: () => ({}) }
      : { output: linkedOutput, toBody: (output) => (output as LinkAnswer).linked },
  ];
}

/**
 * Where Unkey v1 answered otherwise than the operation (which follows v2, the newer contract):
 * these are the differences, and the only ones. Each is a shape or a status, never a rule.
 */
const V1_DIFFERENCES: readonly Difference[] = [
  // v2's set takes `[]` (all taken away); Unkey v1 refused it, with a 400 before any lookup.
  [
    setPermissions as Operation,
    { input: withKeywords(setPermissions.input, { permissions: { minItems: 1 } }) },
  ],
  [setRoles as Operation, { input: withKeywords(setRoles.input, { roles: { minItems: 1 } }) }],
  linkAnswer('add', addPermissions as Operation),
  linkAnswer('remove', removePermissions as Operation),
  linkAnswer('set', setPermissions as Operation),
  linkAnswer('add', addRoles as Operation),
  linkAnswer('remove', removeRoles as Operation),
  linkAnswer('set', setRoles as Operation),
  // What v2 shows beside a key (its effective permissions, its identity's limits), v1 did not.
  [getKey as Operation, { toBody: (output) => v1KeyView(output as KeyView) }],
  [whoami as Operation, { toBody: (output) => v1KeyView(output as KeyView) }],
  [listKeys as Operation, { toBody: (output) => v1KeysPage(output as KeysPage) }],
  [verifyKey as Operation, { toBody: (output) => v1Verification(output as Verification) }],
  // v2 lists identities with their meta and a role's permissions as objects; v1 did neither.
  [listIdentities as Operation, { toBody: (output) => v1IdentitiesPage(output as IdentitiesPage) }],
  [getRole as Operation, { toBody: (output) => v1Role(output as RoleView) }],
  // Unkey v1 took no paging or search here and answered the whole list, as an array.
  [
    listPermissions as Operation,
    {
      input: object({}),
      output: { type: 'array', items: permissionOutput },
      toInput: () => ({}),
      toBody: (output) => (output as PermissionsPage).permissions,
    },
  ],
  [
    listRoles as Operation,
    {
      input: object({}),
      output: { type: 'array', items: roleOutput },
      toInput: () => ({}),
      toBody: (output) => (output as RolesPage).roles.map(v1Role),
    },
  ],
  // v2's credits answer shows the refill beside the count; v1's showed the count.
  [
    updateRemaining as Operation,
    {
      output: object({ remaining: { type: 'integer' } }, ['remaining']),
      toBody: (output) => ({ remaining: (output as RemainingAnswer).remaining }),
    },
  ],
  // Unkey v1 answered a limit named twice with 409 CONFLICT and these words (v2: 400).
  [
    updateIdentity as Operation,
    {
      refusal: (error) =>
        error instanceof RepeatedNameError
          ? new ConflictError(
              undefined,
              `Ratelimit with name "${error.limitName}" is already defined in the request`,
            )
          : error,
    },
  ],
];

function differencesOf(operation: Operation): Partial<AnyRoute> {
  const found = V1_DIFFERENCES.filter(([differs]) => differs === operation);
  return Object.assign({}, ...found.map(([, difference]) => difference)) as Partial<AnyRoute>;
}

function v1Route(operation: Operation): AnyRoute {
  const route: DialectRoute<unknown, object, unknown> = {
    name: operation.name,
    method: operation.method,
    operation: operation as Operation<never, unknown, object>,
    input: operation.input,
    output: operation.output,
    // The request is the operation's input, and its result the answer, as they are.
    toInput: (request) => request,
    toBody: (output) => output,
  };
  return { ...route, ...differencesOf(operation) };
}

/** Every operation at `/v1/{name}`, a GET (query) or a POST (JSON body) as it declares. */
export const v1Routes: readonly AnyRoute[] = operations.map(v1Route);
