import { KEY_PATTERN } from '../../src/keys/keyFormat';

/**
 * The README's walk-through as data, and the comparison of a printed answer with a real one.
 * Pure: `test/integration/readme.test.ts` runs the steps against a node, `test/unit/walkthrough`
 * tests the rules below.
 *
 * The rules a walk-through section follows:
 * - Each ```sh block is a step. The first ```json, ```text or ```console block after it, before
 *   the next ```sh block, is its printed answer (prose may sit between them). A step with no
 *   printed answer must print nothing.
 * - A ```json answer is one JSON value (curl's one line, pretty-printed). In a ```text or
 *   ```console answer each line is one line of output, compared as JSON when it parses as JSON.
 * - `export VAR=<literal>` (no `$`, no quotes): the literal was read from the previous printed
 *   answer. The run sets VAR to what the real answer holds at the same place instead.
 * - `<!-- walkthrough: skip: <reason> -->` on the line(s) before a fenced block: that block is not
 *   run or compared (it needs port 8080, a terminal, Docker, …). The reason is required.
 * - Any other fenced block in a walk-through section is an error: nothing is left out silently.
 */

export interface Fence {
  lang: string;
  text: string;
  /** 1-based line of the opening fence in the README. */
  line: number;
  /** The reason of a skip marker right before it. */
  skip?: string;
}

export interface Step {
  script: string;
  line: number;
  answer?: Fence;
}

export interface Walkthrough {
  steps: Step[];
  skipped: Fence[];
}

const ANSWER_LANGS = new Set(['json', 'text', 'console']);
const SKIP_MARKER = /^<!--\s*walkthrough:\s*skip:\s*(.+?)\s*-->$/;

/** The text of every `##` section whose heading starts with `## Walk-through`, subsections included. */
export function walkthroughSections(markdown: string): { text: string; firstLine: number }[] {
  const lines = markdown.split('\n');
  const sections: { text: string; firstLine: number }[] = [];
  let start: number | undefined;
  let inFence = false;
  const close = (end: number) => {
    if (start !== undefined)
      sections.push({ text: lines.slice(start, end).join('\n'), firstLine: start + 1 });
    start = undefined;
  };
  lines.forEach((line, i) => {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence || !/^## /.test(line)) return;
    close(i);
    if (/^## Walk-through/.test(line)) start = i;
  });
  close(lines.length);
  return sections;
}

/** Every fenced block of `text`, with its skip marker. */
export function fences(text: string, firstLine = 1): Fence[] {
  const lines = text.split('\n');
  const found: Fence[] = [];
  let open: { lang: string; line: number; body: string[]; skip?: string } | undefined;
  let skip: string | undefined;
  lines.forEach((line, i) => {
    if (open) {
      if (line.trim() === '```') {
        found.push({
          lang: open.lang,
          text: open.body.join('\n'),
          line: open.line,
          ...(open.skip === undefined ? {} : { skip: open.skip }),
        });
        open = undefined;
      } else open.body.push(line);
      return;
    }
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      open = { lang: fence[1]!, line: firstLine + i, body: [], ...(skip ? { skip } : {}) };
      skip = undefined;
      return;
    }
    const marker = SKIP_MARKER.exec(line.trim());
    if (marker) skip = marker[1];
    else if (/walkthrough:/.test(line))
      throw new Error(`line ${firstLine + i}: bad marker ${line}`);
    else if (line.trim() !== '') skip = undefined;
  });
  if (open) throw new Error(`line ${open.line}: unclosed fence`);
  return found;
}

/** The steps of the README's walk-through sections, in order. */
export function parseWalkthrough(markdown: string): Walkthrough {
  const steps: Step[] = [];
  const skipped: Fence[] = [];
  for (const section of walkthroughSections(markdown)) {
    let last: Step | undefined;
    for (const fence of fences(section.text, section.firstLine)) {
      if (fence.skip !== undefined) {
        skipped.push(fence);
      } else if (fence.lang === 'sh') {
        last = { script: fence.text, line: fence.line };
        steps.push(last);
      } else if (ANSWER_LANGS.has(fence.lang) && last && !last.answer) {
        last.answer = fence;
      } else {
        throw new Error(
          `README line ${fence.line}: a \`\`\`${fence.lang} block that is neither a step, ` +
            'the answer of the step before it, nor marked <!-- walkthrough: skip: <reason> -->',
        );
      }
    }
  }
  return { steps, skipped };
}

/** An answer as parts: a json block is one part, a text block one part per line. */
export type Part = { json: unknown } | { line: string };

export function printedParts(answer: Fence): Part[] {
  if (answer.lang === 'json') return [{ json: JSON.parse(answer.text) }];
  return answer.text.split('\n').map(linePart);
}

