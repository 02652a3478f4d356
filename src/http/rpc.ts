import { bindOperation, type BoundOperation, type Operation } from '../operations/operation';
import type { Services } from '../operations/services';
import { authenticate } from './authenticate';
import type { RequestState } from './context';
import type { Answer } from './lifecycle';
import { pathOf, routes } from './routes';
import { compile, type Validator } from './validation';

/** A route with its path, its ajv validator and its bound operation, made once at start-up. */
export interface CompiledRoute {
  route: Operation;
  path: string;
  validate: Validator<never>;
  /** The query parameters a GET route reads (decoded by their schema types). */
  queryProperties: Readonly<Record<string, { type?: unknown }>>;
  run: BoundOperation;
}

export function compileRoutes(services: Services): CompiledRoute[] {
  return routes.map((route) => ({
    route,
    path: pathOf(route),
    validate: compile<never>(route.input),
    queryProperties: (route.input.properties ?? {}) as Record<string, { type?: unknown }>,
    run: bindOperation(route, services),
  }));
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
  const { route } = compiled;
  const rootKey = await authenticate(authorization, services.directory);
  state.rootKey = rootKey;
  if (route.plane === 'management') await services.management.check(rootKey.id);
  const input = compiled.validate(await readInput(), route.method === 'GET' ? 'query' : 'body');
  const output = await compiled.run(
    { rootKey, requestId: state.requestId, logFields: state.logFields },
    input,
  );
  if (!route.headers) return { status: 200, body: output };
  return { status: 200, headers: route.headers(output as never, services.now()), body: output };
}
