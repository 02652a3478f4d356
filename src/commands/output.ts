import type { Invocation } from './framework';

/**
 * Output goes to stdout and nowhere else: no logger sees it, so a key's plaintext printed by a
 * create command reaches the operator's terminal once and no log file ever.
 */
export function writeLines(lines: readonly string[]): void {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}

/** One line of JSON with `--json`; the human form otherwise. */
export function emit(invocation: Invocation, json: unknown, human: () => string[]): void {
  if (invocation.json) process.stdout.write(`${JSON.stringify(json)}\n`);
  else writeLines(human());
}

/** Unix ms as an ISO date: what a person reads; JSON output keeps the number. */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** "in 59.9 s" / "2.0 s ago": how far a point in time is from `now`. */
export function relative(ms: number, now: number): string {
  const seconds = (ms - now) / 1000;
  return seconds >= 0 ? `in ${seconds.toFixed(1)} s` : `${(-seconds).toFixed(1)} s ago`;
}

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ');
  return [line(headers), ...rows.map(line)];
}

/** Fields whose numbers are unix ms: shown as dates to a person. */
const TIME_FIELDS = new Set([
  'createdAt',
  'updatedAt',
  'expires',
  'reset',
  'lastRefillAt',
  'last',
  'now',
  'nextRefillAt',
  'fullAt',
]);

function render(name: string, value: unknown): string {
  if (typeof value === 'number' && TIME_FIELDS.has(name)) return `${isoTime(value)} (${value})`;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * An object as aligned `name  value` lines; nested objects are flattened to `ratelimit.limit`,
 * except `meta`, which is the client's own JSON and is shown as such.
 */
export function fieldLines(record: object, prefix = ''): string[] {
  const pairs: [string, string][] = [];
  const walk = (value: object, path: string) => {
    for (const [name, child] of Object.entries(value)) {
      if (child === undefined) continue;
      const label = path ? `${path}.${name}` : name;
      if (child !== null && typeof child === 'object' && !Array.isArray(child) && name !== 'meta') {
        walk(child as object, label);
      } else {
        pairs.push([label, render(name, child)]);
      }
    }
  };
  walk(record, '');
  const width = Math.max(0, ...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${prefix}${label.padEnd(width)}  ${value}`);
}
