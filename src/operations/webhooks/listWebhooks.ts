import { defineOperation } from '../operation';
import { empty, object } from '../schemas';
import { webhookOutput, webhookView, type WebhookView } from './views';

/** keyward's own: the workspace's webhooks, oldest first (a workspace has at most MAX_WEBHOOKS_PER_WORKSPACE: no paging). */
export const listWebhooks = defineOperation({
  name: 'webhooks.listWebhooks',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's webhooks, oldest first: url, events and threshold, never the secret.",
  permission: { resource: 'webhook', action: 'read_webhook', scope: 'any' },
  input: empty,
  output: object({ webhooks: { type: 'array', items: webhookOutput } }, ['webhooks']),
  uses: ['webhooks'],
  async handle(deps, caller): Promise<{ webhooks: WebhookView[] }> {
    const hooks = await deps.webhooks.list(caller.rootKey.workspaceId);
    return { webhooks: hooks.map(webhookView) };
  },
});
