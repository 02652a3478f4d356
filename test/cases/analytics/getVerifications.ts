import fc from 'fast-check';
import { badQueryString } from '../../support/hostile';
import { fixture } from '../../support/hostileTarget';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'analytics.getVerifications',
  authz: [
    {
      input: (s) => ({ apiId: s.apiA, start: 0 }),
      effect: async (_, response) => expect(response.body).toEqual(expect.any(Array)),
    },
  ],
  hostile: {
    base: () => [
      ['apiId', fixture.apiId],
      ['start', '0'],
      // No list parameter here: a list may be given twice (keyId=a&keyId=b), the rest may not.
      ['end', '3600000'],
    ],
    breakers: () => ({
      apiId: badQueryString(64),
      externalId: badQueryString(256),
      keyId: fc.constantFrom('', 'k'.repeat(65), `k,${'k'.repeat(65)}`),
      tag: fc.constant(''),
      start: fc.constantFrom('-1', 'yesterday', '4000000'),
      end: fc.constantFrom('-1', 'now', '0'),
      groupBy: fc.constantFrom('week', 'tag,tags', ''),
      limit: fc.constantFrom('0', '-1', 'ten'),
      orderBy: fc.constantFrom('size', ''),
      order: fc.constantFrom('up', ''),
    }),
  },
  wire: {},
});
