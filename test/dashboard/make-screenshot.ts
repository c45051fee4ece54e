/**
 * Makes docs/dashboard.png from realistic data:
 * `node test/dashboard/make-screenshot.ts [overview.png] [event.png] [events.png] [payment.png]`.
 *
 * A day of traffic for three gateways goes through the real service — signed Stripe events
 * (official SDK signer), Asaas events with its access token, GitHub deliveries — and real workers
 * process them (Asaas in `require` mode: a few payments the merchant's app never created end
 * `failed`). The rows' clocks are then moved back over the last 24 hours (received, processed and
 * payment-transition times together) so the charts show a day. Finally a receiver-only instance
 * takes a last handful of events that stay pending, and headless chromium photographs the page.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { chromium } from 'playwright-core';
import { loadConfig } from '../../src/config/load-config.ts';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { createLogger } from '../../src/logger.ts';
import { type RunningService, startService } from '../../src/service.ts';
import { testWorkerConfig } from '../support/config.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';

const out = process.argv[2] ?? 'docs/dashboard.png';
/** Optional: also photograph one event's page (a refunded charge: payload, payment, history). */
const eventOut = process.argv[3];
/** Optional: the event list (Stripe's ignored events) and a refunded payment's page. */
const eventListOut = process.argv[4];
const paymentOut = process.argv[5];
const DESTINATION_SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const STRIPE_SECRET = 'whsec_screenshot_stripe';
const ASAAS_TOKEN = 'asaas-screenshot-token-0123456789';
const GITHUB_SECRET = 'github-screenshot-secret';
const ADMIN_TOKEN = 'screenshot-admin-token-0123456789';
const DAY_MS = 86_400_000;

interface Delivery {
  provider: 'stripe' | 'asaas' | 'github';
  eventId: string;
  at: number;
  body: string;
  headers: Record<string, string>;
}

let seed = 7;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

/** Busier in the Brazilian afternoon and evening than at night: a weight per UTC hour. */
function busyTime(start: number, end: number): number {
  for (;;) {
    const at = start + random() * (end - start);
    const hour = new Date(at).getUTCHours();
    const weight = 0.25 + 0.75 * Math.max(0, Math.sin(((hour - 9) / 24) * 2 * Math.PI));
    if (random() < weight) return at;
  }
}

function stripeDeliveries(now: number): Delivery[] {
  const deliveries: Delivery[] = [];
  const add = (type: string, chargeId: string, at: number, extra: Partial<Parameters<typeof chargeEvent>[0]> = {}) => {
    const body = chargeEvent({
      id: `evt_${randomBytes(12).toString('hex')}`,
      type,
      chargeId,
      created: Math.floor(at / 1000),
      amount: 1990 + Math.floor(random() * 40) * 500,
      ...extra,
    });
    deliveries.push({ provider: 'stripe', eventId: JSON.parse(body).id, at, body, headers: {} });
  };
  for (let i = 0; i < 260; i++) {
    const chargeId = `ch_3P${randomBytes(9).toString('hex')}`;
    const at = busyTime(now - DAY_MS + 600_000, now - 240_000);
    add('charge.pending', chargeId, at);
    add(random() < 0.93 ? 'charge.succeeded' : 'charge.failed', chargeId, at + 2_000 + random() * 8_000);
    if (random() < 0.05) add('charge.refunded', chargeId, at + 3_600_000 * random(), { amountRefunded: 1990 });
  }
  // Types no handler needs: stored, then ignored.
  for (let i = 0; i < 120; i++) {
    const type = pick(['customer.created', 'payment_intent.created', 'invoice.paid', 'customer.updated']);
    const at = busyTime(now - DAY_MS + 600_000, now - 240_000);
    const body = JSON.stringify({
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      type,
      created: Math.floor(at / 1000),
      data: { object: { id: `cus_${randomBytes(7).toString('hex')}`, object: 'customer' } },
    });
    deliveries.push({ provider: 'stripe', eventId: JSON.parse(body).id, at, body, headers: {} });
  }
  return deliveries;
}

