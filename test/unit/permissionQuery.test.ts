import fc from 'fast-check';
import {
  PERMISSION_QUERY_LIMITS,
  evaluate,
  formatPermissionQuery,
  parsePermissionQuery,
  permissionsNamed,
  type PermissionQuery,
} from '../../src/auth/permissionQuery';
import { BadRequestError } from '../../src/errors';

const P = 'authorization.permissions';

const perm = (name: string): PermissionQuery => ({ kind: 'permission', name });
const and = (...of: PermissionQuery[]): PermissionQuery => ({ kind: 'and', of });
const or = (...of: PermissionQuery[]): PermissionQuery => ({ kind: 'or', of });

function refusal(input: unknown): string {
  try {
    parsePermissionQuery(input);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    return (err as BadRequestError).message;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('v2 string form: valid queries', () => {
  test.each<[string, PermissionQuery]>([
    ['a.read', perm('a.read')],
    ['a AND b', and(perm('a'), perm('b'))],
    ['a OR b', or(perm('a'), perm('b'))],
    ['a.read AND (b.write OR c.admin)', and(perm('a.read'), or(perm('b.write'), perm('c.admin')))],
    ['a OR b AND c', or(perm('a'), and(perm('b'), perm('c')))],
    ['a AND b OR c', or(and(perm('a'), perm('b')), perm('c'))],
    ['(a OR b) AND c', and(or(perm('a'), perm('b')), perm('c'))],
    ['a AND b AND c', and(perm('a'), perm('b'), perm('c'))],
    ['(a AND b) AND (c AND d)', and(perm('a'), perm('b'), perm('c'), perm('d'))],
    ['a OR (b OR (c OR d))', or(perm('a'), perm('b'), perm('c'), perm('d'))],
    ['((a))', perm('a')],
    // Unkey's operators are case-insensitive whole words.
    ['a and b Or c', or(and(perm('a'), perm('b')), perm('c'))],
    ['a AnD b', and(perm('a'), perm('b'))],
    ['ANDROID OR ORACLE', or(perm('ANDROID'), perm('ORACLE'))],
    ['a.and OR or_b', or(perm('a.and'), perm('or_b'))],
    // Whitespace is needed only where two words would run together.
    ['(a)AND(b)', and(perm('a'), perm('b'))],
    ['(a)or(b)', or(perm('a'), perm('b'))],
    ['  a \t AND\n\r\nb  ', and(perm('a'), perm('b'))],
    // The whole documented character set; `*` is a literal character.
    ['api.*.read_key', perm('api.*.read_key')],
    ['system:admin AND /api/v1/x-y', and(perm('system:admin'), perm('/api/v1/x-y'))],
    ['A-Z_0.9:*/', perm('A-Z_0.9:*/')],
  ])('%j', (input, expected) => {
    expect(parsePermissionQuery(input)).toEqual(expected);
  });

  test('NOT is a permission name where an operand ends', () => {
    expect(parsePermissionQuery('a AND NOT')).toEqual({
      kind: 'and',
      of: [
        { kind: 'permission', name: 'a' },
        { kind: 'permission', name: 'NOT' },
      ],
    });
  });

  test('a permission name may be 512 characters long', () => {
    const name = 'p'.repeat(512);
    expect(parsePermissionQuery(name)).toEqual(perm(name));
  });

  test('the query may be 1000 characters long', () => {
    const query = `${'x'.repeat(495)} OR ${'y'.repeat(501)}`;
    expect(query).toHaveLength(1000);
    expect(permissionsNamed(parsePermissionQuery(query))).toHaveLength(2);
  });

  test('16 levels of parentheses are accepted', () => {
    expect(parsePermissionQuery(`${'('.repeat(16)}a${')'.repeat(16)}`)).toEqual(perm('a'));
  });
});

describe('v2 string form: refusals name the path and the place', () => {
  test.each<[string, string]>([
    ['', 'must not be empty'],
    [' \t\n ', 'must not be empty'],
    ['AND', 'unexpected "AND" at 0'],
    ['AND OR', 'unexpected "AND" at 0'],
    ['or', 'unexpected "or" at 0'],
    ['a AND', 'unexpected end of query at 5, expected a permission or "("'],
    ['OR a', 'unexpected "OR" at 0'],
    ['a AND OR b', 'unexpected "OR" at 6'],
    ['a XOR b', 'unknown operator "XOR" at 2'],
    ['a b', 'unknown operator "b" at 2'],
    ['NOT a', 'unknown operator "NOT" at 0: queries have AND and OR only'],
    ['a AND NOT b', 'unknown operator "NOT" at 6: queries have AND and OR only'],
    ['a AND not (b OR c)', 'unknown operator "not" at 6: queries have AND and OR only'],
    ['a && b', 'invalid character "&" at 2'],
    ['a || b', 'invalid character "|" at 2'],
    ['permission$1 OR permission@2', 'invalid character "$" at 10'],
    ['a.read AND b.wr"ite', 'invalid character "\\"" at 15'],
    ['émoji', 'invalid character "é" at 0'],
    ['a OR 😀', 'invalid character "😀" at 5'],
    ['a\u0000', 'invalid character "\\u0000" at 1'],
    ['(', 'unexpected end of query at 1, expected a permission or "("'],
    [')', 'unexpected ")" at 0'],
    ['()', 'empty parentheses at 0'],
    ['a AND ()', 'empty parentheses at 6'],
    ['(a', 'unclosed "(" at 0'],
    ['a AND (b OR (c)', 'unclosed "(" at 6'],
    ['a)', 'unexpected ")" at 1'],
    ['(a) OR b) AND c', 'unexpected ")" at 8'],
    ['a.read AND b) OR', 'unexpected ")" at 12'],
    ['a (b)', 'unexpected "(" at 2'],
    ['(a b)', 'unknown operator "b" at 3'],
    [`${'('.repeat(17)}a${')'.repeat(17)}`, 'nested deeper than 16 levels at 16'],
  ])('%j', (input, message) => {
    expect(refusal(input)).toBe(`${P}: ${message}`);
  });

  test('names longer than 512 characters and queries longer than 1000 are refused', () => {
    expect(refusal('x'.repeat(513))).toBe(
      `${P}: permission name at 0 is longer than 512 characters`,
    );
    expect(refusal(`a OR ${'x'.repeat(513)}`)).toBe(
      `${P}: permission name at 5 is longer than 512 characters`,
    );
    expect(refusal('a OR '.repeat(200) + 'a')).toBe(
      `${P}: must be at most 1000 characters, got 1001`,
    );
    expect(refusal({ and: ['x'.repeat(513)] })).toBe(
      `${P}.and[0]: permission name is longer than 512 characters`,
    );
  });

  test('the path is the caller’s', () => {
    expect(() => parsePermissionQuery('a XOR b', ['body', 'permissions'])).toThrow(
      'body.permissions: unknown operator "XOR" at 2',
    );
  });
});

describe('v1 JSON form', () => {
  test.each<[unknown, PermissionQuery]>([
    [{ and: ['a', 'b'] }, and(perm('a'), perm('b'))],
    [{ or: ['a', { and: ['b', 'c'] }] }, or(perm('a'), and(perm('b'), perm('c')))],
    [{ and: ['a'] }, perm('a')],
    [{ or: [{ or: ['a', 'b'] }, 'c'] }, or(perm('a'), perm('b'), perm('c'))],
    [{ and: [{ or: [{ and: ['a'] }] }, 'b'] }, and(perm('a'), perm('b'))],
    [
      { and: ['api.*.read_key', 'system:admin'] },
      and(perm('api.*.read_key'), perm('system:admin')),
    ],
  ])('%j', (input, expected) => {
    expect(parsePermissionQuery(input)).toEqual(expected);
  });

  test.each<[unknown, string]>([
    [null, `${P}: must be a permission or { and | or: [...] }, got null`],
    [42, `${P}: must be a permission or { and | or: [...] }, got a number`],
    [true, `${P}: must be a permission or { and | or: [...] }, got a boolean`],
    [undefined, `${P}: must be a permission or { and | or: [...] }, got undefined`],
    [['a'], `${P}: must be a permission or { and | or: [...] }, got an array`],
    [{}, `${P}: must have "and" or "or"`],
    [{ not: 'a' }, `${P}: unknown operator "not"`],
    [{ and: ['a'], xor: ['b'] }, `${P}: unknown operator "xor"`],
    [{ AND: ['a'] }, `${P}: unknown operator "AND"`],
    [JSON.parse('{"__proto__": ["a"]}'), `${P}: unknown operator "__proto__"`],
    [{ and: ['a'], or: ['b'] }, `${P}: must not have both "and" and "or"`],
    [{ and: [] }, `${P}.and: must not be empty`],
    [{ or: 'a' }, `${P}.or: must be an array, got a string`],
    [{ and: ['a', 1] }, `${P}.and[1]: must be a permission or { and | or: [...] }, got a number`],
    [{ and: ['a', null] }, `${P}.and[1]: must be a permission or { and | or: [...] }, got null`],
    [{ or: ['a', { not: ['b'] }] }, `${P}.or[1]: unknown operator "not"`],
    [{ or: ['a', { and: [] }] }, `${P}.or[1].and: must not be empty`],
    [{ and: [''] }, `${P}.and[0]: permission name must not be empty`],
    [{ and: ['a AND b'] }, `${P}.and[0]: invalid character " " at 1 in permission name`],
    [{ or: ['a', 'b$'] }, `${P}.or[1]: invalid character "$" at 1 in permission name`],
    [{ or: ['a', 'OR'] }, `${P}.or[1]: "OR" is an operator, not a permission name`],
  ])('refuses %j', (input, message) => {
    expect(refusal(input)).toBe(message);
  });

  test('100 items per array are accepted, 101 are not', () => {
    const names = Array.from({ length: 101 }, (_, i) => `p${i}`);
    expect(permissionsNamed(parsePermissionQuery({ or: names.slice(0, 100) }))).toHaveLength(100);
    expect(refusal({ or: names })).toBe(`${P}.or: must have at most 100 items, got 101`);
  });

  test('16 nested objects are accepted, 17 are not', () => {
    const nest = (levels: number): unknown => {
      let q: unknown = 'a';
      for (let i = 0; i < levels; i++) q = { and: [q, `p${i}`] };
      return q;
    };
    expect(permissionsNamed(parsePermissionQuery(nest(16)))).toHaveLength(17);
    expect(refusal(nest(17))).toBe(`${P}: nested deeper than 16 levels`);
  });

  test('at most 1000 nodes in total', () => {
    // 1 + 10 × (1 + 89) = 901 nodes pass; 1 + 10 × (1 + 100) = 1011 do not.
    const wide = (per: number) => ({
      or: Array.from({ length: 10 }, (_, i) => ({
        and: Array.from({ length: per }, (_, j) => `p${i}.${j}`),
      })),
    });
    expect(parsePermissionQuery(wide(89)).kind).toBe('or');
    expect(refusal(wide(100))).toBe(
      `${P}: must have at most 1000 permissions and and/or objects in total`,
    );
  });
});

describe('evaluate', () => {
  const held = new Set(['a', 'b', 'api.*']);
  test.each<[string, boolean]>([
    ['a', true],
    ['c', false],
    ['a AND b', true],
    ['a AND c', false],
    ['c OR a', true],
    ['c OR d', false],
    ['c OR a AND b', true],
    ['(c OR a) AND d', false],
    ['c OR b AND d', false],
    // `*` is literal in Unkey v2: "api.*" is held, "api.read" is not implied by it.
    ['api.*', true],
    ['api.read', false],
    // Names are case-sensitive; only the operators are not.
    ['A', false],
  ])('%j → %s', (query, expected) => {
    expect(evaluate(parsePermissionQuery(query), held)).toBe(expected);
  });

  test('an empty and/or built by hand is never satisfied', () => {
    expect(evaluate({ kind: 'and', of: [] }, held)).toBe(false);
    expect(evaluate({ kind: 'or', of: [] }, held)).toBe(false);
  });
});

describe('permissionsNamed and formatPermissionQuery', () => {
  test('names are distinct, in order of first mention', () => {
    expect(permissionsNamed(parsePermissionQuery('b AND (a OR b) AND c OR a'))).toEqual([
      'b',
      'a',
      'c',
    ]);
  });

  test('formatting uses parentheses only where precedence needs them', () => {
    expect(formatPermissionQuery(parsePermissionQuery('a or (b and c) or ((d))'))).toBe(
      'a OR b AND c OR d',
    );
    expect(formatPermissionQuery(parsePermissionQuery('(a or b) and c'))).toBe('(a OR b) AND c');
  });
});

describe('hostile inputs are refused with a BadRequestError, quickly', () => {
  test.each<[string, unknown, string]>([
    ['a 10,000-character string', 'a OR '.repeat(2000), 'must be at most 1000 characters'],
    ['10,000 characters of one name', 'x'.repeat(10_000), 'must be at most 1000 characters'],
    [
      '1,000 nested parentheses',
      `${'('.repeat(1000)}a${')'.repeat(1000)}`,
      'must be at most 1000 characters',
    ],
    ['400 nested parentheses within the length', `${'('.repeat(400)}a${')'.repeat(400)}`, 'nested'],
    ['400 unclosed parentheses', '('.repeat(400), 'nested deeper than 16 levels'],
    ['only operators', 'AND OR AND OR', 'unexpected "AND" at 0'],
    ['only parentheses', ')))(((', 'unexpected ")" at 0'],
    ['an unknown operator', 'a.read XOR b.write', 'unknown operator "XOR"'],
    ['the empty string', '', 'must not be empty'],
    ['a JSON object with 10,000 items', { or: Array.from({ length: 10_000 }, () => 'a') }, 'items'],
    [
      'a JSON object 1,000 deep',
      Array.from({ length: 1000 }).reduce<unknown>((q) => ({ and: [q] }), 'a'),
      'nested deeper than 16 levels',
    ],
    [
      'a JSON object that shares one wide subtree 100 times',
      (() => {
        const wide = { or: Array.from({ length: 100 }, (_, i) => `p${i}`) };
        return { and: Array.from({ length: 100 }, () => wide) };
      })(),
      'in total',
    ],
    [
      'a cyclic object',
      (() => {
        const cycle: { and: unknown[] } = { and: [] };
        cycle.and.push(cycle);
        return cycle;
      })(),
      'nested deeper than 16 levels',
    ],
  ])('%s', (_, input, fragment) => {
    expect(refusal(input)).toContain(fragment);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: random ASTs rendered to both wire forms must parse back to their normal form and
// evaluate like a reference evaluator that shares no code with the module.

const NAME_POOL = ['a', 'b.read', 'c:write', 'api.*', 'x-y_z', '/p/q', 'Android', 'order'];
const isOperatorWord = (s: string) => ['and', 'or'].includes(s.toLowerCase());
const nameArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NAME_POOL) },
  {
    weight: 1,
    arbitrary: fc.stringMatching(/^[A-Za-z0-9._:*/-]{1,12}$/).filter((s) => !isOperatorWord(s)),
  },
);

/** Raw trees: single-child and nested same-kind nodes on purpose, so normalization is exercised. */
const astArb: fc.Arbitrary<PermissionQuery> = fc.letrec<{ node: PermissionQuery }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true, maxDepth: 5 },
    nameArb.map((name) => perm(name)),
    fc
      .record({
        kind: fc.constantFrom<'and' | 'or'>('and', 'or'),
        of: fc.array(tie('node'), { minLength: 1, maxLength: 4 }),
      })
      .map(({ kind, of }): PermissionQuery => ({ kind, of })),
  ),
})).node;

