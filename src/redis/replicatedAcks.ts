import Redis, { Command, type Cluster } from 'ioredis';

/** `KEYWARD_CONSISTENT_DURABILITY=replicated`: how many replicas must hold a write, how soon. */
export interface ReplicaAcknowledgement {
  minReplicas: number;
  waitMs: number;
}

/**
 * A write the primary applied but fewer replicas than required confirmed in time. It may still
 * reach them, or be lost if the primary fails over now: the caller cannot know which.
 */
export class ReplicasUnconfirmedError extends Error {
  constructor(
    readonly acknowledged: number,
    readonly required: number,
  ) {
    super(
      `Replicas unconfirmed: ${acknowledged} of the ${required} required acknowledged the write in time`,
    );
  }
}

/**
 * Commands that change nothing a replica must hold. Every other command, a script included, counts
 * as a write: an unknown command waits for the replicas, which costs time, never safety.
 */
const READS = new Set([
  'auth',
  'client',
  'cluster',
  'command',
  'dbsize',
  'eval_ro',
  'evalsha_ro',
  'exists',
  'get',
  'hello',
  'hexists',
  'hget',
  'hgetall',
  'hlen',
  'hmget',
  'hscan',
  'info',
  'keys',
  'llen',
  'lrange',
  'mget',
  'multi',
  'ping',
  'psubscribe',
  'pttl',
  'publish',
  'punsubscribe',
  'readonly',
  'role',
  'scan',
  'scard',
  'script',
  'select',
  'sismember',
  'smembers',
  'smismember',
  'sscan',
  'strlen',
  'subscribe',
  'time',
  'ttl',
  'type',
  'unsubscribe',
  'wait',
  'xinfo',
  'xlen',
  'xrange',
  'xrevrange',
  'zcard',
  'zcount',
  'zrange',
  'zrangebyscore',
  'zrevrange',
  'zrevrangebyscore',
  'zscan',
  'zscore',
]);

const acknowledging = new WeakSet<Redis>();

type Resolve = (value: unknown) => unknown;
type Reject = (error: Error) => void;

interface HeldWrite {
  resolve: Resolve;
  reject: Reject;
  reply: unknown;
  replied: boolean;
  /** Its batch's WAIT answered before its reply came: another WAIT must cover it. */
  overtaken: boolean;
}

/** A command's own resolve, kept when a Redis Cluster resends it to another node after MOVED. */
const ownResolve = Symbol('ownResolve');
type HeldCommand = Command & { inTransaction?: boolean; [ownResolve]?: Resolve };

/**
 * Makes every write on this connection answer only once `minReplicas` replicas hold it. After the
 * writes issued in one turn of the event loop, one `WAIT minReplicas waitMs` follows them on the
 * same connection, written before any of their replies is read: the write and its WAIT travel
 * in the same round trip, and one WAIT covers a whole batch (WAIT counts every earlier write of
 * the connection). Each write's reply is held back until the WAIT answers; when fewer replicas
 * confirmed, the write fails with ReplicasUnconfirmedError although the primary applied it.
 * Commands queued inside MULTI are covered by the EXEC that ends it.
 */
export function acknowledgeAfterReplicas(redis: Redis, acks: ReplicaAcknowledgement): void {
  // Twice would hand a write's reply on from the first WAIT to answer, with nothing in it.
  if (acknowledging.has(redis)) return;
  acknowledging.add(redis);
  const send = redis.sendCommand.bind(redis);
  let batch: HeldWrite[] | undefined;

  const enqueue = (write: HeldWrite) => {
    if (batch === undefined) {
      batch = [];
      // After the current synchronous run: a pipeline has written all of its commands by then.
      process.nextTick(sendWait);
    }
    batch.push(write);
  };

  const sendWait = () => {
    const writes = batch ?? [];
    batch = undefined;
    const wait = new Command('wait', [acks.minReplicas, acks.waitMs], { replyEncoding: 'utf8' });
    send(wait);
    wait.promise.then(
      (count) => {
        const confirmed = Number(count);
        for (const write of writes) {
          if (!write.replied) {
            // The WAIT overtook the write (one that reached the socket late, such as a command a
            // Cluster client resent elsewhere): it did not cover it. One sent after the reply will.
            write.overtaken = true;
          } else if (confirmed >= acks.minReplicas) write.resolve(write.reply);
          else write.reject(new ReplicasUnconfirmedError(confirmed, acks.minReplicas));
        }
      },
      (error: Error) => writes.forEach((write) => write.reject(error)),
    );
  };

  redis.sendCommand = (command, stream) => {
    const held = command as HeldCommand;
    if (READS.has(command.name) || (held.inTransaction && command.name !== 'exec')) {
      return send(command, stream);
    }
    const write: HeldWrite = {
      resolve: (held[ownResolve] ??= command.resolve as Resolve),
      reject: command.reject,
      reply: undefined,
      replied: false,
      overtaken: false,
    };
    enqueue(write);
    // The reply arrives first; it is handed on once the WAIT that follows has answered.
    command.resolve = (reply: unknown) => {
      write.reply = reply;
      write.replied = true;
      if (write.overtaken) enqueue(write);
      return command.promise;
    };
    return send(command, stream);
  };
}

/** The same on every master of a Redis Cluster: WAIT counts the replicas of the one it is sent to. */
export function acknowledgeAfterClusterReplicas(
  cluster: Cluster,
  acks: ReplicaAcknowledgement,
): void {
  cluster.on('+node', (redis: Redis) => acknowledgeAfterReplicas(redis, acks));
}
