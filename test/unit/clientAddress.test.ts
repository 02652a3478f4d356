import type { IncomingMessage } from 'node:http';
import { clientAddress } from '../../src/http/clientAddress';

const request = (forwarded?: string | string[]) =>
  ({
    socket: { remoteAddress: '10.0.0.7' },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as IncomingMessage;

describe('clientAddress (KEYWARD_LOG_CLIENT_IP)', () => {
  test('off keeps nothing, peer the TCP peer whatever the headers claim', () => {
    expect(clientAddress(request('203.0.113.9'), 'off')).toBeUndefined();
    expect(clientAddress(request('203.0.113.9'), 'peer')).toBe('10.0.0.7');
  });

  test("x-forwarded-for takes the address the load balancer appended, never the client's claims", () => {
    expect(clientAddress(request('198.51.100.1, 203.0.113.9'), 'x-forwarded-for')).toBe(
      '203.0.113.9',
    );
    expect(clientAddress(request(['1.1.1.1', '198.51.100.1,203.0.113.9']), 'x-forwarded-for')).toBe(
      '203.0.113.9',
    );
    // No header (a request that reached the node directly): the peer.
    expect(clientAddress(request(), 'x-forwarded-for')).toBe('10.0.0.7');
    expect(clientAddress(request(' '), 'x-forwarded-for')).toBe('10.0.0.7');
  });
});
