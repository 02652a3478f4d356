import type { AuditEntry, AuditTargetType } from '../domain/audit';
import type { Caller, JsonSchema } from './operation';

/**
 * The audit entry of a write an operation makes: who (the caller's root key), what (the
 * operation), the target and a summary. Summaries hold ids, names and the names of changed
 * fields the operation declares (`changedFields`), never a field it does not know, a key, a root
 * key or a hash of either, nor the values of `meta`.
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

/**
 * The fields an input sets, without those that name the target: a summary of an update. Only
 * fields the operation declares (its input schema's properties) are listed: v1 ignores any other
 * a body holds, so none reaches an entry, and an entry stays as small as the operation's own
 * fields, whatever the size of the body.
 */
export function changedFields(
  schema: JsonSchema,
  input: object,
  naming: readonly string[],
): string[] {
  const declared = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const set = input as Readonly<Record<string, unknown>>;
  return declared
    .filter(
      (field) => !naming.includes(field) && Object.hasOwn(set, field) && set[field] !== undefined,
    )
    .sort();
}
