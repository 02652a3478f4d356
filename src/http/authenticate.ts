import { UnauthorizedError, type UnauthorizedReason } from '../errors';
import { hashKey } from '../keys/keyMaterial';
import type { Directory } from '../cache/directory';
import type { RootKeyRecord } from '../domain/records';

/** `Bearer` and a token that could be a key: at most 512 characters, no white space. */
const BEARER = /^Bearer +([^\s]{1,512})$/i;
/** `Bearer` and something after it, which is then the token, however it looks. */
const BEARER_ANYTHING = /^Bearer +\S/i;

/**
 * Resolves the root key from `Authorization: Bearer …` by its hash alone. What failed is named
 * only as far as the header's form (none, not `Bearer <token>`), which any client can see for
 * itself; a token that is no root key's is one answer, whatever it holds. A root key the node's
 * cache holds is answered at once, without a promise (the verification path's every request).
 */
export function authenticate(
  authorization: string | undefined,
  directory: Directory,
): RootKeyRecord | Promise<RootKeyRecord> {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  if (!match) throw new UnauthorizedError(whyRefused(authorization));
  const found = directory.rootKeyByHash(hashKey(match[1] as string));
  return found instanceof Promise ? found.then(known) : known(found);
}

function known(rootKey: RootKeyRecord | undefined): RootKeyRecord {
  if (!rootKey) throw new UnauthorizedError('unknown');
  return rootKey;
}

/** Why a header that holds no possible key was refused: off the path of a valid request. */
function whyRefused(authorization: string | undefined): UnauthorizedReason {
  if (authorization === undefined || authorization.trim() === '') return 'missing';
  return BEARER_ANYTHING.test(authorization) ? 'unknown' : 'malformed';
}
