/**
 * The one error hierarchy of keyward. Every failure a client can see is a KeywardError; the error
 * middleware turns it into the `{ error: { code, message, docs, requestId } }` envelope. Anything
 * else that escapes a handler is a bug and is answered as INTERNAL_SERVER_ERROR without details.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'DISABLED'
  | 'EXPIRED'
  | 'USAGE_EXCEEDED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'DELETE_PROTECTED'
  | 'UNPROCESSABLE_ENTITY'
  | 'RATE_LIMITED'
  | 'INTERNAL_SERVER_ERROR'
  | 'SERVICE_UNAVAILABLE';

export class KeywardError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** One step of a field's path: a property name, or an index into an array. */
export type FieldPath = readonly (string | number)[];

/** What is wrong with one field: where it is, from the request's root, and why. */
export interface FieldProblem {
  /** Empty: the body (or query) as a whole. */
  readonly path: FieldPath;
  readonly message: string;
}

/** Where a 400's fields are: a JSON body, the query string of a GET, or a header. */
export type RequestRoot = 'body' | 'query' | 'header';

/** `ratelimit.limit`, and `[3].apiId` for an item of an array (keyward's v1 spelling). */
export function pathText(path: FieldPath): string {
  return path
    .map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join('');
}

/** What a 400 is about, where v2 gives it a type of its own. */
export type BadRequestKind =
  | 'input'
  | 'permission_query'
  | 'analytics_query'
  | 'analytics_table'
  | 'analytics_function'
  | 'analytics_query_type';

/**
 * A request that cannot be taken as sent. It carries every field that is wrong (a v2 answer
 * lists them all) or, when the rule spans several fields, a sentence and no field. Its message,
 * what v1 answers, is the first problem as `<path>: <what is wrong>`.
 */
export class BadRequestError extends KeywardError {
  readonly problems: readonly FieldProblem[];
  readonly root: RequestRoot;
  /** A permissions query that does not parse, or an analytics query refused: v2 types them. */
  readonly kind: BadRequestKind;

  constructor(
    problems: string | readonly FieldProblem[],
    options: {
      root?: RequestRoot;
      status?: number;
      kind?: BadRequestKind;
      /** v1's message, where one sentence covers several fields. */
      message?: string;
    } = {},
  ) {
    const list = typeof problems === 'string' ? [] : problems;
    const root = options.root ?? 'body';
    super(
      'BAD_REQUEST',
      options.status ?? 400,
      typeof problems === 'string' ? problems : (options.message ?? firstProblem(list, root)),
    );
    this.problems = list;
    this.root = root;
    this.kind = options.kind ?? 'input';
  }

  /** The same refusal with its fields renamed, as a dialect names them. */
  withProblems(problems: readonly FieldProblem[]): BadRequestError {
    return new BadRequestError(problems, { root: this.root, status: this.status, kind: this.kind });
  }
}

function firstProblem(problems: readonly FieldProblem[], root: RequestRoot): string {
  const first = problems[0];
  if (!first) return `${root}: is invalid`;
  return `${first.path.length > 0 ? pathText(first.path) : root}: ${first.message}`;
}

/** A 400 about one field. */
export function invalidField(path: FieldPath, message: string): BadRequestError {
  return new BadRequestError([{ path, message }]);
}

/** 413 and 415 keep the BAD_REQUEST code: v1 SDKs know no other code for a malformed request. */
export class PayloadTooLargeError extends BadRequestError {
  constructor(limitBytes: number) {
    super([{ path: [], message: `must not be larger than ${limitBytes} bytes` }], { status: 413 });
  }
}

export class UnsupportedMediaTypeError extends BadRequestError {
  constructor() {
    super([{ path: ['content-type'], message: 'must be application/json' }], {
      root: 'header',
      status: 415,
    });
  }
}

/**
 * Why a request is not authenticated: no Authorization header (or an empty one), one that is not
 * `Bearer <key>`, or a key no root key has. v1 answers all three alike; v2 answers the first two
 * 400, as Unkey's v2 does (its dialect's `refine`).
 */
export type UnauthorizedReason = 'missing' | 'malformed' | 'unknown';

export class UnauthorizedError extends KeywardError {
  constructor(
    readonly reason: UnauthorizedReason = 'unknown',
    message = 'a valid root key is required: Authorization: Bearer <ROOT_KEY>',
  ) {
    super('UNAUTHORIZED', 401, message, { 'WWW-Authenticate': 'Bearer' });
  }
}

/** An Authorization header that is not `Bearer <key>`, as a dialect that tells it apart answers it. */
export class MalformedAuthorizationError extends KeywardError {
  constructor(message: string) {
    super('BAD_REQUEST', 400, message);
  }
}

export class InsufficientPermissionsError extends KeywardError {
  constructor(readonly permission: string) {
    super('INSUFFICIENT_PERMISSIONS', 403, `this root key lacks the permission ${permission}`);
  }
}

/** What a 404 or 409 concerns; v2 names it in its error type. */
export type Resource =
  | 'api'
  | 'key'
  | 'identity'
  | 'permission'
  | 'role'
  | 'ratelimit_namespace'
  | 'ratelimit_override'
  | 'workspace'
  | 'root_key'
  | 'webhook'
  | 'route';

export class NotFoundError extends KeywardError {
  constructor(
    readonly resource: Resource,
    message: string,
  ) {
    super('NOT_FOUND', 404, message);
  }
}

export class MethodNotAllowedError extends KeywardError {
  constructor(method: string, allowed: readonly string[]) {
    super(
      'METHOD_NOT_ALLOWED',
      405,
      `method ${method} is not allowed here; use ${allowed.join(', ')}`,
      {
        Allow: allowed.join(', '),
      },
    );
  }
}

/** A taken name or id; `resource` is absent when the conflict is within the request itself. */
export class ConflictError extends KeywardError {
  constructor(
    readonly resource: Resource | undefined,
    message: string,
  ) {
    super('CONFLICT', 409, message);
  }
}

export class RateLimitedError extends KeywardError {
  constructor(message: string, retryAfterSeconds: number, limit: number) {
    super('RATE_LIMITED', 429, message, {
      'Retry-After': String(retryAfterSeconds),
      'RateLimit-Limit': String(limit),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(retryAfterSeconds),
    });
  }
}

export class PreconditionFailedError extends KeywardError {
  constructor(message: string) {
    super('PRECONDITION_FAILED', 412, message);
  }
}

/** The SQL analytics store is not configured: v2 gives it a type of its own. */
export class AnalyticsNotConfiguredError extends PreconditionFailedError {}

/** Which limit an analytics query ran into, as Unkey's 422 types name it. */
export type QueryLimit =
  'query_execution_timeout' | 'query_rows_limit_exceeded' | 'query_memory_limit_exceeded';

/** A well-formed request that hit a limit (an analytics query's time, rows read or result size). */
export class UnprocessableEntityError extends KeywardError {
  constructor(
    readonly limit: QueryLimit,
    message: string,
  ) {
    super('UNPROCESSABLE_ENTITY', 422, message);
  }
}

export class ServiceUnavailableError extends KeywardError {
  constructor(message: string) {
    super('SERVICE_UNAVAILABLE', 503, message);
  }
}

export class InternalError extends KeywardError {
  constructor() {
    super(
      'INTERNAL_SERVER_ERROR',
      500,
      'an internal error occurred; quote the requestId to the operator',
    );
  }
}
