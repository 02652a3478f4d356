/** What an audit entry names as the thing a write changed. */
export type AuditTargetType =
  | 'api'
  | 'key'
  | 'identity'
  | 'permission'
  | 'role'
  | 'namespace'
  | 'override'
  | 'root_key'
  | 'webhook';

/** Who made a write at the command line, where there is no root key. Never an `rk_` id. */
export const OPERATOR = 'operator';

/**
 * One management write as the audit log records it: who made it, which operation, what it
 * changed and a summary of the change. The summary never holds a secret (no plaintext, no hash of
 * a key or root key). The time is the Redis clock's, taken by the stream entry's id (for an entry
 * relayed from an outbox, by the outbox entry's id, kept in a `time` field).
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
  /**
   * Unix ms of the write, on the Redis clock. An entry relayed from an audit outbox reaches the
   * stream a moment after its write, so its time may be earlier than an entry's before it.
   */
  time: number;
}

/** The most entries a workspace's stream keeps, unless KEYWARD_AUDIT_MAX_ENTRIES says otherwise. */
export const DEFAULT_AUDIT_MAX_ENTRIES = 100_000;
