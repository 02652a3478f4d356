import type Redis from 'ioredis';

/**
 * Commands sent on a busy connection go out together. When a command is issued while others still
 * await their replies, the socket is corked until the end of this turn of the event loop, so that
 * the commands of all requests handled in this turn leave in one write. On an idle connection a
 * command is written at once: no delay at low load (ioredis's auto-pipelining, which always waits
 * a turn, added 15-30 µs per fast check). Under load this saves a system call per verification.
 * Order is untouched: everything still goes through the one socket, in the order it was sent.
 */
export function coalesceWritesWhenBusy(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Redis['stream'] | undefined;
  const flush = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  redis.sendCommand = (command, stream) => {
    if (corked === undefined && stream === undefined && redis.commandQueue.length > 0) {
      // Typed as always there, but absent until the first connection.
      const socket = redis.stream as Redis['stream'] | undefined;
      if (socket?.writable) {
        socket.cork();
        corked = socket;
        setImmediate(flush);
      }
    }
    return send(command, stream);
  };
}
