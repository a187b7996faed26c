import type { NextRequest } from 'next/server';

/**
 * The largest JSON body a route reads (1 MiB): the biggest legitimate ones (a policy, a goal of
 * 10,000 characters, run parameters) are a few KB. Bigger bodies are refused before parsing.
 */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The request body is larger than ${limit} bytes.`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The raw body, refused as soon as it passes `limit`: first by its Content-Length, then by
 * counting what actually arrives (a chunked body, or one longer than it announced), so a huge
 * body is never buffered whole.
 */
export async function readBodyLimited(req: NextRequest, limit = JSON_BODY_LIMIT_BYTES): Promise<Buffer> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit);
  if (!req.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
