import { randomBytes } from 'node:crypto';
import {
  ClickHouseError,
  ClickHouseUnreachable,
  literal,
  QUERY_ID_RUNNING,
  type ClickHouseClient,
} from './client';
import { PeriodicFlush } from '../../observability/periodicFlush';
import { batchBody } from './batchBody';
import { dropExpiredPartitions } from './retention';
import { BATCHES_TABLE, migrate } from './schema';

/** One key verification, as key_verifications_v1 holds it (Unkey's columns, plus ours). */
export interface VerificationRow {
  request_id: string;
  /** Unix ms. */
  time: number;
  workspace_id: string;
  /** The key's API (Unkey's key space). */
  key_space_id: string;
  identity_id: string;
  external_id: string;
  key_id: string;
  outcome: string;
  region: string;
  tags: readonly string[];
  spent_credits: number;
  batch_id: string;
  /** Only with KEYWARD_LOG_CLIENT_IP: a row without it reads '' (schema version 4). */
  client_ip?: string;
}

/** One standalone limit (ratelimits.limit), as ratelimits_v1 holds it. */
export interface RatelimitRow {
  request_id: string;
  time: number;
  workspace_id: string;
  namespace_id: string;
  identifier: string;
  passed: 0 | 1;
  region: string;
  batch_id: string;
}

/** A row as the sink holds it: its region and batch id are the batch's, written when it is sent. */
export type HeldVerification = Omit<VerificationRow, 'batch_id' | 'region'>;
export type HeldRatelimit = Omit<RatelimitRow, 'batch_id' | 'region'>;

export type SinkTable = 'key_verifications_v1' | 'ratelimits_v1';

/** Why rows were dropped: no room, ClickHouse refused them, or the node stopped first. */
export type DropReason = 'buffer_full' | 'rejected' | 'shutdown';

export interface SinkObserver {
  written?(table: SinkTable, rows: number): void;
  dropped?(table: SinkTable, reason: DropReason, rows: number): void;
  /** ok, failed (answered with an error), unanswered (landed or not), duplicate (it had landed). */
  insert?(result: 'ok' | 'failed' | 'unanswered' | 'duplicate'): void;
  /** Rate-limited by the sink: at most one warning per `WARN_EVERY_MS` and kind. */
  warn?(fields: object, message: string): void;
}

export interface SinkOptions {
  batchRows: number;
  flushMs: number;
  maxBufferedRows: number;
  rawRetentionDays: number;
  region: string;
  /** This process's name in its batch ids. */
  nodeId: string;
  /** An identity's externalId (from the node's cache), looked up when a batch is formed. */
  externalId?: (workspaceId: string, identityId: string) => Promise<string | undefined>;
  now?: () => number;
}

interface Batch {
  /** Also the insert's query_id, and what the ledger (keyward_batches_v1) records. */
  id: string;
  table: SinkTable;
  rows: (HeldVerification | HeldRatelimit)[];
  /** unsure: an insert went unanswered (or was refused); settled before it is sent again. */
  unsure: boolean;
  /** Answers that were errors: after MAX_REJECTIONS the rows are dropped. */
  rejections: number;
}

/** A batch ClickHouse refused this many times is dropped: its rows would block all others. */
const MAX_REJECTIONS = 5;
const WARN_EVERY_MS = 10_000;
const RETENTION_EVERY_MS = 3_600_000;

/**
 * Rows of verifications and standalone limits, batched to ClickHouse off the request path.
 * `verification` and `limit` only push onto an array (no I/O, no promise); a timer sends a batch
 * every `flushMs`, or sooner once `batchRows` are waiting. What is held (waiting or unsure) is
 * bounded by `maxBufferedRows`: a row that does not fit is dropped and counted.
 *
 * Exact through retries on ClickHouse 18.16 (whose MergeTree deduplicates inserts only when
 * replicated): every batch has an id, sent as the insert's query_id and in each row's batch_id,
 * and a materialized view records each landed batch in keyward_batches_v1. An insert that went
 * unanswered is settled before anything else is sent: while a query of its id still runs it
 * waits; then, if the ledger has the batch, it landed and is never sent again; otherwise it is
 * sent again under the same id (docs/decisions.md, "Analytics in ClickHouse").
 */
