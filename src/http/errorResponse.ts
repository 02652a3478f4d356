import type { Logger } from 'pino';
import { InternalError, KeywardError, ServiceUnavailableError } from '../errors';
import { isRedisUnavailable } from '../redis/failures';

export interface ErrorResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: { error: { code: string; message: string; docs: string; requestId: string } };
}

/**
 * The one place where an error becomes the `{ error: { … } }` envelope, for the Koa app and the
 * data plane alike. A KeywardError says what the client may know; an unreachable Redis is a
 * retryable 503; anything else is a bug, logged here and answered without details.
 */
export function errorResponse(
  thrown: unknown,
  requestId: string,
  docsUrl: string,
  logger: Logger,
): ErrorResponse {
  let error: KeywardError;
  if (thrown instanceof KeywardError) error = thrown;
  else if (isRedisUnavailable(thrown)) {
    logger.warn({ requestId, err: thrown }, 'redis unavailable');
    error = new ServiceUnavailableError('a Redis this request needs is unavailable; retry later');
  } else {
    logger.error({ requestId, err: thrown }, 'unexpected error');
    error = new InternalError();
  }
  return {
    status: error.status,
    headers: error.headers,
    body: {
      error: {
        code: error.code,
        message: error.message,
        docs: `${docsUrl}#${error.code.toLowerCase()}`,
        requestId,
      },
    },
  };
}