export function realParts(answer: Fence, output: string): Part[] {
  if (answer.lang === 'json') {
    try {
      return [{ json: JSON.parse(output) }];
    } catch {
      return [{ line: output }];
    }
  }
  return output.split('\n').map(linePart);
}

function linePart(line: string): Part {
  const trimmed = line.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return { json: JSON.parse(trimmed) };
    } catch {
      // Not JSON: compared as a line.
    }
  }
  return { line };
}

export type Path = (string | number)[];

/** Where `value` sits in `parts` (the first place, depth first), as [part, ...JSON path]. */
export function findLiteral(parts: Part[], value: string): Path | undefined {
  const search = (node: unknown, path: Path): Path | undefined => {
    if (node === value) return path;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const found = search(node[i], [...path, i]);
        if (found) return found;
      }
    } else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        const found = search(v, [...path, k]);
        if (found) return found;
      }
    }
    return undefined;
  };
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const found = 'json' in part ? search(part.json, [i]) : undefined;
    if (found) return found;
  }
  return undefined;
}

export function readPath(parts: Part[], path: Path): unknown {
  const [first, ...rest] = path;
  const part = parts[first as number];
  let node: unknown = part && 'json' in part ? part.json : undefined;
  for (const step of rest) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[step];
  }
  return node;
}

export interface ExportLiteral {
  name: string;
  value: string;
}

