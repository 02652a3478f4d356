import { connect, createServer, type Socket } from 'node:net';
import { freePort } from './redisServer';

/**
 * A TCP relay to 127.0.0.1:`targetPort` that can stop forwarding: a network partition between a
 * replica and its master. Freezing the replica's process would not do, since the kernel would
 * still take its stream into the socket's buffers, to be read on waking. While cut, the relay
 * keeps what arrives in its own memory; on `restore` it passes it on in order, and when a side
 * closes during the cut, the other side is closed without it, as a partition followed by a crash
 * would leave it.
 */
export interface TcpRelay {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Direction {
  to: Socket;
  held: Buffer[];
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const directions = new Set<Direction>();
  let cut = false;

  const forward = (from: Socket, to: Socket) => {
    const direction: Direction = { to, held: [] };
    directions.add(direction);
    from.on('data', (chunk: Buffer) => {
      if (cut || direction.held.length > 0) direction.held.push(chunk);
      else if (to.writable) to.write(chunk);
    });
    from.on('close', () => {
      directions.delete(direction);
      // What the cut held back never arrives: the peer learns only that the link is gone.
      if (direction.held.length > 0) to.destroy();
      else to.end();
    });
    from.on('error', () => to.destroy());
  };

  const server = createServer((downstream) => {
    const upstream = connect({ port: targetPort, host: '127.0.0.1' });
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(downstream, upstream);
    forward(upstream, downstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  return {
    port,
    cut() {
      cut = true;
    },
    restore() {
      cut = false;
      for (const direction of directions) {
        const held = direction.held.splice(0);
        for (const chunk of held) if (direction.to.writable) direction.to.write(chunk);
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
