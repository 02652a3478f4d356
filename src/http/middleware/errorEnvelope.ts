import type { Next } from 'koa';
import type { Logger } from 'pino';
import { InternalError, KeywardError, ServiceUnavailableError } from '../../errors';
import { isRedisUnavailable } from '../../redis/failures';
import type { KeywardContext } from '../context';

/** The one place where an error becomes the `{ error: { … } }` envelope. */
export function errorEnvelope(logger: Logger, docsUrl: string) {
  return async function errorEnvelopeMiddleware(ctx: KeywardContext, next: Next): Promise<void> {
    try {
      await next();
    } catch (thrown) {
      let error: KeywardError;
      if (thrown instanceof KeywardError) error = thrown;
      else if (isRedisUnavailable(thrown)) {
        logger.warn({ requestId: ctx.state.requestId, err: thrown }, 'redis unavailable');
        error = new ServiceUnavailableError(
          'a Redis this request needs is unavailable; retry later',
        );
      } else {
        logger.error({ requestId: ctx.state.requestId, err: thrown }, 'unexpected error');
        error = new InternalError();
      }
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      ctx.body = {
        error: {
          code: error.code,
          message: error.message,
          docs: `${docsUrl}#${error.code.toLowerCase()}`,
          requestId: ctx.state.requestId,
        },
      };
    }
  };
}
