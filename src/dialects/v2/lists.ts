import type { V2Body } from './route';

/** How v2 pages a listing, and how it names a thing by "its id or its name" in one field. */

/** v2's pagination from keyward's cursor, which is present exactly when more follow. */
export function v2Pagination(next: string | undefined): NonNullable<V2Body['pagination']> {
  return next === undefined ? { hasMore: false } : { cursor: next, hasMore: true };
}

type IdKind = 'id' | 'perm' | 'role' | 'rlns';

const ID_FORMS = Object.fromEntries(
  (['id', 'perm', 'role', 'rlns'] as const).map((prefix) => [
    prefix,
    new RegExp(`^${prefix}_[1-9A-HJ-NP-Za-km-z]{22}$`),
  ]),
) as Record<IdKind, RegExp>;

/**
 * Whether v2's one field naming "an id or a name" holds a keyward id of this kind: the prefix and
 * the 22 base58 characters every generated id has. Anything else is taken as the name.
 */
export function isKeywardId(prefix: IdKind, text: string): boolean {
  return ID_FORMS[prefix].test(text);
}
