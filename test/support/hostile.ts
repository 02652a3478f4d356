import fc from 'fast-check';

/**
 * Generators of hostile input: raw JSON texts (so that `1e400`, duplicate keys and 100 000 levels
 * of nesting can be sent as they are), values of the wrong type, and values just outside each
 * documented range. Every generator here yields input the contract says is invalid.
 */
export const json = (value: unknown): string => JSON.stringify(value);

/** `{ "a": 1, … }` from raw JSON texts; entries may repeat a name (JSON.parse keeps the last). */
export function objectText(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([name, value]) => `${json(name)}:${value}`).join(',')}}`;
}

/**
 * `fc.string({ unit: 'binary', minLength, maxLength })`, built once per length range. Building one
 * with a `minLength` costs about 100 ms of CPU (fast-check maps every code point to derive the
 * slices it starts from), and the breakers below are built again for every test of every hostile
 * suite: hundreds of times a run. An arbitrary holds no state, so a shared one draws the same
 * values.
 */
const binaryStrings = new Map<string, fc.Arbitrary<string>>();
export function binaryString(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const range = `${minLength}-${maxLength}`;
  let built = binaryStrings.get(range);
  if (built === undefined) {
    built = fc.string({ unit: 'binary', minLength, maxLength });
    binaryStrings.set(range, built);
  }
  return built;
}

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array' | 'object';

function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as Kind;
}

const SAMPLES: Readonly<Record<Kind, readonly string[]>> = {
  string: ['"x"', '"7"', '"true"', '"null"', '"{}"', '"[]"'],
  integer: ['0', '7', '-1', '9007199254740993'],
  // Not `1e-400`: it parses to 0, a valid integer.
  number: ['1.5', '-0.25', '1e400', '-1e400'],
  boolean: ['true', 'false'],
  null: ['null'],
  array: ['[]', '[1]', '["x"]', '[{}]', '[null]', '[[]]'],
  object: ['{}', '{"a":1}', '{"0":"x"}', '{"":""}'],
};

/** A JSON value of any kind but the accepted ones (`number` counts as wrong for integers). */
export function wrongType(accepted: readonly Kind[]): fc.Arbitrary<string> {
  const refused = (Object.keys(SAMPLES) as Kind[]).filter((kind) => !accepted.includes(kind));
  return fc.oneof(
    fc.constantFrom(...refused.flatMap((kind) => SAMPLES[kind])),
    fc
      .jsonValue({ maxDepth: 2 })
      .filter((value) => refused.includes(kindOf(value)))
      .map(json),
  );
}

/** A string field of `min`–`max` characters: wrong types, empty, one character too many, huge. */
export function badString(max: number, options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(options.nullable ? ['string', 'null'] : ['string']),
    fc.constant('""'),
    binaryString(max + 1, max + 4).map(json),
    fc.integer({ min: max + 1, max: 200_000 }).map((n) => json('x'.repeat(n))),
    fc.integer({ min: max + 1, max: max + 64 }).map((n) => json('é'.repeat(n))),
  );
}

/** An integer field of `min`–`max`: wrong types, fractions, ±1 outside, 1e400, huge digits. */
export function badInteger(
  min: number,
  max: number,
  options: { nullable?: boolean } = {},
): fc.Arbitrary<string> {
  const outside: fc.Arbitrary<string>[] = [
    fc.bigInt({ min: -(10n ** 30n), max: BigInt(min) - 1n }).map(String),
    fc.bigInt({ min: BigInt(max) + 1n, max: 10n ** 30n }).map(String),
    fc.constant(String(BigInt(min) - 1n)),
    fc.constant(String(BigInt(max) + 1n)),
  ];
  return fc.oneof(
    wrongType(options.nullable ? ['integer', 'null'] : ['integer']),
    ...outside,
    fc.double({ min, max, noInteger: true, noNaN: true }).map(String),
    fc.constantFrom(
      '1e400',
      '-1e400',
      `1${'0'.repeat(400)}`,
      // Above 2^52 a fraction is lost in parsing and the number would be valid.
      max < 2 ** 52 ? `${max}.5` : '1e400',
      `${min}.000001`,
      json(String(min)),
      '"NaN"',
      '"Infinity"',
      '"-Infinity"',
      '"0x10"',
    ),
  );
}

export function badBoolean(): fc.Arbitrary<string> {
  return fc.oneof(wrongType(['boolean']), fc.constantFrom('1', '0', '"true"', '"false"', '"yes"'));
}

export function badObject(options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  return wrongType(options.nullable ? ['object', 'null'] : ['object']);
}

/** `[A-Za-z0-9_-]{1,16}`. */
export function badPrefix(): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['string']),
    fc.constant('""'),
    fc
      .string({ unit: fc.constantFrom('a', 'Z', '0', '_', '-'), minLength: 17, maxLength: 64 })
      .map(json),
    binaryString(1, 16)
      .filter((s) => !/^[A-Za-z0-9_-]{1,16}$/.test(s))
      .map(json),
    fc.constantFrom('"sk live"', '"sk.live"', '"sk/live"', '"ß"', '"sk\\n"', '"sk\\u0000"'),
  );
}

/** 16 KiB of JSON or 8 levels at most. */
export function badMeta(options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    badObject(options),
    fc.integer({ min: 9, max: 64 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
    fc
      .integer({ min: 8, max: 64 })
      .map((depth) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`),
    fc
      .integer({ min: 16 * 1024 + 1, max: 300_000 })
      .map((size) => json({ blob: 'x'.repeat(size) })),
    fc.constant(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
  );
}

