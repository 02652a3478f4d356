/** What an audit entry names as the thing a write changed. */
export type AuditTargetType =
  'api' | 'key' | 'identity' | 'permission' | 'role' | 'namespace' | 'override' | 'root_key';

/**
 * One management write as the audit log records it: who made it, which operation, what it
 * changed and a summary of the change. The summary never holds a secret (no plaintext, no hash of
 * a key or root key). The time is the Redis clock's, taken by the stream entry's id.
 */
export interface AuditEntry {
  /** The root key that made the write; `operator` for the command line. */
  rootKeyId: string;
  /** The operation, `keys.createKey`. */
  operation: string;
  requestId: string;
  targetType: AuditTargetType;
  targetId: string;
  /** What changed: field names and values that are not secret. */
  summary: Readonly<Record<string, unknown>>;
}

/** An entry as read back from the stream. */
export interface AuditRecord extends AuditEntry {
  /** The stream entry's id (`<ms>-<seq>`): the cursor of auditLogs.list. */
  id: string;
  /** Unix ms, on the Redis clock. */
  time: number;
}

/** The most entries a workspace's stream keeps, unless KEYWARD_AUDIT_MAX_ENTRIES says otherwise. */
export const DEFAULT_AUDIT_MAX_ENTRIES = 100_000;