export class ClickHouseSink {
  private verifications: HeldVerification[] = [];
  private ratelimits: HeldRatelimit[] = [];
  private batches: Batch[] = [];
  private batchedRows = 0;
  /** Rows taken from the lists and not yet in a batch (formBatches' lookups). */
  private forming = 0;
  private seq = 0;
  private readonly prefix: string;
  private readonly flusher: PeriodicFlush;
  private retentionTimer: NodeJS.Timeout | undefined;
  private soon = false;
  private schemaReady = false;
  private readonly lastWarned = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    readonly client: ClickHouseClient,
    private readonly options: SinkOptions,
    private readonly observer: SinkObserver = {},
  ) {
    this.now = options.now ?? Date.now;
    // Unique across restarts of one node: a batch id is never reused for other rows.
    this.prefix = `kw-${options.nodeId}-${randomBytes(4).toString('hex')}`;
    this.flusher = new PeriodicFlush(() => this.flushOnce(), options.flushMs);
  }

  /** Rows held in memory: waiting for a batch, or in one not yet written. */
  get held(): number {
    return this.verifications.length + this.ratelimits.length + this.forming + this.batchedRows;
  }

  /** On the request path: the row is kept as it is (its external id filled in later). */
  verification(row: HeldVerification): void {
    if (this.held >= this.options.maxBufferedRows) {
      this.drop('key_verifications_v1', 'buffer_full', 1);
      return;
    }
    this.verifications.push(row);
    if (this.verifications.length >= this.options.batchRows) this.flushSoon();
  }

  limit(row: HeldRatelimit): void {
    if (this.held >= this.options.maxBufferedRows) {
      this.drop('ratelimits_v1', 'buffer_full', 1);
      return;
    }
    this.ratelimits.push(row);
    if (this.ratelimits.length >= this.options.batchRows) this.flushSoon();
  }

  /** Starts the timer; the schema is created or upgraded by the first flush. */
  start(): void {
    this.flusher.start();
  }

  /**
   * One flush: the schema when not yet known to be there, then every unsure batch settled,
   * then what waits sent. true when nothing is left in memory. One at a time.
   */
  flush(): Promise<boolean> {
    return this.flusher.run();
  }

  /**
   * Stops the timers and flushes until nothing is held or `deadlineMs` has passed. What is left
   * is dropped (counted, reason shutdown) and its number returned.
   */
  async stop(deadlineMs: number): Promise<number> {
    this.flusher.stop();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.retentionTimer = undefined;
    const until = this.now() + deadlineMs;
    while (this.held > 0 || this.flusher.busy) {
      // An insert may wait its whole deadline (KEYWARD_CLICKHOUSE_TIMEOUT_MS): the node's stop
      // waits no longer than its own.
      const left = until - this.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      const flushed = await Promise.race([
        this.flush(),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), left))),
      ]);
      clearTimeout(timer);
      if (flushed) break;
      if (this.now() >= until) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const left = this.held;
    if (left > 0) {
      for (const batch of this.batches) this.drop(batch.table, 'shutdown', batch.rows.length);
      this.drop('key_verifications_v1', 'shutdown', this.verifications.length);
      this.drop('ratelimits_v1', 'shutdown', this.ratelimits.length);
      this.batches = [];
      this.verifications = [];
      this.ratelimits = [];
      this.batchedRows = 0;
    }
    this.client.close();
    return left;
  }

  private flushSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      void this.flush();
    });
  }

  private async flushOnce(): Promise<boolean> {
    if (!(await this.ensureSchema())) return false;
    for (const batch of [...this.batches]) {
      if (batch.unsure && !(await this.settle(batch))) return false;
    }
    await this.formBatches();
    for (const batch of [...this.batches]) {
      if (!batch.unsure) await this.send(batch);
    }
    return this.held === 0;
  }

  private async ensureSchema(): Promise<boolean> {
    if (this.schemaReady) return true;
    try {
      await migrate(this.client);
      this.schemaReady = true;
    } catch (error) {
      this.warn('schema', { err: error }, 'ClickHouse analytics schema not ready; rows wait');
      return false;
    }
    void this.applyRetention();
    this.retentionTimer ??= setInterval(() => void this.applyRetention(), RETENTION_EVERY_MS);
    this.retentionTimer.unref();
    return true;
  }

  private async applyRetention(): Promise<void> {
    try {
      await dropExpiredPartitions(this.client, this.options.rawRetentionDays, this.now());
    } catch (error) {
      this.warn('retention', { err: error }, 'dropping expired ClickHouse partitions failed');
    }
  }

  /** What waits becomes batches of at most `batchRows`, each with its id and external ids. */
  private async formBatches(): Promise<void> {
    const take = (table: SinkTable, rows: (HeldVerification | HeldRatelimit)[]) => {
      for (let i = 0; i < rows.length; i += this.options.batchRows) {
        const id = `${this.prefix}-${++this.seq}`;
        const chunk =
          rows.length <= this.options.batchRows ? rows : rows.slice(i, i + this.options.batchRows);
        this.batches.push({ id, table, rows: chunk, unsure: false, rejections: 0 });
        this.batchedRows += chunk.length;
      }
    };
    const verifications = this.verifications;
    const ratelimits = this.ratelimits;
    this.verifications = [];
    this.ratelimits = [];
    // While their external ids are looked up the rows are in neither list: `held` counts them.
    this.forming = verifications.length + ratelimits.length;
    try {
      await this.resolveExternalIds(verifications);
    } finally {
      this.forming = 0;
      take('key_verifications_v1', verifications);
      take('ratelimits_v1', ratelimits);
    }
  }

  /**
   * Each identity looked up once per batch, the lookups side by side; the rows filled in after
   * them, without an await (or a joined workspace-identity string) per row.
   */
  private async resolveExternalIds(rows: HeldVerification[]): Promise<void> {
    const lookup = this.options.externalId;
    if (!lookup) return;
    const needed = rows.filter((row) => row.identity_id !== '' && row.external_id === '');
    // Per workspace, identity → its external id: '' when it has none or the lookup failed.
    const found = new Map<string, Map<string, string>>();
    const lookups: Promise<void>[] = [];
    for (const row of needed) {
      const identities = mapOf(found, row.workspace_id);
      if (identities.has(row.identity_id)) continue;
      identities.set(row.identity_id, '');
      lookups.push(
        lookup(row.workspace_id, row.identity_id).then(
          (externalId) => void identities.set(row.identity_id, externalId ?? ''),
          () => undefined,
        ),
      );
    }
    await Promise.all(lookups);
    for (const row of needed) {
      row.external_id = found.get(row.workspace_id)?.get(row.identity_id) ?? '';
    }
  }

  private async send(batch: Batch): Promise<void> {
    try {
      const { columns, body } = batchBody(batch.table, batch.rows, this.options.region, batch.id);
      await this.client.insertTabSeparated(batch.table, columns, body, { queryId: batch.id });
      this.observer.insert?.('ok');
      this.done(batch);
      this.observer.written?.(batch.table, batch.rows.length);
    } catch (error) {
      if (error instanceof ClickHouseError && error.code !== QUERY_ID_RUNNING) {
        // Refused. Usually nothing landed, but 18.16 writes the table before its views and
        // does not undo it when a view fails: settled like an unanswered one, through the ledger.
        this.observer.insert?.('failed');
        batch.rejections++;
        this.warn('insert', { err: error, batch: batch.id }, 'ClickHouse refused an insert');
        if (batch.rejections >= MAX_REJECTIONS) {
          this.done(batch);
          this.drop(batch.table, 'rejected', batch.rows.length);
          return;
        }
        batch.unsure = true;
        return;
      }
      // No answer (or the same id still running): it may have landed. Settled before resending.
      this.observer.insert?.('unanswered');
      batch.unsure = true;
      this.warn(
        'insert',
        { err: error instanceof Error ? error.message : String(error), batch: batch.id },
        'ClickHouse did not answer an insert; it will be checked before it is sent again',
      );
    }
  }

  /**
   * Whether an unanswered batch landed, asked once no query of its id runs any more: landed,
   * it is done; not, it is sent again. false while that cannot be known yet.
   */
  private async settle(batch: Batch): Promise<boolean> {
    try {
      const [running] = await this.client.rows<{ n: string }>(
        `SELECT count() AS n FROM system.processes WHERE query_id = ${literal(batch.id)}`,
      );
      if (Number(running?.n ?? 0) > 0) return false;
      const [landed] = await this.client.rows<{ n: string }>(
        `SELECT count() AS n FROM ${BATCHES_TABLE} WHERE batch_id = ${literal(batch.id)}`,
      );
      if (Number(landed?.n ?? 0) > 0) {
        this.observer.insert?.('duplicate');
        this.done(batch);
        this.observer.written?.(batch.table, batch.rows.length);
        return true;
      }
    } catch (error) {
      if (!(error instanceof ClickHouseUnreachable || error instanceof ClickHouseError))
        throw error;
      return false;
    }
    batch.unsure = false;
    await this.send(batch);
    return !batch.unsure;
  }

  private done(batch: Batch): void {
    const index = this.batches.indexOf(batch);
    if (index !== -1) {
      this.batches.splice(index, 1);
      this.batchedRows -= batch.rows.length;
    }
  }

  private drop(table: SinkTable, reason: DropReason, rows: number): void {
    if (rows === 0) return;
    this.observer.dropped?.(table, reason, rows);
    this.warn(
      `drop ${reason}`,
      { table, reason, rows },
      'analytics rows dropped (keyward_clickhouse_rows_dropped_total counts them all)',
    );
  }

  /** At most one warning per kind every WARN_EVERY_MS: an outage must not flood the log. */
  private warn(kind: string, fields: object, message: string): void {
    const now = this.now();
    const last = this.lastWarned.get(kind);
    if (last !== undefined && now - last < WARN_EVERY_MS) return;
    this.lastWarned.set(kind, now);
    this.observer.warn?.(fields, message);
  }
}

/** The map `outer` holds under `key`, made (empty) when it holds none. */
function mapOf<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let inner = outer.get(key);
  if (!inner) outer.set(key, (inner = new Map()));
  return inner;
}
