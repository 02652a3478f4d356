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
    return compile<T>(operation.input)(input, 'body');
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    throw new UsageError(inFlagTerms(error, flags), command);
  }
}

/**
 * The first problem with its field named by the flag that set it. An item of a list
 * (`groupBy[1]`) is the list's flag: `--group-by a,b` gave them all; a flag may stand for a
 * nested field (--cost for ratelimit.cost) or for a whole object.
 */
function inFlagTerms(error: BadRequestError, flags: Readonly<Record<string, string>>): string {
  const [field, ...rest] = error.problems[0]?.path ?? [];
  const names = typeof rest[0] === 'number' ? rest.slice(1) : rest;
  if (typeof field !== 'string' || !names.every((name) => typeof name === 'string')) {
    return error.message;
  }
  const subpath = names.join('.');
  const exact = flags[subpath ? `${field}.${subpath}` : field];
  const flag = exact ?? flags[field];
  if (flag === undefined) return error.message;
  const detail = exact === undefined && subpath ? ` (${subpath})` : '';
  return `${flag}${detail}: ${error.problems[0]?.message ?? ''}`;
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

const AGO = /^(\d{1,9})(m|h|d)$/;
const AGO_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A date, or a date and time with its offset: a time without one would be the machine's zone. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * A point in time for a flag, as Unix ms: the number itself, an ISO 8601 date (`2026-11-20`,
 * midnight UTC; `2026-11-20T10:00:00Z`), or a time ago (`90m`, `36h`, `7d` before `now`).
 */
export function timeFlag(
  value: string | undefined,
  flag: string,
  command: CommandSpec,
  now: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,16}$/.test(value)) return Number(value);
  const ago = AGO.exec(value);
  if (ago) return Math.max(0, now - Number(ago[1]) * AGO_MS[ago[2] as keyof typeof AGO_MS]);
  const ms = ISO_DATE.test(value) ? Date.parse(value) : NaN;
  if (Number.isFinite(ms) && ms >= 0) return ms;
  throw new UsageError(
    `${flag}: must be unix ms, an ISO 8601 date (2026-11-20, 2026-11-20T10:00:00Z) or a time ago (90m, 36h, 7d)`,
    command,
  );
}
