import type { ChainableCommander } from 'ioredis';
import type { RedisClient as Redis } from '../redis/clients';
import {
  DEFAULT_AUDIT_MAX_ENTRIES,
  type AuditEntry,
  type AuditRecord,
  type AuditTargetType,
} from '../domain/audit';
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

/** The audit argument of a write script (lua/includes/audit.lua): the entry and the cap. */
export function auditArgument(entry: AuditEntry, maxEntries: number): string {
  return JSON.stringify({ max: String(maxEntries), fields: auditFields(entry) });
}

/** The same entry appended inside a MULTI, for the writes that are not scripts. */
export function appendAudit(
  multi: ChainableCommander,
  ws: string,
  entry: AuditEntry,
  maxEntries: number,
): ChainableCommander {
  return multi.xadd(names.audit(ws), 'MAXLEN', String(maxEntries), '*', ...auditFields(entry));
}

/** A stream entry's `[id, [field, value, …]]` as a record; undefined when it is not an entry of ours. */
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

export interface AuditQuery {
  limit: number;
  /** An entry id: the page starts just before (older than) it. */
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
const BATCH = 500;

/** The workspace's audit stream, newest first. */
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
    const stream = names.audit(ws);
    const entries: AuditRecord[] = [];
    const budget = query.limit * SCAN_FACTOR;
    let scanned = 0;
    let end = query.cursor === undefined ? '+' : `(${query.cursor}`;
    const filtered = query.targetId !== undefined || query.operation !== undefined;
    for (;;) {
      const count = filtered ? Math.min(BATCH, budget - scanned) : query.limit - entries.length;
      const batch = await this.redis.xrevrange(stream, end, '-', 'COUNT', count);
      for (const [id, values] of batch) {
        scanned += 1;
        const record = auditFromStream(id, values);
        if (
          record &&
          (query.targetId === undefined || record.targetId === query.targetId) &&
          (query.operation === undefined || record.operation === query.operation)
        ) {
          entries.push(record);
        }
        end = `(${id}`;
        if (entries.length === query.limit) {
          return { entries, ...(await this.olderThan(stream, id)) };
        }
      }
      if (batch.length < count) return { entries };
      if (scanned >= budget) return { entries, cursor: end.slice(1) };
    }
  }

  private async olderThan(stream: string, id: string): Promise<{ cursor?: string }> {
    const next = await this.redis.xrevrange(stream, `(${id}`, '-', 'COUNT', 1);
    return next.length > 0 ? { cursor: id } : {};
  }
}
