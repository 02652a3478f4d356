import { id, object, pageLimit } from './schemas';

/**
 * How an operation pages and searches a list it reads whole (permissions, roles: a workspace's
 * catalogue is one record). Both dialects get the same pages; v1 asks for none and gets it all.
 */

/** A listing's input: a page after `cursor` of at most `limit`, of the entries matching `search`. */
export interface ListingInput {
  cursor?: string;
  limit?: number;
  search?: string;
}

export const listingInput = object({
  cursor: id,
  limit: pageLimit,
  search: { type: 'string', maxLength: 256 },
});

/**
 * One page of a whole list. Ids lead with their creation millisecond, so id order is creation
 * order and the cursor, the last id of a page, finds the next page even when that entry has been
 * deleted since. Without a limit the page is all that follows the cursor.
 */
export function pageOf<T extends { id: string }>(
  items: readonly T[],
  cursor: string | undefined,
  limit: number | undefined,
): { items: T[]; next: string | undefined } {
  const after = cursor === undefined ? [...items] : items.filter((item) => item.id > cursor);
  if (limit === undefined) return { items: after, next: undefined };
  const page = after.slice(0, limit);
  return { items: page, next: after.length > limit ? page[page.length - 1]!.id : undefined };
}

/** The entries any of whose fields holds `search`, ignoring case; a blank search matches all. */
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

/** A listing's page of the whole list: searched first, then paged. */
export function listed<T extends { id: string }>(
  items: readonly T[],
  input: ListingInput,
  fields: (item: T) => readonly (string | undefined)[],
): { items: T[]; cursor?: string } {
  const page = pageOf(matching(items, input.search, fields), input.cursor, input.limit);
  return { items: page.items, ...(page.next !== undefined ? { cursor: page.next } : {}) };
}
