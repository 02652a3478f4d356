import fc from 'fast-check';
import { badQueryString } from '../../support/hostile';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'auditLogs.list',
  authz: [
    {
      // The caller's own workspace's log, newest first: the scene's writes are in it.
      input: () => ({ limit: 5 }),
      effect: async (_, response) => {
        const entries = response.body.entries as { rootKeyId: string }[];
        expect(entries.length).toBeGreaterThan(0);
        expect(entries[0]).toMatchObject({ rootKeyId: expect.any(String) });
      },
    },
  ],
  hostile: {
    base: () => [
      ['limit', '10'],
      ['operation', 'keys.createKey'],
    ],
    // Both have patterns: an entry id (a stream id, then a shard 0–15 or nothing), and
    // `service.method`.
    breakers: () => ({
      cursor: fc.oneof(
        badQueryString(41),
        fc.constantFrom(
          '1',
          '1-',
          '-1',
          'a-1',
          '1-1-16',
          '1-1-01',
          '1-1-1-1',
          '1 -1',
          `${'9'.repeat(21)}-0`,
        ),
      ),
      operation: fc.oneof(
        badQueryString(65),
        fc.constantFrom(
          'keys',
          'keys.',
          '.createKey',
          'a.b.c',
          'keys createKey',
          'keys.create_key',
        ),
      ),
    }),
  },
  wire: {},
});