function refNames(q: PermissionQuery): string[] {
  return q.kind === 'permission' ? [q.name] : q.of.flatMap(refNames);
}

function refEvaluate(q: PermissionQuery, held: ReadonlySet<string>): boolean {
  if (q.kind === 'permission') return held.has(q.name);
  const results = q.of.map((c) => refEvaluate(c, held));
  return q.kind === 'and' ? !results.includes(false) : results.includes(true);
}

/** The normal form the parser promises: no single-child and/or, no child of its parent's kind. */
function normalize(q: PermissionQuery): PermissionQuery {
  if (q.kind === 'permission') return q;
  const of = q.of
    .map(normalize)
    .flatMap((c) => (c.kind !== 'permission' && c.kind === q.kind ? c.of : [c]));
  return of.length === 1 && of[0] !== undefined ? of[0] : { kind: q.kind, of };
}

interface Style {
  and: string;
  or: string;
  space: string;
  tightParens: boolean;
}
const styleArb: fc.Arbitrary<Style> = fc.record({
  and: fc.constantFrom('AND', 'and', 'And', 'aNd'),
  or: fc.constantFrom('OR', 'or', 'Or', 'oR'),
  space: fc.constantFrom(' ', '  ', '\t', '\n', ' \r\n '),
  tightParens: fc.boolean(),
});

