import type { AuditRecord } from '../../domain/audit';
import { defineOperation } from '../operation';
import { id, integer, object, pageLimit, string } from '../schemas';

export interface ListAuditLogsInput {
  limit?: number;
  cursor?: string;
  targetId?: string;
  operation?: string;
}

const entryOutput = object(
  {
    id: string,
    time: integer,
    rootKeyId: string,
    operation: string,
    requestId: string,
    target: object({ type: string, id: string }, ['type', 'id']),
    summary: { type: 'object' },
  },
  ['id', 'time', 'rootKeyId', 'operation', 'requestId', 'target', 'summary'],
);

export interface AuditLogView {
  id: string;
  time: number;
  rootKeyId: string;
  operation: string;
  requestId: string;
  target: { type: string; id: string };
  summary: Readonly<Record<string, unknown>>;
}

function auditLogView(record: AuditRecord): AuditLogView {
  return {
    id: record.id,
    time: record.time,
    rootKeyId: record.rootKeyId,
    operation: record.operation,
    requestId: record.requestId,
    target: { type: record.targetType, id: record.targetId },
    summary: record.summary,
  };
}

/**
 * keyward's own: the workspace's audit log, newest first. The cursor is an entry id (a stream id,
 * with `-<shard>` after it for an entry relayed to a shard of the log); a filtered
 * page may come back short (or empty) with a cursor when the entries it read did not match.
 */
export const listAuditLogs = defineOperation({
  name: 'auditLogs.list',
  method: 'GET',
  plane: 'management',
  summary:
    "The workspace's audit log, newest first: who (root key), what (operation), the target, a summary, the request id and the time of every management write.",
  permission: { resource: 'audit', action: 'read', scope: 'any' },
  input: object({
    limit: pageLimit,
    cursor: { type: 'string', pattern: '^[0-9]{1,20}-[0-9]{1,20}(-(1[0-5]|[0-9]))?$' },
    targetId: id,
    operation: { type: 'string', pattern: '^[A-Za-z]{1,32}\\.[A-Za-z]{1,32}$' },
  }),
  output: object({ entries: { type: 'array', items: entryOutput }, cursor: string }, ['entries']),
  uses: ['auditLog'],
  async handle(
    deps,
    caller,
    input: ListAuditLogsInput,
  ): Promise<{ entries: AuditLogView[]; cursor?: string }> {
    const page = await deps.auditLog.list(caller.rootKey.workspaceId, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
      ...(input.targetId !== undefined ? { targetId: input.targetId } : {}),
      ...(input.operation !== undefined ? { operation: input.operation } : {}),
    });
    return {
      entries: page.entries.map(auditLogView),
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    };
  },
});
