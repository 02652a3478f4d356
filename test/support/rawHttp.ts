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
  text: string;
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
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else req.end(options.body);
  });
}

/**
 * Writes `bytes` on a new TCP connection and returns whatever comes back until the server closes
 * the connection or `timeoutMs` passes: for request lines no HTTP client would send.
 */
export function rawExchange(baseUrl: string, bytes: Buffer, timeoutMs = 3_000): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.end(bytes));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
  });
}
