/**
 * ioredis reports an unreachable or slow Redis with plain Errors; their messages are the only
 * stable signal. A ReplyError (Redis answered with an error) is not among them: that is a bug.
 */
const UNAVAILABLE_MESSAGES = [
  'Command timed out',
  "Stream isn't writeable",
  'Connection is closed',
  'connect ECONNREFUSED',
  'Reached the max retries per request limit',
  'read ECONNRESET',
  'write EPIPE',
  'LOADING',
  // KEYWARD_CONSISTENT_DURABILITY=replicated: the primary answered, its replicas did not in time.
  'Replicas unconfirmed',
  // A failover under way: the old primary, now a replica, or one not yet promoted.
  'READONLY',
  'NOREPLICAS',
  // A Redis Cluster mid-failover: its slots answer from nowhere, or MOVED to a master that is
  // gone until the cluster's view settles.
  'Too many Cluster redirections',
  "Cluster isn't ready",
  'CLUSTERDOWN',
  'TRYAGAIN',
];

export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { message } = error;
  return UNAVAILABLE_MESSAGES.some((fragment) => message.includes(fragment));
}