/** Asaas sends dateCreated in São Paulo time without a zone. */
const saoPaulo = (at: number) => new Date(at - 3 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

function asaasDeliveries(now: number, missing: Set<string>): Delivery[] {
  const deliveries: Delivery[] = [];
  for (let i = 0; i < 150; i++) {
    const paymentId = `pay_${String(Math.floor(random() * 1e12)).padStart(12, '0')}`;
    if (i % 37 === 5) missing.add(paymentId);
    const at = busyTime(now - DAY_MS + 600_000, now - 240_000);
    const value = Math.round((49.9 + random() * 400) * 100) / 100;
    const billingType = pick(['PIX', 'PIX', 'BOLETO', 'CREDIT_CARD']);
    const steps = billingType === 'BOLETO' ? ['PAYMENT_CREATED', 'PAYMENT_VIEWED', 'PAYMENT_CONFIRMED'] : ['PAYMENT_CREATED', 'PAYMENT_RECEIVED'];
    steps.forEach((event, step) => {
      const when = at + step * (30_000 + random() * 600_000);
      const body = JSON.stringify({
        id: `evt_${randomBytes(16).toString('hex')}&${Math.floor(random() * 1e9)}`,
        event,
        dateCreated: saoPaulo(when),
        payment: {
          object: 'payment',
          id: paymentId,
          customer: `cus_${randomBytes(6).toString('hex')}`,
          value,
          netValue: Math.round(value * 0.98 * 100) / 100,
          billingType,
          status: event === 'PAYMENT_CREATED' ? 'PENDING' : 'RECEIVED',
          dueDate: saoPaulo(when).slice(0, 10),
        },
      });
      deliveries.push({ provider: 'asaas', eventId: JSON.parse(body).id, at: when, body, headers: { 'asaas-access-token': ASAAS_TOKEN } });
    });
  }
  return deliveries;
}

function githubDeliveries(now: number): Delivery[] {
  return Array.from({ length: 70 }, () => {
    const event = pick(['push', 'pull_request', 'issues', 'check_suite']);
    const body = JSON.stringify({
      action: event === 'push' ? undefined : pick(['opened', 'closed', 'completed']),
      repository: { id: 1296269, full_name: 'acme/checkout' },
      sender: { login: 'octocat' },
    });
    const deliveryId = crypto.randomUUID();
    return {
      provider: 'github' as const,
      eventId: deliveryId,
      at: busyTime(now - DAY_MS + 600_000, now - 240_000),
      body,
      headers: {
        'x-github-event': event,
        'x-github-delivery': deliveryId,
        'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
      },
    };
  });
}

async function send(baseUrl: string, delivery: Delivery): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...delivery.headers };
  if (delivery.provider === 'stripe') headers['stripe-signature'] = stripeSignature(delivery.body, STRIPE_SECRET);
  const response = await fetch(`${baseUrl}/webhooks/${delivery.provider}`, { method: 'POST', headers, body: delivery.body });
  if (response.status !== 200) throw new Error(`${delivery.provider} ${delivery.eventId}: ${response.status} ${await response.text()}`);
}

/** In time order, a few at a time (a charge's events are seconds apart, so order holds per charge). */
async function sendAll(baseUrl: string, deliveries: Delivery[]): Promise<void> {
  for (let i = 0; i < deliveries.length; i += 8) await Promise.all(deliveries.slice(i, i + 8).map((d) => send(baseUrl, d)));
}

async function waitUntil(description: string, check: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The team's services: `orders` takes every payment event; `ledger` (Stripe only) answers 500 for
 * a few charges, whose lanes park after two attempts.
 */
function startConsumers(): Promise<{ server: Server; url: (name: string) => string }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const failing = request.url === '/ledger' && /"charge_id":"ch_3P[0-9a-f]*[05]"/.test(body);
      response.writeHead(failing ? 500 : 204).end(failing ? 'ledger: account mapping missing' : undefined);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: (name) => `http://127.0.0.1:${(server.address() as { port: number }).port}/${name}` })),
  );
}

function configFor(role: string, consumerUrl: (name: string) => string) {
  const config = loadConfig(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      INBOX_ROLE: role,
      INBOX_CONFIG: '/inbox.json',
      INBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      WEBHOOK_SECRET_STRIPE: STRIPE_SECRET,
      WEBHOOK_SECRET_ASAAS: ASAAS_TOKEN,
      WEBHOOK_SECRET_GITHUB: GITHUB_SECRET,
      DESTINATION_URL_ORDERS: consumerUrl('orders'),
      DESTINATION_SECRET_ORDERS: DESTINATION_SECRET,
      DESTINATION_URL_LEDGER: consumerUrl('ledger'),
      DESTINATION_SECRET_LEDGER: DESTINATION_SECRET,
    },
    () =>
      JSON.stringify({
        providers: { asaas: { driver: 'asaas', unknownPayment: 'require' } },
        destinations: { ledger: { providers: ['stripe'], maxAttempts: 2, retryDelaySeconds: 0.5, retryDelayMaxSeconds: 1, backoffAfterFailingLanes: 10_000 } },
      }),
  );
  return { ...config, worker: { ...testWorkerConfig, maxAttempts: 3, concurrency: 8 } };
}

