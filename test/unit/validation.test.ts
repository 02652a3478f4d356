import type { ErrorObject } from 'ajv';
import { BadRequestError } from '../../src/errors';
import { getApi as getApiOperation } from '../../src/operations/apis/getApi';
import { listKeys as listKeysOperation } from '../../src/operations/apis/listKeys';
import { createKey as createKeyOperation } from '../../src/operations/keys/createKey';
import { updateKey as updateKeyOperation } from '../../src/operations/keys/updateKey';
import { verifyKey as verifyKeyOperation } from '../../src/operations/keys/verifyKey';

type QuerySchema = { properties: Readonly<Record<string, { type?: unknown }>> };
const schemas = {
  'keys.createKey': createKeyOperation.input,
  'keys.updateKey': updateKeyOperation.input,
  'keys.verifyKey': verifyKeyOperation.input,
  'apis.getApi': getApiOperation.input as QuerySchema,
  'apis.listKeys': listKeysOperation.input as QuerySchema,
};
import { compile, decodeQuery, describe as describeError } from '../../src/http/validation';

const createKey = compile<Record<string, unknown>>(schemas['keys.createKey']);
const updateKey = compile<Record<string, unknown>>(schemas['keys.updateKey']);
const verifyKey = compile<Record<string, unknown>>(schemas['keys.verifyKey']);
const getApi = compile<Record<string, unknown>>(schemas['apis.getApi']);
const listKeys = compile<Record<string, unknown>>(schemas['apis.listKeys']);

/** The message of the BadRequestError a validator throws. */
function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    return (error as BadRequestError).message;
  }
  throw new Error('expected the input to be refused');
}

const rl = { limit: 10, refillRate: 1, refillInterval: 1000 };

describe('compile: valid input', () => {
  test('returns the input itself when it is valid', () => {
    const input = { apiId: 'api_1', ratelimit: rl, meta: { a: [1] } };
    expect(createKey(input, 'body')).toBe(input);
  });

  test('ignores unknown fields (v1 clients send extra ones)', () => {
    const input = { apiId: 'api_1', somethingNew: true, ratelimit: { ...rl, extra: 1 } };
    expect(createKey(input, 'body')).toBe(input);
  });

  test('accepts the newer rate limit vocabulary', () => {
    expect(() =>
      createKey({ apiId: 'a', ratelimit: { async: true, limit: 1, duration: 1 } }, 'body'),
    ).not.toThrow();
  });

  test('accepts null where updateKey clears a field', () => {
    expect(() =>
      updateKey(
        { keyId: 'k', name: null, ownerId: null, meta: null, expires: null, ratelimit: null },
        'body',
      ),
    ).not.toThrow();
  });
});

