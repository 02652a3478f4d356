import { BadRequestError, type FieldPath } from '../errors';

/**
 * The permission query of verifyKey's `authorization.permissions`, in both of Unkey's wire forms:
 *
 *   v1 JSON:   "a.read" | { "and": [query, ...] } | { "or": [query, ...] }
 *   v2 string: query  = and { OR and }
 *              and    = operand { AND operand }
 *              operand = NAME | "(" query ")"
 *
 * Both parse into one normalized AST so the evaluator, logs and tests see a single shape. The
 * v2 rules follow Unkey's own parser (pkg/rbac/lexer.go and parser.go in unkeyed/unkey): AND and
 * OR are case-insensitive whole words, AND binds tighter than OR, whitespace is only needed where
 * two words would otherwise run together, and `*` is a literal character, never a wildcard.
 *
 * Everything here fails closed: input that does not parse is a BadRequestError, never "allowed".
 */
export type PermissionQuery =
  { kind: 'permission'; name: string } | { kind: 'and' | 'or'; of: PermissionQuery[] };

export const PERMISSION_QUERY_LIMITS = {
  /** Unkey v2's OpenAPI caps the string at 1000 (V2KeysVerifyKeyRequestBody.yaml). */
  maxQueryLength: 1000,
  /** Parentheses in the string form, and/or objects in the JSON form. */
  maxDepth: 16,
  /** Per and/or array of the JSON form; the string form is bounded by its length instead. */
  maxItems: 100,
  /** Objects plus names in the JSON form, so shared or wide subtrees cannot multiply the work. */
  maxNodes: 1000,
  /** Unkey v2 permission names are at most 512 characters (createPermission's `name`). */
  maxNameLength: 512,
} as const;

const {
  maxQueryLength: MAX_QUERY_LENGTH,
  maxDepth: MAX_DEPTH,
  maxItems: MAX_ITEMS,
  maxNodes: MAX_NODES,
  maxNameLength: MAX_NAME_LENGTH,
} = PERMISSION_QUERY_LIMITS;

// Unkey's documented set (/^[a-zA-Z0-9_:\-\.\*\/]+$/). Its Go lexer also lets some Latin-1 bytes
// through by accident (unicode.IsLetter on a byte); we keep to the documented ASCII set.
const NAME_CHARS: ReadonlySet<string> = new Set(
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:*/',
);
const WHITESPACE: ReadonlySet<string> = new Set(' \t\n\r');

/**
 * Parses either wire form: a string is the v2 grammar (a bare permission name is valid in both),
 * an object is the v1 JSON form. Every error names `path` (or a field within it).
 */
export function parsePermissionQuery(
  input: unknown,
  path: FieldPath = ['authorization', 'permissions'],
): PermissionQuery {
  if (typeof input === 'string') return parseString(input, path);
  return parseJson(input, path, 0, { nodes: 0 }, path);
}

/** Whether `held` satisfies the query; names match exactly, `*` included. */
export function evaluate(query: PermissionQuery, held: ReadonlySet<string>): boolean {
  switch (query.kind) {
    case 'permission':
      return held.has(query.name);
    case 'and':
      // The parser never builds an empty and/or, but `[].every` is true: fail closed on hand-built
      // trees rather than grant on a vacuous truth.
      return query.of.length > 0 && query.of.every((q) => evaluate(q, held));
    case 'or':
      return query.of.some((q) => evaluate(q, held));
    default:
      return false;
  }
}

/** The distinct names the query mentions, in order of first mention. */
export function permissionsNamed(query: PermissionQuery): string[] {
  const names = new Set<string>();
  const visit = (q: PermissionQuery): void => {
    if (q.kind === 'permission') names.add(q.name);
    else q.of.forEach(visit);
  };
  visit(query);
  return [...names];
}

/** The query in the v2 string form with as few parentheses as precedence allows, for messages. */
export function formatPermissionQuery(query: PermissionQuery, parent?: 'and' | 'or'): string {
  if (query.kind === 'permission') return query.name;
  const text = query.of
    .map((q) => formatPermissionQuery(q, query.kind))
    .join(query.kind === 'and' ? ' AND ' : ' OR ');
  return query.kind === 'or' && parent === 'and' ? `(${text})` : text;
}

// ---------------------------------------------------------------------------------------------
// v2 string form

type TokenType = 'name' | 'and' | 'or' | '(' | ')' | 'end';

interface Token {
  type: TokenType;
  text: string;
  /** 0-based character offset, as in Unkey's messages. */
  at: number;
}

