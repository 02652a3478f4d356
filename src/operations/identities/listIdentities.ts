import type { IdentityStore } from '../../store/identityStore';
import { defineOperation } from '../operation';
import { id, object, page, pageLimit, text } from '../schemas';
import { listedIdentityOutput } from './schemas';
import { poolStanding } from './credits';
import { identityView, type IdentityView } from './views';

export interface IdentitiesPage {
  identities: IdentityView[];
  cursor?: string;
  total: number;
}

interface ListIdentitiesInput {
  environment?: string;
  limit?: number;
  cursor?: string;
  search?: string;
}

/**
 * A search reads the listing in id order and keeps what matches: it stops at a page of matches
 * or after this many identities read, and its cursor then carries on where the reading stopped,
 * so that one call stays bounded however rare the matches are.
 */
export const SEARCH_READ_LIMIT = 1000;
const SEARCH_BATCH = 100;

/**
 * Unkey's environment of every identity: its v1 createIdentity (and a key's externalId) makes
 * them all in `default`, and so does keyward, which stores none.
 */
const DEFAULT_ENVIRONMENT = 'default';

const environmentOf = (input: ListIdentitiesInput) => input.environment ?? DEFAULT_ENVIRONMENT;

/**
 * Unkey v1 pages by id after the cursor, as here, and lists one environment's identities
 * (`default` unless named), with `identity.<environment>.read_identity` or
 * `identity.*.read_identity` (docs/decisions.md).
 */
export const listIdentities = defineOperation({
  name: 'identities.listIdentities',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's identities in id (creation) order, a page at a time, with the total.",
  permission: {
    resource: 'identity',
    action: 'read_identity',
    scope: 'input',
    ids: (input: ListIdentitiesInput) => [environmentOf(input)],
  },
  input: object({
    environment: text,
    limit: pageLimit,
    cursor: id,
    search: { type: 'string', maxLength: 256 },
  }),
  output: page('identities', listedIdentityOutput),
  uses: ['identities', 'now'],
  async handle(deps, caller, input: ListIdentitiesInput): Promise<IdentitiesPage> {
    // Every identity is in `default`: another environment holds none.
    if (environmentOf(input) !== DEFAULT_ENVIRONMENT) return { identities: [], total: 0 };
    const limit = input.limit ?? 100;
    const search = input.search?.trim();
    const found =
      search === undefined || search === ''
        ? await deps.identities.list(caller.rootKey.workspaceId, {
            limit,
            ...(input.cursor !== undefined ? { afterId: input.cursor } : {}),
          })
        : await searchIdentities(deps.identities, caller.rootKey.workspaceId, search, {
            limit,
            ...(input.cursor !== undefined ? { afterId: input.cursor } : {}),
          });
    return {
      // With its meta, which v2 lists and v1 did not (src/dialects/v1/routes.ts).
      identities: await Promise.all(
        found.identities.map(async (identity) =>
          identityView(identity, await poolStanding(deps, identity)),
        ),
      ),
      total: found.total,
      ...(found.next !== undefined ? { cursor: found.next } : {}),
    };
  },
});

type IdentityListing = Pick<IdentityStore, 'list'>;
type Listed = Awaited<ReturnType<IdentityStore['list']>>;

/**
 * Unkey's search: identities whose id or externalId contains `search`, ignoring case. `total`
 * stays the workspace's count: how many match is not known without reading every identity.
 */
export async function searchIdentities(
  identities: IdentityListing,
  ws: string,
  search: string,
  options: { limit: number; afterId?: string; readLimit?: number },
): Promise<Listed> {
  const term = search.toLowerCase();
  const matches: Listed['identities'] = [];
  let budget = options.readLimit ?? SEARCH_READ_LIMIT;
  let afterId = options.afterId;
  let total = 0;
  while (budget > 0) {
    // Counted as asked for: ids deleted since they were indexed are read, though not listed.
    const size = Math.min(SEARCH_BATCH, budget);
    budget -= size;
    const batch = await identities.list(ws, {
      limit: size,
      ...(afterId !== undefined ? { afterId } : {}),
    });
    total = batch.total;
    for (const [index, identity] of batch.identities.entries()) {
      if (!matchesSearch(identity, term)) continue;
      matches.push(identity);
      if (matches.length < options.limit) continue;
      // A full page: the next starts after this match, unless nothing follows it at all.
      const lastOfAll = index === batch.identities.length - 1 && batch.next === undefined;
      return { identities: matches, total, ...(lastOfAll ? {} : { next: identity.id }) };
    }
    if (batch.next === undefined) return { identities: matches, total };
    afterId = batch.next;
  }
  return { identities: matches, total, ...(afterId !== undefined ? { next: afterId } : {}) };
}

const matchesSearch = (identity: { id: string; externalId: string }, term: string) =>
  identity.id.toLowerCase().includes(term) || identity.externalId.toLowerCase().includes(term);
