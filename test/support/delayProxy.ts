import { connect, createServer, type Socket } from 'node:net';
import { freePort } from './redisServer';

/**
 * A TCP proxy that holds every chunk for `delayMs` in each direction: a Redis reached through it
 * is a Redis in another region, one round trip costing 2 × delayMs.
 */
export interface DelayProxy {
  url: string;
  close(): Promise<void>;
}

export async function startDelayProxy(targetPort: number, delayMs: number): Promise<DelayProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket) => {
    // Timers of equal delay fire in creation order, so the byte stream keeps its order.
    from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => to.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect({ port: targetPort, host: '127.0.0.1' });
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
