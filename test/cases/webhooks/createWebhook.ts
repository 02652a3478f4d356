import fc from 'fast-check';
import { badString, json, wrongType } from '../../support/hostile';
import { defineCases } from '../types';

/** A public address (TEST-NET-3) with no name to resolve: nothing is ever delivered there in tests. */
export const PUBLIC_TARGET = 'https://203.0.113.10/keyward';

export const cases = defineCases({
  operation: 'webhooks.createWebhook',
  authz: [
    {
      // In the caller's own workspace, whichever that is (as createApi).
      input: () => ({ url: PUBLIC_TARGET, events: ['key.credits.exhausted'] }),
      effect: async (_, response) =>
        expect(response.body).toEqual({
          webhookId: expect.stringMatching(/^wh_/),
          secret: expect.stringMatching(/^whsec_/),
        }),
    },
  ],
  hostile: {
    base: () => [
      ['url', json(`${PUBLIC_TARGET}/fuzz`)],
      ['events', json(['key.credits.low', 'key.ratelimited'])],
      ['creditsThreshold', '10'],
    ],
    breakers: () => ({
      url: fc.oneof(
        badString(2048),
        fc.constantFrom(
          '"not a url"',
          '"ftp://203.0.113.10/x"',
          '"https://user:pw@203.0.113.10/x"',
          '"http://127.0.0.1/x"',
          '"http://[::1]/x"',
          '"http://[::ffff:127.0.0.1]/x"',
          '"http://169.254.169.254/latest"',
          '"http://10.0.0.1/x"',
          '"http://localhost:8080/x"',
        ),
      ),
      events: fc.oneof(
        wrongType(['array']),
        fc.constantFrom(
          '[]',
          '["key.nothing"]',
          '[5]',
          '["key.ratelimited","key.ratelimited"]',
          '["key.credits.exhausted",null]',
        ),
      ),
    }),
  },
  wire: {},
});
