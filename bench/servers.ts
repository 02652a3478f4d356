/**
 * The comparison servers of `make bench`, each run as its own process so that it never shares an
 * event loop with the load generator: `node servers.js <http|koa|peer|script>`.
 *
 * - http: a bare node:http handler that reads the body, JSON-parses it and answers a small JSON.
 * - koa:  the same in a bare Koa app (the ceiling keyward's own HTTP layer sits on).
 * - peer: what a user would write instead of keyward: Koa, sha256 of the key, HGET of the key's
 *         record from a Redis hash, and rate-limiter-flexible's RateLimiterRedis (ioredis).
 * - script: the bare node:http handler, plus one EVALSHA (ioredis) before answering when the key
 *         is BENCH_SCRIPT_KEY: what one script round trip per request costs any Node server on
 *         this machine, the floor under keyward's fast check (node-local Redis) or its consistent
 *         check (the primary), whichever call and Redis it is given.
 *
 * Environment: BENCH_PORT (0 for any), BENCH_REDIS_URL (redis:// or unix:///path), BENCH_PEER_HASH,
 * BENCH_ROOT_KEY (peer), BENCH_SCRIPT_KEY and BENCH_SCRIPT_CALL (script: JSON array
 * `[sha, numkeys, ...keys, ...args]`).
 * Prints `READY <port>` once listening; SIGTERM closes it.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { connectRedis } from './redisClient';

const MAX_BODY = 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function keyOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const key = (body as { key?: unknown }).key;
  return typeof key === 'string' ? key : undefined;
}

/**
 * Runs before the answer for one body: undefined to answer at once, or a promise to wait for.
 * The ceiling (bareHttp alone) answers at once, on the same path as before this hook existed.
 */
type BeforeAnswer = (body: unknown) => Promise<void> | undefined;

function bareHttp(beforeAnswer: BeforeAnswer = () => undefined): Server {
  let failureLogged = false;
  return createServer((req, res) => {
    const answer = (status: number, payload: object) => {
      const json = JSON.stringify(payload);
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(json),
      });
      res.end(json);
    };
    readBody(req).then(
      (body) => {
        const valid = () => answer(200, { valid: keyOf(body) !== undefined, code: 'VALID' });
        const pending = beforeAnswer(body);
        if (pending === undefined) valid();
        // A failed call is a failed request in the load generator's count, not a crash; the
        // first one's cause goes to the server's log.
        else {
          pending.then(valid, (error: unknown) => {
            if (!failureLogged) {
              failureLogged = true;
              process.stderr.write(`script call failed: ${String(error)}\n`);
            }
            answer(500, { error: 'script call failed' });
          });
        }
      },
      () => answer(400, { error: 'bad request' }),
    );
  });
}

function bareHttpWithScript(): { server: Server; close: () => Promise<void> } {
  const redis = connectRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const scriptKey = process.env.BENCH_SCRIPT_KEY;
  const [sha, numKeys, ...args] = JSON.parse(process.env.BENCH_SCRIPT_CALL ?? '[]') as string[];
  if (!scriptKey || !sha || !numKeys) throw new Error('script: BENCH_SCRIPT_KEY/CALL not set');
  const server = bareHttp((body) =>
    keyOf(body) === scriptKey
      ? redis.evalsha(sha, numKeys, ...args).then(() => undefined)
      : undefined,
  );
  return { server, close: async () => void (await redis.quit()) };
}

function bareKoa(): Server {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx) => {
    let body: unknown;
    try {
      body = await readBody(ctx.req);
    } catch {
      ctx.status = 400;
      ctx.body = { error: 'bad request' };
      return;
    }
    ctx.body = { valid: keyOf(body) !== undefined, code: 'VALID' };
  });
  return createServer(app.callback());
}

/** A key record as the peer stores it: one JSON string per key hash in one Redis hash. */
export interface PeerRecord {
  id: string;
  apiId: string;
  enabled: boolean;
  ratelimit?: { limit: number; durationSeconds: number };
}

function peer(): { server: Server; close: () => Promise<void> } {
  const redis = connectRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const recordsHash = process.env.BENCH_PEER_HASH ?? 'peer:keys';
  const expectedAuth = `Bearer ${process.env.BENCH_ROOT_KEY ?? ''}`;
  const limiters = new Map<string, RateLimiterRedis>();
  const limiterFor = (limit: number, duration: number) => {
    const id = `${limit}/${duration}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: 'peer:rl',
        points: limit,
        duration,
      });
      limiters.set(id, limiter);
    }
    return limiter;
  };

  const app = new Koa();
  app.silent = true;
  app.use(async (ctx) => {
    if (ctx.get('authorization') !== expectedAuth) {
      ctx.status = 401;
      ctx.body = { error: 'unauthorized' };
      return;
    }
    let key: string | undefined;
    try {
      key = keyOf(await readBody(ctx.req));
    } catch {
      key = undefined;
    }
    if (key === undefined) {
      ctx.status = 400;
      ctx.body = { error: 'key: is required' };
      return;
    }
    const hash = createHash('sha256').update(key, 'utf8').digest('base64');
    const raw = await redis.hget(recordsHash, hash);
    if (raw === null) {
      ctx.body = { valid: false, code: 'NOT_FOUND' };
      return;
    }
    const record = JSON.parse(raw) as PeerRecord;
    if (!record.enabled) {
      ctx.body = { valid: false, code: 'DISABLED', keyId: record.id };
      return;
    }
    if (!record.ratelimit) {
      ctx.body = { valid: true, code: 'VALID', keyId: record.id };
      return;
    }
    const { limit, durationSeconds } = record.ratelimit;
    try {
      const res = await limiterFor(limit, durationSeconds).consume(record.id, 1);
      ctx.body = {
        valid: true,
        code: 'VALID',
        keyId: record.id,
        ratelimit: { limit, remaining: res.remainingPoints, reset: Date.now() + res.msBeforeNext },
      };
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      ctx.body = {
        valid: false,
        code: 'RATE_LIMITED',
        keyId: record.id,
        ratelimit: { limit, remaining: 0, reset: Date.now() + error.msBeforeNext },
      };
    }
  });
  return { server: createServer(app.callback()), close: async () => void (await redis.quit()) };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  let server: Server;
  let closeExtra = async () => undefined;
  if (mode === 'http') server = bareHttp();
  else if (mode === 'koa') server = bareKoa();
  else if (mode === 'peer' || mode === 'script') {
    const built = mode === 'peer' ? peer() : bareHttpWithScript();
    server = built.server;
    closeExtra = async () => {
      await built.close();
      return undefined;
    };
  } else throw new Error(`usage: servers.js <http|koa|peer|script>, got ${String(mode)}`);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => resolve());
  });
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
  const stop = () => {
    server.close();
    server.closeAllConnections();
    closeExtra().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`servers: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