function wrap(text: string, style: Style): string {
  return style.tightParens ? `(${text})` : `(${style.space}${text}${style.space})`;
}

function join(q: PermissionQuery & { of: PermissionQuery[] }, parts: string[], s: Style): string {
  const op = q.kind === 'and' ? s.and : s.or;
  return parts.join(`${s.space}${op}${s.space}`);
}

function renderFull(q: PermissionQuery, s: Style): string {
  if (q.kind === 'permission') return q.name;
  return wrap(
    join(
      q,
      q.of.map((c) => renderFull(c, s)),
      s,
    ),
    s,
  );
}

function renderMinimal(q: PermissionQuery, s: Style, parent?: 'and' | 'or'): string {
  if (q.kind === 'permission') return q.name;
  const [only] = q.of;
  if (q.of.length === 1 && only !== undefined) return renderMinimal(only, s, parent);
  const text = join(
    q,
    q.of.map((c) => renderMinimal(c, s, q.kind === 'and' ? 'and' : 'or')),
    s,
  );
  return q.kind === 'or' && parent === 'and' ? wrap(text, s) : text;
}

function renderJson(q: PermissionQuery): unknown {
  if (q.kind === 'permission') return q.name;
  return { [q.kind]: q.of.map(renderJson) };
}

const caseArb = astArb.chain((ast) =>
  fc.record({
    ast: fc.constant(ast),
    held: fc.subarray([...new Set([...refNames(ast), ...NAME_POOL])]).map((h) => new Set(h)),
    style: styleArb,
  }),
);

