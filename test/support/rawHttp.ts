import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/**
 * HTTP below what fetch allows: any method, any path bytes, header values fetch would refuse,
 * bodies that are not valid UTF-8, and a hard deadline so a request that hangs fails the test
 * instead of the suite.
 */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Name, value, name, value…: as they came on the wire, in order and in their own case. */
  rawHeaders: string[];
  text: string;
  bytes: Buffer;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** Sent as chunked pieces without Content-Length (the server must count while streaming). */
  chunks?: Buffer[];
  timeoutMs?: number;
}

export const REQUEST_DEADLINE_MS = 5_000;

export function rawRequest(baseUrl: string, options: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? REQUEST_DEADLINE_MS;
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined && !options.chunks) {
      headers['content-length'] ??= Buffer.byteLength(options.body);
    }
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers,
        // A fresh connection per request: nothing carries over from a previous answer.
        agent: false,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          answered = true;
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            text: bytes.toString('utf8'),
            bytes,
          });
        });
        res.on('error', (error) => {
          if (!answered) reject(error);
        });
      },
    );
    // After the answer, a write error only means the server stopped reading an upload (413).
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else req.end(options.body);
  });
}

/**
 * Writes `bytes` on a new TCP connection and returns the first response that comes back (status
 * line, headers and a body of its Content-Length), or whatever arrived before the server closed
 * the connection: for requests no HTTP client would send. Fails after `timeoutMs`.
 */
export function rawExchange(
  baseUrl: string,
  bytes: Buffer,
  timeoutMs = REQUEST_DEADLINE_MS,
): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let received = Buffer.alloc(0);
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(received.toString('latin1'));
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (length && received.length >= end + 4 + Number(length[1])) finish();
      else if (!length && !/\r\ntransfer-encoding/i.test(head)) finish();
    });
    socket.on('error', (error) => (received.length > 0 ? finish() : finish(error)));
    socket.on('close', () => finish());
  });
}

/** The status code of a raw answer, or 0. */
export function statusOf(answer: string): number {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
  return match ? Number(match[1]) : 0;
}
