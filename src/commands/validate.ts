import { BadRequestError } from '../errors';
import { compile } from '../http/validation';
import type { Operation } from '../operations/operation';
import { UsageError, type CommandSpec } from './framework';

/**
 * Checks a command's input against the HTTP API's own schema, so the command line accepts exactly
 * what the wire does. The message names the flag instead of the JSON field:
 * `ratelimit.limit: must be <= 1000000000` becomes `--ratelimit (limit): must be <= 1000000000`.
 */
export function validateAs<T>(
  operation: Pick<Operation, 'input'>,
  input: object,
  flags: Readonly<Record<string, string>>,
  command: CommandSpec,
): T {
  try {
    return compile<T>(operation.input)(input, 'input');
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    const match = /^([A-Za-z]+)((?:\.[A-Za-z]+)*): (.*)$/.exec(error.message);
    if (!match) throw new UsageError(error.message, command);
    const [, field = '', subpath = '', problem = ''] = match;
    // A flag may stand for a nested field (--cost for ratelimit.cost) or for a whole object.
    const exact = flags[field + subpath];
    const flag = exact ?? flags[field];
    if (flag === undefined) throw new UsageError(error.message, command);
    const detail = exact === undefined && subpath ? ` (${subpath.slice(1)})` : '';
    throw new UsageError(`${flag}${detail}: ${problem}`, command);
  }
}

/** A whole number for a flag, refused as a usage error otherwise. */
export function integerFlag(
  value: string | undefined,
  flag: string,
  command: CommandSpec,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,16}$/.test(value)) throw new UsageError(`${flag}: must be a whole number`, command);
  return Number(value);
}
