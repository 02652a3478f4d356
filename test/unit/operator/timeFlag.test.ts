import type { CommandSpec } from '../../../src/commands/framework';
import { UsageError } from '../../../src/commands/framework';
import { timeFlag } from '../../../src/commands/validate';

const command: CommandSpec = {
  path: ['usage', 'key'],
  brief: '',
  summary: '',
  run: () => Promise.resolve(0),
};
const NOW = Date.UTC(2030, 0, 2, 12, 0, 0);
const at = (value: string | undefined) => timeFlag(value, '--start', command, NOW);

describe('timeFlag', () => {
  test.each([
    ['1893456000000', 1_893_456_000_000],
    ['0', 0],
    ['2030-01-01', Date.UTC(2030, 0, 1)],
    ['2030-01-01T10:30Z', Date.UTC(2030, 0, 1, 10, 30)],
    ['2030-01-01T10:30:15.5+02:00', Date.UTC(2030, 0, 1, 8, 30, 15, 500)],
    ['90m', NOW - 90 * 60_000],
    ['36h', NOW - 36 * 3_600_000],
    ['7d', NOW - 7 * 86_400_000],
    ['999999999d', 0],
  ])('%s is %d', (value, ms) => {
    expect(at(value)).toBe(ms);
  });

  test('absent is undefined', () => {
    expect(at(undefined)).toBeUndefined();
  });

  // A time without an offset would be read in the machine's own zone: refused, not guessed.
  test.each(['yesterday', '2030-01-01T10:30', '2030-13-01', '-1', '1.5', '7w', '', '2030-1-1'])(
    '%j is a usage error naming the flag',
    (value) => {
      expect(() => at(value)).toThrow(UsageError);
      expect(() => at(value)).toThrow(/^--start: must be unix ms, an ISO 8601 date/);
    },
  );
});
