import {
  AnalyticsNotConfiguredError,
  BadRequestError,
  ConflictError,
  MalformedAuthorizationError,
  NotFoundError,
  pathText,
  UnprocessableEntityError,
  type KeywardError,
  type Resource,
} from '../../errors';

/**
 * An error as v2 writes it: `{meta: {requestId}, error: {title, detail, status, type, errors?}}`
 * (RFC 7807's fields). `type` is Unkey's own URI for the same problem, so a client that branches
 * on it keeps working; `errors` names each invalid field of a 400.
 */
export interface V2ErrorBody {
  meta: { requestId: string };
  error: {
    title: string;
    detail: string;
    status: number;
    type: string;
    errors?: { location: string; message: string }[];
  };
}

/** The error body as JSON Schema, for the OpenAPI document. */
export const V2_ERROR_SCHEMA = {
  type: 'object',
  required: ['meta', 'error'],
  properties: {
    meta: {
      type: 'object',
      required: ['requestId'],
      properties: { requestId: { type: 'string' } },
    },
    error: {
      type: 'object',
      required: ['title', 'detail', 'status', 'type'],
      properties: {
        title: { type: 'string' },
        detail: { type: 'string' },
        status: { type: 'integer' },
        type: { type: 'string' },
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['location', 'message'],
            properties: { location: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const UNKEY = 'https://unkey.com/docs/errors';

/** Unkey's name for each resource keyward names in a 404 or 409; absent: none of Unkey's. */
const UNKEY_RESOURCES: Readonly<Partial<Record<Resource, string>>> = {
  api: 'api',
  key: 'key',
  identity: 'identity',
  permission: 'permission',
  role: 'role',
  ratelimit_namespace: 'ratelimit_namespace',
  ratelimit_override: 'ratelimit_override',
  workspace: 'workspace',
};

function unkeyResource(error: KeywardError): string | undefined {
  if (!(error instanceof NotFoundError || error instanceof ConflictError)) return undefined;
  return error.resource === undefined ? undefined : UNKEY_RESOURCES[error.resource];
}

/** Unkey's type URI for a keyward error, so that clients branching on it see the same values. */
export function v2ErrorType(error: KeywardError): string {
  switch (error.code) {
    case 'BAD_REQUEST':
      if (error.status === 413) return `${UNKEY}/user/bad_request/request_body_too_large`;
      if (error instanceof MalformedAuthorizationError) {
        return `${UNKEY}/unkey/authentication/malformed`;
      }
      if (error instanceof BadRequestError && error.kind === 'permission_query') {
        return `${UNKEY}/user/bad_request/permissions_query_syntax_error`;
      }
      if (error instanceof BadRequestError && error.kind.startsWith('analytics_')) {
        return `${UNKEY}/user/bad_request/invalid_${error.kind}`;
      }
      return `${UNKEY}/unkey/application/invalid_input`;
    case 'UNAUTHORIZED':
      return `${UNKEY}/unkey/authentication/key_not_found`;
    case 'FORBIDDEN':
    case 'INSUFFICIENT_PERMISSIONS':
      return `${UNKEY}/unkey/authorization/insufficient_permissions`;
    case 'NOT_FOUND': {
      const resource = unkeyResource(error);
      return resource
        ? `${UNKEY}/unkey/data/${resource}_not_found`
        : `${UNKEY}/unkey/data/not_found`;
    }
    case 'CONFLICT': {
      const resource = unkeyResource(error);
      return resource
        ? `${UNKEY}/unkey/data/${resource}_already_exists`
        : `${UNKEY}/unkey/application/precondition_failed`;
    }
    case 'PRECONDITION_FAILED':
      if (error instanceof AnalyticsNotConfiguredError) {
        return `${UNKEY}/unkey/data/analytics_not_configured`;
      }
      return `${UNKEY}/unkey/application/precondition_failed`;
    case 'DELETE_PROTECTED':
      return `${UNKEY}/unkey/application/precondition_failed`;
    case 'UNPROCESSABLE_ENTITY':
      return error instanceof UnprocessableEntityError
        ? `${UNKEY}/user/unprocessable_entity/${error.limit}`
        : `${UNKEY}/unkey/application/invalid_input`;
    case 'METHOD_NOT_ALLOWED':
      // Unkey's router answers a wrong verb in plain text, with no problem type: its nearest
      // code is a request it cannot take as sent (docs/decisions.md).
      return `${UNKEY}/unkey/application/invalid_input`;
    case 'RATE_LIMITED':
      return `${UNKEY}/user/too_many_requests/workspace_rate_limited`;
    case 'SERVICE_UNAVAILABLE':
      return `${UNKEY}/unkey/application/service_unavailable`;
    default:
      return `${UNKEY}/unkey/application/unexpected_error`;
  }
}

/**
 * Each invalid field as v2 names it (`body.ratelimit.limit`, `body[1].identifier`); a rule over
 * several fields, stated in words, is about the body as a whole.
 */
function fieldErrors(error: BadRequestError): { location: string; message: string }[] {
  if (error.problems.length === 0) return [{ location: error.root, message: error.message }];
  return error.problems.map(({ path, message }) => {
    const text = pathText(path);
    return {
      location:
        text === ''
          ? error.root
          : text.startsWith('[')
            ? `${error.root}${text}`
            : `${error.root}.${text}`,
      message,
    };
  });
}

export function v2ErrorBody(error: KeywardError, requestId: string): V2ErrorBody {
  const body: V2ErrorBody = {
    meta: { requestId },
    error: {
      title: TITLES[error.status] ?? 'Error',
      detail: error.message,
      status: error.status,
      type: v2ErrorType(error),
    },
  };
  if (error instanceof BadRequestError && error.status === 400) {
    body.error.errors = fieldErrors(error);
  }
  return body;
}
