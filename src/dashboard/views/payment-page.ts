import { html } from 'hono/html';
import type { OutboundPaymentEvent, PaymentLane } from '../sql/payment-deliveries.ts';
import type { PaymentSummary } from '../sql/payment.ts';
import type { PaymentFactEntry } from '../sql/payment-facts.ts';
import type { PaymentHistoryEntry } from '../sql/payment-history.ts';
import type { StoredFinding } from '../../reconciliation/sql/findings.ts';
import { formatTime } from './format.ts';
import { type ViewerAccess, renderLayout } from './layout.ts';
import { factsTable, findingsSection, paymentSentence, paymentSummary, statusHistory } from './payment-sections.ts';

export interface PaymentPage {
  payment: PaymentSummary;
  facts: PaymentFactEntry[];
  transitions: PaymentHistoryEntry[];
  /** Open reconciliation findings about the payment (what its gateway's ledger says differs). */
  findings: StoredFinding[];
  events: OutboundPaymentEvent[];
  lanes: PaymentLane[];
  /** The destinations to show a column for: the configured ones, and any with a lane of this payment. */
  destinations: string[];
  access: ViewerAccess;
}

/** Where one destination is with one payment event, in words. */
export function deliveryState(event: Pick<OutboundPaymentEvent, 'sequence'>, lane: PaymentLane | undefined): { state: string; text: string } {
  if (!lane) return { state: 'untried', text: 'not tried yet' };
  if (event.sequence <= lane.deliveredSequence) return { state: 'delivered', text: 'delivered (or passed over by its filters)' };
  const head = lane.deliveredSequence + 1;
  if (event.sequence > head) return { state: 'waiting', text: `waits for #${head}` };
  const lastAnswer = lane.lastError ?? (lane.lastStatus === null ? 'no answer' : `HTTP ${lane.lastStatus}`);
  if (lane.parkedAt) return { state: 'parked', text: `PARKED since ${formatTime(lane.parkedAt)}: ${lane.parkedReason ?? lastAnswer}` };
  if (lane.attempts > 0)
    return {
      state: 'failing',
      text: `failing, ${lane.attempts} attempt${lane.attempts === 1 ? '' : 's'}: ${lastAnswer}${lane.nextAttemptAt ? `; next ${formatTime(lane.nextAttemptAt)}` : ''}`,
    };
  return { state: 'sending', text: 'sending' };
}

function outboundTable(page: PaymentPage) {
  if (page.events.length === 0) return html`<p class="muted">No payment event yet: nothing has changed what the application knows.</p>`;
  const lanes = new Map(page.lanes.map((lane) => [lane.destination, lane]));
  const header = page.destinations.map((d) => html`<th>to ${d}</th>`);
  const rows = page.events.map((e) => {
    const cells = page.destinations.map((d) => {
      const { state, text } = deliveryState(e, lanes.get(d));
      return html`<td class="delivery ${state}" data-destination="${d}" data-delivery="${state}">${text}</td>`;
    });
    return html`<tr data-sequence="${e.sequence}"><td class="num">#${e.sequence}</td><td class="time">${formatTime(e.createdAt)}</td><td><code>payment.${e.status}</code></td>
<td>${e.previousStatus ?? '(created)'} → ${paymentSentence(e)}</td><td><a href="/dashboard/events/${e.causeInboxId}">${e.causeEventId}</a></td>${cells}</tr>`;
  });
  const note =
    page.destinations.length === 0
      ? html`<p class="muted">No push destination is configured: the application reads these from the feed (/api/v1/payment-events), if at all.</p>`
      : '';
  return html`<table id="payment-events"><thead><tr><th class="num">seq</th><th>written</th><th>type</th><th>change</th><th>caused by</th>${header}</tr></thead><tbody>${rows}</tbody></table>${note}`;
}

export function renderPaymentPage(page: PaymentPage) {
  const { payment } = page;
  const body = html`<p><a href="/dashboard">← overview</a> · <a href="/dashboard/events?provider=${encodeURIComponent(payment.provider)}&amp;charge=${encodeURIComponent(payment.chargeId)}">this charge's events in the list</a></p>
<h2>${payment.provider} · ${payment.chargeId}</h2>
<p class="sentence">${paymentSentence(payment)}</p>
${findingsSection(page.findings)}
<div class="two"><div>${paymentSummary(payment, { linkToPage: false })}</div><div><h3>Status history</h3>${statusHistory(page.transitions)}</div></div>
<h2>What the gateway said</h2>
${factsTable(page.facts)}
<h2>What the application was told</h2>
<p class="muted">Each change of the payment is one payment event, numbered per payment; each destination receives them in that order.</p>
${outboundTable(page)}`;
  return renderLayout({ title: `${payment.provider} ${payment.chargeId}`, access: page.access, body });
}
