import type { ErrorCode } from '../errors';
import type { PermissionRule } from '../operations/operation';
import { V2_ERROR_SCHEMA } from '../dialects/v2/errors';
import { v2Routes } from '../dialects/v2/registry';
import { v1Routes } from '../dialects/v1/routes';

/** Every error code with its status and when it happens: the envelope's `docs` links here. */
export const ERROR_CODES: Readonly<Record<ErrorCode, { status: number; when: string }>> = {
  BAD_REQUEST: {
    status: 400,
    when: 'The input is malformed: the message names the field (also 413 and 415).',
  },
  UNAUTHORIZED: {
    status: 401,
    when: 'No root key, another scheme, or an unknown or revoked root key.',
  },
  FORBIDDEN: {
    status: 403,
    when: 'Not used as an error today; a verification answers it as a verdict.',
  },
  INSUFFICIENT_PERMISSIONS: {
    status: 403,
    when: 'The root key lacks the permission the message names.',
  },
  DISABLED: {
    status: 403,
    when: 'Not used as an error today; a verification answers it as a verdict.',
  },
  EXPIRED: {
    status: 403,
    when: 'Not used as an error today; a verification answers it as a verdict.',
  },
  USAGE_EXCEEDED: {
    status: 403,
    when: 'Not used as an error today; a verification answers it as a verdict.',
  },
  NOT_FOUND: { status: 404, when: 'No such operation, or no such resource in this workspace.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    when: 'The operation exists with another HTTP method (see Allow).',
  },
  CONFLICT: { status: 409, when: 'An imported key has a hash that exists already.' },
  PRECONDITION_FAILED: { status: 412, when: 'The key is not in a state the operation needs.' },
  DELETE_PROTECTED: { status: 412, when: 'Reserved: no resource is delete-protected today.' },
  UNPROCESSABLE_ENTITY: {
    status: 422,
    when: 'An analytics query ran into a limit: time, rows read or result size.',
  },
  RATE_LIMITED: {
    status: 429,
    when: 'Too many management requests for this root key (see Retry-After).',
  },
  INTERNAL_SERVER_ERROR: { status: 500, when: 'A bug: quote the requestId to the operator.' },
  SERVICE_UNAVAILABLE: {
    status: 503,
    when: 'A Redis the request needs is unreachable; retry later.',
  },
};

const ERROR_STATUSES = [...new Set(Object.values(ERROR_CODES).map((c) => c.status))].sort();

const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'docs', 'requestId'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        message: { type: 'string' },
        docs: { type: 'string' },
        requestId: { type: 'string' },
      },
    },
  },
};

/** JSON Schema keywords OpenAPI 3.1 takes as they are; strip the `as const` readonly-ness only. */
function plain(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** How the reference states a declared permission. */
function permissionText(rule: PermissionRule<never>): string {
  const { resource, action } = rule;
  switch (rule.scope) {
    case 'any':
      return `\`${resource}.*.${action}\``;
    case 'input':
      return `\`${resource}.*.${action}\`, or \`${resource}.<id>.${action}\` for each id the input names`;
    case 'resource':
      return `\`${resource}.*.${action}\`, or \`${resource}.<id>.${action}\` for the ${resource} of the resource it acts on`;
  }
}

/** A liveness check: no root key, 200 while every Redis the node needs answers, else 503. */
function livenessPath(
  operationId: string,
  tag: string,
  downSchema: object,
): Record<string, unknown> {
  return {
    get: {
      operationId,
      tags: [tag],
      security: [],
      responses: {
        '200': {
          description: 'Every Redis this node needs answers',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '503': {
          description: 'A Redis this node needs is down',
          content: { 'application/json': { schema: downSchema } },
        },
      },
    },
  };
}

/** A v2 route: a POST whose 200 wraps the data as `{meta, data}`, errors in v2's shape. */
function v2Path(route: (typeof v2Routes)[number]): Record<string, unknown> {
  const operation = route.operation;
  const statuses = [...ERROR_STATUSES.filter((status) => status !== 405)];
  return {
    [`/v2/${route.name}`]: {
      post: {
        operationId: `v2.${route.name}`,
        summary: operation.summary,
        description:
          `Unkey's v2 shape of ${operation.name}: the same operation as its v1 route. ` +
          `Needs the root-key permission ${permissionText(operation.permission)}.`,
        tags: [`v2 ${route.name.split('.')[0]}`],
        security: [{ rootKey: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: plain(route.input) } },
        },
        responses: {
          '200': {
            description: 'OK',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['meta', 'data'],
                  properties: {
                    meta: V2_ERROR_SCHEMA.properties.meta,
                    data: plain(route.output),
                    pagination: {
                      type: 'object',
                      required: ['hasMore'],
                      properties: { cursor: { type: 'string' }, hasMore: { type: 'boolean' } },
                    },
                  },
                },
              },
            },
          },
          ...Object.fromEntries(
            statuses.map((status) => [
              String(status),
              {
                description: 'v2 error',
                content: {
                  'application/json': { schema: { $ref: '#/components/schemas/V2Error' } },
                },
              },
            ]),
          ),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document, built from the very schemas that validate requests, so the two can
 * never drift.
 */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const v1Route of v1Routes) {
    const route = v1Route.operation;
    const schema = plain(v1Route.input);
    const errors = Object.fromEntries(
      ERROR_STATUSES.map((status) => [
        String(status),
        {
          description: Object.entries(ERROR_CODES)
            .filter(([, c]) => c.status === status)
            .map(([code]) => code)
            .join(', '),
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
          },
        },
      ]),
    );
    const operation: Record<string, unknown> = {
      operationId: route.name,
      summary: route.summary,
      description: `Needs the root-key permission ${permissionText(route.permission)}.`,
      tags: [route.name.split('.')[0]],
      security: [{ rootKey: [] }],
      'x-keyward-permission': plain(route.permission),
      responses: {
        '200': {
          description: 'OK',
          content: { 'application/json': { schema: plain(v1Route.output) } },
        },
        ...errors,
      },
    };
    if (route.method === 'GET') {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = new Set((schema.required ?? []) as string[]);
      operation.parameters = Object.entries(properties).map(([name, property]) => ({
        name,
        in: 'query',
        required: required.has(name),
        schema: property,
      }));
    } else {
      operation.requestBody = { required: true, content: { 'application/json': { schema } } };
    }
    paths[`/v1/${v1Route.name}`] = { [route.method.toLowerCase()]: operation };
  }
  for (const route of v2Routes) Object.assign(paths, v2Path(route));
  paths['/v2/liveness'] = livenessPath('v2.liveness', 'v2 liveness', {
    $ref: '#/components/schemas/V2Error',
  });
  paths['/v1/liveness'] = livenessPath('liveness', 'liveness', { type: 'object' });
  return {
    openapi: '3.1.0',
    info: {
      title: 'keyward',
      version,
      description:
        'API keys and per-key token-bucket rate limits, speaking the Unkey v1 wire format ' +
        '(`/v1/…`) and the v2 one (`/v2/…`) over the same operations.',
    },
    paths,
    components: {
      securitySchemes: {
        rootKey: { type: 'http', scheme: 'bearer', description: 'A root key (kwroot_…)' },
      },
      schemas: { ErrorEnvelope: errorEnvelope, V2Error: V2_ERROR_SCHEMA },
    },
  };
}
