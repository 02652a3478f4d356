import type { Dialect } from '../dialect';
import { v2ErrorBody } from './errors';

/** Unkey's v2: every answer in `{meta: {requestId}, …}`, every error RFC 7807's fields. */
export const v2Dialect: Dialect = {
  name: 'v2',
  prefix: '/v2/',
  labelPrefix: 'v2/',
  allErrors: true,
  envelope: (body, requestId) => ({ meta: { requestId }, ...body }),
  errorBody: (error, requestId) => v2ErrorBody(error, requestId),
};
