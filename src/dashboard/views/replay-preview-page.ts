import { html } from 'hono/html';
import { describeDecision } from '../../operations/decision-text.ts';
import type { ReplayResult } from '../../operations/replay-events.ts';
import { type ReplayPrediction, describePredictedOutcome, describeRefetchStandIn } from '../../processing/replay-dry-run.ts';
import { formatCount, formatIsoTime } from './format.ts';
import { type ViewerAccess, csrfField, renderLayout } from './layout.ts';

export interface ReplayPreviewPage {
  preview: ReplayResult;
  /** Undefined when nothing matched or more than `predictionLimit` did. */
  prediction: ReplayPrediction | undefined;
  predictionLimit: number;
  /** The submitted filter, carried unchanged into the confirming POST. */
  fields: { provider: string; status: string; since: string; until: string };
  access: ViewerAccess;
}

/** Rows shown per table: the page stays readable; the CLI's dry run lists them all. */
const ROWS_SHOWN = 100;

function predictionSection(prediction: ReplayPrediction) {
  const { events, payments } = prediction;
  // Changing payments first: they are what the operator is about to do.
  const changing = payments.filter((p) => p.now !== p.after);
  const paymentRows = [...changing, ...payments.filter((p) => p.now === p.after)]
    .slice(0, ROWS_SHOWN)
    .map(
      (p) =>
        html`<tr${p.now !== p.after ? html` class="changes"` : ''}><td><code>${p.provider}:${p.chargeId}</code></td><td>${p.now ?? '(none)'}</td><td>${p.after ?? '(none)'}</td></tr>`,
    );
  const eventRows = events
    .slice(0, ROWS_SHOWN)
    .map(
      (e) =>
        html`<tr><td><code>${e.eventId}</code></td><td>${e.eventType}</td><td>${e.status}</td><td>${describePredictedOutcome(e)}</td><td>${describeDecision(e.decision?.decision ?? null, e.decision?.detail, formatIsoTime)}</td><td>${describeRefetchStandIn(e)}</td></tr>`,
    );
  const more = (shown: number, all: number) =>
    all > shown ? html`<p class="muted">First ${formatCount(shown)} of ${formatCount(all)}: <code>inboxctl replay … --dry-run</code> lists them all.</p>` : '';
  return html`<h3>What the replay would do</h3>
<p class="muted">The workers' own handlers ran on these events in a transaction that was rolled back. Charges the workers re-read from the gateway were answered from the newest snapshot the inbox keeps, or the event's payload (column "refetch from"); the replay itself asks the gateway.</p>
<p id="replay-payments"><b>${formatCount(changing.length)}</b> of ${formatCount(payments.length)} payment${payments.length === 1 ? '' : 's'} would change status.</p>
${payments.length > 0 ? html`<table id="predicted-payments" class="compact"><thead><tr><th>payment</th><th>now</th><th>after replay</th></tr></thead><tbody>${paymentRows}</tbody></table>${more(ROWS_SHOWN, payments.length)}` : ''}
<table id="predicted-events" class="compact"><thead><tr><th>event</th><th>type</th><th>now</th><th>replay</th><th>decision</th><th>refetch from</th></tr></thead><tbody>${eventRows}</tbody></table>
${more(ROWS_SHOWN, events.length)}`;
}

/** The dry run's answer, and the one button that runs the same filter for real. */
export function renderReplayPreviewPage(page: ReplayPreviewPage) {
  const { preview, prediction, fields } = page;
  const samples = preview.sampleEventIds.map((id) => html`<li><code>${id}</code></li>`);
  const window = [fields.since && `since ${fields.since} UTC`, fields.until && `before ${fields.until} UTC`].filter(Boolean).join(', ');
  const predicted = prediction
    ? predictionSection(prediction)
    : preview.matched > page.predictionLimit
      ? html`<p id="replay-not-predicted" class="muted">More than ${formatCount(page.predictionLimit)} events: not predicted here. <code>inboxctl replay ${fields.provider} --status ${fields.status} --dry-run</code> (with the same window) says what each would do.</p>
${samples.length > 0 ? html`<p class="muted">First ${samples.length}, oldest first:</p><ul>${samples}</ul>` : ''}`
      : '';
  const body = html`<p><a href="/dashboard">← overview</a></p>
<h2>Replay ${fields.status} events of ${fields.provider}${window ? ` received ${window}` : ''}</h2>
<p id="replay-matched"><b>${formatCount(preview.matched)}</b> event${preview.matched === 1 ? '' : 's'} match (dry run: nothing has changed yet).</p>
${predicted}
${
  preview.matched > 0
    ? html`<form method="post" action="/dashboard/replay">${csrfField(page.access)}
<input type="hidden" name="provider" value="${fields.provider}"><input type="hidden" name="status" value="${fields.status}">
<input type="hidden" name="since" value="${fields.since}"><input type="hidden" name="until" value="${fields.until}">
<input type="hidden" name="confirm" value="yes">
<button type="submit">Replay ${formatCount(preview.matched)} event${preview.matched === 1 ? '' : 's'}</button> <span class="muted">back to pending and queued, in batches; the same path as <code>inboxctl replay</code></span></form>`
    : ''
}`;
  return renderLayout({ title: 'Replay preview', access: page.access, body });
}
