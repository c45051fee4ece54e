import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type DocsConsumer, createDocsConsumer } from './docs-consumer.ts';

/** What the consumer does with one request, decided per request (e.g. fail for one chosen payment). */
export type Behaviour =
  | { kind: 'ok'; delayMs?: number }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  /** Answers nothing until the inbox gives up (its timeout). */
  | { kind: 'hang' }
  /** Closes the connection without an answer. */
  | { kind: 'hang_up' }
  /** As the consumer in docs/consuming.md does: applies by sequence (204), or 409 when it is early. */
  | { kind: 'docs_consumer' };

export interface ReceivedEvent {
  webhookId: string;
  chargeId: string;
  provider: string;
  /** `payment.account`: the gateway account (absent before the contract had it). */
  account?: string | null;
  sequence: number;
  /** `follows_sequence`: what this destination was sent before it (absent before it existed). */
  followsSequence: number | undefined;
  type: string;
  status: string;
  previousStatus: string | null;
  amountRefunded: number;
  inquiryOpen: boolean;
  /** Whether this consumer answered it 2xx. */
  accepted: boolean;
  /** When the request arrived (consumer clock). */
  at: number;
}

/** One way the application checks a request: throws when it does not verify, else returns the parsed body. */
export type Verifier = (body: string, headers: Record<string, string>) => unknown;

export interface Consumer {
  url: string;
  /** Every request that verified, in arrival order. */
  readonly received: ReceivedEvent[];
  /** Requests whose signature did not verify with every verifier (must stay 0). */
  readonly unverified: number;
  /** Requests each verifier refused, by its position in the list given. */
  readonly refusedBy: readonly number[];
  /** Requests held open now (behaviour `hang`), waiting for the inbox's timeout. */
  readonly hanging: number;
  /** The docs' consumer's own record (behaviour `docs_consumer`). */
  readonly docs: DocsConsumer;
  behaviour: (event: ReceivedEvent) => Behaviour;
  /** The events answered 2xx for one payment, in arrival order. */
  acceptedFor(chargeId: string, provider?: string): ReceivedEvent[];
  close(): Promise<void>;
}

/** A payment event's body, as far as the tests read it, once `standardwebhooks` verified it. */
export interface VerifiedPayload {
  id: string;
  sequence: number;
  follows_sequence?: number;
  type: string;
  payment: {
    charge_id: string;
    provider: string;
    account?: string | null;
    status: string;
    previous_status: string | null;
    amount_refunded: number;
    inquiry_open: boolean;
  };
}

/** What a test consumer records of one verified event (HTTP here, a broker's in broker-consumer.ts). */
export function receivedEventOf(payload: VerifiedPayload, webhookId: string, accepted: boolean): ReceivedEvent {
  const { payment } = payload;
  return {
    webhookId,
    chargeId: payment.charge_id,
    provider: payment.provider,
    account: payment.account,
    sequence: payload.sequence,
    followsSequence: payload.follows_sequence,
    type: payload.type,
    status: payment.status,
    previousStatus: payment.previous_status,
    amountRefunded: payment.amount_refunded,
    inquiryOpen: payment.inquiry_open,
    accepted,
    at: Date.now(),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The official `standardwebhooks` package's check with one secret. */
export function standardWebhooksVerifier(secret: string): Verifier {
  const webhook = new Webhook(secret);
  return (body, headers) => webhook.verify(body, headers);
}

/**
 * The application's side: a real HTTP server on loopback that verifies every request with each
 * verifier given — by default the official `standardwebhooks` package with `secret` (the signer
 * under test never checks itself) — and records what it got. A request that does not verify with
 * every one of them gets 401 and is counted.
 */
export async function startConsumer(secret: string | readonly Verifier[], path = '/payment-events'): Promise<Consumer> {
  const verifiers = typeof secret === 'string' ? [standardWebhooksVerifier(secret)] : secret;
  const received: ReceivedEvent[] = [];
  const refusedBy = verifiers.map(() => 0);
  let unverified = 0;
  const hanging = new Set<ServerResponse>();
  const docs = createDocsConsumer();
  const consumer: Consumer = {
    url: '',
    received,
    refusedBy,
    docs,
    get unverified() {
      return unverified;
    },
    get hanging() {
      return hanging.size;
    },
    behaviour: () => ({ kind: 'ok' }),
    acceptedFor: (chargeId, provider = 'stripe') => received.filter((e) => e.accepted && e.chargeId === chargeId && e.provider === provider),
    close: async () => {
      for (const response of hanging) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    let payload: VerifiedPayload | undefined;
    let refused = false;
    verifiers.forEach((verify, i) => {
      try {
        payload = verify(body, request.headers as Record<string, string>) as VerifiedPayload;
      } catch {
        refusedBy[i]! += 1;
        refused = true;
      }
    });
    if (refused || !payload) {
      unverified += 1;
      response.writeHead(401).end();
      return;
    }
    const event = receivedEventOf(payload, String(request.headers['webhook-id']), false);
    received.push(event);
    const behaviour = consumer.behaviour(event);
    if (behaviour.kind === 'docs_consumer') {
      const result = docs.apply(JSON.parse(body));
      event.accepted = result !== 'early';
      response.writeHead(result === 'early' ? 409 : 204).end();
    } else if (behaviour.kind === 'ok') {
      if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      event.accepted = true;
      response.writeHead(204).end();
    } else if (behaviour.kind === 'status') response.writeHead(behaviour.status, behaviour.headers).end('consumer says no');
    else if (behaviour.kind === 'hang_up') request.socket.destroy();
    else {
      hanging.add(response);
      response.on('close', () => hanging.delete(response));
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  consumer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return consumer;
}

/**
 * What a consumer that applies by sequence makes of the events it accepted for one payment: each
 * webhook-id once (repeats dropped and counted), and whether the sequences ran 1..n in order.
 */
export function applyBySequence(events: readonly ReceivedEvent[]): { applied: ReceivedEvent[]; repeats: number; inOrder: boolean } {
  const seen = new Set<string>();
  const applied: ReceivedEvent[] = [];
  let repeats = 0;
  let inOrder = true;
  for (const event of events) {
    if (seen.has(event.webhookId)) {
      repeats += 1;
      continue;
    }
    seen.add(event.webhookId);
    if (event.sequence !== applied.length + 1) inOrder = false;
    applied.push(event);
  }
  return { applied, repeats, inOrder };
}
