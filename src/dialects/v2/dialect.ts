import {
  BadRequestError,
  MalformedAuthorizationError,
  UnauthorizedError,
  type KeywardError,
} from '../../errors';
import type { Dialect } from '../dialect';
import { v2ErrorBody } from './errors';

/**
 * Unkey's v2 tells a request without a usable Authorization header (400: none, `invalid_input`;
 * not `Bearer <key>`, `authentication/malformed`) from one whose key is unknown (401).
 */
function refine(error: KeywardError): KeywardError {
  if (!(error instanceof UnauthorizedError)) return error;
  switch (error.reason) {
    case 'missing':
      return new BadRequestError([{ path: ['Authorization'], message: 'is required' }], {
        root: 'header',
        message: 'the Authorization header is required: Authorization: Bearer <ROOT_KEY>',
      });
    case 'malformed':
      return new MalformedAuthorizationError('the Authorization header must be Bearer <ROOT_KEY>');
    default:
      return error;
  }
}

/** Unkey's v2: every answer in `{meta: {requestId}, …}`, every error RFC 7807's fields. */
export const v2Dialect: Dialect = {
  name: 'v2',
  prefix: '/v2/',
  labelPrefix: 'v2/',
  allErrors: true,
  envelope: (body, requestId) => ({ meta: { requestId }, ...body }),
  errorBody: (error, requestId) => v2ErrorBody(error, requestId),
  refine,
};