export const LIMIT_MAX = 1_000_000_000;
export const INTERVAL_MAX = 2_592_000_000;

/** The rate-limit object: either vocabulary, broken in one place, or contradicting itself. */
export function badRatelimit(options: { nullable?: boolean } = {}): fc.Arbitrary<string> {
  const valid: [string, string][] = [
    ['type', '"consistent"'],
    ['limit', '10'],
    ['refillRate', '1'],
    ['refillInterval', '1000'],
  ];
  const broken = (field: string, value: fc.Arbitrary<string>) =>
    value.map((bad) => objectText([...valid.filter(([name]) => name !== field), [field, bad]]));
  return fc.oneof(
    badObject(options),
    broken('limit', badInteger(1, LIMIT_MAX)),
    broken('refillRate', badInteger(1, LIMIT_MAX)),
    broken('refillInterval', badInteger(1, INTERVAL_MAX)),
    broken('duration', badInteger(1, INTERVAL_MAX)),
    broken('type', fc.oneof(wrongType(['string']), fc.constantFrom('"slow"', '"FAST"', '""'))),
    broken('async', badBoolean()),
    fc.constantFrom(
      '{}',
      '{"refillRate":1,"refillInterval":1000}',
      '{"limit":5}',
      '{"limit":5,"refillRate":1}',
      '{"limit":5,"refillInterval":1000}',
      '{"limit":5,"duration":1000,"refillInterval":2000}',
      '{"limit":5,"refillRate":3,"duration":1000}',
      '{"type":"fast","async":false,"limit":5,"duration":1000}',
      '{"type":"consistent","async":true,"limit":5,"duration":1000}',
    ),
  );
}

/** `{ cost }` of a verification: an integer ≥ 0. */
export function badCost(): fc.Arbitrary<string> {
  return fc.oneof(
    badObject(),
    badInteger(0, LIMIT_MAX).map((cost) => `{"cost":${cost}}`),
  );
}

/** Usage credits as the contract describes them: `remaining` ≥ 1, `refill` an object. */
export function badRemaining(): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['integer', 'null']),
    fc.constantFrom('0', '-1', '1.5', '1e400', '-1e400'),
    fc.bigInt({ min: -(10n ** 20n), max: 0n }).map(String),
  );
}

