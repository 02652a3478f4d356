import { listWebhooks } from '../../../operations/webhooks/listWebhooks';
import type { WebhookView } from '../../../operations/webhooks/views';
import { empty } from '../../../operations/schemas';
import { defineV2Route } from '../route';

/** keyward's own, in v2's envelope: `data` is the list (a workspace's few webhooks, unpaged). */
export const v2ListWebhooks = defineV2Route({
  name: 'webhooks.listWebhooks',
  operation: listWebhooks,
  input: empty,
  output: { type: 'array', items: { type: 'object' } },
  toInput: () => ({}),
  toBody: (page: { webhooks: WebhookView[] }) => ({ data: page.webhooks }),
});
