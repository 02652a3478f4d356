import fc from 'fast-check';
import { badString, json } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'webhooks.deleteWebhook',
  authz: [
    {
      input: (s) => ({ webhookId: s.webhookToDelete }),
      namesResource: true,
      effect: async (s, _, admin) => {
        const gone = await admin.get('webhooks.listDeliveries', { webhookId: s.webhookToDelete });
        expect(gone.status).toBe(404);
      },
    },
  ],
  hostile: {
    // A well-formed id of no webhook: the valid input is judged, then not found.
    base: () => [['webhookId', json('wh_1111111111111111111111')]],
    validStatus: 404,
    breakers: () => ({
      webhookId: fc.oneof(badString(64), fc.constantFrom('"wh 1"', '"wh_1:x"', '"wh-1"')),
    }),
  },
  wire: {},
});
