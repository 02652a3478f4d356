import { BadRequestError } from '../../errors';
import type { JsonSchema, Operation } from '../../operations/operation';
import type { Services } from '../../operations/services';

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
  /**
   * Where v2 calls a field differently (`remaining` → `credits.remaining`): a 400 the operation
   * raises names the field as the v2 client sent it.
   */
  readonly fieldNames?: Readonly<Record<string, string>>;
}

/**
 * The operation's 400 with its field named as v2 names it: keyward's messages lead with the
 * field's path (`refill: requires remaining`), so the leading segment is looked up and replaced.
 */
export function inV2Terms(
  error: unknown,
  fieldNames: Readonly<Record<string, string>> | undefined,
): unknown {
  if (!fieldNames || !(error instanceof BadRequestError)) return error;
  const colon = error.message.indexOf(': ');
  if (colon < 0) return error;
  const path = error.message.slice(0, colon);
  // The longest v1 path the message's path starts with (`authorization.permissions` before
  // `authorization`), ending there or before a `.` or `[`.
  const v1 = Object.keys(fieldNames)
    .filter((name) => path === name || path.startsWith(`${name}.`) || path.startsWith(`${name}[`))
    .sort((a, b) => b.length - a.length)[0];
  if (v1 === undefined) return error;
  return new BadRequestError(`${fieldNames[v1]}${error.message.slice(v1.length)}`);
}

/** Keeps a route's own types for its module; the registry erases them. */
export function defineV2Route<CoreInput, CoreOutput extends object, Body>(
  route: Omit<V2Route<CoreInput, CoreOutput, Body>, 'operation'> & {
    // Whatever services it uses: the route never binds them itself (src/http/rpc.ts does).
    operation: Operation<keyof Services, CoreInput, CoreOutput>;
  },
): V2Route<CoreInput, CoreOutput, Body> {
  return route as V2Route<CoreInput, CoreOutput, Body>;
}
