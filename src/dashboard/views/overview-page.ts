import type { DeauthorizedAccount } from '../../refetch/account-access-sql.ts';
import { html } from 'hono/html';
import type { DestinationView } from '../../delivery/lane-operations.ts';
import { destinationsSection } from './destinations-section.ts';
import type { ProviderSummary, WindowSummary } from '../overview-model.ts';
import { DAY_BUCKET_SECONDS, HOUR_BUCKET_SECONDS } from '../overview-model.ts';
import type { FailedEvent } from '../../inbox/sql/failed-events.ts';
import type { LagInWindow } from '../../inbox/sql/lag.ts';
import { renderBarChart } from './bar-chart.ts';
import { formatDuration } from '../../format/duration.ts';
import { formatClock, formatCount, formatRatio, formatTime } from './format.ts';
import { type Notice, type ViewerAccess, csrfField, legend, renderLayout } from './layout.ts';

/** Oldest pending past this is what the alert rule calls stuck. */
const STUCK_PENDING_SECONDS = 600;

function windowRow(label: string, window: WindowSummary, lag: LagInWindow) {
  const c = window.counts;
  return html`<tr><th>${label}</th><td class="num">${formatCount(window.received)}</td><td class="num">${formatCount(c.processed)}</td><td class="num">${formatCount(c.ignored)}</td><td class="num">${formatRatio(window.ignoredRatio)}</td><td class="num">${formatCount(c.failed)}</td><td class="num">${formatCount(c.pending)}</td><td class="num">${formatDuration(lag.p50Seconds)}</td><td class="num">${formatDuration(lag.p99Seconds)}</td></tr>`;
}

function providerCard(p: ProviderSummary) {
  const stuck = (p.oldestPendingSeconds ?? 0) > STUCK_PENDING_SECONDS;
  const hourTicks = [0, 6, 11].map((index) => ({ index, label: formatClock(p.lastHour.buckets[index]!.start) }));
  const dayTicks = [0, 6, 12, 18, 23].map((index) => ({ index, label: formatClock(p.lastDay.buckets[index]!.start) }));
  return html`<section class="card" data-provider="${p.provider}">
<div class="card-head"><h3>${p.provider}</h3><span class="spacer"></span>${p.failedNow > 0 ? html`<a class="pill failed" href="/dashboard?provider=${encodeURIComponent(p.provider)}#failed">${formatCount(p.failedNow)} failed</a>` : html`<span class="pill ok">no failures</span>`}</div>
<div class="figures">
<div class="figure${p.failedNow > 0 ? ' alert' : ''}"><b data-figure="failed-now">${formatCount(p.failedNow)}</b><span>failed now</span></div>
<div class="figure${stuck ? ' warn' : ''}"><b data-figure="pending-now">${formatCount(p.pendingNow)}</b><span>pending now${p.oldestPendingSeconds === undefined ? '' : `, oldest ${formatDuration(p.oldestPendingSeconds)}`}</span></div>
<div class="figure"><b data-figure="ignored-ratio-hour">${formatRatio(p.lastHour.ignoredRatio)}</b><span>ignored, last hour (24 h: ${formatRatio(p.lastDay.ignoredRatio)})</span></div>
<div class="figure${p.conflictsLastDay > 0 ? ' warn' : ''}"><b data-figure="conflicts-day">${formatCount(p.conflictsLastDay)}</b><span title="same id as a stored event, something else said: answered 200, not processed">conflicting duplicates, 24 h</span></div>
</div>
<table class="compact"><thead><tr><th></th><th class="num">received</th><th class="num">processed</th><th class="num">ignored</th><th class="num">ratio</th><th class="num">failed</th><th class="num">pending</th><th class="num" title="received → processed or ignored">lag p50</th><th class="num">lag p99</th></tr></thead>
<tbody>${windowRow('1 h', p.lastHour, p.lag.lastHour)}${windowRow('24 h', p.lastDay, p.lag.lastDay)}</tbody></table>
<div class="charts">
<div class="chart-box"><h4>last hour, per 5 min</h4>${renderBarChart({ title: `${p.provider}, last hour`, buckets: p.lastHour.buckets, bucketSeconds: HOUR_BUCKET_SECONDS, ticks: hourTicks })}</div>
<div class="chart-box"><h4>last 24 h, per hour (UTC)</h4>${renderBarChart({ title: `${p.provider}, last 24 hours`, buckets: p.lastDay.buckets, bucketSeconds: DAY_BUCKET_SECONDS, ticks: dayTicks })}</div>
</div>
</section>`;
}

