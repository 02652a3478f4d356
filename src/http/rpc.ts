import type { AnyRoute, Dialect } from '../dialects/dialect';
import { v1Dialect } from '../dialects/v1/dialect';
import { v1Routes } from '../dialects/v1/routes';
import { v2Dialect } from '../dialects/v2/dialect';
import { v2Routes } from '../dialects/v2/registry';
import { bindOperation, type BoundOperation, type Operation } from '../operations/operation';
import type { Services } from '../operations/services';
import { authenticate } from './authenticate';
import type { RequestState } from './context';
import type { Answer } from './lifecycle';
import { compile, type Validator } from './validation';

/** A dialect's route with its path, validators and bound operation, made once at start-up. */
export interface CompiledRoute {
  dialect: Dialect;
  route: AnyRoute;
  /** The operation it runs: the same for the v1 and the v2 route of one operation. */
  operation: Operation;
  path: string;
  method: 'GET' | 'POST';
  /** What logs and metrics call it: the operation's name, `v2/`-led for the v2 dialect. */
  label: string;
  /** The request as the dialect takes it. */
  validate: Validator<never>;
  /** The operation's input rules, held against what the route read (absent: the same check). */
  validateInput?: Validator<never>;
  /** The query parameters a GET route reads (decoded by their schema types). */
  queryProperties: Readonly<Record<string, { type?: unknown }>>;
  run: BoundOperation;
}

function compileRoute(dialect: Dialect, route: AnyRoute, services: Services): CompiledRoute {
  const operation = route.operation as Operation;
  const allErrors = dialect.allErrors;
  return {
    dialect,
    route,
    operation,
    path: `${dialect.prefix}${route.name}`,
    method: route.method,
    label: `${dialect.labelPrefix}${route.name}`,
    validate: compile<never>(route.input, { allErrors }),
    ...(route.coreInput ? { validateInput: compile<never>(route.coreInput, { allErrors }) } : {}),
    queryProperties:
      route.method === 'GET'
        ? ((route.input.properties ?? {}) as Record<string, { type?: unknown }>)
        : {},
    run: bindOperation(operation, services),
  };
}

/** Every route of both dialects. */
export function compileRoutes(services: Services): CompiledRoute[] {
  return [
    ...v1Routes.map((route) => compileRoute(v1Dialect, route, services)),
    ...v2Routes.map((route) => compileRoute(v2Dialect, route, services)),
  ];
}

/** What every RPC needs before its operation runs. */
export type RpcServices = Pick<Services, 'directory' | 'management' | 'now'>;

/**
 * One RPC, whichever dialect and HTTP door carry it: authentication first (an unauthenticated
 * caller learns nothing, not even about its input), then the management request limit, then the
 * request is read, validated, translated into the operation's input and run; the answer is
 * translated back. Throws what the dialect's error envelope answers.
 */
export async function invoke(
  services: RpcServices,
  compiled: CompiledRoute,
  state: RequestState,
  authorization: string | undefined,
  readInput: () => unknown,
): Promise<Answer> {
  const { route, operation } = compiled;
  const authenticated = authenticate(authorization, services.directory);
  const rootKey = authenticated instanceof Promise ? await authenticated : authenticated;
  state.rootKey = rootKey;
  if (operation.plane === 'management') await services.management.check(rootKey.id);
  const request = compiled.validate(
    await readInput(),
    compiled.method === 'GET' ? 'query' : 'body',
  );
  const caller = {
    rootKey,
    requestId: state.requestId,
    logFields: state.logFields,
    clientIp: state.clientIp,
  };
  let output: object;
  try {
    const input = route.toInput(request);
    output = await compiled.run(
      caller,
      (compiled.validateInput ? compiled.validateInput(input, 'body') : input) as never,
    );
  } catch (error) {
    throw route.refusal ? route.refusal(error) : error;
  }
  const body = compiled.dialect.envelope(route.toBody(output, request), state.requestId);
  if (!operation.headers) return { status: 200, body };
  return { status: 200, headers: operation.headers(output as never, services.now()), body };
}
