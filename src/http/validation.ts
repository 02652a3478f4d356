import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { BadRequestError, type FieldPath, type FieldProblem, type RequestRoot } from '../errors';

/**
 * Strict ajv without coercion: a query string is decoded by `decodeQuery`, never guessed at.
 * v1 answers the first invalid field, so its validators stop there; v2 lists every one.
 */
const firstOnly = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const everyError = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });

export type Validator<T> = (input: unknown, root: RequestRoot) => T;

export function compile<T>(schema: object, options: { allErrors?: boolean } = {}): Validator<T> {
  const validate: ValidateFunction = (options.allErrors ? everyError : firstOnly).compile(schema);
  return (input, root) => {
    if (validate(input)) return input as T;
    throw new BadRequestError(problemsOf(validate.errors ?? []), { root });
  };
}

/** One problem per field, in the order ajv found them (a field's first problem is its clearest). */
export function problemsOf(errors: readonly ErrorObject[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const error of errors) {
    const problem = describe(error);
    const key = JSON.stringify(problem.path);
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

/** `ratelimit.limit` / `must be >= 1`: the path of the field, then what is wrong with it. */
export function describe(error: ErrorObject): FieldProblem {
  const path: (string | number)[] = error.instancePath
    .split('/')
    .slice(1)
    .map(decodePointer)
    .map((step) => (/^\d+$/.test(step) ? Number(step) : step));
  let message = error.message ?? 'is invalid';
  switch (error.keyword) {
    case 'required':
      path.push(String(error.params.missingProperty));
      message = 'is required';
      break;
    case 'enum':
      message = `must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
      break;
    case 'type': {
      const type = error.params.type as string | string[];
      message = `must be ${Array.isArray(type) ? type.join(' or ') : type}`;
      break;
    }
    case 'pattern':
      message = `must match ${String(error.params.pattern)}`;
      break;
    case 'additionalProperties':
      // Only v2 bodies refuse fields they do not declare: the unknown one is named by its path,
      // cut short when its name is long (the body, up to 1 MiB, is the caller's own).
      path.push(shortened(String(error.params.additionalProperty)));
      message = 'is not a field of this request';
      break;
  }
  return { path: path as FieldPath, message };
}

const LONGEST_NAME = 64;

function shortened(name: string): string {
  return name.length > LONGEST_NAME ? `${name.slice(0, LONGEST_NAME)}…` : name;
}

function decodePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

type QueryValue = string | string[] | undefined;

/**
 * Turns query parameters into what the JSON body would have held: digits become integers and
 * true/false booleans where the schema says so. A parameter given twice is refused rather than
 * silently resolved one way or the other.
 */
export function decodeQuery(
  query: Readonly<Record<string, QueryValue>>,
  properties: Readonly<Record<string, { type?: unknown }>>,
): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const value = query[name];
    if (value === undefined) continue;
    if (property.type === 'array') {
      // A list: the parameter repeated, or its items joined by commas (as Unkey's SDK sends them).
      decoded[name] = (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(','));
      continue;
    }
    if (Array.isArray(value)) {
      throw new BadRequestError([{ path: [name], message: 'must be given once' }], {
        root: 'query',
      });
    }
    if (property.type === 'integer' && /^\d{1,16}$/.test(value)) decoded[name] = Number(value);
    else if (property.type === 'boolean' && (value === 'true' || value === 'false')) {
      decoded[name] = value === 'true';
    } else decoded[name] = value;
  }
  return decoded;
}
