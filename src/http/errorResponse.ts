import type { Logger } from 'pino';
import { InternalError, KeywardError, ServiceUnavailableError } from '../errors';
import { isRedisUnavailable } from '../redis/failures';
import { ReplicasUnconfirmedError } from '../redis/replicatedAcks';

/**
 * What a client may learn of a failure, whatever dialect writes it: a KeywardError as it is, an
 * unreachable Redis as a retryable 503, anything else (a bug, logged here) as a bare 500.
 */
export function clientError(thrown: unknown, requestId: string, logger: Logger): KeywardError {
  if (thrown instanceof KeywardError) return thrown;
  if (thrown instanceof ReplicasUnconfirmedError) {
    logger.warn({ requestId, err: thrown }, 'replicas unconfirmed');
    return new ServiceUnavailableError(
      `the primary applied this write, but ${thrown.acknowledged} of the ${thrown.required} replicas required confirmed it in time: it stands unless the primary fails over before they catch up; read it back before retrying`,
    );
  }
  if (isRedisUnavailable(thrown)) {
    logger.warn({ requestId, err: thrown }, 'redis unavailable');
    return new ServiceUnavailableError('a Redis this request needs is unavailable; retry later');
  }
  logger.error({ requestId, err: thrown }, 'unexpected error');
  return new InternalError();
}
