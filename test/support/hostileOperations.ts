import type fc from 'fast-check';
import { badInteger, badLimit, badQueryString, badString, objectText } from './hostile';
import type { JsonSchema, Operation } from '../../src/operations/operation';
import { operations } from '../../src/operations/registry';
import { v1Routes } from '../../src/dialects/v1/routes';
import { findCases } from '../cases';
import type { HostileCase } from '../cases/types';

/**
 * Every operation of src/operations/registry.ts as the hostile-input tests see it: a valid input
 * built on the fixtures, and how each of its fields can be broken. Whether it is a POST or a GET,
 * which fields it declares and which of them it requires come from its declaration; a declared
 * field whose schema says enough (a string's maximum length, an integer's range) is broken as that
 * schema says, the others by the breakers its cases file writes (`hostile`, test/cases/).
 */
export interface PostOperation {
  name: string;
  base: () => [string, string][];
  required: string[];
  breakers: () => Record<string, fc.Arbitrary<string>>;
  /** migrations.createKeys takes an array of such objects. */
  wrap?: (item: string) => string;
  /** What the valid input answers, when not 200 (HostileCase.validStatus). */
  validStatus?: number;
}

export const bodyOf = (op: PostOperation, entries: readonly (readonly [string, string])[]) =>
  (op.wrap ?? ((item: string) => item))(objectText(entries));

/** What v1 takes of the operation: its input, but where Unkey v1 took less (a listing's paging). */
function v1InputOf(op: Operation): JsonSchema {
  return v1Routes.find((route) => route.operation === op)?.input ?? op.input;
}

/** The object schema of one input: the input's own, or its items' for an array (createKeys). */
export function inputObject(op: Operation): {
  properties: Readonly<Record<string, JsonSchema>>;
  required: readonly string[];
} {
  const input = v1InputOf(op);
  const schema = input.type === 'array' ? (input.items as JsonSchema) : input;
  return {
    properties: (schema.properties ?? {}) as Readonly<Record<string, JsonSchema>>,
    required: (schema.required ?? []) as readonly string[],
  };
}

/**
 * How the declared schema of one field breaks it: a string is broken by its maximum length
 * (`minLength: 1`: empty too), an integer by its range, a page size by every way a query can miss
 * 1–100. Anything else needs a breaker in the operation's cases file; without one the test says
 * which.
 */
function breakerOf(
  op: Operation,
  field: string,
  schema: JsonSchema,
): fc.Arbitrary<string> | undefined {
  const types = ([] as unknown[]).concat(schema.type);
  const nullable = types.includes('null');
  const kind = types.find((type) => type !== 'null');
  if (schema.pattern !== undefined || schema.enum !== undefined) return undefined;
  if (kind === 'string' && schema.minLength === 1 && typeof schema.maxLength === 'number') {
    return op.method === 'GET'
      ? badQueryString(schema.maxLength)
      : badString(schema.maxLength, { nullable });
  }
  const { minimum, maximum } = schema;
  if (kind === 'integer' && typeof minimum === 'number' && typeof maximum === 'number') {
    if (op.method === 'GET') return minimum === 1 && maximum === 100 ? badLimit() : undefined;
    return badInteger(minimum, maximum, { nullable });
  }
  return undefined;
}

function breakersOf(op: Operation, written: HostileCase['breakers']): PostOperation['breakers'] {
  return () => {
    const explicit = written?.() ?? {};
    const derived: Record<string, fc.Arbitrary<string>> = {};
    for (const [field, schema] of Object.entries(inputObject(op).properties)) {
      if (field in explicit) continue;
      const breaker = breakerOf(op, field, schema);
      if (!breaker) {
        throw new Error(
          `${op.name}: no breaker for its declared field ${field} ` +
            `(${JSON.stringify(schema)}): write one in its cases file (test/cases/)`,
        );
      }
      derived[field] = breaker;
    }
    return { ...derived, ...explicit };
  };
}

function fuzzed(op: Operation, entry: HostileCase): PostOperation {
  return {
    name: op.name,
    base: entry.base,
    required: [...inputObject(op).required, ...(entry.alsoRequired ?? [])],
    breakers: breakersOf(op, entry.breakers),
    ...(op.input.type === 'array' ? { wrap: (item: string) => `[${item}]` } : {}),
    ...(entry.validStatus !== undefined ? { validStatus: entry.validStatus } : {}),
  };
}

/**
 * The registry's operations that have a cases file, split by their declared method; one without is
 * named by `every operation … is fuzzed here`.
 */
const withFuzz = (method: Operation['method']) =>
  operations.flatMap((op) => {
    const entry = findCases(op.name)?.hostile;
    return op.method === method && entry ? [fuzzed(op, entry)] : [];
  });

export const postOperations: PostOperation[] = withFuzz('POST');

export type GetOperation = Omit<PostOperation, 'wrap'>;

export const getOperations: GetOperation[] = withFuzz('GET');

export const queryText = (entries: readonly (readonly [string, string])[]) =>
  entries
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');

export const ALL_PATHS = [
  ...operations.map((op) => ({
    path: `/v1/${op.name}`,
    allow: op.method === 'POST' ? 'POST' : 'GET, HEAD',
  })),
  { path: '/v1/liveness', allow: 'GET, HEAD' },
];