describe('properties', () => {
  test('fully parenthesized v2 strings parse to the normal form and evaluate like the reference', () => {
    fc.assert(
      fc.property(caseArb, ({ ast, held, style }) => {
        const parsed = parsePermissionQuery(renderFull(ast, style));
        expect(parsed).toEqual(normalize(ast));
        expect(evaluate(parsed, held)).toBe(refEvaluate(ast, held));
      }),
      { numRuns: 500 },
    );
  });

  test('minimally parenthesized v2 strings parse to the normal form and evaluate like the reference', () => {
    fc.assert(
      fc.property(caseArb, ({ ast, held, style }) => {
        const parsed = parsePermissionQuery(renderMinimal(ast, style));
        expect(parsed).toEqual(normalize(ast));
        expect(evaluate(parsed, held)).toBe(refEvaluate(ast, held));
      }),
      { numRuns: 500 },
    );
  });

  test('v1 JSON parses to the normal form and evaluates like the reference', () => {
    fc.assert(
      fc.property(caseArb, ({ ast, held }) => {
        const parsed = parsePermissionQuery(JSON.parse(JSON.stringify(renderJson(ast))));
        expect(parsed).toEqual(normalize(ast));
        expect(evaluate(parsed, held)).toBe(refEvaluate(ast, held));
        expect(new Set(permissionsNamed(parsed))).toEqual(new Set(refNames(ast)));
      }),
      { numRuns: 500 },
    );
  });

  test('formatPermissionQuery output parses back to the same tree', () => {
    fc.assert(
      fc.property(astArb, (ast) => {
        const parsed = parsePermissionQuery(renderJson(ast));
        expect(parsePermissionQuery(formatPermissionQuery(parsed))).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
  });

  test('token soup either parses or is refused with a BadRequestError', () => {
    const soup = fc
      .array(fc.constantFrom('a', 'b.c', 'AND', 'or', 'XOR', '(', ')', ' ', '$', '*', 'é'), {
        maxLength: 40,
      })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(soup, (input) => {
        try {
          parsePermissionQuery(input);
        } catch (err) {
          expect(err).toBeInstanceOf(BadRequestError);
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('arbitrary JSON either parses or is refused with a BadRequestError', () => {
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.letrec<{ q: unknown }>((tie) => ({
        q: fc.oneof(
          { maxDepth: 4 },
          fc.constantFrom('a', 'b', '', 'AND', 1, null),
          fc.dictionary(fc.constantFrom('and', 'or', 'not'), fc.array(tie('q'), { maxLength: 3 }), {
            maxKeys: 2,
          }),
        ),
      })).q,
    );
    fc.assert(
      fc.property(json, (input) => {
        try {
          const parsed = parsePermissionQuery(input);
          expect(typeof evaluate(parsed, new Set(['a']))).toBe('boolean');
        } catch (err) {
          expect(err).toBeInstanceOf(BadRequestError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

test('the limits are the documented ones', () => {
  expect(PERMISSION_QUERY_LIMITS).toEqual({
    maxQueryLength: 1000,
    maxDepth: 16,
    maxItems: 100,
    maxNodes: 1000,
    maxNameLength: 512,
  });
});
