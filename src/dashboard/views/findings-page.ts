import { html } from 'hono/html';
import { describeFinding } from '../../reconciliation/finding-text.ts';
import type { StoredFinding } from '../../reconciliation/sql/findings.ts';
import type { RunRow } from '../../reconciliation/sql/runs.ts';
import { formatTime } from './format.ts';
import { type ViewerAccess, renderLayout } from './layout.ts';

export interface FindingsPage {
  findings: StoredFinding[];
  runs: RunRow[];
  provider: string | undefined;
  access: ViewerAccess;
}

function findingRows(findings: readonly StoredFinding[]) {
  if (findings.length === 0)
    return html`<p class="muted" id="no-findings">No open finding: every payment the last runs read matches the money its gateway settled.</p>`;
  const rows = findings.map(
    (f) =>
      html`<tr data-kind="${f.kind}"><td>${f.provider}</td><td><code>${f.kind}</code></td><td><code>${f.subject}</code></td><td>${formatTime(f.firstFoundAt)}</td><td>${formatTime(f.lastFoundAt)}</td><td>${describeFinding(f.evidence)}</td></tr>`,
  );
  return html`<table id="findings"><thead><tr><th>provider</th><th>kind</th><th>about</th><th>first found</th><th>last found</th><th>what it means</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function runRows(runs: readonly RunRow[]) {
  if (runs.length === 0) return html`<p class="muted">No reconciliation has run yet: <code>inboxctl reconcile</code>, or the daily cron (RECONCILE_CRON).</p>`;
  const rows = runs.map(
    (
      r,
    ) => html`<tr><td>${r.id}</td><td>${r.provider}</td><td>${r.account === null ? html`<span class="muted">platform</span>` : html`<code>${r.account}</code>`}</td><td>${r.scope === 'payout' ? html`payout <code>${r.payoutId}</code>` : html`${formatTime(r.since)} … ${formatTime(r.until)}`}</td>
<td><span class="pill ${r.status === 'partial' ? 'failed' : r.status === 'complete' ? 'processed' : 'pending'}">${r.status}</span></td><td>${r.pages}</td><td>${r.entriesRead} (${r.entriesNew} new)</td><td>${r.findings}</td><td class="error-text">${r.error ?? ''}</td></tr>`,
  );
  return html`<table class="compact" id="runs"><thead><tr><th>run</th><th>provider</th><th>account</th><th>scope</th><th>status</th><th>pages</th><th>entries</th><th>findings</th><th>stopped by</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Open reconciliation findings, each explained as inboxctl reconcile explains it, and the latest runs. */
export function renderFindingsPage(page: FindingsPage) {
  const body = html`<p><a href="/dashboard">← overview</a></p>
<h2>Reconciliation findings${page.provider ? ` · ${page.provider}` : ''}</h2>
<p class="muted">Payments checked against the gateways' ledgers (what the money did). A finding stays open until a run finds it no longer true. Amounts in minor units, currencies as the gateway wrote them.</p>
${findingRows(page.findings)}
<h2>Latest runs</h2>
${runRows(page.runs)}`;
  return renderLayout({ title: 'Findings', access: page.access, body });
}
