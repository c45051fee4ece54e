import { IncompleteBodyError, InboxError, PayloadTooLargeError } from '../errors.ts';

/**
 * The body's exact bytes, never more than `maxBytes` of them: a longer body is PayloadTooLargeError
 * (413), a sender that hangs up mid-body IncompleteBodyError (400, a client failure, not ours).
 *
 * With a Content-Length (and no Transfer-Encoding) the length is judged before a byte is read and
 * the body is read in one piece: @hono/node-server then reads it straight off the socket. hono's
 * bodyLimit middleware touched `request.body` first, which made the adapter build a WHATWG Request
 * and stream every body through web streams (a measurable share of the service's CPU). Node's
 * parser delivers exactly Content-Length bytes, so that count is the body's size. Without one
 * (chunked), bytes are counted as they stream in and reading stops at the first byte past the
 * limit, so an endless body is never buffered.
 */
export async function readBodyWithin(request: Request, maxBytes: number): Promise<Buffer> {
  const declaredLength = request.headers.get('content-length');
  const streamed = declaredLength === null || request.headers.has('transfer-encoding');
  if (!streamed && Number.parseInt(declaredLength, 10) > maxBytes) throw new PayloadTooLargeError(maxBytes);
  try {
    return streamed ? await readCounting(request, maxBytes) : Buffer.from(await request.arrayBuffer());
  } catch (error) {
    if (error instanceof InboxError) throw error;
    throw new IncompleteBodyError({ cause: error });
  }
}

async function readCounting(request: Request, maxBytes: number): Promise<Buffer> {
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    // Not cancelled: the sender still reads the 413 (the server hangs up once it is sent).
    if (size > maxBytes) throw new PayloadTooLargeError(maxBytes);
    chunks.push(value);
  }
}
