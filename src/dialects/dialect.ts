import type { KeywardError } from '../errors';
import type { JsonSchema, Operation } from '../operations/operation';

/**
 * One wire format of keyward's operations: Unkey's v1 (`/v1/service.method`) or v2
 * (`POST /v2/service.method`). A dialect only translates shapes; every rule is the operation's.
 */
export interface Dialect {
  readonly name: 'v1' | 'v2';
  /** Every path of the dialect starts with it, so an unknown path's error speaks it too. */
  readonly prefix: '/v1/' | '/v2/';
  /** What logs and metrics put before an operation's name (`v2/keys.verifyKey`; v1: nothing). */
  readonly labelPrefix: '' | 'v2/';
  /** Whether a 400 lists every invalid field (v2) or names the first (v1, as Unkey v1 did). */
  readonly allErrors: boolean;
  /** The answer's body around what the route wrote (v2 adds `meta`). */
  envelope(body: object, requestId: string): object;
  /** A client's error as this dialect writes it. */
  errorBody(error: KeywardError, requestId: string, docsUrl: string): object;
  /**
   * Where the dialect answers an error with another status than keyward's own (v2: a missing or
   * malformed Authorization header is 400, as Unkey's v2 answers it): the error it answers.
   */
  refine?(error: KeywardError): KeywardError;
}

/**
 * One operation as a dialect speaks it: its request read into the operation's input, the
 * operation's answer written in the dialect's shape, and the operation's refusals answered as the
 * dialect answers them. Routes of both dialects run the very same operation (src/http/rpc.ts).
 */
export interface DialectRoute<CoreInput = never, CoreOutput extends object = object, Body = never> {
  /** `service.method` as the dialect names it (`ratelimit.limit` for v1's `ratelimits.limit`). */
  readonly name: `${string}.${string}`;
  /** GET reads a query string, POST a JSON body. */
  readonly method: 'GET' | 'POST';
  readonly operation: Operation<never, CoreInput, CoreOutput>;
  /** The request as the dialect takes it: the JSON body, or the query for a GET. */
  readonly input: JsonSchema;
  /**
   * The operation's input rules, held against what `toInput` read, where the dialect reads a
   * shape of its own (v2). Absent where the request already is the operation's input (v1).
   */
  readonly coreInput?: JsonSchema;
  /** What the route answers (for the OpenAPI document). */
  readonly output: JsonSchema;
  toInput(request: Body): CoreInput;
  toBody(output: CoreOutput, request: Body): object;
  /**
   * Where the dialect answers one of the operation's refusals otherwise (another status, its
   * fields by other names): the error as the dialect answers it.
   */
  refusal?(error: unknown): unknown;
}

/** A route with its own types erased, as the route tables hold it. */
export type AnyRoute = DialectRoute<unknown, object, unknown>;

/**
 * A copy of an operation's input schema with keywords of some of its properties replaced
 * (`{permissions: {maxItems: 1000}}`), or removed when given as undefined (`{pattern:
 * undefined}`): a bound one dialect holds otherwise than the operation.
 * The operation's schema itself is never changed.
 */
export function withKeywords(
  schema: JsonSchema,
  changes: Readonly<Record<string, JsonSchema>>,
): JsonSchema {
  const own = isSchema(schema.properties) ? schema.properties : {};
  const properties: Record<string, unknown> = { ...own };
  for (const [name, keywords] of Object.entries(changes)) {
    const property = own[name];
    if (!isSchema(property)) throw new Error(`withKeywords: the operation has no property ${name}`);
    const changed: Record<string, unknown> = { ...property, ...keywords };
    for (const [keyword, value] of Object.entries(keywords)) {
      if (value === undefined) delete changed[keyword];
    }
    properties[name] = changed;
  }
  return { ...schema, properties };
}

export function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
