import { BadRequestError } from '../errors';
import { schemas } from '../http/schemas';
import { compile } from '../http/validation';
import { UsageError, type CommandSpec } from './framework';

/**
 * Checks a command's input against the HTTP API's own schema, so the command line accepts exactly
 * what the wire does. The message names the flag instead of the JSON field:
 * `ratelimit.limit: must be <= 1000000000` becomes `--ratelimit (limit): must be <= 1000000000`.
 */
export function validateAs<T>(
  operation: keyof typeof schemas,
  input: object,
  flags: Readonly<Record<string, string>>,
  command: CommandSpec,
): T {
  try {
    return compile<T>(schemas[operation])(input, 'input');
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    const match = /^([A-Za-z]+)((?:\.[A-Za-z]+)*): (.*)$/.exec(error.message);
    const flag = match && flags[match[1] as string];
    if (!match || flag === undefined) throw new UsageError(error.message, command);
    const detail = match[2] ? ` (${(match[2] as string).slice(1)})` : '';
    throw new UsageError(`${flag}${detail}: ${match[3] as string}`, command);
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
