import { createWebhook, type CreateWebhookInput } from '../../../operations/webhooks/createWebhook';
import { defineV2Route } from '../route';

/** keyward's own, in v2's envelope: the body is the operation's, the secret answered once. */
export const v2CreateWebhook = defineV2Route({
  name: 'webhooks.createWebhook',
  operation: createWebhook,
  input: createWebhook.input,
  output: createWebhook.output,
  toInput: (body: CreateWebhookInput) => body,
  toBody: (created: { webhookId: string; secret: string }) => ({ data: created }),
});
