import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import type { WebhookRequestMetrics, WebhookRequestOutcome } from '../inbox/metrics.ts';

export interface WebhookRequestMetricsOptions {
  metrics: WebhookRequestMetrics;
  /** Only configured names become label values: the path is the sender's to choose. */
  isKnownProvider: (name: string) => boolean;
  /** Monotonic seconds (performance.now based), injectable for tests. */
  now?: () => number;
}

const REJECTIONS = new Set<WebhookRequestOutcome>(['400', '401', '404', '413', '500', '503']);

/**
 * Counts each webhook request by provider and outcome and times its answer. Mounted before the webhook
 * route, it sees the final response whether the route returned or threw (the app's error handler
 * has already turned the error into a response by the time `next()` resolves).
 */
export function webhookRequestMetrics(options: WebhookRequestMetricsOptions): MiddlewareHandler<AppEnv> {
  const now = options.now ?? (() => performance.now() / 1000);
  return async function recordWebhookRequest(c, next) {
    const started = now();
    try {
      await next();
    } finally {
      const name = c.req.param('provider') ?? '';
      const provider = options.isKnownProvider(name) ? name : 'unknown';
      const stored = c.get('webhookRequestOutcome');
      options.metrics.answered(provider, outcomeOf(c.res.status, stored), now() - started);
      if (c.res.status === 200 && stored === 'conflicting_duplicate') options.metrics.conflictingDuplicate(provider);
    }
  };
}

/** A conflicting duplicate is a duplicate here (200, nothing new processed); it has a counter of its own too. */
export function outcomeOf(status: number, stored: 'accepted' | 'duplicate' | 'conflicting_duplicate' | undefined): WebhookRequestOutcome {
  if (status === 200) return stored === 'conflicting_duplicate' ? 'duplicate' : (stored ?? 'accepted');
  const code = String(status) as WebhookRequestOutcome;
  return REJECTIONS.has(code) ? code : status >= 500 ? '500' : '400';
}