function failedTable(events: FailedEvent[], access: ViewerAccess) {
  if (events.length === 0) return html`<p class="muted">No failed events.</p>`;
  const rows = events.map(
    (e) => html`<tr data-event-id="${e.eventId}">
<td class="time">${formatTime(e.receivedAt)}</td><td>${e.provider}</td><td class="event"><a href="/dashboard/events/${e.id}">${e.eventId}</a><br><span class="muted">${e.eventType}</span></td>
<td><code>${e.resourceId ?? '—'}</code></td><td class="num">${e.attempts}</td><td class="error-text">${truncate(e.lastError ?? '', 140)}</td>
<td>${access.kind === 'signed-in' ? html`<form class="inline" method="post" action="/dashboard/events/${e.id}/replay">${csrfField(access)}<button type="submit">Replay</button></form>` : ''}</td></tr>`,
  );
  return html`<table id="failed-events"><thead><tr><th>received</th><th>provider</th><th>event</th><th>resource</th><th class="num">attempts</th><th>last error</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function replayForm(providers: string[], access: ViewerAccess) {
  if (access.kind !== 'signed-in') {
    return html`<p class="muted">${access.kind === 'no-token' ? 'Replays need INBOX_ADMIN_TOKEN to be set (or use `inboxctl replay`).' : 'Sign in with the admin token to replay events.'}</p>`;
  }
  const options = providers.map((p) => html`<option value="${p}">${p}</option>`);
  return html`<form class="filters" method="post" action="/dashboard/replay">${csrfField(access)}
<label>provider<select name="provider" required>${options}</select></label>
<label>status<select name="status"><option value="failed">failed</option><option value="ignored">ignored</option></select></label>
<label>received since (UTC)<input type="datetime-local" name="since"></label>
<label>received before (UTC)<input type="datetime-local" name="until"></label>
<button type="submit">Preview replay</button></form>`;
}

/** Parked lanes hold a payment's later events back; a disabled destination gets nothing at all. */
function destinationPills(destinations: DestinationView[]) {
  return destinations
    .filter((d) => d.parkedLanes > 0 || d.disabledAt)
    .map(
      (d) =>
        html`<a class="pill failed" href="#destinations" title="inboxctl lanes --parked">${d.name}: ${d.disabledAt ? 'DISABLED (410)' : `${formatCount(d.parkedLanes)} parked lane(s)`}</a>`,
    );
}

export interface OverviewPage {
  now: Date;
  providers: ProviderSummary[];
  failed: FailedEvent[];
  failedProvider: string | undefined;
  /** Every push destination (configured, or with lanes parked or a state), with its state and lag. */
  destinations: DestinationView[];
  /** Accounts that deauthorized the platform: no gateway reads on their behalf (docs/accounts.md). */
  deauthorizedAccounts: readonly DeauthorizedAccount[];
  access: ViewerAccess;
  notice?: Notice;
}

/** An account that deauthorized the platform is read from its webhooks alone: said where an operator looks first. */
function deauthorizedPills(accounts: readonly DeauthorizedAccount[]) {
  return accounts.map(
    (d) =>
      html`<span class="pill pending" data-figure="deauthorized-account" title="account.application.deauthorized ${d.eventId}: no gateway reads on its behalf since ${formatTime(d.since)}; its webhooks are still stored and folded">${d.provider} ${d.account}: deauthorized</span>`,
  );
}

export function renderOverviewPage(page: OverviewPage) {
  const failedNow = page.providers.reduce((sum, p) => sum + p.failedNow, 0);
  const oldest = Math.max(0, ...page.providers.map((p) => p.oldestPendingSeconds ?? 0));
  const conflicts = page.providers.reduce((sum, p) => sum + p.conflictsLastDay, 0);
  const body = html`<div class="status-line">
${failedNow > 0 ? html`<span class="pill failed">${formatCount(failedNow)} failed</span>` : html`<span class="pill ok">no failed events</span>`}
<span class="pill ${oldest > STUCK_PENDING_SECONDS ? 'pending' : 'ok'}">oldest pending ${oldest > 0 ? formatDuration(oldest) : 'none'}</span>
${destinationPills(page.destinations)}
${deauthorizedPills(page.deauthorizedAccounts)}
${conflicts > 0 ? html`<span class="pill pending" data-figure="conflicts-total">${formatCount(conflicts)} conflicting duplicate(s), 24 h</span>` : ''}
<a href="/dashboard/findings">reconciliation findings</a>
<span class="muted">as of ${formatTime(page.now)}</span><span class="spacer"></span>${legend}</div>
<div class="providers">${page.providers.map(providerCard)}</div>
<h2>Destinations</h2>
${destinationsSection(page.destinations, page.now)}
<h2 id="failed">Failed events <a class="more" href="/dashboard/events?status=failed">search all events →</a>${page.failedProvider ? html` · ${page.failedProvider} <a href="/dashboard#failed">(all providers)</a>` : ''}</h2>
${failedTable(page.failed, page.access)}
<h2>Replay a filtered set</h2>
${replayForm(
  page.providers.map((p) => p.provider),
  page.access,
)}`;
  return renderLayout({ title: 'Overview', access: page.access, notice: page.notice, body });
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
