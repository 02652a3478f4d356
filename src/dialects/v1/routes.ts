import { ConflictError } from '../../errors';
import { listKeys, type KeysPage } from '../../operations/apis/listKeys';
import { getKey } from '../../operations/keys/getKey';
import type { Verification } from '../../operations/keys/verification';
import { verifyKey } from '../../operations/keys/verifyKey';
import { whoami } from '../../operations/keys/whoami';
import type { KeyView } from '../../operations/views';
import { setPermissions } from '../../operations/keys/setPermissions';
import { setRoles } from '../../operations/keys/setRoles';
import { RepeatedNameError } from '../../operations/namedLimits';
import type { Operation } from '../../operations/operation';
import { operations } from '../../operations/registry';
import { updateIdentity } from '../../operations/identities/updateIdentity';
import { withKeywords, type AnyRoute, type DialectRoute } from '../dialect';
import { v1KeysPage, v1KeyView, v1Verification } from './views';

/**
 * Unkey's v1 answered a few requests otherwise than the operation (which follows v2, the newer
 * contract): these are the differences, and the only ones.
 */
const V1_DIFFERENCES: ReadonlyMap<Operation, Partial<AnyRoute>> = new Map<
  Operation,
  Partial<AnyRoute>
>([
  // v2's set takes `[]` (all taken away); Unkey v1 refused it, with a 400 before any lookup.
  [
    setPermissions as Operation,
    { input: withKeywords(setPermissions.input, { permissions: { minItems: 1 } }) },
  ],
  [setRoles as Operation, { input: withKeywords(setRoles.input, { roles: { minItems: 1 } }) }],
  // What v2 shows beside a key (its effective permissions, its identity's limits), v1 did not.
  [getKey as Operation, { toBody: (output) => v1KeyView(output as KeyView) }],
  [whoami as Operation, { toBody: (output) => v1KeyView(output as KeyView) }],
  [listKeys as Operation, { toBody: (output) => v1KeysPage(output as KeysPage) }],
  [verifyKey as Operation, { toBody: (output) => v1Verification(output as Verification) }],
  // Unkey v1 answered a limit named twice with CONFLICT and these words (v2: 400).
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
]);

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
  return { ...route, ...V1_DIFFERENCES.get(operation) };
}

/** Every operation at `/v1/{name}`, a GET (query) or a POST (JSON body) as it declares. */
export const v1Routes: readonly AnyRoute[] = operations.map(v1Route);
