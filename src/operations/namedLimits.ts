import type { NamedLimit } from '../domain/namedLimits';
import type { RatelimitType } from '../domain/ratelimit';
import { type FieldPath, invalidField } from '../errors';

/** A named limit as clients send it (the schema has checked types and ranges). */
export interface NamedLimitInput {
  name: string;
  limit: number;
  duration: number;
  autoApply?: boolean;
  type?: RatelimitType;
}

/** The first name a list of limits gives twice, if any. */
export function repeatedName(input: readonly { name: string }[]): string | undefined {
  const seen = new Set<string>();
  return input.find(({ name }) => (seen.has(name) ? true : (seen.add(name), false)))?.name;
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
      throw invalidField([...path, index, 'name'], `"${limit.name}" is named twice`);
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