describe('compile: messages name the field by its path', () => {
  test.each<[string, unknown, string]>([
    ['a missing top-level field', {}, 'apiId: is required'],
    [
      'a missing nested field',
      { apiId: 'a', ratelimit: { duration: 5 } },
      'ratelimit.limit: is required',
    ],
    ['a minimum', { apiId: 'a', ratelimit: { ...rl, limit: 0 } }, 'ratelimit.limit: must be >= 1'],
    [
      'a maximum',
      { apiId: 'a', ratelimit: { ...rl, limit: 1_000_000_001 } },
      'ratelimit.limit: must be <= 1000000000',
    ],
    [
      'the largest refillInterval',
      { apiId: 'a', ratelimit: { ...rl, refillInterval: 2_592_000_001 } },
      'ratelimit.refillInterval: must be <= 2592000000',
    ],
    [
      'a string for an integer',
      { apiId: 'a', ratelimit: { ...rl, limit: '5' } },
      'ratelimit.limit: must be integer',
    ],
    ['a fraction for an integer', { apiId: 'a', byteLength: 16.5 }, 'byteLength: must be integer'],
    ['a number for a string', { apiId: 5 }, 'apiId: must be string'],
    ['a string for a boolean', { apiId: 'a', enabled: 'true' }, 'enabled: must be boolean'],
    ['a string for an object', { apiId: 'a', ratelimit: 'fast' }, 'ratelimit: must be object'],
    ['an array for an object', { apiId: 'a', meta: [] }, 'meta: must be object'],
    [
      'a value outside an enum',
      { apiId: 'a', ratelimit: { ...rl, type: 'slow' } },
      'ratelimit.type: must be one of fast, consistent',
    ],
    ['a byteLength below 16', { apiId: 'a', byteLength: 15 }, 'byteLength: must be >= 16'],
    ['a byteLength above 255', { apiId: 'a', byteLength: 256 }, 'byteLength: must be <= 255'],
    ['an empty id', { apiId: '' }, 'apiId: must NOT have fewer than 1 characters'],
    [
      'a name that is too long',
      { apiId: 'a', name: 'x'.repeat(257) },
      'name: must NOT have more than 256 characters',
    ],
    [
      'a prefix with a forbidden character',
      { apiId: 'a', prefix: 'a.b' },
      'prefix: must match ^[A-Za-z0-9_-]{1,16}$',
    ],
    ['a negative expires', { apiId: 'a', expires: -1 }, 'expires: must be >= 0'],
  ])('%s', (_, input, message) => {
    expect(messageOf(() => createKey(input, 'body'))).toBe(message);
  });

  test('the root name is used when the whole input is wrong', () => {
    expect(messageOf(() => createKey('hello', 'body'))).toBe('body: must be object');
    expect(messageOf(() => createKey(null, 'body'))).toBe('body: must be object');
    expect(messageOf(() => getApi([], 'query'))).toBe('query: must be object');
  });

  test('union types are listed with "or"', () => {
    expect(messageOf(() => updateKey({ keyId: 'k', ratelimit: 'none' }, 'body'))).toBe(
      'ratelimit: must be object or null',
    );
    expect(messageOf(() => updateKey({ keyId: 'k', name: 5 }, 'body'))).toBe(
      'name: must be string or null',
    );
  });

  test('a nested cost names its full path', () => {
    expect(messageOf(() => verifyKey({ key: 'k', ratelimit: { cost: -1 } }, 'body'))).toBe(
      'ratelimit.cost: must be >= 0',
    );
    expect(messageOf(() => verifyKey({ key: 'k', remaining: { cost: 1.5 } }, 'body'))).toBe(
      'remaining.cost: must be integer',
    );
  });

  test('only one problem is reported, and it is a real one', () => {
    const message = messageOf(() => createKey({ byteLength: 1 }, 'body'));
    expect(['apiId: is required', 'byteLength: must be >= 16']).toContain(message);
  });
});

describe('describe', () => {
  const base: ErrorObject = { keyword: 'minimum', instancePath: '', schemaPath: '#', params: {} };

  test('decodes JSON pointer escapes in field names', () => {
    expect(
      describeError({ ...base, instancePath: '/meta/a~1b/c~0d', message: 'must be >= 1' }),
    ).toEqual({ path: ['meta', 'a/b', 'c~d'], message: 'must be >= 1' });
  });

  test('an error without a message is "is invalid"', () => {
    expect(describeError({ ...base, instancePath: '/x' })).toEqual({
      path: ['x'],
      message: 'is invalid',
    });
  });

  test('array indexes become numbers, written as [i] in a message', () => {
    const problem = describeError({
      ...base,
      instancePath: '/keys/0/apiId',
      message: 'must be string',
    });
    expect(problem).toEqual({ path: ['keys', 0, 'apiId'], message: 'must be string' });
    expect(new BadRequestError([problem]).message).toBe('keys[0].apiId: must be string');
  });

  test('a problem with the root itself names the root', () => {
    expect(
      new BadRequestError([{ path: [], message: 'must be object' }], { root: 'query' }).message,
    ).toBe('query: must be object');
    expect(new BadRequestError([]).message).toBe('body: is invalid');
  });
});

