import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { BadRequestError } from '../errors';

/** Strict ajv without coercion: a query string is decoded by `decodeQuery`, never guessed at. */
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });

export type Validator<T> = (input: unknown, root: string) => T;

export function compile<T>(schema: object): Validator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (input, root) => {
    if (validate(input)) return input as T;
    throw new BadRequestError(describe((validate.errors ?? [])[0], root));
  };
}

/** `ratelimit.limit: must be >= 1`: the path of the field, then what is wrong with it. */
export function describe(error: ErrorObject | undefined, root: string): string {
  if (!error) return `${root}: is invalid`;
  const segments = error.instancePath.split('/').slice(1).map(decodePointer);
  let message = error.message ?? 'is invalid';
  switch (error.keyword) {
    case 'required':
      segments.push(String(error.params.missingProperty));
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
      segments.push(shortened(String(error.params.additionalProperty)));
      message = 'is not a field of this request';
      break;
  }
  return `${segments.length > 0 ? fieldPath(segments) : root}: ${message}`;
}

const LONGEST_NAME = 64;

function shortened(name: string): string {
  return name.length > LONGEST_NAME ? `${name.slice(0, LONGEST_NAME)}…` : name;
}

/** `ratelimit.limit`, and `[3].apiId` for an item of an array. */
function fieldPath(segments: string[]): string {
  return segments
    .map((segment, i) =>
      /^\d+$/.test(segment) ? `[${segment}]` : i === 0 ? segment : `.${segment}`,
    )
    .join('');
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
    if (Array.isArray(value)) throw new BadRequestError(`${name}: must be given once`);
    if (property.type === 'integer' && /^\d{1,16}$/.test(value)) decoded[name] = Number(value);
    else if (property.type === 'boolean' && (value === 'true' || value === 'false')) {
      decoded[name] = value === 'true';
    } else decoded[name] = value;
  }
  return decoded;
}
