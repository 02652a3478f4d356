import { type FieldPath, invalidField } from '../errors';

/** Input limits that JSON Schema cannot express; all of them are listed in docs/limits.md. */
export const META_MAX_BYTES = 16 * 1024;
export const META_MAX_DEPTH = 8;

/** Refuses a `meta` object that is too large or too deeply nested to store and echo cheaply. */
export function checkMeta(meta: Record<string, unknown>, path: FieldPath = ['meta']): void {
  // Iterative, so a hostile nesting cannot exhaust the stack before it is refused.
  const stack: { value: unknown; depth: number }[] = [{ value: meta, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, depth } = next;
    if (value === null || typeof value !== 'object') continue;
    if (depth > META_MAX_DEPTH) {
      throw invalidField(path, `must not nest deeper than ${META_MAX_DEPTH} levels`);
    }
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  if (Buffer.byteLength(JSON.stringify(meta)) > META_MAX_BYTES) {
    throw invalidField(path, `must be at most ${META_MAX_BYTES} bytes as JSON`);
  }
}
