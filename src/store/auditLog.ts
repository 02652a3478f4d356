import type { RedisClient as Redis } from '../redis/clients';
import {
  DEFAULT_AUDIT_MAX_ENTRIES,
  type AuditEntry,
  type AuditRecord,
  type AuditTargetType,
} from '../domain/audit';
import { crc32 } from '../keys/crc32';
import { names } from './names';

/** The stream fields of an entry, in the order they are written. */
export function auditFields(entry: AuditEntry): string[] {
  return [
    'rootKeyId',
    entry.rootKeyId,
    'operation',
    entry.operation,
    'targetType',
    entry.targetType,
    'targetId',
    entry.targetId,
    'summary',
    JSON.stringify(entry.summary),
    'requestId',
    entry.requestId,
  ];
}

/**
 * A stream entry's `[id, [field, value, …]]` as a record (`id`: its public id, auditEntryId);
 * undefined when it is not an entry of ours.
 */
export function auditFromStream(id: string, values: readonly string[]): AuditRecord | undefined {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < values.length; i += 2)
    fields.set(values[i] as string, values[i + 1] as string);
  const operation = fields.get('operation');
  const targetId = fields.get('targetId');
  if (operation === undefined || targetId === undefined) return undefined;
  let summary: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(fields.get('summary') ?? '{}');
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      summary = parsed as Record<string, unknown>;
    }
  } catch {
    // A summary that is not JSON reads as an empty one.
  }
  return {
    id,
    // A relayed entry carries its write's time; the id is the relay's.
    time: Number(fields.get('time') ?? id.split('-')[0]),
    rootKeyId: fields.get('rootKeyId') ?? '',
    operation,
    requestId: fields.get('requestId') ?? '',
    targetType: (fields.get('targetType') ?? '') as AuditTargetType,
    targetId,
    summary,
  };
}

/**
 * The shards of a workspace's log that relayed entries spread over (names.auditShard), with the
 * workspace's own stream beside them: 16 like an API's listing, so a busy workspace's log is
 * spread over 16 slot sixteenths.
 */
export const AUDIT_SHARDS = 16;

/**
 * The shard an outbox entry is relayed to: by the id of its target (a key, an identity, an API…),
 * so that one target's entries keep their order in one stream, and a relay run again finds its
 * marker there.
 */
export function auditShard(targetId: string): number {
  return crc32(targetId) % AUDIT_SHARDS;
}

/** What one shard keeps: a sixteenth of the log's cap, so the shards together keep the cap. */
export function auditShardCap(maxEntries: number): number {
  return Math.ceil(maxEntries / AUDIT_SHARDS);
}

/**
 * An entry's place in the merged log. Entries are ordered newest first by stream id, then by
 * stream (the workspace's own stream, rank 16, before shard 15 … shard 0), so that two entries
 * of one millisecond in two streams still have one order and a cursor between them.
 */
interface Position {
  ms: bigint;
  seq: bigint;
  rank: number;
}

const WORKSPACE_RANK = AUDIT_SHARDS;

/** A workspace's audit streams, by rank: shard 0 … 15, then its own. */
export function auditStreams(ws: string): string[] {
  return [
    ...Array.from({ length: AUDIT_SHARDS }, (_, shard) => names.auditShard(ws, shard)),
    names.audit(ws),
  ];
}

function compare(a: Position, b: Position): number {
  if (a.ms !== b.ms) return a.ms > b.ms ? 1 : -1;
  if (a.seq !== b.seq) return a.seq > b.seq ? 1 : -1;
  return a.rank - b.rank;
}

function position(streamId: string, rank: number): Position {
  const [ms, seq] = streamId.split('-');
  return { ms: BigInt(ms ?? 0), seq: BigInt(seq ?? 0), rank };
}

/**
 * An entry's public id: its stream id, with `-<shard>` after it for an entry of a shard (the
 * workspace's own stream keeps the bare stream ids the previous release gave, so its cursors
 * still work). auditLogs.list validates the form; a cursor names the last entry of a page.
 */
export function auditEntryId(streamId: string, rank: number): string {
  return rank === WORKSPACE_RANK ? streamId : `${streamId}-${rank}`;
}

/** The largest part of a stream id Redis takes (an unsigned 64-bit integer). */
const MAX_ID_PART = 2n ** 64n - 1n;

/**
 * A cursor's position. Its parts may be larger than any id Redis has (the schema allows 20
 * digits): such a cursor stands before every entry, so it is clamped, never sent as it is.
 */
function cursorPosition(cursor: string): Position {
  const [ms, seq, shard] = cursor.split('-');
  const clamp = (part: string | undefined) => {
    const value = BigInt(part ?? 0);
    return value > MAX_ID_PART ? MAX_ID_PART : value;
  };
  return {
    ms: clamp(ms),
    seq: clamp(seq),
    rank: shard === undefined ? WORKSPACE_RANK : Number(shard),
  };
}

