import { UnauthorizedError } from '../errors';
import { hashKey } from '../keys/keyMaterial';
import type { Directory } from '../cache/directory';
import type { RootKeyRecord } from '../domain/records';

const BEARER = /^Bearer +([^\s]{1,512})$/i;

/**
 * Resolves the root key from `Authorization: Bearer …` by its hash alone. Every failure gets the
 * same answer, so a caller learns nothing about which part was wrong.
 */
export async function authenticate(
  authorization: string | undefined,
  directory: Directory,
): Promise<RootKeyRecord> {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  if (!match) throw new UnauthorizedError();
  const rootKey = await directory.rootKeyByHash(hashKey(match[1] as string));
  if (!rootKey) throw new UnauthorizedError();
  return rootKey;
}
