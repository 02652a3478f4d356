import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'permissions.listPermissions',
  authz: [
    {
      // The caller's own workspace's, whichever that is (as listApis).
      input: () => ({}),
      effect: async (_, response) => expect(Array.isArray(response.body)).toBe(true),
    },
  ],
  hostile: { base: () => [] },
  wire: {},
});
