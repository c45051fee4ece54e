import { html } from 'hono/html';
import { fromStoredFact } from '../../domain/payments/stored-fact.ts';
import { describeDecision } from '../../operations/decision-text.ts';
import { describeFinding } from '../../reconciliation/finding-text.ts';
import type { StoredFinding } from '../../reconciliation/sql/findings.ts';
import type { SplitShare } from '../../domain/payments/payment-fact.ts';
import type { PaymentSummary } from '../sql/payment.ts';
import type { PaymentFactEntry } from '../sql/payment-facts.ts';
import type { PaymentHistoryEntry } from '../sql/payment-history.ts';
import { formatIsoTime, formatMoney, formatTime } from './format.ts';

/** The payment's page: its natural key in the path, as operators and gateways name it. */
export const paymentHref = (provider: string, chargeId: string) => `/dashboard/payments/${encodeURIComponent(provider)}/${encodeURIComponent(chargeId)}`;

/** "paid, R$20.00, nothing refunded": the payment in one line. */
export function paymentSentence(payment: Pick<PaymentSummary, 'status' | 'amount' | 'amountRefunded' | 'currency'>): string {
  const refunded = payment.amountRefunded === 0 ? 'nothing refunded' : `${formatMoney(payment.amountRefunded, payment.currency)} refunded`;
  return `${payment.status}, ${payment.amount === null ? 'amount not known yet' : formatMoney(payment.amount, payment.currency)}, ${refunded}`;
}

/** The payments row in words: what each column means, every time in one format. */
export function paymentSummary(payment: PaymentSummary, options: { linkToPage: boolean }) {
  return html`<dl class="facts" id="payment">
<dt>gateway</dt><dd>${payment.provider}</dd>
${payment.account === null ? '' : html`<dt>account</dt><dd data-field="account"><code>${payment.account}</code></dd>`}
<dt>charge</dt><dd><code>${payment.chargeId}</code>${options.linkToPage ? html` · <a href="${paymentHref(payment.provider, payment.chargeId)}">payment page →</a>` : ''}</dd>
<dt>status</dt><dd><span class="pill payment-${payment.status}" data-payment-status="${payment.status}">${payment.status}</span></dd>
<dt>amount</dt><dd data-field="amount">${payment.amount === null ? 'not known yet' : formatMoney(payment.amount, payment.currency)}</dd>
<dt>refunded</dt><dd data-field="refunded">${payment.amountRefunded === 0 ? 'nothing' : formatMoney(payment.amountRefunded, payment.currency)}</dd>
<dt>last gateway event</dt><dd>${payment.lastGatewayEventAt ? formatTime(payment.lastGatewayEventAt) : '—'}</dd>
<dt>first seen</dt><dd>${formatTime(payment.createdAt)}</dd>
<dt>last changed</dt><dd>${formatTime(payment.updatedAt)}</dd>
<dt>told the application</dt><dd>${payment.eventSequence === 0 ? 'nothing yet' : `${payment.eventSequence} payment event${payment.eventSequence === 1 ? '' : 's'}`}</dd>
${payment.split === null ? '' : html`<dt>split</dt><dd data-field="split">${splitList(payment.split, payment.currency)}</dd>`}
</dl>`;
}

/** A split in words, one recipient per line: "rp_1: R$150.00, liable, pays the processing fee". */
function splitList(split: readonly SplitShare[], currency: string | null) {
  const share = (s: SplitShare) => {
    const part = s.amount !== null ? formatMoney(s.amount, currency) : `${s.percentage}%`;
    const flags = [
      s.liable && 'liable for chargebacks',
      s.chargeProcessingFee && 'pays the processing fee',
      s.chargeRemainderFee && 'receives the remainder',
    ].filter(Boolean);
    return html`<li><code>${s.recipientId}</code>: ${part}${flags.length > 0 ? `, ${flags.join(', ')}` : ''}</li>`;
  };
  return html`<ul class="split">${split.map(share)}</ul>`;
}

/** The status changes, oldest first, each with the event that caused it (`currentInboxId`: highlighted). */
export function statusHistory(transitions: PaymentHistoryEntry[], currentInboxId?: number) {
  if (transitions.length === 0) return html`<p class="muted">No status changes recorded.</p>`;
  const rows = transitions.map((t) => {
    const current = t.inboxId === currentInboxId;
    const cause = t.eventId
      ? html`<a href="/dashboard/events/${t.inboxId}">${t.eventId}</a> <span class="muted">${t.eventType}</span>`
      : html`<span class="muted">inbox row ${t.inboxId} (purged)</span>`;
    return html`<tr${current ? html` class="this-event"` : ''}><td class="time">${formatTime(t.createdAt)}</td><td>${t.fromStatus ?? '(created)'} → <b>${t.toStatus}</b></td><td>${cause}${current ? html` <span class="pill">this event</span>` : ''}</td></tr>`;
  });
  return html`<table id="status-history"><thead><tr><th>when</th><th>status</th><th>caused by</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** What an event said about the payment, from its recorded fact: "paid, R$20.00, nothing refunded (a gateway read)". */
function saidByFact(fact: unknown): string {
  const parsed = fromStoredFact(fact);
  if (!parsed) return '—';
  const sentence = paymentSentence({
    status: parsed.status,
    amount: parsed.amount ?? null,
    amountRefunded: parsed.amountRefunded ?? 0,
    currency: parsed.currency ?? null,
  });
  return parsed.snapshot ? `${sentence} (a gateway read)` : sentence;
}

/** Every fact known for the payment, in gateway order: what each event said and what came of it. */
export function factsTable(facts: PaymentFactEntry[]) {
  if (facts.length === 0) return html`<p class="muted">No fact is recorded for this payment.</p>`;
  const rows = facts.map(
    (
      f,
    ) => html`<tr data-event-id="${f.eventId}"><td class="time">${formatTime(f.occurredAt)}</td><td class="event"><a href="/dashboard/events/${f.inboxId}">${f.eventId}</a><br><span class="muted">${f.eventType}</span></td>
<td>${f.status ? html`<span class="pill ${f.status}">${f.status}</span>` : html`<span class="muted">archived</span>`}</td><td>${saidByFact(f.fact)}</td><td>${describeDecision(f.decision, f.decisionDetail, formatIsoTime)}</td></tr>`,
  );
  return html`<table id="payment-facts"><thead><tr><th>occurred</th><th>event</th><th>status</th><th>it said</th><th>what came of it</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The payment's open reconciliation findings, each explained (nothing when it has none). */
export function findingsSection(findings: readonly StoredFinding[]) {
  if (findings.length === 0) return '';
  const items = findings.map((f) => html`<li data-kind="${f.kind}">${describeFinding(f.evidence)}</li>`);
  return html`<p><a href="/dashboard/findings">Reconciliation</a>: ${findings.length} open finding(s)</p><ul id="payment-findings">${items}</ul>`;
}
