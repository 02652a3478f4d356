import type { NamedLimit } from '../domain/namedLimits';
import type { RatelimitType } from '../domain/ratelimit';
import { BadRequestError, type FieldPath } from '../errors';

/** A named limit as clients send it (the schema has checked types and ranges). */
export interface NamedLimitInput {
  name: string;
  limit: number;
  duration: number;
  autoApply?: boolean;
  type?: RatelimitType;
}

/** A list of named limits that names one twice (v1's updateIdentity answers it as a 409). */
export class RepeatedNameError extends BadRequestError {
  constructor(
    path: FieldPath,
    readonly limitName: string,
  ) {
    super([{ path, message: `"${limitName}" is named twice` }]);
  }
}

/**
 * The stored form of a list of named limits: each name once, `consistent` and not applied
 * automatically unless the input says so (Unkey's defaults), in the order given.
 */
export function normalizeNamedLimits(
  input: readonly NamedLimitInput[],
  path: FieldPath = ['ratelimits'],
): NamedLimit[] {
  const seen = new Set<string>();
  return input.map((limit, index) => {
    if (seen.has(limit.name)) {
      throw new RepeatedNameError([...path, index, 'name'], limit.name);
    }
    seen.add(limit.name);
    return {
      name: limit.name,
      type: limit.type ?? 'consistent',
      limit: limit.limit,
      duration: limit.duration,
      autoApply: limit.autoApply ?? false,
    };
  });
}
