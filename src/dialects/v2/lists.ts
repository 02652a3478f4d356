import type { V2Body } from './route';

/**
 * How v2 pages a listing, and how it names a thing by "its id or its name" in one field, from
 * keyward's answers and inputs.
 */

/** v2's pagination from keyward's cursor, which is present exactly when more follow. */
export function v2Pagination(next: string | undefined): NonNullable<V2Body['pagination']> {
  return next === undefined ? { hasMore: false } : { cursor: next, hasMore: true };
}

/**
 * One page of a whole list (permissions, roles: keyward answers them whole, oldest first). Ids
 * lead with their creation millisecond, so id order is that order and the cursor, the last id
 * of a page, finds the next page even when that entry has been deleted since.
 */
export function pageOf<T extends { id: string }>(
  items: readonly T[],
  cursor: string | undefined,
  limit: number,
): { items: T[]; next: string | undefined } {
  const after = cursor === undefined ? [...items] : items.filter((item) => item.id > cursor);
  const page = after.slice(0, limit);
  return { items: page, next: after.length > limit ? page[page.length - 1]!.id : undefined };
}

/** v2's `search`: entries any of whose fields holds it, ignoring case; blank searches nothing. */
export function matching<T>(
  items: readonly T[],
  search: string | undefined,
  fields: (item: T) => readonly (string | undefined)[],
): readonly T[] {
  const wanted = search?.trim().toLowerCase();
  if (!wanted) return items;
  return items.filter((item) =>
    fields(item).some((field) => field?.toLowerCase().includes(wanted)),
  );
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
