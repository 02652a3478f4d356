import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'webhooks.listWebhooks',
  authz: [
    {
      // The caller's own workspace's: in the scene's, its webhook is listed.
      input: () => ({}),
      effect: async (s, response) => {
        const hooks = response.body.webhooks as { webhookId: string }[];
        expect(hooks.map((hook) => hook.webhookId)).toContain(s.webhook);
        expect(JSON.stringify(response.body)).not.toMatch(/secret|whsec_/);
      },
    },
  ],
  hostile: { base: () => [] },
  wire: {},
});
