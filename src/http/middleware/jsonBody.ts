import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../errors';
import type { KeywardContext } from '../context';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a POST body as JSON: application/json only (415), at most `maxBytes` (413, checked
 * against Content-Length first and counted while streaming), strict UTF-8 and JSON (400).
 */
export async function readJsonBody(ctx: KeywardContext, maxBytes: number): Promise<unknown> {
  if (!ctx.is('application/json')) throw new UnsupportedMediaTypeError();
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new PayloadTooLargeError(maxBytes);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    received += buffer.length;
    if (received > maxBytes) throw new PayloadTooLargeError(maxBytes);
    chunks.push(buffer);
  }
  if (received === 0) throw new BadRequestError('body: must be a JSON object');
  let text: string;
  try {
    text = utf8.decode(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
  } catch {
    throw new BadRequestError('body: must be valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadRequestError('body: must be valid JSON');
  }
}
