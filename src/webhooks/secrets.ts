import { randomBytes } from 'node:crypto';
import type { WebhookRecord } from '../domain/webhook';
import type { Vault } from '../vault/vault';

/**
 * A webhook's signing secret (docs/decisions.md, "Webhooks"): sealed by the vault when the node
 * has KEYWARD_VAULT_KEYS (bound to the workspace and the webhook's id), stored as `plain.<secret>`
 * otherwise, since deliveries need it back. Never logged, answered once, by createWebhook.
 */

const PLAIN = 'plain.';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function storedSecret(
  vault: Vault | undefined,
  secret: string,
  workspaceId: string,
  webhookId: string,
): string {
  return vault ? vault.seal(secret, { workspaceId, keyId: webhookId }) : `${PLAIN}${secret}`;
}

/** The secret to sign with; throws (naming no secret) when this node cannot open it. */
export function openSecret(
  vault: Vault | undefined,
  hook: Pick<WebhookRecord, 'secret' | 'workspaceId' | 'id'>,
): string {
  if (hook.secret.startsWith(PLAIN)) return hook.secret.slice(PLAIN.length);
  if (!vault) throw new Error('the secret is sealed and this node has no KEYWARD_VAULT_KEYS');
  return vault.open(hook.secret, { workspaceId: hook.workspaceId, keyId: hook.id });
}
