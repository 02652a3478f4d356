import { UnauthorizedError } from '../../errors';
import { hashKey } from '../../keys/keyMaterial';
import type { Directory } from '../../cache/directory';
import type { RootKeyRecord } from '../../store/records';
import type { KeywardContext } from '../context';

const BEARER = /^Bearer +([^\s]{1,512})$/i;

/**
 * Resolves the root key from `Authorization: Bearer …` by its hash alone. Every failure gets the
 * same answer, so a caller learns nothing about which part was wrong.
 */
export async function authenticate(
  ctx: KeywardContext,
  directory: Directory,
): Promise<RootKeyRecord> {
  const match = BEARER.exec(ctx.get('authorization'));
  if (!match) throw new UnauthorizedError();
  const rootKey = await directory.rootKeyByHash(hashKey(match[1] as string));
  if (!rootKey) throw new UnauthorizedError();
  ctx.state.rootKey = rootKey;
  return rootKey;
}
