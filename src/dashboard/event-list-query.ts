import { z } from 'zod';
import { eventDecisions, inboxStatuses } from '../db/schema.ts';
import type { EventListFilter } from '../inbox/sql/event-list.ts';

/** The event list's query string, as the filter form and the paging links write it. */
export const EVENT_LIST_FIELDS = ['provider', 'status', 'decision', 'type', 'event', 'charge', 'account', 'from', 'to', 'before'] as const;
export type EventListFields = Partial<Record<(typeof EVENT_LIST_FIELDS)[number], string>>;

export interface EventListRequest {
  filter: EventListFilter;
  /** The page after the one that ended at this id; absent: the newest page. */
  beforeId: number | undefined;
}

/** A time as the form's datetime-local writes it (seconds optional), or ISO 8601 with a zone; without one, UTC. */
const utcTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/, 'is not a time: write YYYY-MM-DD HH:MM (UTC)')
  .transform((text, context) => {
    const date = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(text) ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`);
    if (Number.isNaN(date.getTime())) context.addIssue({ code: 'custom', message: 'is not a time: write YYYY-MM-DD HH:MM (UTC)' });
    return date;
  });

const listOf = (values: readonly string[]) => `must be one of ${values.join(', ')}`;

const fieldsSchema = z.object({
  provider: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,29}$/, 'is not a provider name (lower-case letters, digits and dashes)')
    .optional(),
  status: z.enum(inboxStatuses, { error: listOf(inboxStatuses) }).optional(),
  decision: z.enum(eventDecisions, { error: listOf(eventDecisions) }).optional(),
  type: z.string().max(80, 'is longer than an event type can be (80)').optional(),
  event: z.string().max(150, 'is longer than an event id can be (150)').optional(),
  charge: z.string().max(150, 'is longer than a charge id can be (150)').optional(),
  account: z.string().max(150, 'is longer than an account id can be (150)').optional(),
  from: utcTime.optional(),
  to: utcTime.optional(),
  before: z
    .string()
    .regex(/^\d{1,15}$/, 'is not a position in the list (use the page links)')
    .transform(Number)
    .optional(),
});

/**
 * The filters and the page, or every problem in one line (the page shows it above the form, with
 * status 400): a value that cannot be a filter is said, never run, and never a 500. Empty fields
 * (a form submitted with blanks) are absent; other parameters are ignored.
 */
export function parseEventListQuery(
  query: (name: string) => string | undefined,
): { request: EventListRequest; fields: EventListFields } | { problem: string; fields: EventListFields } {
  const fields: EventListFields = {};
  for (const name of EVENT_LIST_FIELDS) {
    const value = query(name)?.trim();
    if (value) fields[name] = value;
  }
  const parsed = fieldsSchema.safeParse(fields);
  if (!parsed.success) return { problem: parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`).join('; '), fields };
  const f = parsed.data;
  if (f.from && f.to && f.from >= f.to) return { problem: 'from must be before to', fields };
  const filter: EventListFilter = {
    provider: f.provider,
    status: f.status,
    decision: f.decision,
    eventType: f.type,
    eventId: f.event,
    chargeId: f.charge,
    account: f.account,
    receivedFrom: f.from,
    receivedBefore: f.to,
  };
  return { request: { filter: Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as EventListFilter, beforeId: f.before }, fields };
}

/** The list's URL with these fields (and no others): the form's own shape, for links. */
export function eventListHref(fields: EventListFields): string {
  const search = new URLSearchParams(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const text = search.toString();
  return text ? `/dashboard/events?${text}` : '/dashboard/events';
}
