import fc from 'fast-check';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'webhooks.listDeliveries',
  authz: [
    {
      input: (s) => ({ webhookId: s.webhook }),
      namesResource: true,
      effect: async (_, response) => expect(response.body).toEqual({ deliveries: [] }),
    },
  ],
  hostile: {
    base: () => [['webhookId', fixture.webhookId]],
    breakers: () => ({
      webhookId: fc.oneof(badQueryString(64), fc.constantFrom('wh 1', 'wh_1:x', 'wh-1', '{x}')),
    }),
  },
  wire: {},
});
