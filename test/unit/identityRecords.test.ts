import type { IdentityRecord } from '../../src/domain/identity';
import type { NamedLimit } from '../../src/domain/namedLimits';
import { changedFields, identityFields, identityFromHash } from '../../src/store/identityStore';

/** The hash of an identity as `HGETALL` answers it: the field, value pairs as an object. */
function asHash(fields: string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) hash[fields[i]!] = fields[i + 1]!;
  return hash;
}

const limit: NamedLimit = {
  name: 'requests',
  type: 'consistent',
  limit: 10,
  duration: 1000,
  autoApply: false,
};

describe('identity records in Redis', () => {
  test('a bare identity is four flat fields', () => {
    const identity: IdentityRecord = {
      id: 'id_1',
      workspaceId: 'ws_1',
      externalId: 'user_1',
      createdAt: 1_795_000_000_000,
    };
    const hash = asHash(identityFields(identity));
    expect(hash).toEqual({
      id: 'id_1',
      workspaceId: 'ws_1',
      externalId: 'user_1',
      createdAt: '1795000000000',
    });
    expect(identityFromHash(hash)).toEqual(identity);
  });

  test('meta and ratelimits are JSON text, read back as they were written', () => {
    const identity: IdentityRecord = {
      id: 'id_1',
      workspaceId: 'ws_1',
      externalId: 'user:1 with spaces',
      meta: { plan: 'pro', nested: { list: [1, null, 'x'] } },
      ratelimits: [limit],
      createdAt: 1,
      updatedAt: 2,
    };
    const hash = asHash(identityFields(identity));
    expect(hash.meta).toBe('{"plan":"pro","nested":{"list":[1,null,"x"]}}');
    expect(JSON.parse(hash.ratelimits!)).toEqual([limit]);
    expect(identityFromHash(hash)).toEqual(identity);
  });

  test('empty meta and ratelimits are not stored', () => {
    const hash = asHash(
      identityFields({
        id: 'id_1',
        workspaceId: 'ws_1',
        externalId: 'user_1',
        meta: {},
        ratelimits: [],
        createdAt: 1,
      }),
    );
    expect(Object.keys(hash).sort()).toEqual(['createdAt', 'externalId', 'id', 'workspaceId']);
  });

  test('an update replaces what it names; empty removes the field', () => {
    expect(changedFields({})).toEqual({ set: [], del: [] });
    expect(changedFields({ meta: { a: 1 } })).toEqual({ set: [['meta', '{"a":1}']], del: [] });
    expect(changedFields({ meta: {}, ratelimits: [] })).toEqual({
      set: [],
      del: ['meta', 'ratelimits'],
    });
  });

  test('a hash without an id or externalId is no identity (a deleted or foreign one)', () => {
    expect(identityFromHash({})).toBeUndefined();
    expect(identityFromHash({ id: 'id_1' })).toBeUndefined();
  });
});