function parseString(source: string, path: FieldPath): PermissionQuery {
  // Checked before tokenizing so a huge string costs nothing beyond its length.
  if (source.length > MAX_QUERY_LENGTH) {
    throw bad(path, `must be at most ${MAX_QUERY_LENGTH} characters, got ${source.length}`);
  }
  const tokens = tokenize(source, path);
  if (tokens.length === 1) throw bad(path, 'must not be empty');
  return new Parser(tokens, path).parse();
}

function tokenize(source: string, path: FieldPath): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source.charAt(i);
    if (WHITESPACE.has(ch)) {
      i++;
    } else if (ch === '(' || ch === ')') {
      tokens.push({ type: ch, text: ch, at: i });
      i++;
    } else if (NAME_CHARS.has(ch)) {
      // Longest run of name characters; this is what makes "ANDROID" a name and "(a)AND(b)" an AND,
      // the same whole-word rule as Unkey's isCompleteWord.
      const start = i;
      while (i < source.length && NAME_CHARS.has(source.charAt(i))) i++;
      const text = source.slice(start, i);
      const type = operatorOf(text) ?? 'name';
      if (type === 'name' && text.length > MAX_NAME_LENGTH) {
        throw bad(path, `permission name at ${start} is longer than ${MAX_NAME_LENGTH} characters`);
      }
      tokens.push({ type, text, at: start });
    } else {
      throw bad(path, `invalid character ${quoteCharAt(source, i)} at ${i}`);
    }
  }
  tokens.push({ type: 'end', text: '', at: source.length });
  return tokens;
}

function operatorOf(word: string): 'and' | 'or' | undefined {
  const upper = word.toUpperCase();
  if (upper === 'AND') return 'and';
  if (upper === 'OR') return 'or';
  return undefined;
}

/**
 * Recursive descent, one function per precedence level. Only "(" recurses into a new level, and it
 * is refused past MAX_DEPTH before recursing, so the JS stack stays a few dozen frames deep
 * whatever the input.
 */
class Parser {
  private next = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly path: FieldPath,
  ) {}

  parse(): PermissionQuery {
    const query = this.parseOr(0);
    const after = this.take();
    if (after.type !== 'end') throw this.misplacedAfterOperand(after);
    return query;
  }

  private parseOr(depth: number): PermissionQuery {
    const parts = [this.parseAnd(depth)];
    while (this.peek().type === 'or') {
      this.take();
      parts.push(this.parseAnd(depth));
    }
    return combine('or', parts);
  }

  private parseAnd(depth: number): PermissionQuery {
    const parts = [this.parseOperand(depth)];
    while (this.peek().type === 'and') {
      this.take();
      parts.push(this.parseOperand(depth));
    }
    return combine('and', parts);
  }

  private parseOperand(depth: number): PermissionQuery {
    const token = this.take();
    switch (token.type) {
      case 'name': {
        // NOT in front of an operand is meant as an operator, which Unkey's grammar lacks: name
        // it, rather than the operand after it (`a AND NOT b` would blame "b"). A permission
        // named NOT still parses where an operand ends (`a AND NOT`).
        const after = this.peek().type;
        if (token.text.toUpperCase() === 'NOT' && (after === 'name' || after === '(')) {
          throw bad(
            this.path,
            `unknown operator ${JSON.stringify(token.text)} at ${token.at}: queries have AND and OR only`,
          );
        }
        return { kind: 'permission', name: token.text };
      }
      case '(': {
        if (depth >= MAX_DEPTH) {
          throw bad(this.path, `nested deeper than ${MAX_DEPTH} levels at ${token.at}`);
        }
        if (this.peek().type === ')') throw bad(this.path, `empty parentheses at ${token.at}`);
        const inner = this.parseOr(depth + 1);
        const close = this.take();
        if (close.type === ')') return inner;
        if (close.type === 'end') throw bad(this.path, `unclosed "(" at ${token.at}`);
        throw this.misplacedAfterOperand(close);
      }
      case 'end':
        throw bad(
          this.path,
          `unexpected end of query at ${token.at}, expected a permission or "("`,
        );
      default:
        throw bad(this.path, `unexpected ${JSON.stringify(token.text)} at ${token.at}`);
    }
  }

  /** A token where only AND, OR, ")" or the end may stand. */
  private misplacedAfterOperand(token: Token): BadRequestError {
    // A word where an operator must stand is most often one Unkey lacks (XOR, NOT), so say that.
    if (token.type === 'name') {
      return bad(this.path, `unknown operator ${JSON.stringify(token.text)} at ${token.at}`);
    }
    return bad(this.path, `unexpected ${JSON.stringify(token.text)} at ${token.at}`);
  }

  private peek(): Token {
    // The trailing 'end' token is never consumed past, so the index stays in range.
    return this.tokens[this.next] ?? this.endToken();
  }

  private take(): Token {
    const token = this.peek();
    if (token.type !== 'end') this.next++;
    return token;
  }

  private endToken(): Token {
    return this.tokens[this.tokens.length - 1] ?? { type: 'end', text: '', at: 0 };
  }
}

