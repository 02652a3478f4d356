import { BadRequestError } from '../../../src/errors';
import {
  newKeyFields,
  ownerIdOf,
  toKeyFields,
  type KeyFieldsInput,
} from '../../../src/operations/keys/fields';
import { NOW, thrownBy } from './fakes';

const badRequest = async (run: () => unknown): Promise<string> => {
  const error = await thrownBy(run);
  expect(error).toBeInstanceOf(BadRequestError);
  return (error as BadRequestError).message;
};

describe('ownerIdOf', () => {
  test.each<
    [string, { ownerId?: string | null; externalId?: string | null }, string | null | undefined]
  >([
    ['neither', {}, undefined],
    ['ownerId only', { ownerId: 'u1' }, 'u1'],
    ['externalId only', { externalId: 'u2' }, 'u2'],
    ['both agreeing', { ownerId: 'u3', externalId: 'u3' }, 'u3'],
    ['ownerId null', { ownerId: null }, null],
    ['externalId null', { externalId: null }, null],
    ['both null', { ownerId: null, externalId: null }, null],
  ])('%s → %p', (_name, input, expected) => {
    expect(ownerIdOf(input)).toBe(expected);
  });

  test.each<[string, { ownerId?: string | null; externalId?: string | null }]>([
    ['different ids', { ownerId: 'a', externalId: 'b' }],
    ['ownerId null, externalId set', { ownerId: null, externalId: 'b' }],
    ['ownerId set, externalId null', { ownerId: 'a', externalId: null }],
  ])('%s → refused', async (_name, input) => {
    expect(await badRequest(() => ownerIdOf(input))).toBe(
      'externalId: must equal ownerId when both are given',
    );
  });
});

describe('toKeyFields: null clears, undefined leaves alone', () => {
  test('an empty input changes nothing', () => {
    expect(toKeyFields({}, NOW, true)).toEqual({});
    expect(Object.keys(toKeyFields({}, NOW, false))).toEqual([]);
  });

  test('every clearable field given null is cleared', () => {
    const fields = toKeyFields(
      { name: null, ownerId: null, meta: null, expires: null, ratelimit: null, remaining: null },
      NOW,
      true,
    );
    expect(fields).toEqual({
      name: null,
      ownerId: null,
      meta: null,
      expires: null,
      ratelimit: null,
      credits: null,
    });
  });

  test('given values are set; absent ones stay absent', () => {
    const fields = toKeyFields(
      { name: 'web', externalId: 'user_1', meta: { a: [1] }, expires: NOW + 1, enabled: false },
      NOW,
      false,
    );
    expect(fields).toEqual({
      name: 'web',
      ownerId: 'user_1',
      meta: { a: [1] },
      expires: NOW + 1,
      enabled: false,
    });
    expect(fields).not.toHaveProperty('credits');
    expect(fields).not.toHaveProperty('ratelimit');
  });

  test('enabled is not defaulted on update', () => {
    expect(toKeyFields({ name: 'x' }, NOW, false)).not.toHaveProperty('enabled');
  });

  test('ownerId and externalId disagreeing is refused', async () => {
    expect(
      await badRequest(() => toKeyFields({ ownerId: 'a', externalId: 'b' }, NOW, false)),
    ).toMatch(/^externalId: /);
  });
});

describe('toKeyFields: expires', () => {
  test.each([
    ['in the past', NOW - 1],
    ['exactly now', NOW],
  ])('%s is refused', async (_name, expires) => {
    expect(await badRequest(() => toKeyFields({ expires }, NOW, false))).toBe(
      'expires: must be in the future',
    );
  });

  test('one millisecond ahead is accepted', () => {
    expect(toKeyFields({ expires: NOW + 1 }, NOW, false)).toEqual({ expires: NOW + 1 });
  });
});

describe('toKeyFields: credits and refill', () => {
  const daily = { interval: 'daily' as const, amount: 100 };

  test.each<[string, KeyFieldsInput, boolean, unknown]>([
    ['remaining alone', { remaining: 5 }, false, { resetTo: 5 }],
    [
      'remaining with refill',
      { remaining: 5, refill: daily },
      false,
      { refill: daily, resetTo: 5 },
    ],
    ['refill alone on a key with credits', { refill: daily }, true, { refill: daily }],
    ['refill null on a key with credits', { refill: null }, true, { refill: null }],
    ['remaining null clears credits', { remaining: null }, true, null],
    ['remaining null with refill null', { remaining: null, refill: null }, true, null],
  ])('%s → credits %p', (_name, input, hadCredits, credits) => {
    expect(toKeyFields(input, NOW, hadCredits)).toEqual({ credits });
  });

  test('refill null on a key without credits changes nothing', () => {
    expect(toKeyFields({ refill: null }, NOW, false)).toEqual({});
  });

  test.each<[string, KeyFieldsInput, boolean]>([
    ['refill without remaining on a key without credits', { refill: daily }, false],
    ['refill with remaining null', { remaining: null, refill: daily }, true],
  ])('%s → refused', async (_name, input, hadCredits) => {
    expect(await badRequest(() => toKeyFields(input, NOW, hadCredits))).toBe(
      'refill: requires remaining',
    );
  });

  test.each<[string, KeyFieldsInput['refill'], string | undefined]>([
    [
      'daily with refillDay',
      { interval: 'daily', amount: 1, refillDay: 3 },
      'refill.refillDay: only allowed with interval monthly',
    ],
    ['monthly with refillDay', { interval: 'monthly', amount: 1, refillDay: 3 }, undefined],
  ])('%s', async (_name, refill, refusal) => {
    const run = () => toKeyFields({ remaining: 1, refill }, NOW, false);
    if (refusal === undefined) expect(run()).toEqual({ credits: { refill, resetTo: 1 } });
    else expect(await badRequest(run)).toBe(refusal);
  });

  test('a monthly refill without refillDay is stored with refillDay 1, as Unkey does', () => {
    expect(
      toKeyFields({ remaining: 1, refill: { interval: 'monthly', amount: 1 } }, NOW, false),
    ).toEqual({
      credits: { refill: { interval: 'monthly', amount: 1, refillDay: 1 }, resetTo: 1 },
    });
    expect(toKeyFields({ refill: { interval: 'daily', amount: 1 } }, NOW, true)).toEqual({
      credits: { refill: { interval: 'daily', amount: 1 } },
    });
  });
});

