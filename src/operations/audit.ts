import type { AuditEntry, AuditTargetType } from '../domain/audit';
import type { Caller } from './operation';

/**
 * The audit entry of a write an operation makes: who (the caller's root key), what (the
 * operation), the target and a summary. Summaries hold ids, names and the names of changed
 * fields, never a key, a root key or a hash of either, nor the values of `meta`.
 */
export function auditEntry(
  caller: Caller,
  operation: string,
  targetType: AuditTargetType,
  targetId: string,
  summary: Record<string, unknown> = {},
): AuditEntry {
  return {
    rootKeyId: caller.rootKey.id,
    operation,
    requestId: caller.requestId,
    targetType,
    targetId,
    summary,
  };
}

/** The fields an input sets, without those that name the target: a summary of an update. */
export function changedFields(input: object, naming: readonly string[]): string[] {
  return Object.entries(input)
    .filter(([field, value]) => value !== undefined && !naming.includes(field))
    .map(([field]) => field)
    .sort();
}
