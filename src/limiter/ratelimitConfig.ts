import type { RatelimitConfig, RatelimitType } from '../domain/ratelimit';
import { type FieldPath, invalidField, pathText } from '../errors';

/**
 * What clients may send: the original v1 vocabulary `{ type, limit, refillRate, refillInterval }`
 * or the newer one `{ async, limit, duration }`. The schema has already checked types and ranges.
 */
export interface RatelimitInput {
  type?: RatelimitType;
  async?: boolean;
  limit: number;
  refillRate?: number;
  refillInterval?: number;
  duration?: number;
}

/** Both vocabularies, so old and new SDKs can read what they wrote. */
export interface RatelimitOutput extends RatelimitConfig {
  async: boolean;
  duration: number;
}

export function normalizeRatelimit(
  input: RatelimitInput,
  path: FieldPath = ['ratelimit'],
): RatelimitConfig {
  const { type, async, limit, refillRate, refillInterval, duration } = input;
  if (duration !== undefined) {
    if (refillInterval !== undefined && refillInterval !== duration) {
      throw invalidField(
        [...path, 'duration'],
        `must equal ${pathText([...path, 'refillInterval'])} when both are given`,
      );
    }
    if (refillRate !== undefined && refillRate !== limit) {
      throw invalidField(
        [...path, 'refillRate'],
        `must equal ${pathText([...path, 'limit'])} when duration is given`,
      );
    }
  } else if (refillRate === undefined || refillInterval === undefined) {
    throw invalidField(path, 'needs either refillRate and refillInterval, or duration');
  }
  const typeFromAsync: RatelimitType | undefined =
    async === undefined ? undefined : async ? 'fast' : 'consistent';
  if (type !== undefined && typeFromAsync !== undefined && type !== typeFromAsync) {
    throw invalidField([...path, 'async'], `contradicts ${pathText([...path, 'type'])}`);
  }
  // Both vocabularies default to fast: v1's createKey documents `async` as defaulting to true.
  return {
    type: type ?? typeFromAsync ?? 'fast',
    limit,
    refillRate: duration !== undefined ? limit : (refillRate as number),
    refillInterval: duration ?? (refillInterval as number),
  };
}

export function ratelimitOutput(config: RatelimitConfig): RatelimitOutput {
  return { ...config, async: config.type === 'fast', duration: config.refillInterval };
}
