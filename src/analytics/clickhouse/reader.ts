import {
  BadRequestError,
  ServiceUnavailableError,
  UnprocessableEntityError,
  type QueryLimit,
} from '../../errors';
import { ClickHouseError, ClickHouseUnreachable, type ClickHouseClient } from './client';
import { clickhouseUnavailable } from './ownReads';
import { QueryRefused, rewriteQuery, type QueryScope } from './sqlQuery';

/** What one analytics query may use (KEYWARD_CLICKHOUSE_QUERY_*, docs/limits.md). */
export interface QueryLimits {
  /** ClickHouse's max_execution_time, in seconds. */
  timeoutSeconds: number;
  maxRowsToRead: number;
  maxResultRows: number;
  maxResultBytes: number;
  maxMemoryBytes: number;
}

/** ClickHouse's codes of a limit a query ran into, as Unkey's 422 types name them. */
const LIMITS: ReadonlyMap<number, QueryLimit> = new Map([
  [158, 'query_rows_limit_exceeded'], // TOO_MANY_ROWS: max_rows_to_read
  [307, 'query_rows_limit_exceeded'], // TOO_MANY_BYTES: max_bytes_to_read
  [159, 'query_execution_timeout'], // TIMEOUT_EXCEEDED
  [160, 'query_execution_timeout'], // TOO_SLOW
  [241, 'query_memory_limit_exceeded'], // MEMORY_LIMIT_EXCEEDED
  [396, 'query_memory_limit_exceeded'], // TOO_MANY_ROWS_OR_BYTES: max_result_rows/bytes
]);

/** A setting the reader's profile refuses to change: `readonly=1` instead of 2 (decisions.md). */
const READONLY_SETTING = 164;

/**
 * Runs callers' analytics SQL (v2 analytics.getVerifications, getRatelimits) as the read-only
 * ClickHouse user of KEYWARD_CLICKHOUSE_READER_URL: the query is checked and rewritten to the
 * caller's rows (sqlQuery.ts), and runs under per-query limits. Every refusal is a KeywardError:
 * 400 for a query that is refused or that ClickHouse cannot run, 422 for a limit, 503 when
 * ClickHouse does not answer. Never a 500 for a caller's SQL.
 */
export class AnalyticsReader {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly limits: QueryLimits,
  ) {}

  async query(sql: string, scope: QueryScope): Promise<Record<string, unknown>[]> {
    let statement: string;
    try {
      statement = rewriteQuery(sql, scope);
    } catch (error) {
      if (error instanceof QueryRefused) {
        throw new BadRequestError([{ path: ['query'], message: error.message }], {
          kind: error.kind,
        });
      }
      throw error;
    }
    const limits = this.limits;
    try {
      return await this.client.rows(statement, {
        timeoutMs: limits.timeoutSeconds * 1000 + 5000,
        // Not `readonly`: 18.16 refuses to set it at all under a read-only profile; the reader's
        // profile has readonly=2 (writes and DDL refused, these limits settable).
        settings: {
          max_execution_time: limits.timeoutSeconds,
          max_rows_to_read: limits.maxRowsToRead,
          read_overflow_mode: 'throw',
          max_result_rows: limits.maxResultRows,
          max_result_bytes: limits.maxResultBytes,
          result_overflow_mode: 'throw',
          max_memory_usage: limits.maxMemoryBytes,
          output_format_json_quote_64bit_integers: 0,
          // The caller's WHERE (on time, mostly) reaches into the subquery of its rows, where the
          // primary key (workspace_id, time, …) can use it: 18.16 does not do so by default.
          enable_optimize_predicate_expression: 1,
        },
      });
    } catch (error) {
      if (error instanceof ClickHouseUnreachable) throw clickhouseUnavailable();
      if (!(error instanceof ClickHouseError)) throw error;
      const limit = LIMITS.get(error.code);
      if (limit) {
        throw new UnprocessableEntityError(
          limit,
          `${limitMessage(limit, limits)} (${clickhouseMessage(error, '')})`,
        );
      }
      if (error.code === READONLY_SETTING) {
        throw new ServiceUnavailableError(
          "the analytics reader's ClickHouse profile refuses per-query limits: give the user of KEYWARD_CLICKHOUSE_READER_URL a profile with readonly=2",
        );
      }
      throw new BadRequestError([{ path: ['query'], message: clickhouseMessage(error) }], {
        kind: 'analytics_query',
      });
    }
  }
}

function limitMessage(limit: QueryLimit, limits: QueryLimits): string {
  switch (limit) {
    case 'query_execution_timeout':
      return `the query ran longer than ${limits.timeoutSeconds} s: filter on time, or read a rollup`;
    case 'query_rows_limit_exceeded':
      return `the query would read more than ${limits.maxRowsToRead} rows: filter on time, or read a rollup`;
    case 'query_memory_limit_exceeded':
      return `the query's result exceeds ${limits.maxResultRows} rows or ${limits.maxResultBytes} bytes, or it needs more than ${limits.maxMemoryBytes} bytes of memory: aggregate, or add a LIMIT`;
  }
}

/** ClickHouse's sentence, without its code and stack: why the statement could not run. */
function clickhouseMessage(
  error: ClickHouseError,
  prefix = 'ClickHouse could not run the query: ',
): string {
  const match = /DB::Exception: (.*?)(?:, e\.what\(\) = .*)?$/s.exec(error.message);
  const text = (match?.[1] ?? error.message).trim().slice(0, 300);
  return `${prefix}${text}`;
}
