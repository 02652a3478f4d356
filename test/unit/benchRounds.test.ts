import { pairedRounds, type CaseResult, type RoundFigures } from '../../bench/report';

/** A case with only what pairedRounds reads: its slices by round. */
function measuredIn(rounds: RoundFigures[]): CaseResult {
  return { rounds } as CaseResult;
}

const round = (n: number, requestsPerSecond: number, serverUsPerRequest: number) => ({
  round: n,
  requestsPerSecond,
  serverUsPerRequest,
});

describe('pairedRounds', () => {
  it('takes the median of per-round ratios, so one slow slice of one case does not decide', () => {
    // Round 2 of `a` ran through a slow stretch of the machine: its whole-run ratio would be 0.80.
    const a = measuredIn([round(0, 1000, 100), round(1, 1000, 100), round(2, 200, 300)]);
    const b = measuredIn([round(0, 1000, 90), round(1, 1000, 95), round(2, 1000, 92)]);
    const paired = pairedRounds(a, b)!;
    expect(paired.rounds).toBe(3);
    expect(paired.ratio.median).toBe(1);
    expect(paired.ratio.min).toBeCloseTo(0.2);
    expect(paired.cpuDifferenceUs.median).toBe(10);
    expect(paired.cpuDifferenceUs.max).toBe(208);
  });

  it('pairs only rounds both cases were measured in', () => {
    const a = measuredIn([round(0, 900, 1), round(1, 900, 1), round(2, 900, 1), round(3, 10, 1)]);
    const b = measuredIn([round(0, 1000, 1), round(1, 1000, 1), round(2, 1000, 1)]);
    const paired = pairedRounds(a, b)!;
    expect(paired.rounds).toBe(3);
    expect(paired.ratio.median).toBeCloseTo(0.9);
  });

  it('gives no figure under three shared rounds, or for a run recorded without rounds', () => {
    const two = measuredIn([round(0, 1, 1), round(1, 1, 1)]);
    expect(pairedRounds(two, two)).toBeUndefined();
    expect(pairedRounds({} as CaseResult, two)).toBeUndefined();
  });
});