describe('toKeyFields: ratelimit, both vocabularies', () => {
  test.each<[string, NonNullable<KeyFieldsInput['ratelimit']>, unknown]>([
    [
      'v1 original',
      { type: 'consistent', limit: 10, refillRate: 2, refillInterval: 1000 },
      { type: 'consistent', limit: 10, refillRate: 2, refillInterval: 1000 },
    ],
    [
      'v1 original, type defaulted to fast',
      { limit: 10, refillRate: 2, refillInterval: 1000 },
      { type: 'fast', limit: 10, refillRate: 2, refillInterval: 1000 },
    ],
    [
      'newer, async true',
      { async: true, limit: 7, duration: 60_000 },
      { type: 'fast', limit: 7, refillRate: 7, refillInterval: 60_000 },
    ],
    [
      'newer, async false',
      { async: false, limit: 7, duration: 60_000 },
      { type: 'consistent', limit: 7, refillRate: 7, refillInterval: 60_000 },
    ],
    [
      'newer, async absent',
      { limit: 7, duration: 500 },
      { type: 'fast', limit: 7, refillRate: 7, refillInterval: 500 },
    ],
    [
      'both, agreeing',
      {
        type: 'consistent',
        async: false,
        limit: 4,
        refillRate: 4,
        refillInterval: 100,
        duration: 100,
      },
      { type: 'consistent', limit: 4, refillRate: 4, refillInterval: 100 },
    ],
  ])('%s', (_name, ratelimit, normalized) => {
    expect(toKeyFields({ ratelimit }, NOW, false)).toEqual({ ratelimit: normalized });
  });

  test.each<[string, NonNullable<KeyFieldsInput['ratelimit']>, string]>([
    [
      'neither refill pair nor duration',
      { limit: 1, refillRate: 1 },
      'ratelimit: needs either refillRate and refillInterval, or duration',
    ],
    [
      'duration against refillInterval',
      { limit: 1, duration: 10, refillInterval: 20 },
      'ratelimit.duration: must equal ratelimit.refillInterval when both are given',
    ],
    [
      'refillRate against limit with duration',
      { limit: 5, duration: 10, refillRate: 1 },
      'ratelimit.refillRate: must equal ratelimit.limit when duration is given',
    ],
    [
      'async against type',
      { type: 'fast', async: false, limit: 1, duration: 10 },
      'ratelimit.async: contradicts ratelimit.type',
    ],
  ])('%s → refused', async (_name, ratelimit, message) => {
    expect(await badRequest(() => toKeyFields({ ratelimit }, NOW, false))).toBe(message);
  });
});

describe('newKeyFields', () => {
  test.each<[string, KeyFieldsInput, boolean]>([
    ['enabled defaults to true', {}, true],
    ['enabled false is kept', { enabled: false }, false],
    ['enabled true is kept', { enabled: true }, true],
  ])('%s', (_name, input, enabled) => {
    expect(newKeyFields(input, NOW)).toEqual({ enabled });
  });

  test('fields of a new key carry the same normalization as updates', () => {
    expect(
      newKeyFields(
        { name: 'n', ownerId: 'o', remaining: 3, ratelimit: { limit: 2, duration: 50 } },
        NOW,
      ),
    ).toEqual({
      name: 'n',
      ownerId: 'o',
      credits: { resetTo: 3 },
      ratelimit: { type: 'fast', limit: 2, refillRate: 2, refillInterval: 50 },
      enabled: true,
    });
  });

  test.each<[string, (string | number)[] | undefined, string]>([
    ['default path', undefined, 'remaining: must be integer'],
    ['given path', [3, 'remaining'], '[3].remaining: must be integer'],
  ])('remaining null is refused (%s)', async (_name, path, message) => {
    expect(await badRequest(() => newKeyFields({ remaining: null }, NOW, path))).toBe(message);
  });

  test('a refill without remaining is refused: a new key has no credits yet', async () => {
    expect(
      await badRequest(() => newKeyFields({ refill: { interval: 'daily', amount: 1 } }, NOW)),
    ).toBe('refill: requires remaining');
  });

  test('an expiry in the past is refused on create as well', async () => {
    expect(await badRequest(() => newKeyFields({ expires: NOW - 1000 }, NOW))).toBe(
      'expires: must be in the future',
    );
  });
});
