import { BadRequestError } from '../../errors';

/** v1's permission query: a permission, or `{ and: [...] }` / `{ or: [...] }` of queries. */
export type PermissionQuery = string | { and: unknown[] } | { or: unknown[] };

export const permissionQuerySchema = {
  anyOf: [
    { type: 'string', minLength: 1, maxLength: 256 },
    { type: 'object', required: ['and'], properties: { and: { type: 'array', maxItems: 100 } } },
    { type: 'object', required: ['or'], properties: { or: { type: 'array', maxItems: 100 } } },
  ],
} as const;

const MAX_DEPTH = 16;

/**
 * Evaluates v1's permission query against a key's permissions. keyward keys carry none yet, so a
 * named permission is never held; `and`/`or` still combine as logic says.
 */
export function satisfies(query: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) throw new BadRequestError('authorization.permissions: nested too deeply');
  if (typeof query === 'string') return false;
  if (query !== null && typeof query === 'object') {
    if ('and' in query && Array.isArray(query.and))
      return query.and.every((q) => satisfies(q, depth + 1));
    if ('or' in query && Array.isArray(query.or))
      return query.or.some((q) => satisfies(q, depth + 1));
  }
  throw new BadRequestError(
    'authorization.permissions: must be a permission or { and | or: [...] }',
  );
}
