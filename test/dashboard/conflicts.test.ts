import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

const SECRET = 'whsec_dashboard_conflicts';
const database = useTestDatabase();
let service: TestService;
let storedId: number;
const created = Math.floor(Date.now() / 1000) - 60;
const succeeded = chargeEvent({ id: 'evt_dash_conflict', type: 'charge.succeeded', chargeId: 'ch_dash_conflict', created });
// The conflicting body carries markup: the page must show it as text.
const refunded = JSON.stringify({
  ...JSON.parse(chargeEvent({ id: 'evt_dash_conflict', type: 'charge.refunded', chargeId: 'ch_dash_conflict', created, amountRefunded: 2000 })),
  description: '</pre><script>alert(1)</script>',
});

setup(async () => {
  service = await startTestService({
    database,
    env: { INBOX_ROLE: 'receiver', INBOX_DASHBOARD: 'on', WEBHOOK_SECRET_STRIPE: SECRET, WEBHOOK_SECRET_ASAAS: 'asaas-token' },
  });
  for (const body of [succeeded, refunded, succeeded]) assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  const [row] = await database.sql`select id::int as id from webhook_inbox where event_id = 'evt_dash_conflict'`;
  storedId = row!.id;
});

const page = async (path: string) => {
  const response = await fetch(`${service.baseUrl}${path}`);
  assert.equal(response.status, 200);
  return response.text();
};

describe('the dashboard shows conflicting duplicates', () => {
  test('the event page lists each conflict: when, stored → received per field, and the body as sent, escaped', async () => {
    const html = await page(`/dashboard/events/${storedId}`);
    assert.match(html, /<h2 id="conflicts">Conflicting duplicates \(1\)<\/h2>/);
    assert.match(html, /<th>eventType<\/th><td><code>&quot;charge\.succeeded&quot;<\/code> → <code>&quot;charge\.refunded&quot;<\/code><\/td>/);
    assert.match(html, /<th>status<\/th><td><code>&quot;paid&quot;<\/code> → <code>&quot;refunded&quot;<\/code><\/td>/);
    assert.match(html, /<th>amountRefunded<\/th><td><code>0<\/code> → <code>2000<\/code><\/td>/);
    assert.ok(html.includes(`<summary>${Buffer.byteLength(refunded)} bytes</summary>`));
    assert.ok(!html.includes('<script>'), 'no markup from a conflicting body reaches the page');
    assert.ok(html.includes('&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;'));
  });

  test('an event without conflicts has no such section', async () => {
    const other = chargeEvent({ id: 'evt_dash_plain', type: 'charge.succeeded', chargeId: 'ch_dash_plain', created });
    assert.equal((await postStripe(service.baseUrl, other, SECRET)).status, 200);
    const [row] = await database.sql`select id::int as id from webhook_inbox where event_id = 'evt_dash_plain'`;
    assert.doesNotMatch(await page(`/dashboard/events/${row!.id}`), /id="conflicts"/);
  });

  test("the overview counts the last day's conflicts per provider and in the status line", async () => {
    const html = await page('/dashboard');
    const card = (provider: string) =>
      html.slice(html.indexOf(`data-provider="${provider}"`), html.indexOf('</section>', html.indexOf(`data-provider="${provider}"`)));
    assert.match(card('stripe'), /<div class="figure warn"><b data-figure="conflicts-day">1<\/b>/);
    assert.match(card('asaas'), /<div class="figure"><b data-figure="conflicts-day">0<\/b>/);
    assert.match(html, /<span class="pill pending" data-figure="conflicts-total">1 conflicting duplicate\(s\), 24 h<\/span>/);
  });
});
