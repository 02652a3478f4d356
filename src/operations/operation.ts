import { isGranted, mayHaveAction, permissionFor, type Permission } from '../auth/permissions';
import type { RootKeyRecord } from '../domain/records';
import { InsufficientPermissionsError } from '../errors';
import type { Services } from './services';

/**
 * Ids an operation notes for the request's access-log line. A closed set of ids, never a secret:
 * the access log relies on it to skip the wildcard redaction (src/http/requestLog.ts).
 */
export interface LogFields {
  apiId?: string;
  keyId?: string;
  mode?: string;
}

/** Who is calling: the authenticated root key, and where to note ids for the access log. */
export interface Caller {
  rootKey: RootKeyRecord;
  requestId: string;
  logFields: LogFields;
  /** The client's address, only when KEYWARD_LOG_CLIENT_IP asks for it. */
  clientIp?: string | undefined;
}

export type Resource = 'api' | 'ratelimit' | 'rbac' | 'identity' | 'audit' | 'webhook';

/** The permission an operation needs, as its declaration states it. */
export type PermissionRule<Input> =
  /** `resource.*.action`, whatever the input names. */
  | { resource: Resource; action: string; scope: 'any' }
  /** `resource.<id>.action` for every id the input names (`resource.*.action` covers them all). */
  | { resource: Resource; action: string; scope: 'input'; ids(input: Input): readonly string[] }
  /**
   * The id is known only once the resource is looked up, and the operation checks it then.
   * Before that, a root key that holds the action on no id at all is refused.
   */
  | { resource: Resource; action: string; scope: 'resource' };

/** A JSON Schema (draft 2020-12, as ajv and OpenAPI 3.1 read it). */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * One RPC, declared once: its address, the permission it needs, its input and output schemas,
 * the services it uses, and its handler. The route table, the OpenAPI document and the
 * reference pages are derived from these declarations (src/operations/registry.ts).
 */
export interface Operation<
  Uses extends keyof Services = keyof Services,
  Input = never,
  Output extends object = object,
> {
  /** `service.method`: v1 serves it at `/v1/service.method` (src/dialects/v1). */
  readonly name: `${string}.${string}`;
  /** GET reads with a query string; POST writes with a JSON body. */
  readonly method: 'GET' | 'POST';
  /** Management calls count against the per-root-key request limit; the data plane does not. */
  readonly plane: 'data' | 'management';
  readonly summary: string;
  readonly permission: PermissionRule<Input>;
  readonly input: JsonSchema;
  readonly output: JsonSchema;
  readonly uses: readonly Uses[];
  /** Rules of the input that JSON Schema cannot say, judged before the permission (400 before 403). */
  check?(input: Input): void;
  handle(deps: Pick<Services, Uses>, caller: Caller, input: Input): Promise<Output>;
  /** Response headers derived from the output (e.g. RateLimit-* of a verification). */
  headers?(output: Output, now: number): Record<string, string>;
}

/** Keeps a declaration's own types for its module and its tests; the registry erases them. */
export function defineOperation<Uses extends keyof Services, Input, Output extends object>(
  operation: Operation<Uses, Input, Output>,
): Operation<Uses, Input, Output> {
  return operation;
}

export function requirePermission(caller: Caller, permission: Permission): void {
  if (!isGranted(caller.rootKey.permissions, permission)) {
    throw new InsufficientPermissionsError(permission);
  }
}

/** What the declared permission lets the caller do before the operation looks anything up. */
export function authorize<Input>(caller: Caller, rule: PermissionRule<Input>, input: Input): void {
  switch (rule.scope) {
    case 'any':
      return requirePermission(caller, permissionFor(rule.resource, '*', rule.action));
    case 'input':
      for (const id of rule.ids(input)) {
        requirePermission(caller, permissionFor(rule.resource, id, rule.action));
      }
      return;
    case 'resource':
      if (!mayHaveAction(caller.rootKey.permissions, rule.resource, rule.action)) {
        throw new InsufficientPermissionsError(`${rule.resource}.*.${rule.action}`);
      }
  }
}

/** Runs one operation as every caller does: its input check and permission, then its handler. */
export function runOperation<Uses extends keyof Services, Input, Output extends object>(
  operation: Operation<Uses, Input, Output>,
  services: Pick<Services, Uses>,
  caller: Caller,
  input: Input,
): Promise<Output> {
  return bindOperation(operation, services)(caller, input);
}

/** An operation with its services picked once, ready to run with validated input. */
export type BoundOperation<Input = never, Output extends object = object> = (
  caller: Caller,
  input: Input,
) => Promise<Output>;

/**
 * Hands the operation only the services it declares, and runs its input check and permission
 * before it, in that order, for every caller (the HTTP doors and the command line alike).
 */
export function bindOperation<Uses extends keyof Services, Input, Output extends object>(
  operation: Operation<Uses, Input, Output>,
  services: Pick<Services, Uses>,
): BoundOperation<Input, Output> {
  const picked = {} as Pick<Services, Uses>;
  for (const name of operation.uses) picked[name] = services[name];
  // Not an async function: that would cost the hot path one more promise per call. A refused
  // check still reaches the caller as a rejection, as any other failure does.
  return (caller, input) => {
    try {
      operation.check?.(input);
      authorize(caller, operation.permission, input);
    } catch (refused) {
      return Promise.reject(refused);
    }
    return operation.handle(picked, caller, input);
  };
}
