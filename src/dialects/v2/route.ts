import { BadRequestError } from '../../errors';
import type { JsonSchema, Operation } from '../../operations/operation';
import { isSchema, withKeywords, type DialectRoute } from '../dialect';
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
export interface V2Route<
  CoreInput = never,
  CoreOutput extends object = object,
  Body = never,
> extends DialectRoute<CoreInput, CoreOutput, Body> {
  readonly method: 'POST';
  /**
   * The v2 request body. Every object in it that declares its properties refuses others, as
   * Unkey's spec does (`additionalProperties: false`), unless it is marked `open` (defineV2Route).
   */
  readonly input: JsonSchema;
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
 * The operation's 400 with each field named as v2 names it: the longest v1 path a problem's path
 * starts with (`authorization.permissions` before `authorization`) is replaced by v2's.
 */
export function inV2Terms(
  error: unknown,
  fieldNames: Readonly<Record<string, string>> | undefined,
): unknown {
  if (!fieldNames || !(error instanceof BadRequestError) || error.problems.length === 0) {
    return error;
  }
  const renames = Object.entries(fieldNames)
    .map(([v1, v2]) => ({ v1: v1.split('.'), v2: v2.split('.') }))
    .sort((a, b) => b.v1.length - a.v1.length);
  const problems = error.problems.map((problem) => {
    const rename = renames.find(({ v1 }) => v1.every((step, i) => problem.path[i] === step));
    if (!rename) return problem;
    return { ...problem, path: [...rename.v2, ...problem.path.slice(rename.v1.length)] };
  });
  return error.withProblems(problems);
}

/**
 * Keeps a route's own types for its module; the registry erases them. Its body schema is made
 * strict here, once for every route (see `strict`), so the validator and the OpenAPI document
 * both refuse what Unkey's v2 refuses.
 */
export function defineV2Route<CoreInput, CoreOutput extends object, Body>(
  route: Omit<V2Route<CoreInput, CoreOutput, Body>, 'operation' | 'method'> & {
    // Whatever services it uses: the route never binds them itself (src/http/rpc.ts does).
    operation: Operation<keyof Services, CoreInput, CoreOutput>;
  },
): V2Route<CoreInput, CoreOutput, Body> {
  const { refusal, fieldNames } = route;
  return {
    ...route,
    method: 'POST',
    input: strict(route.input),
    // The operation's own schema where the route does not widen it: what toInput read is checked
    // against the operation's rules whatever the body's shape was.
    coreInput: route.coreInput ?? route.operation.input,
    refusal: (error: unknown) => inV2Terms(refusal ? refusal(error) : error, fieldNames),
  } as V2Route<CoreInput, CoreOutput, Body>;
}

/**
 * The operation's input schema where Unkey's v2 holds a bound wider than keyward's v1
 * (`{permissions: {maxItems: 1000}}`, or `{pattern: undefined}` to drop one), whose answers must
 * not change.
 */
export function widen(
  schema: JsonSchema,
  changes: Readonly<Record<string, JsonSchema>>,
): JsonSchema {
  return withKeywords(schema, changes);
}

/**
 * An object of a v2 body where Unkey's spec allows fields it does not declare (it says nothing
 * of `additionalProperties`): createIdentity's and rerollKey's bodies, a RatelimitRequest. v2
 * accepts them there and the route reads only the fields it knows.
 */
export function open<Schema extends JsonSchema>(
  schema: Schema,
): Schema & { additionalProperties: true } {
  return { ...schema, additionalProperties: true };
}

/**
 * A copy of a v2 body schema in which every object that lists its properties refuses any other
 * (`additionalProperties: false`), as Unkey's v2 spec says of its request bodies and of the
 * objects in them, but for those marked `open`. An object without `properties` (`meta`) is free
 * JSON in both. The schemas the operations share are never changed: this copies.
 */
export function strict(schema: JsonSchema): JsonSchema {
  const copy: Record<string, unknown> = { ...schema };
  if (isSchema(copy.properties)) {
    copy.properties = Object.fromEntries(
      Object.entries(copy.properties).map(([name, property]) => [
        name,
        isSchema(property) ? strict(property) : property,
      ]),
    );
    if (copy.additionalProperties === undefined) copy.additionalProperties = false;
  }
  if (isSchema(copy.items)) copy.items = strict(copy.items);
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = copy[keyword];
    if (Array.isArray(branches)) {
      copy[keyword] = branches.map((branch: unknown) =>
        isSchema(branch) ? strict(branch) : branch,
      );
    }
  }
  return copy;
}
