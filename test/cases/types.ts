import type fc from 'fast-check';
import type { Client, RpcResponse } from '../support/rpc';
import type { Scene } from '../support/authzScene';
import type { WireScene } from '../support/wireScenario';

/**
 * What one operation of src/operations/registry.ts brings to the suites that go over every
 * operation: test/cases/<service>/<method>.ts for the operation `<service>.<method>`, loaded by
 * that name (test/cases/index.ts).
 */
export interface OperationCases {
  /** The operation's name in the registry; the file's path says it too, and the two must agree. */
  operation: string;
  /**
   * The authorization matrix's calls (test/support/authzMatrix.ts): at least one, each against
   * the matrix's scene.
   */
  authz: readonly AuthzCall[];
  /** The hostile-input suites' valid input and breakers (test/support/hostileOperations.ts). */
  hostile: HostileCase;
  /**
   * The wire corpus's steps (test/support/wireCorpus.ts), by name; the corpus runs them in the
   * order it lists in one place, since later steps use what earlier ones made. Empty for an
   * operation the recorded corpus does not send.
   */
  wire: Readonly<Record<string, WireStep>>;
}

/** One step of the wire corpus: requests sent in a fixed order, each recorded. */
export type WireStep = (scene: WireScene) => Promise<void>;

const defined = new WeakSet<OperationCases>();

/**
 * Declares a cases file's export. The loader takes only what went through here, so a file that
 * exports something else fails by name instead of as a missing field deep in a suite.
 */
export function defineCases(cases: OperationCases): OperationCases {
  defined.add(cases);
  return cases;
}

export function isOperationCases(value: unknown): value is OperationCases {
  return typeof value === 'object' && value !== null && defined.has(value as OperationCases);
}

/**
 * How to call one operation against a scene: the one thing of the matrix its declaration cannot
 * say. Who may make the call is derived from the operation's declared permission
 * (src/operations/operation.ts, docs/decisions.md):
 * - scope `any`: only `<resource>.*.<action>` (or `*`) grants it (createApi: the API does not
 *   exist yet);
 * - scope `input`: `<resource>.<id>.<action>` for each id the input names (the rule's own `ids`),
 *   checked before any lookup;
 * - scope `resource`: first "holds the action on some id" (403 naming `<resource>.*.<action>`),
 *   then the resource is looked up (404) and `<resource>.<its id>.<action>` checked; `lookup`
 *   says which resource of the scene that is.
 */
export interface AuthzCall {
  /** Which way of calling it, after the operation's name. */
  variant?: string;
  /**
   * For a rule of scope `any` whose input names a resource of the scene (a permission or role by
   * its id): in another workspace it is not there, a 404.
   */
  namesResource?: true;
  /**
   * For a rule of scope `input` whose ids name no resource (listIdentities' environment): in
   * another workspace it lists that workspace's own, not a 404.
   */
  workspaceWide?: true;
  /** The query of a GET, the body of a POST: what the rule's `ids` read. */
  input: (scene: Scene) => object;
  /**
   * For a rule of scope `resource` that looks nothing up but answers what the caller may read
   * (SQL analytics: the rows of the ids it holds the action on): allowed once the caller holds
   * the action on some id, in its workspace or another.
   */
  filtered?: true;
  /**
   * The status an allowed call answers, when not 200: SQL analytics answer 412
   * analytics_not_configured past the permission check where the matrix runs (no ClickHouse).
   */
  allowedStatus?: number;
  /** For a rule of scope `resource`: what the handler looks up and checks. */
  lookup?: {
    /** The ids a permission may name it by; the first is the one a 403 names. */
    ids: (scene: Scene) => string[];
    /** Ids of the input the handler checks before the lookup (verifyKey's apiId). */
    inputIds?: (scene: Scene) => string[];
    /**
     * In another workspace it is not there: a 404, the verdict NOT_FOUND (keys.verifyKey), or it
     * is created there (ratelimits.limit, setOverride), which only a permission by its first id
     * (the name: there is no other id yet) can allow.
     */
    elsewhere: 'not found' | 'verdict NOT_FOUND' | 'created';
    /**
     * The exact permission missing after the lookup is answered as not found (keys.whoami: a
     * plaintext must not tell which keys exist beyond what the root key may read).
     */
    hidden?: true;
  };
  /**
   * An action on the same resource this call needs besides the declared one (`recoverable`:
   * encrypt_key; `decrypt`: decrypt_key), checked right after it: before the lookup for a rule
   * of scope `input`, after it for scope `resource` (src/operations/keys/recoverable.ts).
   */
  alsoNeeds?: string;
  /**
   * A write that was allowed happened; a read returned the resource. `admin` holds `*` in the
   * scene's workspace, to look without being refused.
   */
  effect: (scene: Scene, response: RpcResponse, admin: Client) => Promise<void>;
}

/** What the hostile-input tests need to know of an operation beyond its declaration. */
export interface HostileCase {
  /** A valid input (the entries of one object, as raw JSON texts for a POST). */
  base: () => [string, string][];
  /**
   * How to break the fields whose schema does not say enough, or says less than the contract
   * (patterns, enums, objects, nulls the contract leaves open); and fields the operation does not
   * declare but refuses.
   */
  breakers?: () => Record<string, fc.Arbitrary<string>>;
  /** Required by the operation's own check (`Operation.check`) beyond the schema's `required`. */
  alsoRequired?: string[];
  /**
   * What the valid input answers where the suites run, when not 200: SQL analytics answer 412
   * analytics_not_configured without ClickHouse, after validation and the permission check.
   */
  validStatus?: number;
}
