import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'webhooks.listWebhooks',
  authz: [
    {
      // The caller's own workspace's: the scene's lists its webhook; another workspace (whose
      // webhooks this run creates later) lists none.
      input: () => ({}),
      effect: async (s, response) => {
        const ids = (response.body.webhooks as { webhookId: string }[]).map(
          (hook) => hook.webhookId,
        );
        if (ids.length > 0) expect(ids).toContain(s.webhook);
        expect(JSON.stringify(response.body)).not.toMatch(/secret|whsec_/);
      },
    },
  ],
  hostile: { base: () => [] },
  wire: {},
});
