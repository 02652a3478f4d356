import { randomBytes } from 'node:crypto';
import type { WebhookRecord } from '../domain/webhook';
import type { Vault } from '../vault/vault';

/**
 * A webhook's signing secret (docs/decisions.md, "Webhooks"): deliveries need it back, so it is
 * sealed by the vault (KEYWARD_VAULT_KEYS, bound to the workspace and the webhook's id), never
 * stored in plaintext: without a vault there are no webhooks. Never logged, answered once, by
 * createWebhook.
 */

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function storedSecret(
  vault: Vault,
  secret: string,
  workspaceId: string,
  webhookId: string,
): string {
  return vault.seal(secret, { workspaceId, keyId: webhookId });
}

/** The secret to sign with; throws (naming no secret) when this node cannot open it. */
export function openSecret(
  vault: Vault | undefined,
  hook: Pick<WebhookRecord, 'secret' | 'workspaceId' | 'id'>,
): string {
  if (!vault) throw new Error('the secret is sealed and this node has no KEYWARD_VAULT_KEYS');
  return vault.open(hook.secret, { workspaceId: hook.workspaceId, keyId: hook.id });
}
