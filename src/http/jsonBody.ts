import type { IncomingMessage } from 'node:http';
import { invalidField, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * How much of a refused body is read and thrown away after the 413 is answered. A client that is
 * still sending (fetch, most SDKs) may read the answer only once its upload is done; a connection
 * closed under it fails with EPIPE or a reset instead of the 413 (seen with fetch and a 20 MB
 * body). Past this much, the connection is cut; by then a client has usually read the answer.
 */
const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;

/** Reads the rest of a refused body into nothing; the connection can then serve the next request. */
function discardRest(req: IncomingMessage, alreadyRead: number, maxBytes: number): Error {
  let discarded = alreadyRead;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT_BYTES) req.socket.destroy();
  });
  req.resume();
  return new PayloadTooLargeError(maxBytes);
}

/**
 * Reads a POST body as JSON: application/json only (415), at most `maxBytes` (413, checked
 * against Content-Length first and counted while streaming; the rest is thrown away, see
 * DISCARD_LIMIT_BYTES), strict UTF-8 and JSON (400).
 * Plain stream events rather than an async iterator: this runs on every verification.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) throw new UnsupportedMediaTypeError();
  const declared = Number(req.headers['content-length'] || 0);
  if (declared > maxBytes) throw discardRest(req, 0, maxBytes);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        cleanup();
        reject(discardRest(req, received, maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // Carry on in the next turn of the event loop, not inside the socket's read callback: an
      // answer written from within that callback cost a node about twice the CPU per request
      // under load (bench: ~100 µs against ~55 µs for a cached verification).
      setImmediate(resolve, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    // The client went away mid-body: nobody will read the answer, but the request must end.
    const onError = () => {
      cleanup();
      reject(invalidField([], 'the request was aborted before its end'));
    };
    const onClose = () => {
      if (!req.complete) onError();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
  if (body.length === 0) throw invalidField([], 'must be a JSON object');
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalidField([], 'must be valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidField([], 'must be valid JSON');
  }
}
