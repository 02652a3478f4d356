import { permissionFor } from '../../auth/permissions';
import type { KeyRecord } from '../../domain/key';
import { PreconditionFailedError } from '../../errors';
import { VaultError, type Vault } from '../../vault/vault';
import { auditEntry } from '../audit';
import { requirePermission, type Caller } from '../operation';
import type { Services } from '../services';

/**
 * Recoverable keys (docs/security.md, "Recoverable keys"): sealing one needs
 * `api.<apiId>.encrypt_key`, opening one `api.<apiId>.decrypt_key`, as in Unkey; both need the
 * node's vault. Every opening is on the audit log before the plaintext is answered.
 */

const NO_VAULT =
  'recoverable keys need KEYWARD_VAULT_KEYS on every node (docs/security.md, "Recoverable keys")';

/** The vault, once the caller may seal keys of `apiId`; 403 first, then 412 without a vault. */
export function vaultToSeal(deps: { vault?: Vault }, caller: Caller, apiId: string): Vault {
  requirePermission(caller, permissionFor('api', apiId, 'encrypt_key'));
  if (!deps.vault) throw new PreconditionFailedError(NO_VAULT);
  return deps.vault;
}

/** The vault, once the caller may open keys of `apiId`; 403 first, then 412 without a vault. */
export function vaultToOpen(deps: { vault?: Vault }, caller: Caller, apiId: string): Vault {
  requirePermission(caller, permissionFor('api', apiId, 'decrypt_key'));
  if (!deps.vault) throw new PreconditionFailedError(NO_VAULT);
  return deps.vault;
}

/**
 * The plaintext of a recoverable key, on the audit log first (undefined for a key that is not
 * recoverable, as Unkey answers it: no `plaintext`, no entry). A ciphertext that does not open
 * here is a 412 that says why, never garbage.
 */
export async function openKey(
  deps: Pick<Services, 'keys' | 'metrics'>,
  vault: Vault,
  caller: Caller,
  key: Pick<KeyRecord, 'id' | 'workspaceId' | 'apiId' | 'sealed'>,
  operation: string,
): Promise<string | undefined> {
  if (key.sealed === undefined) return undefined;
  let plaintext: string;
  try {
    plaintext = vault.open(key.sealed, { workspaceId: key.workspaceId, keyId: key.id });
  } catch (error) {
    if (error instanceof VaultError) {
      throw new PreconditionFailedError(`key ${key.id} cannot be decrypted here: ${error.message}`);
    }
    throw error;
  }
  await deps.keys.recordRead(
    key.workspaceId,
    key.id,
    auditEntry(caller, operation, 'key', key.id, { apiId: key.apiId, decrypted: true }),
  );
  deps.metrics.keyDecrypted();
  return plaintext;
}
