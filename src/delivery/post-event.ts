import type { StandardWebhookHeaders } from './sign.ts';

/** How much of a destination's answer is read (for the lane's last_error); the rest is discarded unread. */
export const MAX_ANSWER_BYTES = 4096;

export type PostResult =
  | { kind: 'delivered'; status: number }
  /** 410 Gone: the endpoint says it no longer exists (Standard Webhooks: disable it). */
  | { kind: 'gone'; status: number }
  | { kind: 'failed'; status: number | null; error: string; retryAfter: string | null };

export interface PostRequest {
  url: string;
  headers: StandardWebhookHeaders;
  body: string;
  timeoutMs: number;
  /** The job's: aborted when pg-boss gives up on it (expiry, shutdown). */
  signal?: AbortSignal;
}

/** Up to `limit` bytes of the answer as text, then the stream is cancelled: a huge or endless answer costs nothing. */
async function readBounded(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** One line for the lane's last_error: printable, short, never more than the destination said. */
function answerSummary(text: string): string {
  const line = text.replace(/[^\x20-\x7e]+/g, ' ').trim().slice(0, 200);
  return line === '' ? '' : `: ${line}`;
}

function transportError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  if (code) return `connection failed (${code})`;
  return `request failed (${error instanceof Error ? error.name : 'error'})`;
}

/**
 * POSTs one signed event. Only a 2xx counts: a redirect is not followed (`redirect: 'manual'`; a
 * destination is named by configuration alone, and a 3xx could point the signed body anywhere) and
 * fails like any other answer. The timeout covers the whole exchange, the answer's body included.
 */
export async function postEvent(request: PostRequest): Promise<PostResult> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'webhook-inbox', ...request.headers },
      body: request.body,
      redirect: 'manual',
      signal,
    });
    // A 2xx is the answer whatever follows it; its body is read (bounded) only so the connection is reused.
    if (response.status >= 200 && response.status < 300) {
      await readBounded(response, MAX_ANSWER_BYTES).catch(() => {});
      return { kind: 'delivered', status: response.status };
    }
    const answer = await readBounded(response, MAX_ANSWER_BYTES).catch(() => '');
    if (response.status === 410) return { kind: 'gone', status: 410 };
    const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
    return { kind: 'failed', status: response.status, error: `HTTP ${response.status}${redirect}${answerSummary(answer)}`, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    return { kind: 'failed', status: null, error: transportError(error, timeout.aborted, request.timeoutMs), retryAfter: null };
  }
}
