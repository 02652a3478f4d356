import fc from 'fast-check';
import { badDescription, json, wrongType } from '../../support/hostile';
import { defineCases } from '../types';

/** A permission name or slug: 3–256 of `[a-zA-Z0-9_.:-]` (Unkey v1's identifier). */
function badPermissionName(options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(options.nullable === false ? ['string'] : ['string']),
    fc.constantFrom('""', '"ab"', '"has space"', '"a*b"', '"slash/ed"', '"é.read"'),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('p'.repeat(n))),
  );
}

export const cases = defineCases({
  operation: 'permissions.createPermission',
  authz: [
    {
      // In the caller's own workspace, whichever that is (as createApi).
      input: (s) => ({ name: `${s.nsN}.new` }),
      effect: async (_, response) =>
        expect(response.body).toEqual({ permissionId: expect.stringMatching(/^perm_/) }),
    },
  ],
  hostile: {
    base: () => [
      ['name', '"fuzz.documents.read"'],
      ['slug', '"fuzz-documents-read"'],
      ['description', '"read the documents"'],
    ],
    breakers: () => ({
      name: badPermissionName(),
      slug: badPermissionName({ nullable: false }),
      description: badDescription(),
    }),
  },
  wire: {},
});
