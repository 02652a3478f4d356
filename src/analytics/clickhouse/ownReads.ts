import { ServiceUnavailableError } from '../../errors';
import { ClickHouseUnreachable, type ClickHouseClient } from './client';

/** What a reader of ClickHouse answers when it does not answer: a retryable 503. */
export function clickhouseUnavailable(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'the analytics store (ClickHouse) did not answer; retry later',
  );
}

/**
 * The rows of one of keyward's own queries (usage counts, the verification log): a ClickHouse
 * that does not answer is a 503; any other error is keyward's query's, and is thrown as it is.
 */
export async function ownRows<T>(client: ClickHouseClient, sql: string): Promise<T[]> {
  try {
    return await client.rows<T>(sql);
  } catch (error) {
    if (error instanceof ClickHouseUnreachable) throw clickhouseUnavailable();
    throw error;
  }
}
