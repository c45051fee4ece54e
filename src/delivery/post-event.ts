import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type DeliveryTimers, systemDeliveryTimers } from './delivery-timers.ts';
import type { StandardWebhookHeaders } from './sign.ts';

/** How much of a destination's answer is read (for the lane's last_error); the rest is discarded unread. */
export const MAX_ANSWER_BYTES = 4096;

/** How one attempt ended, for HTTP and brokers alike (event-transport.ts); `status` is HTTP's, null without one. */
export type PostResult =
  | { kind: 'delivered'; status: number | null }
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
  /** What the timeout runs on (default: the process's timers). */
  timers?: Pick<DeliveryTimers, 'setTimeout' | 'clearTimeout'>;
}

/**
 * Connections to destinations are kept open between events: a new TCP connection per event cost
 * more than the event itself (measured in the forwarding bench). No socket limit, so a request
 * never waits in the agent's queue: its timeout measures the destination, not this process.
 */
const agents = { http: new HttpAgent({ keepAlive: true, keepAliveMsecs: 10_000 }), https: new HttpsAgent({ keepAlive: true, keepAliveMsecs: 10_000 }) };

/** One line for the lane's last_error: printable, short, never more than the destination said. */
function answerSummary(text: string): string {
  const line = text
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, 200);
  return line === '' ? '' : `: ${line}`;
}

/** `answered`: the status had arrived, so what the timeout cut short was the answer's body. */
function transportError(error: unknown, timedOut: boolean, timeoutMs: number, answered: boolean): string {
  if (timedOut) return `${answered ? 'no end' : 'no answer'} within ${timeoutMs} ms`;
  const code = (error as { code?: string }).code;
  if (code) return `connection failed (${code})`;
  return `request failed (${error instanceof Error ? error.name : 'error'})`;
}

/**
 * Reads up to `MAX_ANSWER_BYTES` of the answer's body, the rest discarded unread; `onDone` when it
 * ends (or the cap is reached). Returns what was read so far, for an answer cut short.
 */
function readAnswer(response: IncomingMessage, onDone: (text: string) => void): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const readSoFar = () => Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
  const finish = () => {
    if (done) return;
    done = true;
    onDone(readSoFar());
  };
  response.on('data', (chunk: Buffer) => {
    if (size >= MAX_ANSWER_BYTES) return;
    chunks.push(chunk);
    size += chunk.byteLength;
    // A huge or endless answer costs nothing more: the connection is given up, not drained.
    if (size >= MAX_ANSWER_BYTES) {
      response.destroy();
      finish();
    }
  });
  response.on('end', finish);
  response.on('close', finish);
  return readSoFar;
}

/** `stopped`: why the answer's body did not finish (it changes nothing but what the error says). */
function resultOf(response: IncomingMessage, answer: string, stopped?: string): PostResult {
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status: 410 };
  const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  const cutShort = stopped ? ` (the answer stopped: ${stopped})` : '';
  const retryAfter = response.headers['retry-after'];
  return {
    kind: 'failed',
    status,
    error: `HTTP ${status}${redirect}${answerSummary(answer)}${cutShort}`,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
  };
}

/**
 * POSTs one signed event. Only a 2xx counts: a redirect is not followed (node:http never follows
 * one; a destination is named by configuration alone, and a 3xx could point the signed body
 * anywhere) and fails like any other answer. The timeout covers the whole exchange, the answer's
 * body included; but once the status has arrived, the status decides: a body cut short (a reset,
 * the timeout) only shortens what is read of it. Otherwise a destination that answered 200 every
 * time and then hung up abruptly or dribbled its body would have its lane parked as "no answer",
 * while the same 200 closed cleanly counted. Never rejects: every outcome is a PostResult.
 */
export function postEvent(request: PostRequest): Promise<PostResult> {
  return new Promise((resolve) => {
    const url = new URL(request.url);
    const https = url.protocol === 'https:';
    let settled = false;
    let timedOut = false;
    let answered: { response: IncomingMessage; readSoFar: () => string } | undefined;
    const timers = request.timers ?? systemDeliveryTimers;
    const settle = (result: PostResult) => {
      if (settled) return;
      settled = true;
      timers.clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const outgoing = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), 'user-agent': 'webhook-inbox', ...request.headers },
      },
      (response) => {
        answered = { response, readSoFar: readAnswer(response, (answer) => settle(resultOf(response, answer))) };
      },
    );
    const fail = (error: unknown) => {
      const reason = transportError(error, timedOut, request.timeoutMs, answered !== undefined);
      if (answered) settle(resultOf(answered.response, answered.readSoFar(), reason));
      else settle({ kind: 'failed', status: null, error: reason, retryAfter: null });
    };
    const timer = timers.setTimeout(() => {
      timedOut = true;
      outgoing.destroy(new Error('timeout'));
      fail(new Error('timeout'));
    }, request.timeoutMs);
    const onAbort = () => {
      outgoing.destroy(new Error('aborted'));
      fail(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    };
    if (request.signal?.aborted) onAbort();
    else request.signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.on('error', fail);
    outgoing.end(request.body);
  });
}
