import { html } from 'hono/html';
import { eventDecisions, inboxStatuses } from '../../db/schema.ts';
import type { ListedEvent } from '../../inbox/sql/event-columns.ts';
import { type EventListFields, eventListHref } from '../event-list-query.ts';
import { formatTime } from './format.ts';
import { type ViewerAccess, renderLayout } from './layout.ts';
import { paymentHref } from './payment-sections.ts';

export interface EventListPage {
  /** The fields as asked, shown back in the form (a bad value too, so it can be corrected). */
  fields: EventListFields;
  /** Providers to choose from: configured ones and those the inbox holds events of. */
  providers: string[];
  events: ListedEvent[];
  /** The id the next (older) page starts below; undefined: this is the last page. */
  olderBeforeId: number | undefined;
  /** One line saying what is wrong with the filters (the page is then a 400). */
  problem?: string;
  /** The search stopped before filling a page (statement timeout). */
  tooBroad?: boolean;
  access: ViewerAccess;
}

const selectOf = (name: string, label: string, choices: readonly string[], chosen: string | undefined) =>
  html`<label>${label}<select name="${name}"><option value="">any</option>${choices.map((c) => html`<option value="${c}"${c === chosen ? ' selected' : ''}>${c}</option>`)}</select></label>`;

const inputOf = (name: keyof EventListFields, label: string, fields: EventListFields, attributes: { type?: string; placeholder?: string } = {}) =>
  html`<label>${label}<input name="${name}" type="${attributes.type ?? 'text'}" value="${fields[name] ?? ''}" placeholder="${attributes.placeholder ?? ''}"></label>`;

function filterForm(page: EventListPage) {
  const { fields } = page;
  // A provider asked for that is not in the list (no events yet) is offered too, so the form shows what was asked.
  const providers = fields.provider && !page.providers.includes(fields.provider) ? [...page.providers, fields.provider] : page.providers;
  return html`<form class="filters" method="get" action="/dashboard/events" id="event-filters">
${selectOf('provider', 'provider', providers, fields.provider)}${selectOf('status', 'status', inboxStatuses, fields.status)}${selectOf('decision', 'decision', eventDecisions, fields.decision)}
${inputOf('type', 'type', fields, { placeholder: 'charge.refunded' })}${inputOf('event', 'event id', fields)}${inputOf('charge', 'charge id', fields)}${inputOf('account', 'account', fields, { placeholder: 'acct_…' })}
${inputOf('from', 'received from (UTC)', fields, { placeholder: 'YYYY-MM-DD HH:MM' })}${inputOf('to', 'received before (UTC)', fields, { placeholder: 'YYYY-MM-DD HH:MM' })}
<button type="submit">Search</button> <a href="/dashboard/events">clear</a></form>`;
}

function eventsTable(events: ListedEvent[]) {
  const rows = events.map(
    (e) => html`<tr data-event-id="${e.eventId}"><td class="time">${formatTime(e.receivedAt)}</td><td>${e.provider}</td>
<td class="event"><a href="/dashboard/events/${e.id}">${e.eventId}</a><br><span class="muted">${e.eventType}</span></td>
<td>${e.resourceId ? html`<a href="${paymentHref(e.provider, e.resourceId)}"><code>${e.resourceId}</code></a>` : '—'}</td>
<td><span class="pill ${e.status}" data-status="${e.status}">${e.status}</span></td><td data-decision="${e.decision ?? ''}">${e.decision ?? '—'}</td><td class="num">${e.attempts}</td></tr>`,
  );
  return html`<table id="event-list"><thead><tr><th>received</th><th>provider</th><th>event</th><th>charge</th><th>status</th><th>decision</th><th class="num">attempts</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function pager(page: EventListPage) {
  const { before: _page, ...filters } = page.fields;
  const newest = page.fields.before ? html`<a href="${eventListHref(filters)}" rel="first">← newest</a>` : '';
  const older =
    page.olderBeforeId === undefined
      ? html`<span class="muted">no older events</span>`
      : html`<a href="${eventListHref({ ...filters, before: String(page.olderBeforeId) })}" rel="next" id="older">older →</a>`;
  return html`<p class="pager">${newest} ${older}</p>`;
}

/**
 * GET /dashboard/events: the filter form and one page of matching events, newest stored first.
 * Pages are links carrying the last id shown (`before`): events stored meanwhile never shift them.
 */
export function renderEventListPage(page: EventListPage) {
  const problem = page.problem ? html`<div class="notice bad" role="alert" id="filter-problem">Bad filter: ${page.problem}.</div>` : '';
  const tooBroad = page.tooBroad
    ? html`<div class="notice bad" role="status" id="filter-problem">This search read for too long without filling a page: narrow it by provider, status, decision or received time.</div>`
    : '';
  const results =
    page.problem || page.tooBroad
      ? ''
      : page.events.length === 0
        ? html`<p class="muted" id="no-events">No event matches.</p>`
        : html`${eventsTable(page.events)}${pager(page)}`;
  const body = html`<p><a href="/dashboard">← overview</a></p><h2>Events</h2>${filterForm(page)}${problem}${tooBroad}${results}`;
  return renderLayout({ title: 'Events', access: page.access, body });
}
