import { inV2Terms, type V2Route } from '../dialects/v2/route';
import { v2Routes } from '../dialects/v2/registry';
import { bindOperation, type BoundOperation, type Operation } from '../operations/operation';
import type { Services } from '../operations/services';
import { authenticate } from './authenticate';
import type { RequestState } from './context';
import type { Answer } from './lifecycle';
import { pathOf, routes } from './routes';
import { compile, type Validator } from './validation';

/** A route with its path, its ajv validator and its bound operation, made once at start-up. */
export interface CompiledRoute {
  /** The operation it runs: the same for a v1 and a v2 route of one operation. */
  route: Operation;
  path: string;
  method: 'GET' | 'POST';
  /** What logs and metrics call it: the operation's name, `v2/`-led for the v2 dialect. */
  label: string;
  validate: Validator<never>;
  /** The query parameters a GET route reads (decoded by their schema types). */
  queryProperties: Readonly<Record<string, { type?: unknown }>>;
  run: BoundOperation;
  /** v2 only: the body read into the operation's input, its answer written in v2's envelope. */
  v2?: {
    route: V2Route<unknown, object, unknown>;
    /** The operation's input rules (widened where v2's are), held against what the route read. */
    validateInput: Validator<never>;
  };
}

export function compileRoutes(services: Services): CompiledRoute[] {
  const v1 = routes.map((route): CompiledRoute => ({
    route,
    path: pathOf(route),
    method: route.method,
    label: route.name,
    validate: compile<never>(route.v1Input ?? route.input),
    queryProperties: (route.input.properties ?? {}) as Record<string, { type?: unknown }>,
    run: bindOperation(route, services),
  }));
  const v2 = v2Routes.map((v2Route): CompiledRoute => {
    const route = v2Route.operation as Operation;
    return {
      route,
      path: `/v2/${v2Route.name}`,
      method: 'POST',
      label: `v2/${v2Route.name}`,
      validate: compile<never>(v2Route.input),
      queryProperties: {},
      run: bindOperation(route, services),
      v2: { route: v2Route, validateInput: compile<never>(v2Route.coreInput ?? route.input) },
    };
  });
  return [...v1, ...v2];
}

/** What every RPC needs before its operation runs. */
export type RpcServices = Pick<Services, 'directory' | 'management' | 'now'>;

/**
 * One RPC, whichever HTTP door carries it: authentication first (an unauthenticated caller
 * learns nothing, not even about its input), then the management request limit, then the input
 * is read, validated and handed to the operation. Throws what the envelope answers.
 */
export async function invoke(
  services: RpcServices,
  compiled: CompiledRoute,
  state: RequestState,
  authorization: string | undefined,
  readInput: () => unknown,
): Promise<Answer> {
  const { route, v2 } = compiled;
  const rootKey = await authenticate(authorization, services.directory);
  state.rootKey = rootKey;
  if (route.plane === 'management') await services.management.check(rootKey.id);
  const input = compiled.validate(await readInput(), compiled.method === 'GET' ? 'query' : 'body');
  const caller = { rootKey, requestId: state.requestId, logFields: state.logFields };
  if (v2) {
    let output: object;
    try {
      output = await compiled.run(caller, v2.validateInput(v2.route.toInput(input), 'body'));
    } catch (error) {
      throw inV2Terms(v2.route.refusal ? v2.route.refusal(error) : error, v2.route.fieldNames);
    }
    const body = { meta: { requestId: state.requestId }, ...v2.route.toBody(output, input) };
    if (!route.headers) return { status: 200, body };
    return { status: 200, headers: route.headers(output as never, services.now()), body };
  }
  route.v1Check?.(input as never);
  const output = await compiled.run(caller, input);
  const body = route.v1Answer ? route.v1Answer(output as never) : output;
  if (!route.headers) return { status: 200, body };
  return { status: 200, headers: route.headers(output as never, services.now()), body };
}
