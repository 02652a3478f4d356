import { Parser } from 'node-sql-parser/build/bigquery';

/**
 * A caller's analytics SQL (v2 `analytics.getVerifications`), read with a real SQL parser
 * (node-sql-parser, its BigQuery grammar: it reads ClickHouse's `[…]` arrays, `tags[1]`,
 * `INTERVAL 7 DAY`, backticks and function calls as ClickHouse does), checked node by node
 * against what is allowed, rewritten, and written back out from the tree: the text ClickHouse
 * runs is the serialised tree, never the caller's text.
 *
 * The rewrite puts every reference to a public table in a subquery that keeps only the caller's
 * rows: `FROM key_verifications_v1 AS v` becomes
 * `FROM (SELECT * FROM key_verifications_v1 WHERE workspace_id = '<ws>' [AND key_space_id IN
 * (…)]) AS v`. ClickHouse 18.16 has no `WITH name AS (subquery)`: CTEs are inlined as
 * subqueries (docs/decisions.md, "SQL analytics").
 */

/** Why a query is refused; v2 answers each with Unkey's type (src/dialects/v2/errors.ts). */
export type QueryRefusal =
  'analytics_query' | 'analytics_table' | 'analytics_function' | 'analytics_query_type';

export class QueryRefused extends Error {
  constructor(
    readonly kind: QueryRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface QueryScope {
  /** The public names a query may read, each the physical table of that name. */
  tables: ReadonlySet<string>;
  /** Conditions every row read must meet: `column = value`, or `column IN (values)`. */
  filters: readonly { column: string; values: string | readonly string[] }[];
}

/**
 * The functions a query may call, Unkey's allow list (docs/product/platform/analytics/
 * query-restrictions) with what the same names need on ClickHouse (array for `[…]`, the
 * comparison and arithmetic functions an expression may spell out). Compared without case.
 */
const FUNCTIONS = new Set(
  [
    // Aggregates
    'count',
    'sum',
    'avg',
    'min',
    'max',
    'any',
    'groupArray',
    'groupUniqArray',
    'uniq',
    'uniqExact',
    'quantile',
    'countIf',
    'sumIf',
    // Date and time
    'now',
    'now64',
    'today',
    'toDate',
    'toDateTime',
    'toDateTime64',
    'toStartOfDay',
    'toStartOfWeek',
    'toStartOfMonth',
    'toStartOfYear',
    'toStartOfHour',
    'toStartOfMinute',
    'date_trunc',
    'formatDateTime',
    'fromUnixTimestamp64Milli',
    'toUnixTimestamp64Milli',
    'toUnixTimestamp',
    'toIntervalDay',
    'toIntervalWeek',
    'toIntervalMonth',
    'toIntervalYear',
    'toIntervalHour',
    'toIntervalMinute',
    'toIntervalSecond',
    'toIntervalMillisecond',
    'toIntervalMicrosecond',
    'toIntervalNanosecond',
    'toIntervalQuarter',
    'intDiv',
    // String
    'lower',
    'upper',
    'substring',
    'concat',
    'length',
    'trim',
    'startsWith',
    'endsWith',
    // JSON, math, conditional, conversion
    'JSONExtractString',
    'round',
    'floor',
    'ceil',
    'abs',
    'if',
    'coalesce',
    'toString',
    'toInt32',
    'toInt64',
    'toFloat64',
    'toUInt64',
    // Array
    'has',
    'hasAny',
    'hasAll',
    'arrayJoin',
    'arrayFilter',
    'array',
  ].map((name) => name.toLowerCase()),
);

/** Node types the checker knows; anything else in a tree is refused. */
const EXPRESSIONS = new Set([
  'column_ref',
  'single_quote_string',
  'number',
  'bool',
  'null',
  'binary_expr',
  'unary_expr',
  'function',
  'aggr_func',
  'expr_list',
  'array',
  'interval',
  'case',
  'when',
  'else',
  'star',
  'default',
  // A name in backticks; its value is held to NAME.
  'backticks_quote_string',
  // ORDER BY's direction.
  'ASC',
  'DESC',
]);

/** A name ClickHouse reads the same, quoted or not. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keys of a SELECT that may hold something; any other that is set is refused. */
const SELECT_KEYS = new Set([
  'type',
  'distinct',
  'columns',
  'from',
  'where',
  'groupby',
  'having',
  'orderby',
  'limit',
  'with',
  '_next',
  'set_op',
  '_orderby',
  '_limit',
  'loc',
]);

const parser = new Parser();
const GRAMMAR = { database: 'bigquery' };

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(kind: QueryRefusal, message: string): never {
  throw new QueryRefused(kind, message);
}

/** Parses, checks and rewrites `sql`; answers the statement ClickHouse is to run. */
export function rewriteQuery(sql: string, scope: QueryScope): string {
  let parsed: unknown;
  try {
    parsed = parser.astify(sql, GRAMMAR);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    refuse(
      'analytics_query',
      `the query does not parse (SETTINGS, FORMAT and INTO OUTFILE are not accepted): ${message.slice(0, 300)}`,
    );
  }
  const statements = (Array.isArray(parsed) ? parsed : [parsed]).filter((node) => node !== null);
  if (statements.length !== 1) refuse('analytics_query', 'one statement only');
  const statement = statements[0] as unknown;
  if (!isNode(statement) || statement.type !== 'select') {
    refuse('analytics_query_type', 'only SELECT queries are allowed');
  }
  const checker = new Checker(scope);
  checker.select(statement, new Map());
  let out: string;
  let again: string;
  let tables: string[];
  try {
    out = parser.sqlify(statement as never, GRAMMAR);
    // Defence in depth: what is sent must read back as itself, and name the public tables only.
    again = parser.sqlify(parser.astify(out, GRAMMAR), GRAMMAR);
    tables = parser.tableList(out, GRAMMAR);
  } catch {
    return refuse('analytics_query', 'the query cannot be run as written');
  }
  if (again !== out) refuse('analytics_query', 'the query cannot be run as written');
  for (const entry of tables) {
    const [, db, table] = entry.split('::');
    if (db !== 'null' || table === undefined || !scope.tables.has(table)) {
      refuse('analytics_table', 'the query cannot be run as written');
    }
  }
  return out;
}

/** CTE names in scope, each with its (already checked and rewritten) query. */
type Ctes = ReadonlyMap<string, Node>;

class Checker {
  constructor(private readonly scope: QueryScope) {}

  select(node: Node, outer: Ctes): void {
    if (node.type !== 'select') refuse('analytics_query_type', 'only SELECT queries are allowed');
    for (const [key, value] of Object.entries(node)) {
      if (value === null || value === undefined || value === false) continue;
      if (!SELECT_KEYS.has(key) && !(Array.isArray(value) && value.length === 0)) {
        refuse('analytics_query', `"${key}" is not accepted in a query`);
      }
    }
    const ctes = new Map(outer);
    if (node.with !== null && node.with !== undefined) {
      if (!Array.isArray(node.with)) refuse('analytics_query', 'this WITH is not accepted');
      for (const cte of node.with as unknown[]) {
        if (!isNode(cte) || !isNode(cte.name) || !isNode(cte.stmt)) {
          refuse('analytics_query', 'this WITH is not accepted');
        }
        const name = cte.name.value;
        if (typeof name !== 'string' || !NAME.test(name)) {
          refuse('analytics_query', 'a CTE name must be letters, digits and _');
        }
        if (cte.recursive || cte.columns) {
          refuse('analytics_query', 'recursive CTEs and CTE column lists are not accepted');
        }
        const body = this.subquery(cte.stmt, ctes);
        ctes.set(name, body);
      }
      // Inlined: 18.16 has no WITH name AS (subquery).
      node.with = null;
    }
    if (typeof node.set_op === 'string' && node.set_op.toLowerCase() !== 'union all') {
      refuse(
        'analytics_query',
        `${node.set_op.toUpperCase()} is not accepted: ClickHouse 18.16 has UNION ALL only`,
      );
    }
    if (node.distinct !== null && node.distinct !== undefined) {
      const distinct = isNode(node.distinct) ? node.distinct.type : node.distinct;
      if (distinct !== 'DISTINCT') refuse('analytics_query', 'this DISTINCT is not accepted');
    }
    if (Array.isArray(node.from)) {
      node.from = (node.from as unknown[]).map((item) => this.from(item, ctes));
    } else if (node.from !== null && node.from !== undefined) {
      refuse('analytics_query', 'this FROM is not accepted');
    }
    for (const key of ['columns', 'where', 'groupby', 'having', 'orderby', 'limit'] as const) {
      this.expression(node[key], ctes);
    }
    for (const key of ['_orderby', '_limit'] as const) this.expression(node[key], ctes);
    if (node._next !== null && node._next !== undefined) {
      if (!isNode(node._next)) refuse('analytics_query', 'this UNION is not accepted');
      this.select(node._next, outer);
    }
  }

  /** A `{tableList, columnList, ast}` or bare select node: checked, rewritten, its select. */
  private subquery(value: unknown, ctes: Ctes): Node {
    const ast = isNode(value) && isNode(value.ast) ? value.ast : value;
    if (!isNode(ast)) refuse('analytics_query', 'this subquery is not accepted');
    this.select(ast, ctes);
    return ast;
  }

  private from(item: unknown, ctes: Ctes): Node {
    if (!isNode(item)) refuse('analytics_query', 'this FROM is not accepted');
    const join = item.join;
    if (join !== undefined && join !== null) {
      if (typeof join !== 'string' || !/^((INNER|LEFT|RIGHT|FULL)( OUTER)? )?JOIN$/i.test(join)) {
        refuse('analytics_query', `${String(join)} is not accepted`);
      }
      if (item.using) refuse('analytics_query', 'JOIN … USING is not accepted; write ON');
      this.expression(item.on, ctes);
    }
    const alias = item.as;
    if (alias !== null && alias !== undefined && (typeof alias !== 'string' || !NAME.test(alias))) {
      refuse('analytics_query', 'an alias must be letters, digits and _');
    }
    if (item.type === 'expr' || item.type === 'dual' || item.type === 'unnest') {
      refuse('analytics_table', 'table functions are not allowed; read a public table');
    }
    if (isNode(item.expr)) {
      // A subquery in FROM.
      this.subquery(item.expr, ctes);
      if (!item.expr.ast) refuse('analytics_query', 'this FROM is not accepted');
      return item;
    }
    if (typeof item.table !== 'string') refuse('analytics_query', 'this FROM is not accepted');
    const table = item.table;
    if (item.db !== null && item.db !== undefined) {
      refuse(
        'analytics_table',
        `access to table '${String(item.db)}.${table}' is not allowed: name a public table without a database`,
      );
    }
    for (const key of Object.keys(item)) {
      if (!['db', 'table', 'as', 'join', 'on', 'surround', 'operator', 'loc'].includes(key)) {
        if (item[key] !== null && item[key] !== undefined) {
          refuse('analytics_query', `"${key}" is not accepted in FROM`);
        }
      }
    }
    const cte = ctes.get(table);
    const base = {
      ...(join !== undefined && join !== null ? { join, on: item.on } : {}),
      as: typeof alias === 'string' ? alias : table,
    };
    if (cte) return { expr: { ast: structuredClone(cte), parentheses: true }, ...base };
    if (!this.scope.tables.has(table) || !NAME.test(table)) {
      refuse(
        'analytics_table',
        `access to table '${table}' is not allowed; the tables are ${[...this.scope.tables].join(', ')}`,
      );
    }
    return { expr: { ast: this.filtered(table), parentheses: true }, ...base };
  }

  /** `SELECT * FROM <table> WHERE <filters>`, built as a tree, never as text. */
  private filtered(table: string): Node {
    let where: Node | undefined;
    for (const filter of this.scope.filters) {
      const column = { type: 'column_ref', table: null, column: filter.column };
      const condition =
        typeof filter.values === 'string'
          ? { type: 'binary_expr', operator: '=', left: column, right: text(filter.values) }
          : {
              type: 'binary_expr',
              operator: 'IN',
              left: column,
              right: {
                type: 'expr_list',
                // IN () does not parse: an empty list is a value no row has.
                value: (filter.values.length > 0 ? filter.values : ['']).map(text),
              },
            };
      where = where
        ? { type: 'binary_expr', operator: 'AND', left: where, right: condition }
        : condition;
    }
    return {
      type: 'select',
      distinct: null,
      columns: [{ expr: { type: 'column_ref', table: null, column: '*' }, as: null }],
      from: [{ db: null, table, as: null }],
      where: where ?? null,
      groupby: null,
      having: null,
      orderby: null,
      limit: null,
      with: null,
    };
  }

  /** Any expression (or list, or clause) of a query: every node checked, subqueries rewritten. */
  private expression(value: unknown, ctes: Ctes): void {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      for (const item of value) this.expression(item, ctes);
      return;
    }
    if (!isNode(value)) return;
    if (value.as !== null && value.as !== undefined) name(value.as, 'an alias');
    if (isNode(value.ast)) {
      this.subquery(value, ctes);
      return;
    }
    if (value.type === 'select') {
      this.select(value, ctes);
      return;
    }
    const type = value.type;
    if (typeof type === 'string') {
      if (!EXPRESSIONS.has(type)) {
        refuse(
          'analytics_query',
          type === 'string' || type === 'double_quote_string'
            ? 'double quotes are not accepted: write strings in single quotes, names bare or in backticks'
            : `${type.replace(/_/g, ' ')} is not accepted in a query`,
        );
      }
      this.node(type, value);
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === 'loc') continue;
      if (key === 'as' || key === 'name') continue;
      this.expression(child, ctes);
    }
  }

