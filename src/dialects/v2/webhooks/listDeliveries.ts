import { object } from '../../../operations/schemas';
import { listDeliveries } from '../../../operations/webhooks/listDeliveries';
import { webhookId } from '../../../operations/webhooks/views';
import { defineV2Route } from '../route';

/** keyward's own, in v2's envelope: `data` is the webhook's latest attempts, newest first. */
export const v2ListDeliveries = defineV2Route({
  name: 'webhooks.listDeliveries',
  operation: listDeliveries,
  input: object({ webhookId }, ['webhookId']),
  output: { type: 'array', items: { type: 'object' } },
  toInput: (body: { webhookId: string }) => ({ webhookId: body.webhookId }),
  toBody: (page: { deliveries: object[] }) => ({ data: page.deliveries }),
});
