import { html } from 'hono/html';
import type { DestinationView } from '../../delivery/lane-operations.ts';
import { formatDuration } from '../../format/duration.ts';
import { formatCount, formatTime } from './format.ts';

/** A destination's state in words: disabled (410), backing off as a whole, or sending. */
function stateOf(d: DestinationView, now: Date) {
  if (d.disabledAt) {
    return html`<span class="pill failed" data-state="disabled">DISABLED</span> since ${formatTime(d.disabledAt)}: ${d.disabledReason ?? 'it answered 410 Gone'}; <code>inboxctl lanes enable ${d.name}</code> takes it back`;
  }
  if (d.backoffUntil) {
    return html`<span class="pill pending" data-state="backing-off">backing off</span> for ${formatDuration((d.backoffUntil.getTime() - now.getTime()) / 1000)} (many lanes failing at once)`;
  }
  return html`<span class="pill ok" data-state="ok">sending</span>`;
}

/**
 * Every push destination, always: its state, how far behind it is (the oldest payment event it
 * has not answered 2xx) and its parked lanes (`inboxctl lanes --parked` lists them).
 */
export function destinationsSection(destinations: DestinationView[], now: Date) {
  if (destinations.length === 0) {
    return html`<p class="muted" id="destinations">No push destination is configured (DESTINATION_URL_&lt;NAME&gt; + DESTINATION_SECRET_&lt;NAME&gt;).</p>`;
  }
  const rows = destinations.map((d) => {
    const lag = d.oldestUndeliveredAt ? (now.getTime() - d.oldestUndeliveredAt.getTime()) / 1000 : undefined;
    return html`<tr data-destination="${d.name}"><th>${d.name}</th><td>${stateOf(d, now)}</td>
<td class="num" data-figure="behind-lanes">${formatCount(d.behindLanes)}</td>
<td class="num" data-figure="destination-lag" title="${d.oldestUndeliveredAt ? `oldest undelivered event written ${formatTime(d.oldestUndeliveredAt)}` : 'nothing waiting'}">${lag === undefined ? 'caught up' : formatDuration(Math.max(0, lag))}</td>
<td class="num${d.parkedLanes > 0 ? ' alert' : ''}" data-figure="parked-lanes">${formatCount(d.parkedLanes)}${d.parkedLanes > 0 ? html` <span class="muted">(<code>inboxctl lanes --parked</code>)</span>` : ''}</td></tr>`;
  });
  return html`<table id="destinations" class="compact"><thead><tr><th>destination</th><th>state</th><th class="num">payments behind</th><th class="num">oldest undelivered</th><th class="num">parked lanes</th></tr></thead><tbody>${rows}</tbody></table>`;
}
