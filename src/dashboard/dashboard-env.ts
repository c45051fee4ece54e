import type { PgBoss } from 'pg-boss';
import type { Database } from '../db/client.ts';
import type { InboxStatus } from '../db/schema.ts';
import type { ReplayFilter } from '../inbox/sql/pending-events.ts';
import type { ReplayPrediction } from '../processing/replay-dry-run.ts';
import type { AllowedHosts } from '../web/allowed-hosts.ts';
import type { RequestEnv } from '../web/request-env.ts';
import type { AdminAccess, AdminSession } from './admin-access.ts';
import type { ViewerAccess } from './views/layout.ts';

export interface DashboardDeps {
  db: Database;
  /** Replays enqueue through pg-boss, exactly as `inboxctl replay` does. */
  boss: PgBoss;
  /** Configured provider names: listed even before their first event. */
  providers: () => Iterable<string>;
  /** Configured push destinations' names: shown even before their first delivery. */
  destinations: () => Iterable<string>;
  /** What a replay would do, event by event and payment by payment: `inboxctl replay --dry-run`'s engine. */
  predictReplay: (filter: ReplayFilter, statuses: readonly InboxStatus[]) => Promise<ReplayPrediction>;
  access: AdminAccess;
  /** The names the dashboard answers to (INBOX_PUBLIC_URL, INBOX_ALLOWED_HOSTS): the host guard's and the Origin check's. */
  allowedHosts: AllowedHosts;
  /** INBOX_PUBLIC_URL is https://: the session cookie is Secure whatever the request's own scheme. */
  publishedOverHttps: boolean;
  clock: () => Date;
}

export type DashboardEnv = {
  Variables: RequestEnv['Variables'] & { viewer: ViewerAccess; session: AdminSession | undefined };
};

/** Form fields as strings; a file upload (never expected here) counts as absent. */
export async function formFields(request: { parseBody(): Promise<Record<string, unknown>> }): Promise<Record<string, string | undefined>> {
  const body = await request.parseBody();
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, typeof value === 'string' ? value : undefined]));
}
