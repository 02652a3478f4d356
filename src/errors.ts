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

export class BadRequestError extends KeywardError {
  constructor(message: string) {
    super('BAD_REQUEST', 400, message);
  }
}

/** 413 and 415 keep the BAD_REQUEST code: v1 SDKs know no other code for a malformed request. */
export class PayloadTooLargeError extends KeywardError {
  constructor(limitBytes: number) {
    super('BAD_REQUEST', 413, `body: must not be larger than ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaTypeError extends KeywardError {
  constructor() {
    super('BAD_REQUEST', 415, 'content-type: must be application/json');
  }
}

export class UnauthorizedError extends KeywardError {
  constructor(message = 'a valid root key is required: Authorization: Bearer <ROOT_KEY>') {
    super('UNAUTHORIZED', 401, message, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class InsufficientPermissionsError extends KeywardError {
  constructor(readonly permission: string) {
    super('INSUFFICIENT_PERMISSIONS', 403, `this root key lacks the permission ${permission}`);
  }
}

export class NotFoundError extends KeywardError {
  constructor(message: string) {
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

export class ConflictError extends KeywardError {
  constructor(message: string) {
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
