import { empty, object } from '../../../operations/schemas';
import { deleteWebhook } from '../../../operations/webhooks/deleteWebhook';
import { webhookId } from '../../../operations/webhooks/views';
import { defineV2Route } from '../route';

/** keyward's own, in v2's envelope. */
export const v2DeleteWebhook = defineV2Route({
  name: 'webhooks.deleteWebhook',
  operation: deleteWebhook,
  input: object({ webhookId }, ['webhookId']),
  output: empty,
  toInput: (body: { webhookId: string }) => ({ webhookId: body.webhookId }),
  toBody: () => ({ data: {} }),
});
