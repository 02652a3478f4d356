import type { IdentityRecord } from '../../../src/domain/identity';
import { BadRequestError, InsufficientPermissionsError, NotFoundError } from '../../../src/errors';
import { identityChanges } from '../../../src/operations/identities/fields';
import { exactlyOneIdentity, loadIdentity } from '../../../src/operations/identities/loadIdentity';
import { identityView, listedIdentityView } from '../../../src/operations/identities/views';
import { callerWith, NOW, thrownBy, WS } from './fakes';

const alice: IdentityRecord = {
  id: 'id_alice',
  workspaceId: WS,
  externalId: 'user_alice',
  createdAt: NOW,
};

/** The two lookups loadIdentity uses, over one identity. */
const identities = {
  byId: async (ws: string, id: string) => (ws === WS && id === alice.id ? alice : undefined),
  byExternalId: async (ws: string, externalId: string) =>
    ws === WS && externalId === alice.externalId ? alice : undefined,
};

describe('exactlyOneIdentity', () => {
  test.each([[{ identityId: 'id_1' }], [{ externalId: 'user_1' }]])('%j is one', (input) => {
    expect(exactlyOneIdentity(input)).toBeUndefined();
  });

  test.each([[{}], [{ identityId: 'id_1', externalId: 'user_1' }]])('%j is refused', (input) => {
    expect(() => exactlyOneIdentity(input)).toThrow(
      new BadRequestError('identityId: give either identityId or externalId'),
    );
  });
});

describe('identityChanges', () => {
  test('absent fields stay absent; limits get keyward’s defaults in the order given', () => {
    expect(identityChanges({})).toEqual({});
    expect(
      identityChanges({
        meta: { plan: 'pro' },
        ratelimits: [
          { name: 'tokens', limit: 5, duration: 1000 },
          { name: 'burst', limit: 1, duration: 10, type: 'fast', autoApply: true },
        ],
      }),
    ).toEqual({
      meta: { plan: 'pro' },
      ratelimits: [
        { name: 'tokens', type: 'consistent', limit: 5, duration: 1000, autoApply: false },
        { name: 'burst', type: 'fast', limit: 1, duration: 10, autoApply: true },
      ],
    });
  });

  test('empty meta and an empty list are kept: they clear', () => {
    expect(identityChanges({ meta: {}, ratelimits: [] })).toEqual({ meta: {}, ratelimits: [] });
  });

  test('a name twice, or meta too large or too deep, is 400', () => {
    const limit = { name: 'a', limit: 1, duration: 1 };
    expect(() => identityChanges({ ratelimits: [limit, limit] })).toThrow(
      'ratelimits[1].name: "a" is named twice',
    );
    expect(() => identityChanges({ meta: { blob: 'x'.repeat(17_000) } })).toThrow(
      'meta: must be at most 16384 bytes as JSON',
    );
    const deep = JSON.parse(`${'{"a":'.repeat(9)}1${'}'.repeat(9)}`) as Record<string, unknown>;
    expect(() => identityChanges({ meta: deep })).toThrow('meta: must not nest deeper than 8');
  });
});

describe('views', () => {
  test('no meta is {}, no limits []; listed without meta', () => {
    expect(identityView(alice)).toEqual({
      id: 'id_alice',
      externalId: 'user_alice',
      meta: {},
      ratelimits: [],
    });
    expect(listedIdentityView(alice)).toEqual({
      id: 'id_alice',
      externalId: 'user_alice',
      ratelimits: [],
    });
  });

  test('a limit shows its five fields, in one order, and nothing else stored with it', () => {
    const stored = {
      autoApply: true,
      duration: 1000,
      limit: 5,
      type: 'fast',
      name: 'burst',
      extra: 'x',
    } as unknown as NonNullable<IdentityRecord['ratelimits']>[number];
    const [shown] = identityView({ ...alice, ratelimits: [stored] }).ratelimits;
    expect(Object.entries(shown ?? {})).toEqual([
      ['name', 'burst'],
      ['type', 'fast'],
      ['limit', 5],
      ['duration', 1000],
      ['autoApply', true],
    ]);
  });
});

describe('loadIdentity', () => {
  const load = (permissions: string[], handle: { identityId?: string; externalId?: string }) =>
    loadIdentity({ identities }, callerWith(permissions), handle, 'read_identity');

  test.each([
    ['the wildcard, by id', ['identity.*.read_identity'], { identityId: 'id_alice' }],
    ['the wildcard, by externalId', ['identity.*.read_identity'], { externalId: 'user_alice' }],
    ['its own id, by id', ['identity.id_alice.read_identity'], { identityId: 'id_alice' }],
    [
      'its own id, by externalId',
      ['identity.id_alice.read_identity'],
      { externalId: 'user_alice' },
    ],
    ['everything', ['*'], { externalId: 'user_alice' }],
  ])('%s: found', async (_, permissions, handle) => {
    expect(await load(permissions, handle)).toBe(alice);
  });

  test('another identity’s permission: by id 403 naming this one, by externalId 404', async () => {
    const byId = await thrownBy(() =>
      load(['identity.id_bob.read_identity'], { identityId: 'id_alice' }),
    );
    expect(byId).toEqual(new InsufficientPermissionsError('identity.id_alice.read_identity'));
    const byExternalId = await thrownBy(() =>
      load(['identity.id_bob.read_identity'], { externalId: 'user_alice' }),
    );
    expect(byExternalId).toEqual(new NotFoundError('identity', 'identity user_alice not found'));
  });

  test('another action is not this one', async () => {
    const refused = await thrownBy(() =>
      load(['identity.*.update_identity'], { identityId: 'id_alice' }),
    );
    expect(refused).toBeInstanceOf(InsufficientPermissionsError);
  });

  test('unknown: 404 naming the handle given', async () => {
    expect(await thrownBy(() => load(['*'], { identityId: 'id_nobody' }))).toEqual(
      new NotFoundError('identity', 'identity id_nobody not found'),
    );
    expect(await thrownBy(() => load(['*'], { externalId: 'nobody' }))).toEqual(
      new NotFoundError('identity', 'identity nobody not found'),
    );
  });
});