export function badRefill(): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['object', 'null']),
    fc.constantFrom(
      '{"interval":"weekly","amount":5}',
      '{"interval":5,"amount":5}',
      '{"interval":"daily","amount":-1}',
      '{"interval":"daily","amount":1.5}',
      '{"interval":"daily","amount":"5"}',
      '{"interval":"monthly","amount":5,"refillDay":0}',
      '{"interval":"monthly","amount":5,"refillDay":32}',
      '{"interval":"monthly","amount":5,"refillDay":1.5}',
    ),
  );
}

/** v1's permission query, malformed: wrong shapes, over 100 items, over 16 levels deep. */
export function badPermissionQuery(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '5',
      'true',
      'null',
      '[]',
      '{}',
      '""',
      '{"and":5}',
      '{"or":"x"}',
      '{"and":[5]}',
      '{"or":[true]}',
      '{"and":[null]}',
      '{"and":[[]]}',
      '{"and":[{}]}',
      '{"or":[{"and":5}]}',
      '{"not":["x"]}',
      `{"and":[${Array.from({ length: 101 }, () => '"x"').join(',')}]}`,
      '{"and":[]}',
      '{"and":["x"],"or":["y"]}',
      '{"and":["a b"]}',
      // Unkey v2's string grammar: bounds, stray and unknown tokens.
      json('p'.repeat(1001)),
      json(`a${' OR a'.repeat(2_000)}`),
      json('p'.repeat(513)),
      json(`${'('.repeat(1_000)}a${')'.repeat(1_000)}`),
      json(`${'('.repeat(17)}a${')'.repeat(17)}`),
      json('a AND'),
      json('a XOR b'),
      json('NOT a'),
      json('(a'),
      json('a)'),
      json('()'),
      json('a AND OR b'),
      json('a $ b'),
      json('AND'),
    ),
    fc
      .integer({ min: 17, max: 2_000 })
      .map((depth) => `${'{"and":['.repeat(depth)}{"and":[]}${']}'.repeat(depth)}`),
    fc.constant(`${'{"or":['.repeat(100_000)}"x"${']}'.repeat(100_000)}`),
  );
}

/** Bytes that are not UTF-8: stray continuation, overlong, surrogate, above U+10FFFF, cut. */
export const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0x80]),
  Buffer.from([0xc1, 0xbf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xf0, 0x9f, 0x98]),
];

/** Texts JSON.parse refuses, and ones only a lenient parser would take. */
export const INVALID_JSON: readonly string[] = [
  '{',
  '}',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  '{a:1}',
  'NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":1}{"b":2}',
  '{"a":1} x',
  '\u0000',
  '// c\n{}',
  '/* c */{}',
  '{"a":"\u0001"}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":0x10}',
  '{"a":1e}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '   ',
  '\n',
  '[',
  '["a"',
  '{"a":[1,2}',
];

/** Nesting that a recursive parser or validator would not survive. */
export const DEEP_JSON: readonly string[] = [
  '['.repeat(100_000),
  `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`,
  `${'{"a":'.repeat(100_000)}1`,
];

/** An expiry's upper bound: the largest date JavaScript can hold. */
export const EXPIRES_MAX = 8_640_000_000_000_000;

/** Every field name an operation knows: random extra fields must not be one of them. */
export const KNOWN_FIELDS = new Set([
  'apiId',
  'keyId',
  'key',
  'name',
  'prefix',
  'byteLength',
  'ownerId',
  'externalId',
  'meta',
  'expires',
  'ratelimit',
  'ratelimits',
  'enabled',
  'remaining',
  'refill',
  'authorization',
  'limit',
  'cursor',
  'environment',
  'roles',
  'permissions',
  'op',
  'value',
  'namespace',
  'namespaceName',
  'namespaceId',
  'identifier',
  'duration',
  'cost',
  'async',
  'plaintext',
  'hash',
  'start',
  'identityId',
  'url',
  'events',
  'creditsThreshold',
  'webhookId',
]);

