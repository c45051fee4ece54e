import { createServer } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

interface PaymentEvent {
  id: string;
  type: string; // payment.paid, payment.refunded, …
  sequence: number;
  follows_sequence?: number; // pushed events: what this destination was sent before (the feed omits it)
  occurred_at: string;
  payment: {
    provider: string;
    charge_id: string;
    status: string;
    previous_status: string | null;
    amount: number | null;
    amount_refunded: number;
    currency: string | null;
    inquiry_open: boolean;
  };
  cause: { inbox_id: number; event_id: string; event_type: string };
}

const webhook = new Webhook(process.env.INBOX_WEBHOOK_SECRET!); // the DESTINATION_SECRET_<NAME> value, whsec_…

// Your database in real life: one row per payment with the last applied sequence, and the ids seen.
const applied = new Map<string, number>();
const seen = new Set<string>();

async function apply(event: PaymentEvent): Promise<'applied' | 'duplicate' | 'early'> {
  if (seen.has(event.id)) return 'duplicate'; // a resend after a lost answer: same webhook-id
  const key = `${event.payment.provider}:${event.payment.charge_id}`;
  const last = applied.get(key) ?? 0;
  if (event.sequence <= last) return 'duplicate';
  // sequence − 1 unless events in between were not sent here (a skip, a kinds filter, a later start).
  const follows = event.follows_sequence ?? event.sequence - 1;
  if (last < follows) return 'early'; // cannot happen from one inbox; be safe anyway
  // In one transaction of your own: update the order, then record the sequence and the id.
  console.log(`${key}: ${event.payment.previous_status ?? '∅'} → ${event.payment.status}, ${event.payment.amount_refunded} refunded`);
  applied.set(key, event.sequence);
  seen.add(event.id);
  return 'applied';
}

const port = Number(process.env.PORT ?? 8080);

createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    let event: PaymentEvent;
    try {
      // The raw bytes, as received: never re-serialised JSON.
      event = webhook.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>) as PaymentEvent;
    } catch (error) {
      response.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
      return;
    }
    try {
      const result = await apply(event);
      response.writeHead(result === 'early' ? 409 : 204).end(); // 409: not applied, the inbox retries
    } catch {
      response.writeHead(503, { 'retry-after': '30' }).end(); // the inbox backs off and resends
    }
  });
}).listen(port, () => console.log(`listening on :${port} (Node ${process.version})`));