/** Moves every row's clock to its delivery's moment: received, processed (plus a lag), transitions. */
async function shiftClocks(sql: postgres.Sql, deliveries: Delivery[]): Promise<void> {
  const lags = deliveries.map(() => (random() < 0.97 ? 0.04 + random() * 0.8 : 5 + random() * 120));
  await sql`
    update webhook_inbox i set received_at = v.at, processed_at = case when i.processed_at is null then null else v.at + v.lag * interval '1 second' end
    from (select unnest(${deliveries.map((d) => d.provider)}::text[]) as provider, unnest(${deliveries.map((d) => d.eventId)}::text[]) as event_id,
                 unnest(${deliveries.map((d) => new Date(d.at).toISOString())}::timestamptz[]) as at, unnest(${lags}::float8[]) as lag) v
    where i.provider = v.provider and i.event_id = v.event_id`;
  // The proof's times too (as the delivery would have been signed and checked then), or the event page contradicts itself.
  await sql`
    update webhook_inbox set verification = verification
      || jsonb_build_object('verifiedAt', to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      || case when verification->>'signedAt' is null then '{}'::jsonb
              else jsonb_build_object('signedAt', to_char(date_trunc('second', received_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) end
    where verification is not null`;
  await sql`update payment_transitions t set created_at = coalesce(i.processed_at, i.received_at) from webhook_inbox i where i.id = t.inbox_id`;
  await sql`update payments p set updated_at = t.last, created_at = t.first from (select payment_id, min(created_at) as first, max(created_at) as last from payment_transitions group by payment_id) t where t.payment_id = p.id`;
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'inbox-screenshot-'));
  await chmod(scratch, 0o755);
  const database = await startEmbeddedPostgres({ baseDir: scratch, preferredPort: 0, relocationDir: scratch });
  const logger = createLogger('error');
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  let service: RunningService | undefined;
  const consumers = await startConsumers();
  let browser: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
  try {
    const now = Date.now();
    const missing = new Set<string>();
    const deliveries = [...stripeDeliveries(now), ...asaasDeliveries(now, missing), ...githubDeliveries(now)].sort((a, b) => a.at - b.at);

    service = await startService({ config: configFor('all', consumers.url), databaseUrl: database.url, logger });
    // The merchant's application creates its Asaas payments, except a few it never recorded.
    const asaasPayments = new Set(deliveries.filter((d) => d.provider === 'asaas').map((d) => JSON.parse(d.body).payment.id as string));
    for (const id of asaasPayments) {
      if (!missing.has(id)) await sql`insert into payments (provider, gateway_charge_id, status, currency) values ('asaas', ${id}, 'pending', 'BRL')`;
    }
    await sendAll(`http://127.0.0.1:${service.port}`, deliveries);
    await waitUntil('every event to settle', async () => (await sql`select 1 from webhook_inbox where status = 'pending' limit 1`).length === 0);
    await waitUntil(
      'every lane to be delivered or parked',
      async () =>
        (
          await sql`select 1 from payments p join delivery_lanes l on l.payment_id = p.id where l.delivered_sequence < p.event_sequence and l.parked_at is null limit 1`
        ).length === 0,
    );
    await service.stop();
    await shiftClocks(sql, deliveries);

    // Workers down for the last few minutes: what arrives now stays pending.
    service = await startService({ config: configFor('receiver', consumers.url), databaseUrl: database.url, logger });
    const baseUrl = `http://127.0.0.1:${service.port}`;
    const late = stripeDeliveries(now)
      .slice(0, 14)
      .map((d, i) => ({ ...d, at: now - 13 * 60_000 + i * 50_000 }));
    await sendAll(baseUrl, late);
    await shiftClocks(sql, late);

    browser = await chromium.launchPersistentContext(path.join(scratch, 'chromium'), {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      headless: true,
      viewport: { width: 1360, height: 900 },
      deviceScaleFactor: 1,
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`${baseUrl}/dashboard`);
    await page.fill('input[name="token"]', ADMIN_TOKEN);
    await page.click('header button[type="submit"]');
    await page.waitForURL(/notice=signed-in/);
    await page.goto(`${baseUrl}/dashboard`);
    await page.screenshot({ path: out, fullPage: true });
    if (eventOut) {
      const [event] = await sql`select id from webhook_inbox where event_type = 'charge.refunded' and status = 'processed' order by id limit 1`;
      await page.goto(`${baseUrl}/dashboard/events/${event!.id}`);
      await page.screenshot({ path: eventOut, fullPage: true });
    }
    if (eventListOut) {
      await page.goto(`${baseUrl}/dashboard/events?provider=stripe&status=ignored`);
      await page.screenshot({ path: eventListOut, fullPage: true });
    }
    if (paymentOut) {
      const [parked] =
        await sql`select p.provider, p.gateway_charge_id from payments p join delivery_lanes l on l.payment_id = p.id where l.parked_at is not null order by p.id limit 1`;
      await page.goto(`${baseUrl}/dashboard/payments/${parked!.provider}/${parked!.gateway_charge_id}`);
      await page.screenshot({ path: paymentOut, fullPage: true });
    }
    const counts = await sql`select provider, status, count(*)::int as n from webhook_inbox group by 1, 2 order by 1, 2`;
    console.log(`wrote ${out}:`, counts.map((r) => `${r.provider}/${r.status}=${r.n}`).join(' '));
  } finally {
    await browser?.close();
    await service?.stop();
    await new Promise((resolve) => consumers.server.close(resolve));
    await sql.end();
    await database.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
