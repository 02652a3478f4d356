import type { JsonSchema, Operation } from '../../operations/operation';

/** What a v2 answer holds beside `meta`: the data, and for a listing its page's cursor. */
export interface V2Body<Data = unknown> {
  data: Data;
  pagination?: { cursor?: string; hasMore: boolean };
}

/**
 * One operation as Unkey's v2 wire format speaks it: `POST /v2/{name}` with a JSON body, read
 * into the very operation the v1 route runs (src/operations), whose answer is written back in v2's
 * shape. The dialect differs only here: how a request is read and how an answer is written.
 */
export interface V2Route<CoreInput = never, CoreOutput extends object = object, Body = never> {
  /** `service.method` as v2 names it (`ratelimit.limit` for v1's `ratelimits.limit`). */
  readonly name: `${string}.${string}`;
  readonly operation: Operation<never, CoreInput, CoreOutput>;
  /** The v2 request body. */
  readonly input: JsonSchema;
  /** The v2 `data` (for the OpenAPI document). */
  readonly output: JsonSchema;
  /** The operation's input from the v2 body; throws BadRequestError for what v2 allows and keyward does not. */
  toInput(body: Body): CoreInput;
  toBody(output: CoreOutput, body: Body): V2Body;
}

/** Keeps a route's own types for its module; the registry erases them. */
export function defineV2Route<CoreInput, CoreOutput extends object, Body>(
  route: Omit<V2Route<CoreInput, CoreOutput, Body>, 'operation'> & {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any Uses: the route never binds services itself
    operation: Operation<any, CoreInput, CoreOutput>;
  },
): V2Route<CoreInput, CoreOutput, Body> {
  return route as V2Route<CoreInput, CoreOutput, Body>;
}
