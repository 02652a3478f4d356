import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A node's settings in the webhook suites: loopback receivers allowed (production refuses private
 * targets), and polls, flushes and retries fast enough that a test waits tenths of a second.
 */
export const FAST_WEBHOOKS: Readonly<Record<string, string>> = {
  KEYWARD_WEBHOOK_ALLOW_PRIVATE: '1',
  KEYWARD_WEBHOOK_POLL_MS: '50',
  KEYWARD_WEBHOOK_FLUSH_MS: '50',
  KEYWARD_WEBHOOK_RETRY_BASE_MS: '100',
};

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; createdAt: number; data: Record<string, unknown> };
}

/** What the receiver answers the `count`-th request (1, 2, …) on `path`: a status, or never. */
export type Behaviour = (path: string, count: number) => number | 'hang';

/**
 * A webhook receiver on loopback: it records every request and answers as `behave` says (200 by
 * default); `hang` holds the request open until the receiver closes.
 */
export async function startReceiver(behave: Behaviour = () => 200): Promise<{
  url: string;
  received: Received[];
  on(path: string): Received[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const count = (counts.get(path) ?? 0) + 1;
      counts.set(path, count);
      received.push({
        path,
        headers: req.headers,
        body,
        event: JSON.parse(body) as Received['event'],
      });
      const answer = behave(path, count);
      if (answer === 'hang') {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    on: (path) => received.filter((request) => request.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        for (const cut of hanging) cut();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
