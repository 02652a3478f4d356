import type { Services } from '../operations/services';
import type { RequestState } from './context';
import { authenticate } from './authenticate';
import { routes, schemaOf, type Route } from './routes';
import { compile, type Validator } from './validation';

/** A route with its path and its ajv validator, compiled once at start-up. */
export interface CompiledRoute {
  route: Route;
  path: string;
  validate: Validator<never>;
  /** The query parameters a GET route reads (decoded by their schema types). */
  queryProperties: Readonly<Record<string, { type?: unknown }>>;
}

export function compileRoutes(): CompiledRoute[] {
  return routes.map((route) => {
    const schema = schemaOf(route);
    return {
      route,
      path: `/v1/${route.name}`,
      validate: compile<never>(schema),
      queryProperties: 'properties' in schema ? schema.properties : {},
    };
  });
}

export interface RpcAnswer {
  output: object;
  headers?: Record<string, string>;
}

/**
 * One RPC, whichever HTTP layer carries it: authentication first (an unauthenticated caller
 * learns nothing, not even about its input), then the management request limit, then the input
 * is read, validated and handed to the operation. Throws what the envelope answers.
 */
export async function invoke(
  services: Services,
  compiled: CompiledRoute,
  state: RequestState,
  authorization: string | undefined,
  readInput: () => unknown,
): Promise<RpcAnswer> {
  const { route } = compiled;
  const rootKey = await authenticate(authorization, services.directory);
  state.rootKey = rootKey;
  if (route.plane === 'management') await services.management.check(rootKey.id);
  const input = compiled.validate(await readInput(), route.method === 'GET' ? 'query' : 'body');
  const output = await route.run(
    services,
    { rootKey, requestId: state.requestId, logFields: state.logFields },
    input,
  );
  if (!route.headers) return { output };
  return { output, headers: route.headers(output as never, services.now()) };
}
