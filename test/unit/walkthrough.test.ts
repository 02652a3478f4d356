import {
  compareAnswer,
  Correspondence,
  differences,
  exportLiterals,
  parseWalkthrough,
  printedParts,
  realParts,
  substituteExports,
  walkthroughSections,
} from '../support/walkthrough';

const fence = (lang: string, body: string) => '```' + lang + '\n' + body + '\n```\n';

describe('parseWalkthrough', () => {
  const readme = [
    '# title\n',
    fence('sh', 'echo not in the walk-through'),
    '## Walk-through\n',
    '<!-- walkthrough: skip: needs port 8080 -->\n',
    fence('console', '$ make run'),
    fence('sh', 'curl -s $B/v1/liveness'),
    'prose between a step and its answer\n',
    fence('json', '{ "status": "ok" }'),
    fence('sh', 'export API_ID=api_1ChFjUFmm4aKezRcXb7fjz   # from the answer'),
    '### A subsection\n',
    fence('sh', 'for i in 1 2; do echo x; done'),
    fence('text', 'x\nx'),
    '## Walk-through (v2)\n',
    fence('sh', 'echo v2'),
    '## Configuration\n',
    fence('sh', 'echo not in the walk-through either'),
  ].join('\n');

  test('each sh block is a step with the answer block that follows it; skipped blocks say why', () => {
    const { steps, skipped } = parseWalkthrough(readme);
    expect(steps.map((s) => [s.script, s.answer?.lang])).toEqual([
      ['curl -s $B/v1/liveness', 'json'],
      ['export API_ID=api_1ChFjUFmm4aKezRcXb7fjz   # from the answer', undefined],
      ['for i in 1 2; do echo x; done', 'text'],
      ['echo v2', undefined],
    ]);
    expect(skipped.map((f) => [f.lang, f.skip])).toEqual([['console', 'needs port 8080']]);
    // The opening fence's line in the README, for messages.
    expect(steps[0]!.line).toBe(readme.split('\n').indexOf('curl -s $B/v1/liveness'));
  });

  test('a block that is neither a step, an answer nor marked is an error', () => {
    const twoAnswers = [
      '## Walk-through\n',
      fence('sh', 'true'),
      fence('json', '{}'),
      fence('json', '{}'),
    ];
    expect(() => parseWalkthrough(twoAnswers.join('\n'))).toThrow(/neither a step/);
    const orphan = ['## Walk-through\n', fence('json', '{}')];
    expect(() => parseWalkthrough(orphan.join('\n'))).toThrow(/neither a step/);
    const other = ['## Walk-through\n', fence('ts', 'new Unkey()')];
    expect(() => parseWalkthrough(other.join('\n'))).toThrow(/```ts block/);
  });

  test('a marker must give a reason and sit right before its block', () => {
    const noReason = ['## Walk-through\n', '<!-- walkthrough: skip -->\n', fence('sh', 'true')];
    expect(() => parseWalkthrough(noReason.join('\n'))).toThrow(/bad marker/);
    const far = [
      '## Walk-through\n',
      '<!-- walkthrough: skip: x -->\n',
      'prose\n',
      fence('sh', 'true'),
    ];
    expect(parseWalkthrough(far.join('\n')).skipped).toEqual([]);
  });

  test('a "## " line inside a fence does not end the section', () => {
    const text = [
      '## Walk-through\n',
      fence('sh', 'cat <<EOF\n## not a heading\nEOF'),
      '## Next\n',
    ];
    expect(walkthroughSections(text.join('\n'))).toHaveLength(1);
    expect(parseWalkthrough(text.join('\n')).steps).toHaveLength(1);
  });
});

describe('exports from the answer', () => {
  test('literal values only; variables, quotes and placeholders are left as they are', () => {
    expect(
      exportLiterals(
        'export KEY=sk_a KEY_ID=key_b   # from the answer\nexport B=$X\nexport R=kwroot_…',
      ),
    ).toEqual([
      { name: 'KEY', value: 'sk_a' },
      { name: 'KEY_ID', value: 'key_b' },
    ]);
  });

  test('each literal is read at its place in the real answer', () => {
    const printed = printedParts({ lang: 'json', line: 1, text: '{"keyId":"key_p","key":"sk_p"}' });
    const real = realParts({ lang: 'json', line: 1, text: '' }, '{"key":"sk_r","keyId":"key_r"}');
    expect(substituteExports('export KEY=sk_p KEY_ID=key_p', printed, real)).toBe(
      'export KEY=sk_r KEY_ID=key_r',
    );
    const lines = printedParts({ lang: 'text', line: 1, text: '{"a":1}\n{"ids":["x_1","x_2"]}' });
    const realLines = realParts(
      { lang: 'text', line: 1, text: '' },
      '{"a":1}\n{"ids":["y_1","y_2"]}',
    );
    expect(substituteExports('export ID=x_2', lines, realLines)).toBe('export ID=y_2');
  });

  test('a literal the printed answer does not hold is an error (a stale export)', () => {
    const printed = printedParts({ lang: 'json', line: 1, text: '{"keyId":"key_new"}' });
    expect(() => substituteExports('export KEY_ID=key_old', printed, printed)).toThrow(
      /not in the previous printed answer/,
    );
  });
});

describe('differences', () => {
  const id = (prefix: string, n: number) => `${prefix}_1ChFjUFmm4aKezRcXb7fj${'abcdefgh'[n]}`;
  const key = (n: number) => `sk_M8VuLpgftszKXENCVTuok${'abcdefgh'[n]}0kw102bveSL`;

  test('ids and keys may differ, as long as one printed id always stands for the same real one', () => {
    const seen = new Correspondence();
    expect(
      differences({ keyId: id('key', 0), key: key(0) }, { keyId: id('key', 1), key: key(1) }, seen),
    ).toEqual([]);
    expect(differences({ id: id('key', 0) }, { id: id('key', 1) }, seen)).toEqual([]);
    expect(differences({ id: id('key', 0) }, { id: id('key', 2) }, seen)).toHaveLength(1);
    expect(differences({ id: id('key', 3) }, { id: id('key', 1) }, seen)).toHaveLength(1);
    expect(differences({ id: id('key', 4) }, { id: id('api', 5) }, seen)).toHaveLength(1);
    expect(
      differences(
        { message: `key ${id('key', 0)} not found` },
        { message: `key ${id('key', 1)} not found` },
        seen,
      ),
    ).toEqual([]);
    expect(
      differences(
        { message: `key ${id('key', 0)} not found` },
        { message: `key ${id('key', 1)} gone` },
        seen,
      ),
    ).toHaveLength(1);
  });

  test("a key's format is kept: a prefixed key does not stand for one without, nor an old-format key", () => {
    const seen = new Correspondence();
    expect(
      differences({ key: key(0) }, { key: 'HHP7kWuVfDsK8g5ZX6MmAZ0kw103i8Eei' }, seen),
    ).toHaveLength(1);
    expect(differences({ key: 'sk_Q4ZpW9xNrT2bKsvHdE6Yga' }, { key: key(1) }, seen)).toHaveLength(
      1,
    );
  });

  test('times are any number; their presence and type still count', () => {
    const seen = new Correspondence();
    expect(
      differences(
        { createdAt: 1, reset: 2, latencyMs: 0.2 },
        { createdAt: 5, reset: 6, latencyMs: 1.1 },
        seen,
      ),
    ).toEqual([]);
    expect(differences({ reset: 1 }, { reset: '1' }, seen)).toHaveLength(1);
    expect(differences({ reset: 1 }, {}, seen)).toEqual([
      '$.reset: printed, but absent from the real answer',
    ]);
    expect(differences({ remaining: 499 }, { remaining: 498 }, seen)).toHaveLength(1);
  });

  test('a field present on one side only fails, however deep', () => {
    const seen = new Correspondence();
    expect(differences({ a: [{ b: 1 }] }, { a: [{ b: 1, identity: {} }] }, seen)).toEqual([
      '$.a[0].identity: in the real answer ({}), not printed',
    ]);
    expect(differences({ a: [1, 2] }, { a: [1] }, seen)).toHaveLength(1);
    expect(differences({ a: null }, { a: {} }, seen)).toHaveLength(1);
  });

  test("a key's start keeps its prefix and length", () => {
    const seen = new Correspondence();
    expect(differences({ start: 'sk_M8Vu' }, { start: 'sk_YGvc' }, seen)).toEqual([]);
    expect(differences({ start: 'sk_M8Vu' }, { start: 'pk_YGvc' }, seen)).toHaveLength(1);
    expect(differences({ start: 'sk_M8Vu' }, { start: 'sk_YGv' }, seen)).toHaveLength(1);
  });
});

describe('compareAnswer', () => {
  test('seconds-from-now headers are any whole number; their name and case still count', () => {
    const answer = {
      lang: 'text',
      line: 1,
      text: 'RateLimit-Reset: 60\nRetry-After: 60\nRateLimit-Limit: 2',
    };
    const printed = printedParts(answer);
    const seen = new Correspondence();
    expect(
      compareAnswer(
        printed,
        realParts(answer, 'RateLimit-Reset: 59\nRetry-After: 59\nRateLimit-Limit: 2'),
        seen,
      ),
    ).toEqual([]);
    expect(
      compareAnswer(
        printed,
        realParts(answer, 'ratelimit-reset: 59\nRetry-After: 59\nRateLimit-Limit: 2'),
        seen,
      ),
    ).toHaveLength(1);
    expect(
      compareAnswer(
        printed,
        realParts(answer, 'RateLimit-Reset: 60\nRetry-After: 60\nRateLimit-Limit: 3'),
        seen,
      ),
    ).toHaveLength(1);
  });

  test('a json answer compares parsed, whatever its layout', () => {
    const printed = printedParts({ lang: 'json', line: 1, text: '{\n  "a": 1,\n  "b": [true]\n}' });
    expect(
      compareAnswer(
        printed,
        realParts({ lang: 'json', line: 1, text: '' }, '{"b":[true],"a":1}'),
        new Correspondence(),
      ),
    ).toEqual([]);
    expect(
      compareAnswer(
        printed,
        realParts({ lang: 'json', line: 1, text: '' }, 'not json'),
        new Correspondence(),
      ),
    ).toHaveLength(1);
  });

  test('a text answer compares line by line, JSON lines as JSON', () => {
    const answer = { lang: 'text', line: 1, text: 'HTTP/1.1 200 OK\n{"a":1}' };
    const printed = printedParts(answer);
    expect(
      compareAnswer(
        printed,
        realParts(answer, 'HTTP/1.1 200 OK\n{ "a": 1 }'),
        new Correspondence(),
      ),
    ).toEqual([]);
    expect(
      compareAnswer(
        printed,
        realParts(answer, 'HTTP/1.1 429 Too Many Requests\n{"a":1}'),
        new Correspondence(),
      ),
    ).toHaveLength(1);
    expect(
      compareAnswer(printed, realParts(answer, 'HTTP/1.1 200 OK'), new Correspondence()),
    ).toEqual(['printed 2 line(s) or values, got 1']);
  });
});
