import { z } from 'zod';
import { parseHost } from '../web/allowed-hosts.ts';

export interface DashboardConfig {
  /** INBOX_DASHBOARD, or on by default only when an admin token is set. */
  enabled: boolean;
  /** Required for every state-changing dashboard action; without it the dashboard is read-only. */
  adminToken: string | undefined;
  /** INBOX_PUBLIC_URL's origin: the dashboard answers to its host:port and accepts it as Origin. */
  publicOrigin: string | undefined;
  /**
   * INBOX_PUBLIC_URL is https://: browsers reach the dashboard over TLS even when a proxy that
   * terminates it forwards plain http (and says nothing of it), so the session cookie is Secure.
   */
  publishedOverHttps: boolean;
  /** INBOX_ALLOWED_HOSTS: more names (`name` on any port, `name:port`); loopback names always answer. */
  allowedHosts: string[];
  /** Logged at start: the dashboard listens beyond loopback but answers only to loopback names. */
  startupWarning: string | undefined;
}

/** The dashboard's variables, spread into config.ts's one env schema. */
export const dashboardEnvKeys = {
  INBOX_ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 32`)')
    .optional()
    .describe('At least 16 characters. Signing in to `/dashboard` with it enables replays; without it the dashboard is read-only.'),
  INBOX_DASHBOARD: z
    .enum(['on', 'off'])
    .optional()
    .meta({ whenUnset: 'on if `INBOX_ADMIN_TOKEN` is set, else off', description: '`on` or `off`: serve `/dashboard`.' }),
  INBOX_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be the http:// or https:// URL operators open the dashboard at' })
    .optional()
    .describe(
      "The `http(s)://` URL operators open the dashboard at (`https://ops.example.com`, `http://inbox.internal:8443`). The dashboard answers to its host:port exactly, and accepts its origin as a form's `Origin`; with `https://` the session cookie is `Secure`. Other names get 421 (see [Dashboard](dashboard.md)).",
    ),
  INBOX_ALLOWED_HOSTS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter((entry) => entry !== ''),
    )
    .refine(
      (entries) => entries.every((entry) => parseHost(entry) !== undefined),
      'must be host names or host:port, separated by commas (e.g. ops.example.com,inbox:3000)',
    )
    .optional()
    .describe(
      'More names the dashboard answers to, comma-separated: `name` on any port, `name:port` on that port only (`inbox.internal,inbox-1:3000`). `localhost`, `127.0.0.1` and `[::1]` always answer; with neither this nor `INBOX_PUBLIC_URL` only they do, and a non-loopback `HOST` logs a warning at start.',
    ),
};

type DashboardEnv = { HOST: string } & z.output<z.ZodObject<typeof dashboardEnvKeys>>;

/**
 * Without INBOX_PUBLIC_URL or INBOX_ALLOWED_HOSTS the dashboard answers only to loopback names:
 * safe, but a surprise when HOST lets other machines connect (the default 0.0.0.0, a container).
 */
export function dashboardConfig(e: DashboardEnv): DashboardConfig {
  const enabled = e.INBOX_DASHBOARD === undefined ? e.INBOX_ADMIN_TOKEN !== undefined : e.INBOX_DASHBOARD === 'on';
  const publicOrigin = e.INBOX_PUBLIC_URL === undefined ? undefined : new URL(e.INBOX_PUBLIC_URL).origin;
  const allowedHosts = e.INBOX_ALLOWED_HOSTS ?? [];
  const loopbackOnly = e.HOST === 'localhost' || e.HOST === '::1' || /^127\.\d+\.\d+\.\d+$/.test(e.HOST);
  const startupWarning =
    enabled && publicOrigin === undefined && allowedHosts.length === 0 && !loopbackOnly
      ? `the dashboard is on and HOST=${e.HOST} accepts other machines, but it answers only to localhost, 127.0.0.1 and [::1] (other names get 421): set INBOX_PUBLIC_URL to the URL operators open, or INBOX_ALLOWED_HOSTS`
      : undefined;
  const publishedOverHttps = publicOrigin?.startsWith('https:') ?? false;
  return { enabled, adminToken: e.INBOX_ADMIN_TOKEN, publicOrigin, publishedOverHttps, allowedHosts, startupWarning };
}
