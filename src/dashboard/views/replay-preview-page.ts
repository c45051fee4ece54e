import { html } from 'hono/html';
import type { ReplayResult } from '../../operations/replay-events.ts';
import { formatCount } from './format.ts';
import { type ViewerAccess, csrfField, renderLayout } from './layout.ts';

export interface ReplayPreviewPage {
  preview: ReplayResult;
  /** The submitted filter, carried unchanged into the confirming POST. */
  fields: { provider: string; status: string; since: string; until: string };
  access: ViewerAccess;
}

/** The dry run's answer, and the one button that runs the same filter for real. */
export function renderReplayPreviewPage(page: ReplayPreviewPage) {
  const { preview, fields } = page;
  const samples = preview.sampleEventIds.map((id) => html`<li><code>${id}</code></li>`);
  const window = [fields.since && `since ${fields.since} UTC`, fields.until && `before ${fields.until} UTC`].filter(Boolean).join(', ');
  const body = html`<p><a href="/dashboard">← overview</a></p>
<h2>Replay ${fields.status} events of ${fields.provider}${window ? ` received ${window}` : ''}</h2>
<p id="replay-matched"><b>${formatCount(preview.matched)}</b> event${preview.matched === 1 ? '' : 's'} match (dry run: nothing has changed yet).</p>
${samples.length > 0 ? html`<p class="muted">First ${samples.length}, oldest first:</p><ul>${samples}</ul>` : ''}
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
