import { html } from 'hono/html';
import { formatJsonText } from '../../format/json-text.ts';
import type { ConflictDetails } from '../../inbox/sql/conflicts.ts';
import type { InboxEventDetail } from '../../inbox/sql/event-columns.ts';
import type { ResourceEvent } from '../../inbox/sql/find-events.ts';
import { describeProof } from '../../gateways/shared/proof.ts';
import type { PaymentSummary } from '../sql/payment.ts';
import type { PaymentHistoryEntry } from '../sql/payment-history.ts';
import { findingsSection, paymentHref, paymentSummary, statusHistory } from './payment-sections.ts';
import { formatDuration } from '../../format/duration.ts';
import { describeDecision } from '../../operations/decision-text.ts';
import type { StoredFinding } from '../../reconciliation/sql/findings.ts';
import { formatIsoTime, formatTime } from './format.ts';
import { type Notice, type ViewerAccess, csrfField, renderLayout } from './layout.ts';

export interface EventPage {
  event: InboxEventDetail;
  payment: PaymentSummary | undefined;
  transitions: PaymentHistoryEntry[];
  /** Open reconciliation findings about the payment. */
  findings: StoredFinding[];
  resourceEvents: ResourceEvent[];
  /** Later deliveries with this event's id that said something else (kept, not processed). */
  conflicts: ConflictDetails[];
  access: ViewerAccess;
  notice?: Notice;
}

const replayable = (status: string) => status === 'failed' || status === 'ignored';

function facts(event: EventPage['event']) {
  const lag = event.processedAt ? (event.processedAt.getTime() - event.receivedAt.getTime()) / 1000 : undefined;
  return html`<dl class="facts">
<dt>status</dt><dd><span class="pill ${event.status}" data-status="${event.status}">${event.status}</span></dd>
<dt>decision</dt><dd id="decision" data-decision="${event.decision ?? ''}">${describeDecision(event.decision, event.decisionDetail, formatIsoTime)}</dd>
<dt>provider</dt><dd>${event.provider}</dd>
<dt>event id</dt><dd><code>${event.eventId}</code></dd>
<dt>type</dt><dd><code>${event.eventType}</code></dd>
<dt>charge</dt><dd>${event.resourceId ? html`<a href="${paymentHref(event.provider, event.resourceId)}"><code>${event.resourceId}</code></a>` : '—'}</dd>
<dt>account</dt><dd>${event.account ? html`<a href="/dashboard/events?account=${encodeURIComponent(event.account)}"><code>${event.account}</code></a>` : '—'}</dd>
<dt>occurred</dt><dd>${formatTime(event.occurredAt)}</dd>
<dt>received</dt><dd>${formatTime(event.receivedAt)}</dd>
<dt>verified</dt><dd id="verification">${event.verification ? describeProof(event.verification, formatIsoTime) : html`<span class="muted">— (stored before proofs were kept)</span>`}</dd>
<dt>finished</dt><dd>${event.processedAt ? html`${formatTime(event.processedAt)} <span class="muted">(${formatDuration(lag)} after receipt)</span>` : '—'}</dd>
<dt>attempts</dt><dd>${event.attempts}</dd>
<dt>last error</dt><dd class="error-text">${event.lastError ?? '—'}</dd>
</dl>`;
}

function replayControl(page: EventPage) {
  if (!replayable(page.event.status)) return '';
  if (page.access.kind !== 'signed-in') return html`<p class="muted">Sign in with the admin token to replay this event.</p>`;
  return html`<form method="post" action="/dashboard/events/${page.event.id}/replay">${csrfField(page.access)}<button type="submit">Replay this event</button> <span class="muted">back to pending and queued; the same path as <code>inboxctl replay</code></span></form>`;
}

function paymentSection(page: EventPage) {
  if (!page.payment) return html`<p class="muted">No payment row for this event's resource.</p>`;
  return html`${paymentSummary(page.payment, { linkToPage: true })}${findingsSection(page.findings)}`;
}

