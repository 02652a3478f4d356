import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ClickHouseTarget } from './url';

/**
 * An error ClickHouse answered: the statement reached the server and was refused there, so it
 * did nothing (an INSERT that answers an error wrote no row).
 */
export class ClickHouseError extends Error {
  constructor(
    message: string,
    /** ClickHouse's error code (`Code: 60` → 60); 0 when the answer named none. */
    readonly code: number,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * No answer: the connection failed or the deadline passed. Whether the statement ran is
 * unknown (an INSERT may have landed).
 */
export class ClickHouseUnreachable extends Error {}

/** ClickHouse's code for a second query sent under the id of one still running. */
export const QUERY_ID_RUNNING = 216;

export interface QueryOptions {
  /** ClickHouse's query_id: two queries with one id never run at once. */
  queryId?: string;
  /** The request's deadline; the client's default otherwise. */
  timeoutMs?: number;
  /** Without a database (CREATE DATABASE before the database exists). */
  noDatabase?: boolean;
  /**
   * ClickHouse settings of this query, sent as URL parameters (max_execution_time,
   * max_rows_to_read, max_result_rows, readonly…): what a reader of user SQL bounds it with.
   */
  settings?: Readonly<Record<string, string | number>>;
}

/** The most of an error answer kept in the message. */
const ERROR_TEXT = 500;

/**
 * A minimal client of ClickHouse's HTTP interface (node:http, keep-alive): statements in the
 * body, credentials in a Basic header, rows read in JSONEachRow, and written in JSONEachRow
 * (`insert`) or, the sink's batches, in TabSeparated (`insertTabSeparated`). Nothing here
 * retries; the caller decides what an unanswered INSERT means.
 */
export class ClickHouseClient {
  private readonly agent: HttpAgent;
  private readonly authorization: string;
  private readonly secure: boolean;

  constructor(
    readonly target: ClickHouseTarget,
    private readonly timeoutMs: number,
  ) {
    this.secure = target.origin.startsWith('https:');
    // ClickHouse closes an idle keep-alive connection after 10 s (keep_alive_timeout, 3 s in
    // newer releases): reusing one it is closing would fail a statement that never reached it.
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 4, timeout: 2_500 };
    this.agent = this.secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.authorization = `Basic ${Buffer.from(`${target.user}:${target.password}`).toString('base64')}`;
  }

  /** Runs `sql` (DDL or a SELECT with its FORMAT); resolves with the answer's body. */
  async exec(sql: string, options: QueryOptions = {}): Promise<string> {
    return this.send({ query: undefined, body: sql }, options);
  }

  /** A SELECT's rows, as JSONEachRow objects (64-bit integers come as strings). */
  async rows<T = Record<string, unknown>>(sql: string, options: QueryOptions = {}): Promise<T[]> {
    const text = await this.exec(`${sql} FORMAT JSONEachRow`, options);
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as T);
  }

  /** Inserts `rows` into `table` in one request (one block: it lands whole or not at all). */
  async insert(table: string, rows: readonly object[], options: QueryOptions = {}): Promise<void> {
    let body = '';
    for (const row of rows) body += `${JSON.stringify(row)}\n`;
    await this.send({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, body }, options);
  }

  /**
   * Inserts rows already in TabSeparated (`body`, the `columns` in order) into `table` in one
   * request: the sink's batches (batchBody.ts), without a string or JSON per row.
   */
  async insertTabSeparated(
    table: string,
    columns: readonly string[],
    body: Buffer,
    options: QueryOptions = {},
  ): Promise<void> {
    const query = `INSERT INTO ${table} (${columns.join(', ')}) FORMAT TabSeparated`;
    await this.send({ query, body }, options);
  }

  close(): void {
    this.agent.destroy();
  }

  private send(
    statement: { query: string | undefined; body: string | Buffer },
    options: QueryOptions,
  ): Promise<string> {
    const params = new URLSearchParams();
    if (!options.noDatabase) params.set('database', this.target.database);
    // The answer's status then tells an error that arose after the first rows were sent.
    params.set('wait_end_of_query', '1');
    if (options.queryId !== undefined) params.set('query_id', options.queryId);
    for (const [name, value] of Object.entries(options.settings ?? {})) {
      params.set(name, String(value));
    }
    if (statement.query !== undefined) params.set('query', statement.query);
    const url = new URL(`/?${params.toString()}`, this.target.origin);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const body = typeof statement.body === 'string' ? Buffer.from(statement.body) : statement.body;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.destroy();
        reject(error);
      };
      const request = (this.secure ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: this.agent,
        headers: {
          Authorization: this.authorization,
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': body.length,
        },
      });
      const deadline = setTimeout(
        () =>
          fail(
            new ClickHouseUnreachable(`no answer from ${this.target.display} in ${timeoutMs} ms`),
          ),
        timeoutMs,
      );
      request.on('error', (error) =>
        fail(new ClickHouseUnreachable(`${this.target.display}: ${error.message}`)),
      );
      request.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) =>
          fail(new ClickHouseUnreachable(`${this.target.display}: ${error.message}`)),
        );
        response.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status === 200) return resolve(text);
          const code = /Code: (\d+)/.exec(text);
          reject(
            new ClickHouseError(
              `ClickHouse answered ${status}: ${text.trim().slice(0, ERROR_TEXT)}`,
              code ? Number(code[1]) : 0,
              status,
            ),
          );
        });
      });
      request.end(body);
    });
  }
}

/** A string as a ClickHouse literal: quoted, with backslashes and quotes escaped. */
export function literal(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
