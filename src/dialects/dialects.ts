import type { Dialect } from './dialect';
import { v1Dialect } from './v1/dialect';
import { v2Dialect } from './v2/dialect';

/**
 * The dialect a path speaks, before any route is found: an unknown `/v2/…` path still gets v2's
 * error, and anything outside `/v2/` (v1, the pages, an unknown path) v1's.
 */
export function dialectOf(path: string): Dialect {
  return path.startsWith(v2Dialect.prefix) ? v2Dialect : v1Dialect;
}
