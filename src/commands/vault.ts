import { rotateVault } from '../store/vaultRotation';
import { Vault } from '../vault/vault';
import { UsageError, type CommandSpec } from './framework';
import { emit } from './output';

/** How many skipped key ids the human form lists; `--json` lists them all. */
const LISTED = 20;

/**
 * `keyward vault rotate`: moves every recoverable key to the first vault key, so that the ones
 * after it can be dropped from KEYWARD_VAULT_KEYS (docs/security.md, "Recoverable keys").
 */
const rotate: CommandSpec = {
  path: ['vault', 'rotate'],
  brief:
    "re-wrap every recoverable key's (and webhook secret's) data key under the first KEYWARD_VAULT_KEYS key",
  summary:
    "Re-wraps the data key of every recoverable key, and of every webhook secret sealed by the vault, under the first key of KEYWARD_VAULT_KEYS, one key record at a time with a compare-and-set, while nodes serve; the plaintext's ciphertext is kept. Keys already under the first key are left alone, so the command is idempotent and resumable: stopped at any point, run it again and it finishes. A key whose sealed form does not open with KEYWARD_VAULT_KEYS (a vault key it does not list, or an altered ciphertext) is reported by id and skipped: the exit code is then 1.",
  notes:
    'Run it once every node has the new key first in KEYWARD_VAULT_KEYS (a node with the old key first still seals new keys under it), and with the same list: every key the stored keys are wrapped under must be there to open them. Then the old keys can be dropped from the nodes. Prints how many recoverable keys it read, re-wrapped, found current already and skipped, and the ids of the skipped ones; never any secret.',
  example: 'KEYWARD_VAULT_KEYS=k2:…,k1:… keyward vault rotate',
  async run(invocation, runtime) {
    const keys = runtime.config.vaultKeys;
    if (!keys) {
      throw new UsageError(
        'KEYWARD_VAULT_KEYS is not set: list the vault key to rotate to first, then every key still in use',
        rotate,
      );
    }
    const vault = new Vault(keys);
    let last = 0;
    const report = await rotateVault(await runtime.redis('primary'), vault, (scanned) => {
      if (!invocation.json && scanned - last >= 1000) {
        last = scanned;
        process.stderr.write(`${scanned} recoverable keys read\n`);
      }
    });
    const { skipped, webhooks } = report;
    emit(
      invocation,
      {
        kekId: report.kekId,
        scanned: report.scanned,
        rewrapped: report.rewrapped,
        current: report.current,
        skipped: skipped.length,
        gone: report.gone,
        skippedKeys: skipped,
        webhooks: {
          scanned: webhooks.scanned,
          rewrapped: webhooks.rewrapped,
          current: webhooks.current,
          skipped: webhooks.skipped.length,
        },
        skippedWebhooks: webhooks.skipped,
      },
      () => [
        `vault key ${report.kekId}: ${report.scanned} recoverable keys read, ${report.rewrapped} re-wrapped, ${report.current} already current, ${skipped.length} skipped` +
          (report.gone > 0 ? ` (${report.gone} deleted during the run)` : ''),
        ...skipped
          .slice(0, LISTED)
          .map(
            ({ keyId, workspaceId, reason }) =>
              `skipped ${keyId} (workspace ${workspaceId}): ${reason}`,
          ),
        ...(skipped.length > LISTED
          ? [`… and ${skipped.length - LISTED} more (--json lists them all)`]
          : []),
        ...(webhooks.scanned > 0
          ? [
              `webhook secrets: ${webhooks.scanned} read, ${webhooks.rewrapped} re-wrapped, ${webhooks.current} already current, ${webhooks.skipped.length} skipped`,
              ...webhooks.skipped.map(
                ({ webhookId, workspaceId, reason }) =>
                  `skipped webhook ${webhookId} (workspace ${workspaceId}): ${reason}`,
              ),
            ]
          : []),
      ],
    );
    return skipped.length > 0 || webhooks.skipped.length > 0 ? 1 : 0;
  },
};

export const vaultCommands: readonly CommandSpec[] = [rotate];
