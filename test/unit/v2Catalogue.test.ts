import { v2ListIdentities } from '../../src/dialects/v2/identities/listIdentities';
import { identityHandle } from '../../src/dialects/v2/identities/shapes';
import { isKeywardId, v2Pagination } from '../../src/dialects/v2/lists';
import { v2CreatePermission } from '../../src/dialects/v2/permissions/createPermission';
import { v2ListPermissions } from '../../src/dialects/v2/permissions/listPermissions';
import {
  permissionHandle,
  roleHandle,
  v2Permission,
  v2Role,
} from '../../src/dialects/v2/permissions/shapes';
import { v2ListOverrides } from '../../src/dialects/v2/ratelimits/listOverrides';
import { v2MultiLimit } from '../../src/dialects/v2/ratelimits/multiLimit';
import { v2SetOverride } from '../../src/dialects/v2/ratelimits/setOverride';
import { listed, matching, pageOf } from '../../src/operations/listing';
import { v2ErrorType } from '../../src/dialects/v2/errors';
import { BadRequestError, ConflictError, NotFoundError } from '../../src/errors';
import { newId } from '../../src/keys/ids';
import { createPermission } from '../../src/operations/permissions/createPermission';

/** What a route's toInput threw: the 400's message. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('one field naming an id or a name', () => {
  test('an id of keyward’s form is an id; anything else is the name', () => {
    const identityId = newId('id');
    expect(identityHandle(identityId)).toEqual({ identityId });
    expect(identityHandle('user_123')).toEqual({ externalId: 'user_123' });
    // The prefix alone, or a short body, is not an id.
    expect(identityHandle('id_123')).toEqual({ externalId: 'id_123' });
    expect(identityHandle(`${identityId}x`)).toEqual({ externalId: `${identityId}x` });

    const permissionId = newId('perm');
    expect(permissionHandle(permissionId)).toEqual({ permissionId });
    expect(permissionHandle('documents.read')).toEqual({ name: 'documents.read' });
    // Another kind's id is a name here.
    expect(roleHandle(permissionId)).toEqual({ name: permissionId });
    const roleId = newId('role');
    expect(roleHandle(roleId)).toEqual({ roleId });
    expect(roleHandle('Billing Manager')).toEqual({ name: 'Billing Manager' });
  });

  test('isKeywardId knows the four kinds v2 names this way', () => {
    for (const prefix of ['id', 'perm', 'role', 'rlns'] as const) {
      expect(isKeywardId(prefix, newId(prefix))).toBe(true);
      expect(isKeywardId(prefix, `${prefix}_0OIl${'1'.repeat(18)}`)).toBe(false);
    }
  });

  test('an override’s namespace: by id or by name', () => {
    const namespaceId = newId('rlns');
    const set = (namespace: string) =>
      v2SetOverride.toInput({ namespace, identifier: 'x', limit: 1, duration: 1000 });
    expect(set(namespaceId)).toEqual({ namespaceId, identifier: 'x', limit: 1, duration: 1000 });
    expect(set('api.requests')).toMatchObject({ namespaceName: 'api.requests' });
  });
});

describe('permissions', () => {
  test('v2’s slug is keyward’s name, and v2’s name keyward’s slug, both ways', () => {
    expect(
      v2CreatePermission.toInput({
        name: 'documents.read',
        slug: 'documents-read',
        description: 'reads',
      }),
    ).toEqual({ name: 'documents-read', slug: 'documents.read', description: 'reads' });
    expect(v2Permission({ id: 'perm_1', name: 'documents-read', slug: 'documents.read' })).toEqual({
      id: 'perm_1',
      name: 'documents.read',
      slug: 'documents-read',
    });
  });

  test('v2’s name is free text of 1–512 characters: the operation’s slug, widened for v2 only', () => {
    expect(v2CreatePermission.toInput({ name: 'Read documents', slug: 'documents.read' })).toEqual({
      name: 'documents.read',
      slug: 'Read documents',
    });
    const properties = (schema: unknown) =>
      (schema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(properties(v2CreatePermission.coreInput).slug).toEqual({
      type: 'string',
      minLength: 1,
      maxLength: 512,
    });
    // keyward's name, v2's slug: from 1 character, `*` allowed, as Unkey's slug.
    expect(properties(v2CreatePermission.coreInput).name).toMatchObject({
      minLength: 1,
      maxLength: 256,
      pattern: '^[a-zA-Z0-9_:\\-\\.\\*]+$',
    });
    // v1's own rules are untouched.
    for (const field of ['name', 'slug']) {
      expect(properties(createPermission.input)[field]).toEqual({
        type: 'string',
        minLength: 3,
        maxLength: 256,
        pattern: '^[a-zA-Z0-9_.:-]*$',
      });
    }
  });

  test('a role answers its permissions as objects, and no field when it has none', () => {
    expect(v2Role({ id: 'role_1', name: 'Empty' })).toEqual({ id: 'role_1', name: 'Empty' });
    expect(
      v2Role({
        id: 'role_2',
        name: 'Reader',
        description: 'reads',
        permissions: ['a.read'],
        permissionRecords: [{ id: 'perm_1', name: 'a.read', slug: 'A reading', description: 'd' }],
      }),
    ).toEqual({
      id: 'role_2',
      name: 'Reader',
      description: 'reads',
      permissions: [{ id: 'perm_1', name: 'A reading', slug: 'a.read', description: 'd' }],
    });
  });

  test('a v2 listing asks the operation for pages of 100 unless told, and answers v2’s page', () => {
    expect(v2ListPermissions.toInput({})).toEqual({ limit: 100 });
    expect(v2ListPermissions.toInput({ limit: 2, cursor: 'perm_1', search: 'read' })).toEqual({
      limit: 2,
      cursor: 'perm_1',
      search: 'read',
    });
    const views = ['a.read', 'a.write'].map((name, i) => ({ id: `perm_${i}`, name, slug: name }));
    expect(v2ListPermissions.toBody({ permissions: views, cursor: 'perm_1' }, {})).toEqual({
      data: views.map(v2Permission),
      pagination: { cursor: 'perm_1', hasMore: true },
    });
    expect(v2ListPermissions.toBody({ permissions: [] }, {})).toEqual({
      data: [],
      pagination: { hasMore: false },
    });
  });
});

describe('lists', () => {
  const items = [1, 2, 3, 4].map((n) => ({ id: `x_${n}` }));

  test('pageOf: a full last page has no cursor; a gone cursor still finds what follows', () => {
    expect(pageOf(items, undefined, 4)).toEqual({ items, next: undefined });
    expect(pageOf(items, undefined, 3)).toEqual({ items: items.slice(0, 3), next: 'x_3' });
    expect(pageOf(items, 'x_2', 2)).toEqual({ items: items.slice(2), next: undefined });
    expect(pageOf(items, 'x_25', 10)).toEqual({ items: items.slice(2), next: undefined });
    expect(pageOf(items, 'x_9', 10)).toEqual({ items: [], next: undefined });
  });

  test('pageOf without a limit: all that follows the cursor, and no cursor', () => {
    expect(pageOf(items, undefined, undefined)).toEqual({ items, next: undefined });
    expect(pageOf(items, 'x_2', undefined)).toEqual({ items: items.slice(2), next: undefined });
  });

  test('listed: searched first, then paged; the cursor only when more follow', () => {
    const things = ['a.read', 'a.write', 'b.read', 'c.read'].map((name, i) => ({
      id: `perm_${i}`,
      name,
    }));
    const fields = (t: { id: string; name: string }) => [t.id, t.name];
    expect(listed(things, { search: ' READ ', limit: 2 }, fields)).toEqual({
      items: [things[0], things[2]],
      cursor: 'perm_2',
    });
    expect(listed(things, { search: 'read', limit: 2, cursor: 'perm_2' }, fields)).toEqual({
      items: [things[3]],
    });
    expect(listed(things, {}, fields)).toEqual({ items: things });
  });

  test('matching: any field, ignoring case; a blank search matches all', () => {
    const things = [{ a: 'Alpha', b: undefined }, { a: 'beta', b: 'ALPHABET' }, { a: 'gamma' }];
    const fields = (t: { a: string; b?: string }) => [t.a, t.b];
    expect(matching(things, 'alph', fields)).toEqual(things.slice(0, 2));
    expect(matching(things, '   ', fields)).toBe(things);
    expect(matching(things, undefined, fields)).toBe(things);
  });

  test('v2Pagination: a cursor means more', () => {
    expect(v2Pagination('x')).toEqual({ cursor: 'x', hasMore: true });
    expect(v2Pagination(undefined)).toEqual({ hasMore: false });
  });
});

describe('identities', () => {
  test('listIdentities: meta from beside the v1 view, limits with v2 ids; the search handed on', () => {
    const body = v2ListIdentities.toBody(
      {
        identities: [
          {
            id: 'id_1',
            externalId: 'u1',
            ratelimits: [{ name: 'r', type: 'fast', limit: 1, duration: 1000, autoApply: true }],
            meta: { plan: 'pro' },
          },
        ],
        cursor: 'id_1',
        total: 1,
      },
      {},
    );
    expect(body).toEqual({
      data: [
        {
          id: 'id_1',
          externalId: 'u1',
          meta: { plan: 'pro' },
          ratelimits: [
            {
              id: expect.stringMatching(/^rl_/),
              name: 'r',
              limit: 1,
              duration: 1000,
              autoApply: true,
            },
          ],
        },
      ],
      pagination: { cursor: 'id_1', hasMore: true },
    });
    // The search is the operation's (listIdentities.ts): the dialect hands it on as it came.
    expect(v2ListIdentities.toInput({ search: 'u', limit: 5, cursor: 'id_1' })).toEqual({
      search: 'u',
      limit: 5,
      cursor: 'id_1',
    });
  });
});

describe('ratelimit', () => {
  test('setOverride: a * only at the end, and no limit of 0', () => {
    const set = (identifier: string, limit = 5) =>
      v2SetOverride.toInput({ namespace: 'n', identifier, limit, duration: 1000 });
    expect(set('vip_*')).toMatchObject({ identifier: 'vip_*' });
    expect(set('*')).toMatchObject({ identifier: '*' });
    for (const identifier of ['*_test', '*premium*', 'a*b*', 'a*b']) {
      expect(refusal(() => set(identifier))).toMatch(/^identifier: keyward matches an override/);
    }
    expect(refusal(() => set('x', 0))).toBe(
      'limit: keyward has no blocking override: a limit is at least 1',
    );
  });

  test('listOverrides and multiLimit answers in v2’s words', () => {
    expect(
      v2ListOverrides.toBody(
        {
          overrides: [{ id: 'rlor_1', identifier: 'a', limit: 2, duration: 1000, async: true }],
        },
        { namespace: 'n' },
      ),
    ).toEqual({
      data: [{ overrideId: 'rlor_1', identifier: 'a', limit: 2, duration: 1000 }],
      pagination: { hasMore: false },
    });
    expect(
      v2MultiLimit.toBody(
        {
          success: false,
          limits: [
            {
              namespace: 'n',
              identifier: 'a',
              success: true,
              limit: 5,
              remaining: 4,
              reset: 9,
              overrideId: 'rlor_1',
            },
            { namespace: 'n', identifier: 'b', success: false, limit: 1, remaining: 0, reset: 9 },
          ],
        },
        [],
      ),
    ).toEqual({
      data: {
        passed: false,
        limits: [
          {
            namespace: 'n',
            identifier: 'a',
            limit: 5,
            remaining: 4,
            reset: 9,
            passed: true,
            overrideId: 'rlor_1',
          },
          { namespace: 'n', identifier: 'b', limit: 1, remaining: 0, reset: 9, passed: false },
        ],
      },
    });
    expect(
      v2MultiLimit.toInput([
        { namespace: 'n', identifier: 'a', limit: 1, duration: 1000 },
        { namespace: 'm', identifier: 'a', limit: 1, duration: 1000, cost: 0 },
      ]),
    ).toEqual([
      { namespace: 'n', identifier: 'a', limit: 1, duration: 1000 },
      { namespace: 'm', identifier: 'a', limit: 1, duration: 1000, cost: 0 },
    ]);
  });
});

describe('errors', () => {
  test('a 409 names the resource the operation says it concerns, never one read off its words', () => {
    const typeOf = (error: ConflictError) => v2ErrorType(error);
    const BASE = 'https://unkey.com/docs/errors/unkey/data';
    expect(typeOf(new ConflictError('identity', 'Identity with externalId "x" exists'))).toBe(
      `${BASE}/identity_already_exists`,
    );
    expect(typeOf(new ConflictError('permission', 'x'))).toBe(`${BASE}/permission_already_exists`);
    expect(typeOf(new ConflictError('role', 'Permission with name "x"'))).toBe(
      `${BASE}/role_already_exists`,
    );
    expect(typeOf(new ConflictError('key', 'a key with this hash exists already'))).toBe(
      `${BASE}/key_already_exists`,
    );
    expect(typeOf(new ConflictError(undefined, 'Role with name "x" is named twice'))).toBe(
      'https://unkey.com/docs/errors/unkey/application/precondition_failed',
    );
  });

  test('a 404 names its resource', () => {
    const BASE = 'https://unkey.com/docs/errors/unkey/data';
    expect(v2ErrorType(new NotFoundError('ratelimit_override', 'no override for a'))).toBe(
      `${BASE}/ratelimit_override_not_found`,
    );
    expect(v2ErrorType(new NotFoundError('route', 'no such operation'))).toBe(`${BASE}/not_found`);
  });
});
