/**
 * `RateLimit-*` headers (IETF draft) for a verification that carries a bucket decision, and
 * `Retry-After` when it was refused. Reset is in whole seconds from now, never below 0 (1 when
 * refused, so a client never retries at once).
 */
export function rateLimitHeaders(
  ratelimit: { limit: number; remaining: number; reset: number },
  refused: boolean,
  now: number,
): Record<string, string> {
  const seconds = Math.max(refused ? 1 : 0, Math.ceil((ratelimit.reset - now) / 1000));
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(ratelimit.limit),
    'RateLimit-Remaining': String(ratelimit.remaining),
    'RateLimit-Reset': String(seconds),
  };
  if (refused) headers['Retry-After'] = String(seconds);
  return headers;
}
