import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** What the consumer does with one request, decided per request (e.g. fail for one chosen payment). */
export type Behaviour =
  | { kind: 'ok'; delayMs?: number }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  /** Answers nothing until the inbox gives up (its timeout). */
  | { kind: 'hang' }
  /** Closes the connection without an answer. */
  | { kind: 'hang_up' };

export interface ReceivedEvent {
  webhookId: string;
  chargeId: string;
  provider: string;
  sequence: number;
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

export interface Consumer {
  url: string;
  /** Every request that verified, in arrival order. */
  readonly received: ReceivedEvent[];
  /** Requests whose signature did not verify (must stay 0). */
  readonly unverified: number;
  behaviour: (event: ReceivedEvent) => Behaviour;
  /** The events answered 2xx for one payment, in arrival order. */
  acceptedFor(chargeId: string, provider?: string): ReceivedEvent[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The application's side: a real HTTP server on loopback that verifies every request with the
 * official `standardwebhooks` package (the signer under test never checks itself) and records what
 * it got. A request that does not verify gets 401 and is counted.
 */
export async function startConsumer(secret: string, path = '/payment-events'): Promise<Consumer> {
  const webhook = new Webhook(secret);
  const received: ReceivedEvent[] = [];
  let unverified = 0;
  const hanging = new Set<ServerResponse>();
  const consumer: Consumer = {
    url: '',
    received,
    get unverified() {
      return unverified;
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
    let payload: {
      id: string;
      sequence: number;
      type: string;
      payment: { charge_id: string; provider: string; status: string; previous_status: string | null; amount_refunded: number; inquiry_open: boolean };
    };
    try {
      payload = webhook.verify(body, request.headers as Record<string, string>) as typeof payload;
    } catch {
      unverified += 1;
      response.writeHead(401).end();
      return;
    }
    const event: ReceivedEvent = {
      webhookId: String(request.headers['webhook-id']),
      chargeId: payload.payment.charge_id,
      provider: payload.payment.provider,
      sequence: payload.sequence,
      type: payload.type,
      status: payload.payment.status,
      previousStatus: payload.payment.previous_status,
      amountRefunded: payload.payment.amount_refunded,
      inquiryOpen: payload.payment.inquiry_open,
      accepted: false,
      at: Date.now(),
    };
    received.push(event);
    const behaviour = consumer.behaviour(event);
    if (behaviour.kind === 'ok') {
      if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      event.accepted = true;
      response.writeHead(204).end();
    } else if (behaviour.kind === 'status') response.writeHead(behaviour.status, behaviour.headers).end('consumer says no');
    else if (behaviour.kind === 'hang_up') request.socket.destroy();
    else hanging.add(response);
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
