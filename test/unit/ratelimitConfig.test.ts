import fc from 'fast-check';
import { BadRequestError } from '../../src/errors';
import type { RatelimitConfig } from '../../src/domain/ratelimit';
import {
  normalizeRatelimit,
  ratelimitOutput,
  type RatelimitInput,
} from '../../src/limiter/ratelimitConfig';

function badRequest(input: RatelimitInput, path?: (string | number)[]): BadRequestError {
  try {
    normalizeRatelimit(input, path);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('normalizeRatelimit: the original vocabulary', () => {
  test('keeps limit, refillRate and refillInterval and defaults to fast', () => {
    expect(normalizeRatelimit({ limit: 10, refillRate: 2, refillInterval: 1000 })).toEqual({
      type: 'fast',
      limit: 10,
      refillRate: 2,
      refillInterval: 1000,
    });
  });

  test.each(['fast', 'consistent'] as const)('keeps type %s', (type) => {
    expect(normalizeRatelimit({ type, limit: 5, refillRate: 5, refillInterval: 60_000 })).toEqual({
      type,
      limit: 5,
      refillRate: 5,
      refillInterval: 60_000,
    });
  });

  test('accepts async alongside it, read as the type', () => {
    expect(
      normalizeRatelimit({ async: false, limit: 3, refillRate: 1, refillInterval: 10 }).type,
    ).toBe('consistent');
    expect(
      normalizeRatelimit({ async: true, limit: 3, refillRate: 1, refillInterval: 10 }).type,
    ).toBe('fast');
  });

  test('allows refillRate above limit (the bucket is capped at limit)', () => {
    expect(normalizeRatelimit({ limit: 1, refillRate: 7, refillInterval: 10 })).toEqual({
      type: 'fast',
      limit: 1,
      refillRate: 7,
      refillInterval: 10,
    });
  });

  test('returns a new object with only the canonical fields', () => {
    const input = {
      type: 'fast',
      async: true,
      limit: 1,
      refillRate: 1,
      refillInterval: 1,
    } as const;
    const config = normalizeRatelimit(input);
    expect(Object.keys(config).sort()).toEqual(['limit', 'refillInterval', 'refillRate', 'type']);
  });
});

describe('normalizeRatelimit: the newer vocabulary', () => {
  test.each([
    [true, 'fast'],
    [false, 'consistent'],
  ] as const)('async %s means type %s', (async, type) => {
    expect(normalizeRatelimit({ async, limit: 100, duration: 60_000 })).toEqual({
      type,
      limit: 100,
      refillRate: 100,
      refillInterval: 60_000,
    });
  });

  test('refillRate = limit and refillInterval = duration', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 2_592_000_000 }),
        (async, limit, duration) => {
          expect(normalizeRatelimit({ async, limit, duration })).toEqual({
            type: async ? 'fast' : 'consistent',
            limit,
            refillRate: limit,
            refillInterval: duration,
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  test('agreeing fields of both vocabularies are accepted together', () => {
    expect(
      normalizeRatelimit({
        type: 'consistent',
        async: false,
        limit: 4,
        refillRate: 4,
        refillInterval: 500,
        duration: 500,
      }),
    ).toEqual({ type: 'consistent', limit: 4, refillRate: 4, refillInterval: 500 });
  });

  test('type alone decides when async is absent', () => {
    expect(normalizeRatelimit({ type: 'fast', limit: 4, duration: 500 }).type).toBe('fast');
    expect(normalizeRatelimit({ type: 'consistent', limit: 4, duration: 500 }).type).toBe(
      'consistent',
    );
  });

  // The contract: "`type`: default `fast`"; v1's createKey defaults `async` to true.
  test('defaults to fast when neither type nor async is given', () => {
    expect(normalizeRatelimit({ limit: 100, duration: 60_000 }).type).toBe('fast');
  });
});

describe('normalizeRatelimit: contradictions are 400s naming the field', () => {
  test.each<[string, RatelimitInput, string]>([
    [
      'duration differs from refillInterval',
      { limit: 5, refillInterval: 1000, duration: 2000 },
      'ratelimit.duration: must equal ratelimit.refillInterval when both are given',
    ],
    [
      'refillRate differs from limit when duration is given',
      { limit: 5, refillRate: 4, duration: 1000 },
      'ratelimit.refillRate: must equal ratelimit.limit when duration is given',
    ],
    [
      'async contradicts type (true vs consistent)',
      { type: 'consistent', async: true, limit: 5, duration: 1000 },
      'ratelimit.async: contradicts ratelimit.type',
    ],
    [
      'async contradicts type (false vs fast)',
      { type: 'fast', async: false, limit: 5, refillRate: 1, refillInterval: 1000 },
      'ratelimit.async: contradicts ratelimit.type',
    ],
    [
      'neither refill fields nor duration',
      { limit: 5 },
      'ratelimit: needs either refillRate and refillInterval, or duration',
    ],
    [
      'refillRate without refillInterval',
      { limit: 5, refillRate: 1 },
      'ratelimit: needs either refillRate and refillInterval, or duration',
    ],
    [
      'refillInterval without refillRate',
      { limit: 5, refillInterval: 1000 },
      'ratelimit: needs either refillRate and refillInterval, or duration',
    ],
  ])('%s', (_, input, message) => {
    const error = badRequest(input);
    expect(error.message).toBe(message);
    expect(error.status).toBe(400);
    expect(error.code).toBe('BAD_REQUEST');
  });

  test('the path of the object is used in every message and names the field', () => {
    const refused = badRequest({ limit: 5, refillInterval: 1, duration: 2 }, [
      'keys',
      3,
      'ratelimit',
    ]);
    expect(refused.message).toBe(
      'keys[3].ratelimit.duration: must equal keys[3].ratelimit.refillInterval when both are given',
    );
    expect(refused.problems.map((problem) => problem.path)).toEqual([
      ['keys', 3, 'ratelimit', 'duration'],
    ]);
    expect(badRequest({ limit: 5 }, ['x']).message).toMatch(/^x: /);
    expect(badRequest({ type: 'fast', async: false, limit: 1, duration: 1 }, ['r']).message).toBe(
      'r.async: contradicts r.type',
    );
  });
});

describe('ratelimitOutput', () => {
  test.each<[RatelimitConfig, boolean]>([
    [{ type: 'fast', limit: 10, refillRate: 2, refillInterval: 1000 }, true],
    [{ type: 'consistent', limit: 10, refillRate: 10, refillInterval: 60_000 }, false],
  ])('echoes both vocabularies for %j', (config, async) => {
    expect(ratelimitOutput(config)).toEqual({
      type: config.type,
      async,
      limit: config.limit,
      refillRate: config.refillRate,
      refillInterval: config.refillInterval,
      duration: config.refillInterval,
    });
  });

  test('does not modify its input', () => {
    const config: RatelimitConfig = { type: 'fast', limit: 1, refillRate: 1, refillInterval: 1 };
    ratelimitOutput(config);
    expect(config).toEqual({ type: 'fast', limit: 1, refillRate: 1, refillInterval: 1 });
  });

  test('what is echoed reads back as the same config when refillRate = limit', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('fast' as const, 'consistent' as const),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 2_592_000_000 }),
        (type, limit, refillInterval) => {
          const config: RatelimitConfig = { type, limit, refillRate: limit, refillInterval };
          expect(normalizeRatelimit(ratelimitOutput(config))).toEqual(config);
          // A newer SDK that only knows { async, limit, duration } reads the same limit too.
          const { async, duration } = ratelimitOutput(config);
          expect(normalizeRatelimit({ async, limit, duration })).toEqual(config);
        },
      ),
      { numRuns: 200 },
    );
  });
});
