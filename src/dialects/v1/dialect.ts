import type { Dialect } from '../dialect';

/** v1's error envelope, for every failure whatever the route. */
export interface V1ErrorBody {
  error: { code: string; message: string; docs: string; requestId: string };
}

/**
 * Unkey's v1: an answer is the operation's result as it is, an error is
 * `{error: {code, message, docs, requestId}}` with the first invalid field in `message`.
 */
export const v1Dialect: Dialect = {
  name: 'v1',
  prefix: '/v1/',
  labelPrefix: '',
  allErrors: false,
  envelope: (body) => body,
  errorBody: (error, requestId, docsUrl): V1ErrorBody => ({
    error: {
      code: error.code,
      message: error.message,
      docs: `${docsUrl}#${error.code.toLowerCase()}`,
      requestId,
    },
  }),
};