/** The `export VAR=<literal>` assignments of a script, in order. */
export function exportLiterals(script: string): ExportLiteral[] {
  const found: ExportLiteral[] = [];
  for (const raw of script.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (!line.startsWith('export ')) continue;
    for (const word of line.slice('export '.length).trim().split(/\s+/)) {
      const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(word);
      if (!assignment) throw new Error(`cannot read the export ${raw}`);
      const value = assignment[2]!;
      if (/[$'"`…]/.test(value)) continue;
      found.push({ name: assignment[1]!, value });
    }
  }
  return found;
}

/**
 * The script with each `export VAR=<literal>` taken from the real answer: the literal's place in
 * the printed answer, read in the real one. Throws when a literal is not in the printed answer.
 */
export function substituteExports(script: string, printed: Part[], real: Part[]): string {
  let result = script;
  for (const { name, value } of exportLiterals(script)) {
    const path = findLiteral(printed, value);
    if (!path) throw new Error(`export ${name}=${value}: not in the previous printed answer`);
    const actual = readPath(real, path);
    if (typeof actual !== 'string')
      throw new Error(`export ${name}: the real answer has no string at ${JSON.stringify(path)}`);
    result = result.split(`${name}=${value}`).join(`${name}=${quote(actual)}`);
  }
  return result;
}

function quote(value: string): string {
  return /^[A-Za-z0-9_.:/@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Fields whose numbers differ from run to run (times, durations, latencies): compared as "both a
 * number". Anything else must be equal, but for ids and plaintext keys (below).
 */
export const TIME_FIELDS = new Set([
  'createdAt',
  'updatedAt',
  'expires',
  'reset',
  'lastRefillAt',
  'lastUsed',
  'lastUsedAt',
  'latencyMs',
  'time',
]);

/** src/keys/ids.ts's prefixes, and v2's `rl_` (a named limit's id, derived from its key's id). */
const ID = '(?:ws|api|key|req|rk|rlns|rlor|perm|role|id|aud|rl)_[1-9A-HJ-NP-Za-km-z]{16,32}';
const KEY = `(?:kwroot_[1-9A-HJ-NP-Za-km-z]{16,64}|${KEY_PATTERN})`;
/** Ids and plaintext keys inside any string; group 1 is an id, group 2 a key. */
const VARYING = new RegExp(`(?<![A-Za-z0-9_])(?:(${ID})|(${KEY}))(?![A-Za-z0-9_])`, 'g');

/**
 * Ids and keys seen so far, printed ↔ real: one printed id stands for one real id throughout the
 * walk-through, and the other way round.
 */
export class Correspondence {
  private readonly printedToReal = new Map<string, string>();
  private readonly realToPrinted = new Map<string, string>();

  /** Whether `printed` and `real` can stand for each other; remembers them when they can. */
  pair(printed: string, real: string): boolean {
    const a = this.printedToReal.get(printed);
    const b = this.realToPrinted.get(real);
    if (a !== undefined || b !== undefined) return a === real && b === printed;
    this.printedToReal.set(printed, real);
    this.realToPrinted.set(real, printed);
    return true;
  }
}

interface Token {
  kind: 'id' | 'key';
  value: string;
  /** What must be equal: an id's prefix, a key's prefix before its random part. */
  shape: string;
}

function tokens(text: string): { template: string; tokens: Token[] } {
  const found: Token[] = [];
  const template = text.replace(VARYING, (match, id: string | undefined) => {
    if (id) {
      found.push({ kind: 'id', value: match, shape: match.slice(0, match.indexOf('_')) });
      return '<id>';
    }
    found.push({ kind: 'key', value: match, shape: keyPrefix(match) });
    return '<key>';
  });
  return { template, tokens: found };
}

function keyPrefix(key: string): string {
  if (key.startsWith('kwroot_')) return 'kwroot_';
  const at = key.lastIndexOf('_');
  return at < 0 ? '' : key.slice(0, at + 1);
}

/** Compares two strings: equal but for ids and keys, which must correspond. */
function sameString(
  printed: string,
  real: string,
  seen: Correspondence,
  field: string | undefined,
): boolean {
  if (printed === real) {
    // Still remembered, so that the same id printed elsewhere must stand for the same real one.
    for (const t of tokens(printed).tokens) seen.pair(t.value, t.value);
    return true;
  }
  if (field === 'start') return sameStart(printed, real);
  const p = tokens(printed);
  const r = tokens(real);
  if (p.template !== r.template || p.tokens.length !== r.tokens.length) return false;
  return p.tokens.every((t, i) => {
    const u = r.tokens[i]!;
    return t.kind === u.kind && t.shape === u.shape && seen.pair(t.value, u.value);
  });
}

/** A key's `start`: its prefix, then as many characters of its random part. */
function sameStart(printed: string, real: string): boolean {
  const at = printed.lastIndexOf('_');
  return (
    printed.length === real.length &&
    at >= 0 &&
    printed.slice(0, at + 1) === real.slice(0, at + 1) &&
    /^[1-9A-HJ-NP-Za-km-z]+$/.test(real.slice(at + 1))
  );
}

/** Every difference between a printed value and a real one, by path; none when they agree. */
export function differences(
  printed: unknown,
  real: unknown,
  seen: Correspondence,
  path = '$',
  field?: string,
): string[] {
  const at = (why: string) => [`${path}: ${why}`];
  if (field !== undefined && TIME_FIELDS.has(field) && typeof printed === 'number')
    return typeof real === 'number' ? [] : at(`printed a number, got ${JSON.stringify(real)}`);
  if (typeof printed === 'string' && typeof real === 'string')
    return sameString(printed, real, seen, field)
      ? []
      : at(`printed ${JSON.stringify(printed)}, got ${JSON.stringify(real)}`);
  if (Array.isArray(printed) || Array.isArray(real)) {
    if (!Array.isArray(printed) || !Array.isArray(real))
      return at(`printed ${JSON.stringify(printed)}, got ${JSON.stringify(real)}`);
    if (printed.length !== real.length)
      return at(`printed ${printed.length} items, got ${real.length}: ${JSON.stringify(real)}`);
    return printed.flatMap((p, i) => differences(p, real[i], seen, `${path}[${i}]`, field));
  }
  if (isObject(printed) && isObject(real)) {
    const names = new Set([...Object.keys(printed), ...Object.keys(real)]);
    return [...names].flatMap((name) => {
      const child = `${path}.${name}`;
      if (!(name in real)) return [`${child}: printed, but absent from the real answer`];
      if (!(name in printed))
        return [`${child}: in the real answer (${JSON.stringify(real[name])}), not printed`];
      return differences(printed[name], real[name], seen, child, name);
    });
  }
  return printed === real
    ? []
    : at(`printed ${JSON.stringify(printed)}, got ${JSON.stringify(real)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Headers whose value is a number of seconds from now: compared as "both a whole number", as
 * TIME_FIELDS are (a slow run may see 59 where the README shows 60).
 */
export const TIME_HEADERS = new Set(['ratelimit-reset', 'retry-after']);

function sameLine(printed: string, real: string, seen: Correspondence): boolean {
  const header = /^([A-Za-z-]+):\s*\d+$/.exec(printed);
  if (header && TIME_HEADERS.has(header[1]!.toLowerCase())) {
    const actual = /^([A-Za-z-]+):\s*\d+$/.exec(real);
    return actual?.[1] === header[1];
  }
  return sameString(printed, real, seen, undefined);
}

/** Every difference between a printed answer and the real output, part by part. */
export function compareAnswer(printed: Part[], real: Part[], seen: Correspondence): string[] {
  if (printed.length !== real.length)
    return [`printed ${printed.length} line(s) or values, got ${real.length}`];
  return printed.flatMap((p, i) => {
    const r = real[i]!;
    const where = printed.length === 1 ? '$' : `[line ${i + 1}]`;
    if ('json' in p && 'json' in r) return differences(p.json, r.json, seen, where);
    if ('line' in p && 'line' in r)
      return sameLine(p.line, r.line, seen)
        ? []
        : [`${where}: printed ${JSON.stringify(p.line)}, got ${JSON.stringify(r.line)}`];
    return [`${where}: printed ${JSON.stringify(p)}, got ${JSON.stringify(r)}`];
  });
}
