/**
 * The resources one row of the matrix works on: a fresh API A, another API B, keys in A,
 * rate-limit namespaces N (with an override) and M, permissions and roles, and identities I and J.
 */
export interface Scene {
  apiA: string;
  apiB: string;
  /** Read, verified and updated. */
  key1: { keyId: string; key: string };
  /** Deleted. */
  key2: { keyId: string; key: string };
  nsN: string;
  /** N's id: a permission may name a namespace by its id too. */
  nsNId: string;
  nsM: string;
  /** A permission and a role that are read, and a permission and a role that are deleted. */
  permission: string;
  permissionToDelete: string;
  role: string;
  roleToDelete: string;
  /** Identity I (read and updated) and its externalId, another identity J, and one deleted. */
  identity: string;
  identityExternalId: string;
  identityJ: string;
  identityToDelete: string;
  /** A webhook that is read (one for every scene of a run), and one that is deleted. */
  webhook: string;
  webhookToDelete: string;
}

/** A key of API A, looked up by its id. */
export const keyOfA = { ids: (s: Scene) => [s.apiA], elsewhere: 'not found' } as const;
/** Namespace N, by its name or its id. */
export const namespaceN = { ids: (s: Scene) => [s.nsN, s.nsNId], elsewhere: 'not found' } as const;
/** Identity I, by its id. */
export const identityI = { ids: (s: Scene) => [s.identity], elsewhere: 'not found' } as const;
