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

export function expectSecurityHeaders(headers: HeaderSource): void {
  const seen: Record<string, string | undefined> = {};
  for (const name of Object.keys(SECURITY_HEADERS)) seen[name] = header(headers, name);
  expect(seen).toEqual(SECURITY_HEADERS);
  expect(header(headers, 'x-request-id')).toMatch(REQUEST_ID);
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
  expect(header(headers, 'content-type')).toMatch(/^application\/json/);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`status ${status}: the answer is not JSON: ${text.slice(0, 300)}`);
  }
  const envelope = body as ErrorEnvelope;
  expect(Object.keys(envelope)).toEqual(['error']);
  expect(Object.keys(envelope.error).sort()).toEqual(['code', 'docs', 'message', 'requestId']);
  const { code, message, docs, requestId } = envelope.error;
  expect(STATUS_OF_CODE[code]).toContain(status);
  expect(typeof message).toBe('string');
  expect(message.length).toBeGreaterThan(0);
  expect(message.length).toBeLessThanOrEqual(512);
  expect(docs).toMatch(new RegExp(`#${code.toLowerCase()}$`));
  expect(requestId).toBe(header(headers, 'x-request-id'));
  expectNoInternals(message, echoes);
  if (status === 401) expect(header(headers, 'www-authenticate')).toBe('Bearer');
  return envelope;
}