describe('every invalid field', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 3 },
      limit: { type: 'integer', minimum: 1 },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name', 'limit'],
  };

  function problems(validator: (input: unknown, root: 'body') => unknown, input: unknown) {
    try {
      validator(input, 'body');
    } catch (error) {
      if (error instanceof BadRequestError) return error.problems;
      throw error;
    }
    throw new Error('expected a BadRequestError');
  }

  test('a v2 validator lists each invalid field once, in the order of the schema', () => {
    const body = { name: 'ab', limit: 0, tags: ['a', 7, 8] };
    expect(problems(compile(schema, { allErrors: true }), body)).toEqual([
      { path: ['name'], message: 'must NOT have fewer than 3 characters' },
      { path: ['limit'], message: 'must be >= 1' },
      { path: ['tags', 1], message: 'must be string' },
      { path: ['tags', 2], message: 'must be string' },
    ]);
  });

  test('a v1 validator stops at the first, as Unkey v1 answered', () => {
    expect(problems(compile(schema), { name: 'ab', limit: 0 })).toEqual([
      { path: ['name'], message: 'must NOT have fewer than 3 characters' },
    ]);
  });

  test('a missing field is named by its own path', () => {
    expect(problems(compile(schema, { allErrors: true }), {})).toEqual([
      { path: ['name'], message: 'is required' },
      { path: ['limit'], message: 'is required' },
    ]);
  });
});

describe('decodeQuery', () => {
  const listSchema = schemas['apis.listKeys'];
  const flags = {
    properties: { flag: { type: 'boolean' }, count: { type: 'integer' }, name: { type: 'string' } },
  };

  test('turns digits into integers where the schema wants an integer', () => {
    expect(decodeQuery({ apiId: 'api_1', limit: '25' }, listSchema.properties)).toEqual({
      apiId: 'api_1',
      limit: 25,
    });
    expect(decodeQuery({ count: '007' }, flags.properties)).toEqual({ count: 7 });
    expect(decodeQuery({ count: '0' }, flags.properties)).toEqual({ count: 0 });
  });

  test('leaves digits alone where the schema wants a string', () => {
    expect(
      decodeQuery({ apiId: '123', ownerId: '42', cursor: '9' }, listSchema.properties),
    ).toEqual({
      apiId: '123',
      ownerId: '42',
      cursor: '9',
    });
  });

  test('turns exactly true and false into booleans', () => {
    expect(decodeQuery({ flag: 'true' }, flags.properties)).toEqual({ flag: true });
    expect(decodeQuery({ flag: 'false' }, flags.properties)).toEqual({ flag: false });
    expect(decodeQuery({ flag: 'TRUE' }, flags.properties)).toEqual({ flag: 'TRUE' });
    expect(decodeQuery({ flag: '1' }, flags.properties)).toEqual({ flag: '1' });
    expect(decodeQuery({ flag: '' }, flags.properties)).toEqual({ flag: '' });
  });

  test.each(['-1', '1.5', '1e3', ' 5', '5 ', '0x10', '', 'ten', '12345678901234567'])(
    'leaves %j as a string, which the schema then refuses',
    (raw) => {
      const decoded = decodeQuery({ apiId: 'api_1', limit: raw }, listSchema.properties);
      expect(decoded.limit).toBe(raw);
      expect(messageOf(() => listKeys(decoded, 'query'))).toBe('limit: must be integer');
    },
  );

  test('decoded integers are then range-checked by the schema', () => {
    expect(
      messageOf(() =>
        listKeys(decodeQuery({ apiId: 'a', limit: '0' }, listSchema.properties), 'query'),
      ),
    ).toBe('limit: must be >= 1');
    expect(
      messageOf(() =>
        listKeys(decodeQuery({ apiId: 'a', limit: '101' }, listSchema.properties), 'query'),
      ),
    ).toBe('limit: must be <= 100');
    expect(
      listKeys(decodeQuery({ apiId: 'a', limit: '100' }, listSchema.properties), 'query'),
    ).toEqual({
      apiId: 'a',
      limit: 100,
    });
  });

  test('a parameter given twice is refused with 400', () => {
    const message = messageOf(() => decodeQuery({ apiId: ['a', 'b'] }, listSchema.properties));
    expect(message).toBe('apiId: must be given once');
    expect(
      messageOf(() => decodeQuery({ apiId: 'a', limit: ['1', '1'] }, listSchema.properties)),
    ).toBe('limit: must be given once');
  });

  test('drops parameters the schema does not know, even repeated ones', () => {
    expect(
      decodeQuery({ apiId: 'a', other: 'x', many: ['1', '2'] }, listSchema.properties),
    ).toEqual({
      apiId: 'a',
    });
  });

  test('a missing required parameter is then reported by the schema', () => {
    expect(
      messageOf(() => getApi(decodeQuery({}, schemas['apis.getApi'].properties), 'query')),
    ).toBe('apiId: is required');
  });
});