/**
 * Named rate limits (`ratelimits` of an identity): 0–20 items of `{ name, limit, duration,
 * autoApply?, type? }`, each name once and of `[A-Za-z0-9_.:/-]{1,64}`.
 */
export function badNamedLimits(
  options: {
    /** null clears the list (updateKey): not a breaker. */
    nullable?: boolean;
    /** Every valid input carries `ratelimit` too, so a `default` among the limits is one too many. */
    defaultIsTaken?: boolean;
    /**
     * A name given twice is a 409, not a 400 (v1 updateIdentity, as Unkey v1 answers it:
     * test/integration/v1Rules.test.ts), so it is no breaker here.
     */
    twiceIsConflict?: boolean;
  } = {},
): fc.Arbitrary<string> {
  const valid = { name: 'requests', limit: 10, duration: 1000 };
  const item = (changes: Record<string, unknown>) => json([{ ...valid, ...changes }]);
  return fc.oneof(
    wrongType(options.nullable ? ['array', 'null'] : ['array']),
    fc.constantFrom(
      ...(options.defaultIsTaken ? [item({ name: 'default' })] : []),
      '[5]',
      '[null]',
      '[{}]',
      '[[]]',
      item({ name: '' }),
      item({ name: 'a b' }),
      item({ name: 'n'.repeat(65) }),
      item({ name: 'ü' }),
      item({ limit: 0 }),
      item({ limit: LIMIT_MAX + 1 }),
      item({ limit: 1.5 }),
      item({ limit: '10' }),
      item({ duration: 0 }),
      item({ duration: INTERVAL_MAX + 1 }),
      item({ type: 'slow' }),
      item({ autoApply: 'yes' }),
      json([{ name: 'requests', limit: 10 }]),
      json([{ name: 'requests', duration: 1000 }]),
      json([{ limit: 10, duration: 1000 }]),
      ...(options.twiceIsConflict ? [] : [json([valid, { ...valid, limit: 5 }])]),
      json(Array.from({ length: 21 }, (_, i) => ({ ...valid, name: `r${i}` }))),
    ),
    wrongType(['string']).map((bad) => `[{"name":${bad},"limit":10,"duration":1000}]`),
    wrongType(['integer']).map((bad) => `[{"name":"requests","limit":${bad},"duration":1000}]`),
  );
}

/** Unknown fields are ignored, as the contract asks: they ride along with each broken input. */
export const extraFields: fc.Arbitrary<[string, string][]> = fc.array(
  fc.tuple(
    fc.oneof(
      fc.string({ maxLength: 12 }).filter((name) => !KNOWN_FIELDS.has(name)),
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'),
    ),
    fc.jsonValue({ maxDepth: 2 }).map(json),
  ),
  { maxLength: 3 },
);

/** An expiry that has passed: valid as a number, refused as `expires: must be in the future`. */
export const pastExpiry = () => fc.integer({ min: 0, max: Date.now() - 60_000 }).map(String);
export const badExpires = (nullable: boolean) =>
  fc.oneof(badInteger(0, EXPIRES_MAX, { nullable }), pastExpiry());

/** A rate-limit namespace name is 1–128 characters of `[A-Za-z0-9_.:/-]`. */
export const badNamespace = () =>
  fc.oneof(
    wrongType(['string', 'null']),
    fc.constant('""'),
    fc
      .string({
        unit: fc.constantFrom('a', 'Z', '0', '_', '.', ':', '/', '-'),
        minLength: 129,
        maxLength: 200,
      })
      .map(json),
    binaryString(1, 20)
      .filter((name) => !/^[A-Za-z0-9_.:/-]{1,128}$/.test(name))
      .map(json),
    fc.constantFrom('"a b"', '"a*"', '"{ws}"', '"ns\\n"', '"ü"'),
  );

export const badAsync = () =>
  fc.oneof(wrongType(['boolean', 'null']), fc.constantFrom('1', '"true"'));