  private node(type: string, value: Node): void {
    switch (type) {
      case 'single_quote_string': {
        const raw = value.value;
        if (typeof raw !== 'string' || raw.includes('\\') || raw.replace(/''/g, '').includes("'")) {
          refuse('analytics_query', "a string must not hold a backslash; write '' for a quote");
        }
        return;
      }
      case 'column_ref': {
        if (value.table !== null && value.table !== undefined) name(value.table, 'a table name');
        // Written back as they came, unquoted: `t.a.b` has no meaning on ClickHouse anyway.
        if (Array.isArray(value.subFields) && value.subFields.length > 0) {
          refuse('analytics_query', 'a column is `name` or `table.name`');
        }
        if (value.db !== null && value.db !== undefined) {
          refuse('analytics_query', 'a column is `name` or `table.name`');
        }
        const column = value.column;
        if (column === '*') return;
        if (typeof column === 'string') return name(column, 'a column name');
        if (isNode(column) && isNode(column.expr)) {
          const inner = column.expr;
          if (inner.type !== 'default' && inner.type !== 'backticks_quote_string') {
            refuse(
              'analytics_query',
              'double quotes are not accepted: write strings in single quotes, names bare or in backticks',
            );
          }
          return name(inner.value, 'a column name');
        }
        return refuse('analytics_query', 'this column is not accepted');
      }
      case 'backticks_quote_string':
      case 'default':
        return name(value.value, 'a name');
      case 'function': {
        const called = functionName(value.name);
        if (!FUNCTIONS.has(called.toLowerCase())) {
          refuse('analytics_function', `function '${called}' is not allowed`);
        }
        return;
      }
      case 'aggr_func': {
        const called = value.name;
        if (typeof called !== 'string' || !FUNCTIONS.has(called.toLowerCase())) {
          refuse('analytics_function', `function '${String(called)}' is not allowed`);
        }
        return;
      }
      default:
    }
  }
}

