/**
 * The conformance corpus: what Unkey's own route tests and spec assert, written down as data in
 * keyward's words (never Unkey's code), one file per Unkey route. `test/integration/
 * conformance*.test.ts` plays each case against a node and compares. See docs/testing.md,
 * "The conformance corpus".
 *
 * Placeholders `{name}` in a body, a permission or a header are fixtures the runner makes before
 * the call, with a `*` root key of the workspace (test/conformance/fixtures.ts lists them):
 * `{api}`, `{key}`, `{identity}`, `{externalId}`, … A case names only what its Unkey test set up.
 */

export type Json = null | boolean | number | string | Json[] | { [field: string]: Json };

/** Unkey's error type URIs, as its tests compare them. */
export const UNKEY_ERRORS = 'https://unkey.com/docs/errors';
export const INVALID_INPUT = `${UNKEY_ERRORS}/unkey/application/invalid_input`;
export const MALFORMED = `${UNKEY_ERRORS}/unkey/authentication/malformed`;
export const KEY_NOT_FOUND_AUTH = `${UNKEY_ERRORS}/unkey/authentication/key_not_found`;
export const INSUFFICIENT = `${UNKEY_ERRORS}/unkey/authorization/insufficient_permissions`;
export const notFound = (resource: string): string =>
  `${UNKEY_ERRORS}/unkey/data/${resource}_not_found`;
export const alreadyExists = (resource: string): string =>
  `${UNKEY_ERRORS}/unkey/data/${resource}_already_exists`;

/** Who calls. */
export type Caller =
  /** A root key of the case's workspace holding these permissions (none: `[]`). */
  | { permissions: string[] }
  /** A root key of another, empty workspace holding these permissions. */
  | { otherWorkspace: string[] }
  /** The Authorization header exactly as sent; null sends none. */
  | { header: string | null };

/** In an answer's `data`: the field is there (not null), whatever its value (`require.NotEmpty`). */
export const PRESENT = '<present>';

/** What an answer must hold: its status, and what Unkey's test looks at in it. */
export interface Answer {
  status: number;
  /** `error.type`, where Unkey's test compares it. */
  type?: string;
  /**
   * Fields of `data` Unkey's test checks, compared as a subset at every level, with placeholders
   * (`{api}`) and `PRESENT`. v1 answers have no `data` envelope: the body itself.
   */
  data?: Json;
}

export interface ConformanceCase {
  /** Unkey's test it comes from: `<route dir>/<file>: <Test function>/<t.Run name>`. */
  from: string;
  /** `keys.createKey`: POST /v2/keys.createKey (or /v1/…, per the file's dialect). */
  route: string;
  caller: Caller;
  /** The JSON body, with placeholders; or `raw` text sent as is. */
  body?: Json;
  raw?: string;
  /** A GET with this query string instead of a POST (v1's reads), with placeholders. */
  query?: Record<string, string>;
  /** Extra fields of a fixture's creation (`key: {credits: …}` for `{key}`). */
  setup?: {
    key?: { [field: string]: Json };
    /**
     * A role `{key}` is created with, holding these permissions (each created first): Unkey's
     * test gives its key a role this way.
     */
    keyRole?: { permissions: string[] };
    /** A v2 updateKey of `{key}` right after its creation (a state createKey cannot make). */
    keyUpdate?: { [field: string]: Json };
    identity?: { [field: string]: Json };
    permission?: { [field: string]: Json };
    role?: { [field: string]: Json };
  };
  /** What Unkey asserts. */
  expect: Answer;
  /**
   * keyward answers otherwise, on purpose: `id` names the line of docs/decisions.md
   * ("Conformance corpus: deviations") that says why, and `keyward` is what it answers instead;
   * the runner holds it to that, so the deviation cannot drift silently.
   */
  deviation?: { id: string; keyward: Answer };
  /** Not played now, with why (another change is under way there). */
  pending?: string;
  /** What the case had to translate from Unkey's test (a URN permission, a fixture). */
  note?: string;
}

/** A caller whose root key holds these permissions, and no others. */
export const perms = (...permissions: string[]): Caller => ({ permissions });

/** A case that POSTs a JSON body: what the v2 files are made of, one call per Unkey test. */
export function bodyCase(
  from: string,
  route: string,
  caller: Caller,
  body: Json,
  expect: Answer,
  more: Partial<ConformanceCase> = {},
): ConformanceCase {
  return { from, route, caller, body, expect, ...more };
}