// ---------------------------------------------------------------------------------------------
// v1 JSON form

function parseJson(
  value: unknown,
  path: FieldPath,
  depth: number,
  budget: { nodes: number },
  rootPath: FieldPath,
): PermissionQuery {
  budget.nodes++;
  if (budget.nodes > MAX_NODES) {
    throw bad(rootPath, `must have at most ${MAX_NODES} permissions and and/or objects in total`);
  }
  if (typeof value === 'string') return { kind: 'permission', name: checkName(value, path) };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bad(path, `must be a permission or { and | or: [...] }, got ${describe(value)}`);
  }

  const keys = Object.keys(value);
  const unknown = keys.find((key) => key !== 'and' && key !== 'or');
  if (unknown !== undefined) throw bad(path, `unknown operator ${JSON.stringify(unknown)}`);
  if (keys.length !== 1) {
    throw bad(
      path,
      keys.length === 0 ? 'must have "and" or "or"' : 'must not have both "and" and "or"',
    );
  }
  const kind = keys[0] === 'and' ? 'and' : 'or';
  // Checked before descending, so a 1,000-deep (or cyclic) object stops after MAX_DEPTH frames.
  if (depth >= MAX_DEPTH) throw bad(rootPath, `nested deeper than ${MAX_DEPTH} levels`);

  const items: unknown = (value as Record<string, unknown>)[kind];
  const itemsPath = [...path, kind];
  if (!Array.isArray(items)) throw bad(itemsPath, `must be an array, got ${describe(items)}`);
  if (items.length === 0) throw bad(itemsPath, 'must not be empty');
  if (items.length > MAX_ITEMS) {
    throw bad(itemsPath, `must have at most ${MAX_ITEMS} items, got ${items.length}`);
  }
  const parts = items.map((item: unknown, i) =>
    parseJson(item, [...itemsPath, i], depth + 1, budget, rootPath),
  );
  return combine(kind, parts);
}

/** A v1 leaf is one permission name under the same rules as a name in the v2 string. */
function checkName(name: string, path: FieldPath): string {
  if (name.length === 0) throw bad(path, 'permission name must not be empty');
  if (name.length > MAX_NAME_LENGTH) {
    throw bad(path, `permission name is longer than ${MAX_NAME_LENGTH} characters`);
  }
  for (let i = 0; i < name.length; i++) {
    if (!NAME_CHARS.has(name.charAt(i))) {
      throw bad(path, `invalid character ${quoteCharAt(name, i)} at ${i} in permission name`);
    }
  }
  // The v2 string cannot name such a permission, so neither may v1: one set of names for both.
  if (operatorOf(name) !== undefined) {
    throw bad(path, `${JSON.stringify(name)} is an operator, not a permission name`);
  }
  return name;
}

// ---------------------------------------------------------------------------------------------
// shared

/**
 * Builds the normal form both parsers return: no and/or with a single child, and no child of the
 * same kind as its parent (and/or are associative). Children arrive already normalized, so
 * flattening one level is enough.
 */
function combine(kind: 'and' | 'or', parts: PermissionQuery[]): PermissionQuery {
  const [first] = parts;
  if (parts.length === 1 && first !== undefined) return first;
  const of: PermissionQuery[] = [];
  for (const part of parts) {
    if (part.kind === kind) of.push(...part.of);
    else of.push(part);
  }
  return { kind, of };
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** The whole code point, so an emoji is quoted as itself rather than as half a surrogate pair. */
function quoteCharAt(text: string, i: number): string {
  const code = text.codePointAt(i) ?? 0;
  return JSON.stringify(String.fromCodePoint(code));
}

function bad(path: FieldPath, message: string): BadRequestError {
  return new BadRequestError([{ path, message }], { kind: 'permission_query' });
}