function name(value: unknown, what: string): void {
  // An alias may come as a node: `AS \`x\``.
  if (isNode(value) && (value.type === 'backticks_quote_string' || value.type === 'default')) {
    value = value.value;
  }
  if (typeof value !== 'string' || !NAME.test(value)) {
    refuse('analytics_query', `${what} must be letters, digits and _`);
  }
}

function functionName(value: unknown): string {
  if (!isNode(value)) return refuse('analytics_function', 'this function is not allowed');
  const parts: string[] = [];
  const schema = value.schema;
  if (isNode(schema) && typeof schema.value === 'string') parts.push(schema.value);
  if (Array.isArray(value.name)) {
    for (const part of value.name as unknown[]) {
      if (isNode(part) && typeof part.value === 'string') parts.push(part.value);
      else refuse('analytics_function', 'this function is not allowed');
    }
  }
  if (parts.length !== 1 || !NAME.test(parts[0]!)) {
    refuse('analytics_function', `function '${parts.join('.')}' is not allowed`);
  }
  return parts[0]!;
}

/** A keyward id as a literal node: ids hold no quote or backslash, and one that did is refused. */
function text(value: string): Node {
  if (/['\\]/.test(value)) throw new Error('a scope value holds a quote or backslash');
  return { type: 'single_quote_string', value };
}
