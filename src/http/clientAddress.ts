import type { IncomingMessage } from 'node:http';

/**
 * KEYWARD_LOG_CLIENT_IP: whether a verification's row keeps the address of the client that sent
 * it, and which. `peer`: the TCP peer (a node reached directly); `x-forwarded-for`: the last
 * address of that header, the one the load balancer in front of the node appended, or the peer
 * without the header. Earlier entries are the client's own claims and are never read.
 */
export type ClientIpMode = 'off' | 'peer' | 'x-forwarded-for';

export const CLIENT_IP_MODES: readonly ClientIpMode[] = ['off', 'peer', 'x-forwarded-for'];

export function clientAddress(req: IncomingMessage, mode: ClientIpMode): string | undefined {
  if (mode === 'off') return undefined;
  const peer = req.socket.remoteAddress;
  if (mode === 'peer') return peer;
  const forwarded = req.headers['x-forwarded-for'];
  const list = Array.isArray(forwarded) ? forwarded.at(-1) : forwarded;
  const last = list?.split(',').at(-1)?.trim();
  return last || peer;
}