function resourceEventsSection(page: EventPage) {
  if (page.resourceEvents.length <= 1) return '';
  const rows = page.resourceEvents.map(
    (e) =>
      html`<tr><td>${formatTime(e.occurredAt)}</td><td>${e.id === page.event.id ? html`<b>${e.eventId}</b>` : html`<a href="/dashboard/events/${e.id}">${e.eventId}</a>`}</td><td><code>${e.eventType}</code></td><td><span class="pill ${e.status}">${e.status}</span></td></tr>`,
  );
  return html`<h2>All events of ${page.event.resourceId}</h2><table class="compact"><thead><tr><th>occurred</th><th>event</th><th>type</th><th>status</th></tr></thead><tbody>${rows}</tbody></table>`;
}

const shown = (value: string | number | null) => (value === null ? '—' : JSON.stringify(value));

/** Each conflicting duplicate: when, what it said differently, and its body as sent (escaped like the payload). */
function conflictsSection(page: EventPage) {
  if (page.conflicts.length === 0) return '';
  const rows = page.conflicts.map(
    (c) => html`<tr data-conflict-id="${c.id}"><td class="time">${formatTime(c.receivedAt)}</td>
<td><table class="compact"><tbody>${c.differences.map((d) => html`<tr><th>${d.field}</th><td><code>${shown(d.stored)}</code> → <code>${shown(d.received)}</code></td></tr>`)}</tbody></table></td>
<td><details><summary>${c.rawBody.length} bytes</summary><pre>${prettyPayload({ rawBody: c.rawBody, payloadJson: null })}</pre></details></td></tr>`,
  );
  return html`<h2 id="conflicts">Conflicting duplicates (${page.conflicts.length})</h2>
<p class="muted">Deliveries with this event's id that said something else. Each got 200 and was not processed: the event above is the one the inbox applied.</p>
<table id="conflicting-duplicates"><thead><tr><th>received</th><th>stored → received</th><th>body as sent</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * The body as the gateway sent it, indented: laid out from the raw bytes' text so keys keep the
 * sender's order (jsonb reorders them), numbers their digits (a 64-bit id is not rounded) and any
 * nesting depth shows. A body that is not JSON (a form-encoded postback) shows verbatim.
 */
export function prettyPayload(event: { rawBody: Buffer; payloadJson: string | null }): string {
  const text = Buffer.from(event.rawBody).toString('utf8');
  try {
    return formatJsonText(text, { indent: 2 });
  } catch {
    return text.length > 0 ? text : formatJsonText(event.payloadJson ?? 'null', { indent: 2 });
  }
}

export function renderEventPage(page: EventPage) {
  const { event } = page;
  // The pretty text is interpolated as a string, so the html helper escapes it: a payload
  // carrying markup shows as text.
  const body = html`<p><a href="/dashboard">← overview</a> · <a href="/dashboard/events">events</a></p>
<h2>${event.provider} · ${event.eventId}</h2>
<div class="two"><div>${facts(event)}${replayControl(page)}${event.fact === null || event.fact === undefined ? '' : html`<h3>What it meant when processed</h3><pre id="fact">${JSON.stringify(event.fact, null, 2)}</pre>`}</div>
<div><h3>Payment</h3>${paymentSection(page)}<h3>Status history</h3>${statusHistory(page.transitions, page.event.id)}</div></div>
${conflictsSection(page)}
${resourceEventsSection(page)}
<h2>Payload</h2><pre id="payload">${prettyPayload(event)}</pre>`;
  return renderLayout({ title: `${event.provider} ${event.eventId}`, access: page.access, notice: page.notice, body });
}

export function renderMessagePage(options: { title: string; message: string; access: ViewerAccess }) {
  return renderLayout({
    title: options.title,
    access: options.access,
    body: html`<h2>${options.title}</h2><p>${options.message}</p><p><a href="/dashboard">← overview</a></p>`,
  });
}
