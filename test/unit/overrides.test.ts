import { OverrideMatcher } from '../../src/limiter/overrides';

const override = (identifier: string, limit: number) => ({
  id: `rlor_${limit}`,
  identifier,
  limit,
  duration: 1000,
});

describe('OverrideMatcher', () => {
  const matcher = new OverrideMatcher([
    override('user_*', 1),
    override('user_premium_*', 2),
    override('user_premium_alice', 3),
    override('*', 4),
  ]);

  test.each([
    ['user_premium_alice', 3], // exact beats every wildcard
    ['user_premium_bob', 2], // the longest wildcard wins
    ['user_bob', 1],
    ['team_x', 4], // '*' matches everything else
  ])('%s → limit %d', (identifier, limit) => {
    expect(matcher.match(identifier)?.limit).toBe(limit);
  });

  test('no override without a match', () => {
    expect(new OverrideMatcher([override('user_*', 1)]).match('team_x')).toBeUndefined();
    expect(new OverrideMatcher([]).match('anything')).toBeUndefined();
  });
});