/** A query value that no string field accepts: empty, or longer than its maximum. */
export const badQueryString = (max: number) =>
  fc.oneof(
    fc.constant(''),
    binaryString(max + 1, max + 4),
    fc.integer({ min: max + 1, max: 6_000 }).map((n) => 'x'.repeat(n)),
  );

export const badQueryNamespace = () =>
  fc.oneof(
    fc.constant(''),
    fc.constant('n'.repeat(129)),
    binaryString(1, 20).filter((name) => !/^[A-Za-z0-9_.:/-]{1,128}$/.test(name)),
  );

export const badLimit = () =>
  fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '101',
      '-1',
      '1.5',
      '1e2',
      '0x10',
      ' 5',
      '5 ',
      '+5',
      'abc',
      'NaN',
      'Infinity',
      '٣',
      '１',
      '99999999999999999999',
      '10abc',
      'true',
      'null',
    ),
    fc.integer({ min: 101, max: Number.MAX_SAFE_INTEGER }).map(String),
  );

export const badCursor = () =>
  fc.oneof(
    fc.constantFrom('', 'abc', '-1', '1.5', ' 1', '1234567890123456', '１', 'null', '0x1'),
    binaryString(1, 80).filter((s) => !/^\d{1,15}$/.test(s)),
  );

export const DAY = 86_400_000;

/** Not hostile: the rate limit the operations' valid inputs share, which every one accepts. */
export const VALID_RATELIMIT =
  '{"type":"consistent","limit":1000,"refillRate":1,"refillInterval":60000}';

/**
 * A list of permission (or role) names: up to 100 names of 3–256 characters, or (createKey, as
 * Unkey v1's) of 1–512 characters.
 */
export const badNames = (loose = false) =>
  fc.oneof(
    wrongType(['array']),
    fc.constantFrom(
      '[5]',
      loose ? '[""]' : '["ab"]',
      ...(loose ? [json(['n'.repeat(513)])] : []),
      '[null]',
      `[${Array.from({ length: 101 }, (_, i) => `"n.${i}"`).join(',')}]`,
    ),
  );

/** A query value no boolean parameter takes: anything but `true` and `false`. */
export const badQueryBoolean = () => fc.constantFrom('', '1', 'yes', 'TRUE', 'true,false');

export const keyFieldBreakers = () => ({
  name: badString(256, { nullable: true }),
  ownerId: badString(256, { nullable: true }),
  externalId: fc.oneof(badString(256, { nullable: true }), fc.constant('"someone-else"')),
  meta: badMeta({ nullable: true }),
  expires: badExpires(true),
  // Unkey takes any string of up to 256 characters, the empty one included.
  environment: fc.oneof(
    wrongType(['string', 'null']),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('e'.repeat(n))),
  ),
  ratelimit: badRatelimit({ nullable: true }),
  ratelimits: badNamedLimits({ nullable: true, defaultIsTaken: true }),
  enabled: fc.oneof(wrongType(['boolean', 'null']), fc.constantFrom('1', '"true"')),
  refill: badRefill(),
});

/** The refs of a key's permissions or roles: `[{ id? | name?, create? }]`, 1–100 of them. */
export function badLinks(minItems: number): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['array']),
    fc.constantFrom(
      ...(minItems > 0 ? ['[]'] : []),
      '[5]',
      '[{"id":5}]',
      '[{"name":""}]',
      '[{"name":"x","create":"yes"}]',
      `[${Array.from({ length: 101 }, () => '{"name":"x"}').join(',')}]`,
    ),
  );
}

/** A description: 3–256 characters, or empty. */
export function badDescription(): fc.Arbitrary<string> {
  return fc.oneof(
    wrongType(['string']),
    fc.constantFrom('"a"', '"ab"'),
    fc.integer({ min: 257, max: 100_000 }).map((n) => json('d'.repeat(n))),
  );
}
