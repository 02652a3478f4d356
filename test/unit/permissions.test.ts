import {
  isGranted,
  isValidPermission,
  mayHaveAction,
  permissionFor,
} from '../../src/auth/permissions';

describe('permissionFor', () => {
  test('joins resource, id and action with dots', () => {
    expect(permissionFor('api', 'api_123', 'read_key')).toBe('api.api_123.read_key');
    expect(permissionFor('ratelimit', '*', 'limit')).toBe('ratelimit.*.limit');
  });
});

describe('isGranted', () => {
  const required = permissionFor('api', 'api_123', 'read_key');

  test('a bare * grants everything', () => {
    expect(isGranted(['*'], required)).toBe(true);
    expect(isGranted(['*'], 'ratelimit.*.limit')).toBe(true);
    expect(isGranted(['*'], 'api.*.create_api')).toBe(true);
  });

  test('nothing is granted by no permissions', () => {
    expect(isGranted([], required)).toBe(false);
  });

  test('the exact permission grants itself', () => {
    expect(isGranted(['api.api_123.read_key'], required)).toBe(true);
  });

  test('* in the id position grants the action on every id of that resource', () => {
    expect(isGranted(['api.*.read_key'], required)).toBe(true);
    expect(isGranted(['api.*.read_key'], 'api.api_other.read_key')).toBe(true);
    expect(isGranted(['api.*.read_key'], 'api.*.read_key')).toBe(true);
  });

  test('a permission for one id does not grant another id', () => {
    expect(isGranted(['api.api_456.read_key'], required)).toBe(false);
    expect(isGranted(['api.api_12.read_key'], required)).toBe(false);
    expect(isGranted(['api.api_1234.read_key'], required)).toBe(false);
  });

  test('a permission for one id does not grant the wildcard requirement', () => {
    expect(isGranted(['api.api_123.create_api'], 'api.*.create_api')).toBe(false);
  });

  test('the wrong action is not granted, even with a wildcard id', () => {
    expect(isGranted(['api.*.create_key'], required)).toBe(false);
    expect(isGranted(['api.api_123.create_key'], required)).toBe(false);
    expect(isGranted(['api.*.read'], required)).toBe(false);
  });

  test('the wrong resource is not granted, even with a wildcard id', () => {
    expect(isGranted(['ratelimit.*.read_key'], required)).toBe(false);
    expect(isGranted(['api.*.limit'], 'ratelimit.*.limit')).toBe(false);
  });

  test('wildcards only work in the id position', () => {
    expect(isGranted(['*.api_123.read_key'], required)).toBe(false);
    expect(isGranted(['api.api_123.*'], required)).toBe(false);
    expect(isGranted(['api.*.*'], required)).toBe(false);
    expect(isGranted(['api.*'], required)).toBe(false);
    expect(isGranted(['api'], required)).toBe(false);
  });

  test('one matching permission among others is enough', () => {
    expect(isGranted(['ratelimit.*.limit', 'api.api_9.read_key', 'api.*.read_key'], required)).toBe(
      true,
    );
    expect(isGranted(['ratelimit.*.limit', 'api.api_9.read_key'], required)).toBe(false);
  });
});

describe('mayHaveAction', () => {
  test('true for *, a wildcard id or any one id with the action', () => {
    expect(mayHaveAction(['*'], 'api', 'read_key')).toBe(true);
    expect(mayHaveAction(['api.*.read_key'], 'api', 'read_key')).toBe(true);
    expect(mayHaveAction(['api.api_1.read_key'], 'api', 'read_key')).toBe(true);
    expect(mayHaveAction(['ratelimit.*.limit', 'api.api_1.read_key'], 'api', 'read_key')).toBe(
      true,
    );
  });

  test('false when no permission has that action on that resource', () => {
    expect(mayHaveAction([], 'api', 'read_key')).toBe(false);
    expect(mayHaveAction(['api.*.create_key'], 'api', 'read_key')).toBe(false);
    expect(mayHaveAction(['ratelimit.*.read_key'], 'api', 'read_key')).toBe(false);
    expect(mayHaveAction(['api.*.read'], 'api', 'read_key')).toBe(false);
  });
});

describe('isValidPermission', () => {
  test.each([
    '*',
    'api.*.create_api',
    'api.api_123.read_key',
    'api.API-1_x.verify_key',
    'ratelimit.*.limit',
    'ratelimit.*.set_override',
    // Namespace names may hold dots: the id is everything between the first and the last dot.
    'ratelimit.email.outbound.limit',
    'api.*.read_key.extra',
  ])('accepts %j', (text) => {
    expect(isValidPermission(text)).toBe(true);
  });

  test.each([
    '',
    '**',
    'api',
    'api.*',
    'api.*.',
    '.*.read_key',
    'api..read_key',
    'API.*.read_key',
    'api.*.Read_Key',
    'api.*.*',
    '*.*.read_key',
    'api.a b.read_key',
    ' api.*.read_key',
    'api.*.read_key\n',
  ])('refuses %j', (text) => {
    expect(isValidPermission(text)).toBe(false);
  });
});

describe('ids with dots', () => {
  test('a namespace name with dots is one id', () => {
    expect(isGranted(['ratelimit.email.outbound.limit'], 'ratelimit.email.outbound.limit')).toBe(
      true,
    );
    expect(isGranted(['ratelimit.*.limit'], 'ratelimit.email.outbound.limit')).toBe(true);
    expect(isGranted(['ratelimit.email.limit'], 'ratelimit.email.outbound.limit')).toBe(false);
    expect(isGranted(['ratelimit.email.outbound.limit'], 'ratelimit.email.limit')).toBe(false);
  });
});
