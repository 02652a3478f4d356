import type { CachedNamespace } from '../../../src/cache/directory';
import type { Namespace } from '../../../src/domain/overrides';
import {
  BadRequestError,
  InsufficientPermissionsError,
  ServiceUnavailableError,
} from '../../../src/errors';
import type { ChargeOutcome, LimitCharge } from '../../../src/limiter/limiter';
import { OverrideMatcher } from '../../../src/limiter/overrides';
import { runOperation } from '../../../src/operations/operation';
import { multiLimit, type LimitCheck } from '../../../src/operations/ratelimits/multiLimit';
import type { Services } from '../../../src/operations/services';
import { callerWith, NOW, thrownBy, WS } from './fakes';

const PAYMENTS: CachedNamespace = {
  id: 'rlns_pay',
  name: 'payments',
  overrides: [],
  matcher: new OverrideMatcher([
    { id: 'rlor_vip', identifier: 'vip', limit: 50, duration: 1000, async: true },
  ]),
};

/** A limiter that answers each call from `answers`, in turn, and records what it was asked. */
class FakeLimiter {
  readonly calls: LimitCharge[][] = [];
  constructor(private readonly answers: (ChargeOutcome | Error)[]) {}
  async charge(charges: readonly LimitCharge[]): Promise<ChargeOutcome> {
    this.calls.push([...charges]);
    const answer = this.answers.shift();
    if (!answer) throw new Error('unexpected charge');
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

function setup(answers: (ChargeOutcome | Error)[], failure: 'open' | 'closed' = 'closed') {
  const limiter = new FakeLimiter(answers);
  const ensured: string[] = [];
  const deps = {
    directory: {
      namespace: async (ws: string, name: string) =>
        ws === WS && name === PAYMENTS.name ? PAYMENTS : undefined,
    },
    ratelimits: {
      ensureNamespace: async (_ws: string, name: string, id: string): Promise<Namespace> => {
        ensured.push(name);
        return { id, name };
      },
    },
    limiter,
    limiterFailure: failure,
    now: () => NOW,
    usage: { limit: () => undefined },
  } as unknown as Pick<
    Services,
    'directory' | 'ratelimits' | 'limiter' | 'limiterFailure' | 'now' | 'usage'
  >;
  const run = (checks: LimitCheck[], permissions = ['*']) =>
    runOperation(multiLimit, deps, callerWith(permissions), checks);
  return { limiter, ensured, run };
}

const CHECKS: LimitCheck[] = [
  { namespace: 'payments', identifier: 'vip', limit: 1, duration: 60_000 },
  { namespace: 'email', identifier: 'ann', limit: 5, duration: 1000, cost: 2 },
];

const standing = (remaining: number, exceeded = false) => ({ remaining, reset: NOW + 1, exceeded });

describe('ratelimits.multiLimit', () => {
  test('one charge of every bucket, shaped by its override, in the order given', async () => {
    const { limiter, ensured, run } = setup([
      { allowed: true, usageExceeded: false, standings: [standing(49), standing(3)], now: NOW },
    ]);
    expect(await run(CHECKS)).toEqual({
      success: true,
      limits: [
        {
          namespace: 'payments',
          identifier: 'vip',
          success: true,
          limit: 50,
          remaining: 49,
          reset: NOW + 1,
          overrideId: 'rlor_vip',
        },
        {
          namespace: 'email',
          identifier: 'ann',
          success: true,
          limit: 5,
          remaining: 3,
          reset: NOW + 1,
        },
      ],
    });
    expect(ensured).toEqual(['email']);
    expect(limiter.calls).toHaveLength(1);
    const [vip, ann] = limiter.calls[0]!;
    expect(vip).toEqual({
      bucketKey: expect.stringContaining(`{rl:${WS}:rlns_pay:vip}`),
      tag: `rl:${WS}:rlns_pay:vip`,
      config: { type: 'fast', limit: 50, refillRate: 50, refillInterval: 1000 },
      cost: 1,
    });
    expect(ann).toMatchObject({
      config: { type: 'consistent', limit: 5, refillRate: 5, refillInterval: 1000 },
      cost: 2,
    });
  });

  test('a bucket the refusal did not reach is read, not charged, and judged on its cost', async () => {
    const { limiter, run } = setup([
      { allowed: false, usageExceeded: false, standings: [standing(0, true), undefined], now: NOW },
      { allowed: true, usageExceeded: false, standings: [standing(1)], now: NOW },
    ]);
    const outcome = await run(CHECKS);
    expect(outcome.success).toBe(false);
    expect(outcome.limits.map((l) => [l.success, l.remaining])).toEqual([
      [false, 0],
      // It holds 1, the check costs 2.
      [false, 1],
    ]);
    expect(limiter.calls[1]).toEqual([{ ...limiter.calls[0]![1]!, cost: 0 }]);
  });

  test('an unreachable limiter: 503 when closed; admitted and unevaluated when open', async () => {
    const down = new Error('Connection is closed.');
    expect(await thrownBy(() => setup([down]).run(CHECKS))).toBeInstanceOf(ServiceUnavailableError);
    expect(await setup([down], 'open').run(CHECKS)).toEqual({
      success: true,
      evaluated: false,
      limits: [
        expect.objectContaining({
          success: true,
          limit: 50,
          remaining: 0,
          reset: NOW,
          evaluated: false,
        }),
        expect.objectContaining({
          success: true,
          limit: 5,
          remaining: 0,
          reset: NOW,
          evaluated: false,
        }),
      ],
    });
    // The refusal was decided; the bucket it did not reach could not be read afterwards.
    const unread = await setup([
      { allowed: false, usageExceeded: false, standings: [standing(0, true), undefined], now: NOW },
      down,
    ]).run(CHECKS);
    expect(unread.limits[1]).toEqual(
      expect.objectContaining({ success: false, remaining: 0, evaluated: false }),
    );
  });

  test('refusals come before anything is made or spent', async () => {
    const { limiter, ensured, run } = setup([]);
    const twice = await thrownBy(() => run([CHECKS[1]!, { ...CHECKS[1]!, limit: 9 }]));
    expect(twice).toBeInstanceOf(BadRequestError);
    const denied = await thrownBy(() => run(CHECKS, ['ratelimit.payments.limit']));
    expect(denied).toBeInstanceOf(InsufficientPermissionsError);
    expect((denied as InsufficientPermissionsError).permission).toBe('ratelimit.email.limit');
    expect(ensured).toEqual([]);
    expect(limiter.calls).toEqual([]);
  });
});
