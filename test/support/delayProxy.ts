import { connect, createServer, type Socket } from 'node:net';
import { freePort } from './freePort';

/**
 * A TCP proxy that holds every chunk for `delayMs` in each direction: a Redis reached through it
 * is a Redis in another region, one round trip costing 2 × delayMs.
 */
export interface DelayProxy {
  url: string;
  /**
   * The delay of chunks from now on; each direction still delivers in order (a chunk never
   * overtakes one held longer). A node can start at 0 and be far away once it serves.
   */
  setDelay(delayMs: number): void;
  close(): Promise<void>;
}

export async function startDelayProxy(targetPort: number, delayMs: number): Promise<DelayProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let delay = delayMs;
  const relay = (from: Socket, to: Socket) => {
    // One queue a direction, drained from its head: the byte stream keeps its order even when
    // the delay drops.
    const queue: { at: number; chunk: Buffer | 'close' }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drain = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.at <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (chunk === 'close') to.destroy();
        else if (to.writable) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(drain, queue[0]!.at - Date.now());
    };
    const hold = (chunk: Buffer | 'close') => {
      queue.push({ at: Date.now() + delay, chunk });
      timer ??= setTimeout(drain, queue[0]!.at - Date.now());
    };
    from.on('data', (chunk: Buffer) => hold(chunk));
    from.on('close', () => hold('close'));
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
    setDelay(delayMs) {
      delay = delayMs;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