export interface AuditQuery {
  limit: number;
  /** An entry id: the page starts just after it (older). */
  cursor?: string;
  targetId?: string;
  operation?: string;
}

export interface AuditPage {
  entries: AuditRecord[];
  /** Where the next (older) page starts; absent at the end of the log. */
  cursor?: string;
}

/** A filtered page reads at most this many entries per entry asked for before it answers. */
const SCAN_FACTOR = 20;
/** The most entries one read of one stream takes while a filtered page looks for matches. */
const FILTERED_BATCH = 100;
/** The fewest entries one read of one stream takes: most pages then need one read per stream. */
const MIN_BATCH = 10;

/** One stream of the log, read newest first a batch at a time. */
class StreamCursor {
  private buffer: [string, string[]][] = [];
  private exhausted = false;

  constructor(
    private readonly redis: Redis,
    readonly stream: string,
    readonly rank: number,
    /** The newest id to read next: `+`, an id (inclusive) or `(id` (exclusive). */
    private end: string,
  ) {}

  get head(): [string, string[]] | undefined {
    return this.buffer[0];
  }

  get drained(): boolean {
    return this.exhausted && this.buffer.length === 0;
  }

  /** Reads the next batch when the buffer is empty and the stream may hold more. */
  async fill(count: number): Promise<void> {
    if (this.buffer.length > 0 || this.exhausted) return;
    const batch = await this.redis.xrevrange(this.stream, this.end, '-', 'COUNT', count);
    this.buffer = batch;
    if (batch.length < count) this.exhausted = true;
    const last = batch[batch.length - 1];
    if (last) this.end = `(${last[0]}`;
  }

  take(): [string, string[]] | undefined {
    return this.buffer.shift();
  }
}

/**
 * A workspace's audit log, newest first: its own stream and its 16 shards, merged by entry id.
 * Ids are each master's clock, so entries written within a few milliseconds of each other on two
 * masters may be listed in either order; each stream's own order is kept.
 */
export class AuditLogStore {
  constructor(
    private readonly redis: Redis,
    readonly maxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {}

  /**
   * A page, newest first. With filters it reads batches until the page is full or it has read
   * `SCAN_FACTOR × limit` entries; a page may then hold fewer entries than asked for while a
   * cursor says there is more to read.
   */
  async list(ws: string, query: AuditQuery): Promise<AuditPage> {
    const after = query.cursor === undefined ? undefined : cursorPosition(query.cursor);
    const cursors = auditStreams(ws).map((stream, rank) => {
      // Strictly after the cursor, newest first: an equal stream id comes after it only in a
      // stream ranked below the cursor's.
      const bound =
        after === undefined
          ? '+'
          : `${rank < after.rank ? '' : '('}${after.ms.toString()}-${after.seq.toString()}`;
      return new StreamCursor(this.redis, stream, rank, bound);
    });
    const filtered = query.targetId !== undefined || query.operation !== undefined;
    const budget = query.limit * SCAN_FACTOR;
    const entries: AuditRecord[] = [];
    let scanned = 0;
    let last: string | undefined;
    for (;;) {
      const count = filtered
        ? Math.min(FILTERED_BATCH, budget - scanned)
        : Math.max(MIN_BATCH, Math.ceil((query.limit - entries.length) / 4));
      await Promise.all(cursors.map((cursor) => cursor.fill(count)));
      let newest: StreamCursor | undefined;
      let newestAt: Position | undefined;
      for (const cursor of cursors) {
        const head = cursor.head;
        if (!head) continue;
        const at = position(head[0], cursor.rank);
        if (newestAt === undefined || compare(at, newestAt) > 0) [newest, newestAt] = [cursor, at];
      }
      if (!newest) return { entries };
      const [streamId, values] = newest.take() as [string, string[]];
      const id = auditEntryId(streamId, newest.rank);
      last = id;
      scanned += 1;
      const record = auditFromStream(id, values);
      if (
        record &&
        (query.targetId === undefined || record.targetId === query.targetId) &&
        (query.operation === undefined || record.operation === query.operation)
      ) {
        entries.push(record);
      }
      if (entries.length === query.limit) {
        return { entries, ...((await this.anyLeft(cursors)) ? { cursor: id } : {}) };
      }
      if (filtered && scanned >= budget) {
        return { entries, ...((await this.anyLeft(cursors)) ? { cursor: last } : {}) };
      }
    }
  }

  private async anyLeft(cursors: readonly StreamCursor[]): Promise<boolean> {
    await Promise.all(cursors.map((cursor) => cursor.fill(1)));
    return cursors.some((cursor) => !cursor.drained);
  }
}
