import type { RatelimitConfig, RatelimitType } from '../domain/ratelimit';
import { BadRequestError } from '../errors';

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

export function normalizeRatelimit(input: RatelimitInput, path = 'ratelimit'): RatelimitConfig {
  const { type, async, limit, refillRate, refillInterval, duration } = input;
  if (duration !== undefined) {
    if (refillInterval !== undefined && refillInterval !== duration) {
      throw new BadRequestError(
        `${path}.duration: must equal ${path}.refillInterval when both are given`,
      );
    }
    if (refillRate !== undefined && refillRate !== limit) {
      throw new BadRequestError(
        `${path}.refillRate: must equal ${path}.limit when duration is given`,
      );
    }
  } else if (refillRate === undefined || refillInterval === undefined) {
    throw new BadRequestError(`${path}: needs either refillRate and refillInterval, or duration`);
  }
  const typeFromAsync: RatelimitType | undefined =
    async === undefined ? undefined : async ? 'fast' : 'consistent';
  if (type !== undefined && typeFromAsync !== undefined && type !== typeFromAsync) {
    throw new BadRequestError(`${path}.async: contradicts ${path}.type`);
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
