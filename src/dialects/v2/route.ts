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
  /**
   * The v2 request body. Every object in it that declares its properties refuses others, as
   * Unkey's spec does (`additionalProperties: false`), unless it is marked `open` (defineV2Route).
   */
  readonly input: JsonSchema;
  /**
   * The operation's input rules for what toInput read, where Unkey v2's bounds are wider than
   * v1's (createKey's 1,000 permissions): the operation's schema with those properties widened
   * (`widen`). Absent, the operation's own schema, as v1 holds it. Every other rule, and the
   * operation's own checks, are the same for both dialects.
   */
  readonly coreInput?: JsonSchema;
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
  /**
   * Where Unkey v2 answers one of the operation's refusals with another status (keyward's 412 for
   * incrementing a key without credits is v2's 400): the error as v2 answers it.
   */
  refusal?(error: unknown): unknown;
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

/**
 * Keeps a route's own types for its module; the registry erases them. Its body schema is made
 * strict here, once for every route (see `strict`), so the validator and the OpenAPI document
 * both refuse what Unkey's v2 refuses.
 */
export function defineV2Route<CoreInput, CoreOutput extends object, Body>(
  route: Omit<V2Route<CoreInput, CoreOutput, Body>, 'operation'> & {
    // Whatever services it uses: the route never binds them itself (src/http/rpc.ts does).
    operation: Operation<keyof Services, CoreInput, CoreOutput>;
  },
): V2Route<CoreInput, CoreOutput, Body> {
  return { ...route, input: strict(route.input) } as V2Route<CoreInput, CoreOutput, Body>;
}

/**
 * A copy of an operation's input schema with keywords of some of its properties replaced
 * (`{permissions: {maxItems: 1000}}`), or removed when given as undefined (`{pattern:
 * undefined}`): a bound Unkey's v2 holds wider than keyward's v1, whose answers must not change.
 * The operation's schema itself is never changed.
 */
export function widen(
  schema: JsonSchema,
  changes: Readonly<Record<string, JsonSchema>>,
): JsonSchema {
  const own = isSchema(schema.properties) ? schema.properties : {};
  const properties: Record<string, unknown> = { ...own };
  for (const [name, keywords] of Object.entries(changes)) {
    const property = own[name];
    if (!isSchema(property)) throw new Error(`widen: the operation has no property ${name}`);
    const widened: Record<string, unknown> = { ...property, ...keywords };
    for (const [keyword, value] of Object.entries(keywords)) {
      if (value === undefined) delete widened[keyword];
    }
    properties[name] = widened;
  }
  return { ...schema, properties };
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

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
