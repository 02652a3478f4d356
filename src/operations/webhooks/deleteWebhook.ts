import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { empty, object } from '../schemas';
import { webhookId, webhookNotFound } from './views';

/** keyward's own: deletes a webhook, its attempts, and its events not yet delivered. */
export const deleteWebhook = defineOperation({
  name: 'webhooks.deleteWebhook',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a webhook of the workspace; its events not yet delivered are dropped.',
  permission: { resource: 'webhook', action: 'delete_webhook', scope: 'any' },
  input: object({ webhookId }, ['webhookId']),
  output: empty,
  uses: ['webhooks', 'webhookEvents'],
  async handle(deps, caller, input: { webhookId: string }): Promise<Record<string, never>> {
    const ws = caller.rootKey.workspaceId;
    const deleted = await deps.webhooks.delete(
      ws,
      input.webhookId,
      auditEntry(caller, 'webhooks.deleteWebhook', 'webhook', input.webhookId),
    );
    if (!deleted) throw webhookNotFound(input.webhookId);
    deps.webhookEvents.forget(ws);
    return {};
  },
});
