import type { IncomingHttpHeaders } from 'node:http';

/**
 * Checks every answer of a node must pass, whoever sent what: the security headers, the request
 * id, and for errors the `{ error: { code, message, docs, requestId } }` envelope without any
 * trace of the node's internals.
 */
export type HeaderSource = Headers | IncomingHttpHeaders;

export function header(source: HeaderSource, name: string): string | undefined {
  if (source instanceof Headers) return source.get(name) ?? undefined;
  const value = source[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The headers src/http/middleware/requestContext.ts promises on every response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const REQUEST_ID = /^req_[1-9A-HJ-NP-Za-km-z]{22}$/;

/*
 * The checks below test each condition in plain code and call `expect` only for one that does not
 * hold, which then fails with jest's usual message. Each `expect()` call costs tens of µs (it
 * builds every matcher and captures a stack), and the hostile-input and authorization suites check
 * tens of thousands of answers: a tenth of their CPU went there.
 */

export function expectSecurityHeaders(headers: HeaderSource): void {
  const seen: Record<string, string | undefined> = {};
  for (const name of Object.keys(SECURITY_HEADERS)) seen[name] = header(headers, name);
  if (Object.keys(SECURITY_HEADERS).some((name) => seen[name] !== SECURITY_HEADERS[name])) {
    expect(seen).toEqual(SECURITY_HEADERS);
  }
  const requestId = header(headers, 'x-request-id');
  if (requestId === undefined || !REQUEST_ID.test(requestId)) expect(requestId).toMatch(REQUEST_ID);
}

/** Words and shapes that only leak out of a node by mistake: stack frames, paths, driver errors. */
const INTERNALS: readonly RegExp[] = [
  /\n\s*at /,
  /\bat [\w.<>]+ \(/,
  /\(?\/[\w./-]+\.(?:ts|js):\d+/,
  /node_modules/,
  /\/work\//,
  /ioredis/i,
  /ReplyError/,
  /\bERR\b/,
  /WRONGTYPE|NOSCRIPT|LOADING/,
  /ECONN\w+|EPIPE|ETIMEDOUT/,
  /SyntaxError|TypeError|RangeError|ReferenceError/,
  /Unexpected (?:token|end of JSON)|JSON at position|is not valid JSON/,
  /Maximum call stack/,
  /ajv|instancePath|schemaPath/i,
  // Whole words only: base58 ids may spell "NaN" by chance (rlns_…qNaN3).
  /\[object Object\]|\bundefined\b|\bNaN\b/,
];

/**
 * `echoes`: what the caller sent and a message may legitimately repeat (an id, a path); it is
 * taken out before the check, so a request for key `ERR` does not count as a leak.
 */
export function expectNoInternals(text: string, echoes: readonly string[] = []): void {
  for (const echo of [...echoes].sort((a, b) => b.length - a.length)) {
    if (echo.length > 0) text = text.split(echo).join('<echo>');
  }
  // keyward's own ids are random base58 and may spell "ajv" or "ERR" by chance.
  text = text.replace(
    /\b(?:ws|api|key|req|rk|rlns|rlor|perm|role|id|aud|rl)_[1-9A-HJ-NP-Za-km-z]+/g,
    '<id>',
  );
  for (const pattern of INTERNALS) {
    if (pattern.test(text)) {
      throw new Error(`answer leaks internals (${pattern}): ${text.slice(0, 500)}`);
    }
  }
}

export interface ErrorEnvelope {
  error: { code: string; message: string; docs: string; requestId: string };
}

const JSON_TYPE = /^application\/json/;
const ENVELOPE_FIELDS = ['code', 'docs', 'message', 'requestId'];

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, i) => item === b[i]);

const STATUS_OF_CODE: Readonly<Record<string, readonly number[]>> = {
  BAD_REQUEST: [400, 413, 415],
  UNAUTHORIZED: [401],
  FORBIDDEN: [403],
  INSUFFICIENT_PERMISSIONS: [403],
  NOT_FOUND: [404],
  METHOD_NOT_ALLOWED: [405],
  CONFLICT: [409],
  PRECONDITION_FAILED: [412],
  RATE_LIMITED: [429],
  INTERNAL_SERVER_ERROR: [500],
  SERVICE_UNAVAILABLE: [503],
};

/**
 * An error answer: the status, the envelope (exactly its four fields), the code matching the
 * status, `docs` ending in `#<code>`, `requestId` repeating X-Request-Id, no internals.
 */
export function expectErrorEnvelope(
  status: number,
  headers: HeaderSource,
  text: string,
  echoes: readonly string[] = [],
): ErrorEnvelope {
  expectSecurityHeaders(headers);
  const contentType = header(headers, 'content-type');
  if (contentType === undefined || !JSON_TYPE.test(contentType)) {
    expect(contentType).toMatch(JSON_TYPE);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`status ${status}: the answer is not JSON: ${text.slice(0, 300)}`);
  }
  const envelope = body as ErrorEnvelope;
  const keys = Object.keys(envelope);
  if (!sameList(keys, ['error'])) expect(keys).toEqual(['error']);
  const fields = Object.keys(envelope.error).sort();
  if (!sameList(fields, ENVELOPE_FIELDS)) expect(fields).toEqual(ENVELOPE_FIELDS);
  const { code, message, docs, requestId } = envelope.error;
  const statuses = STATUS_OF_CODE[code];
  if (!Array.isArray(statuses) || !statuses.includes(status)) expect(statuses).toContain(status);
  if (typeof message !== 'string') expect(typeof message).toBe('string');
  if (!(message.length > 0)) expect(message.length).toBeGreaterThan(0);
  if (!(message.length <= 512)) expect(message.length).toBeLessThanOrEqual(512);
  const docsPattern = new RegExp(`#${code.toLowerCase()}$`);
  if (typeof docs !== 'string' || !docsPattern.test(docs)) expect(docs).toMatch(docsPattern);
  const answeredId = header(headers, 'x-request-id');
  if (!Object.is(requestId, answeredId)) expect(requestId).toBe(answeredId);
  expectNoInternals(message, echoes);
  if (status === 401) {
    const challenge = header(headers, 'www-authenticate');
    if (challenge !== 'Bearer') expect(challenge).toBe('Bearer');
  }
  return envelope;
}
