import { chargeEvent } from '../support/stripe.ts';
import type { FakeGateway } from '../support/fake-gateway.ts';

/** A Stripe event as a Connect endpoint receives it: the connected account at the top level (docs.stripe.com/connect/webhooks). */
export function connectEvent(account: string | undefined, options: Parameters<typeof chargeEvent>[0]): string {
  const event = JSON.parse(chargeEvent(options)) as Record<string, unknown>;
  return JSON.stringify(account === undefined ? event : { ...event, account });
}

/** An `account.application.*` event of a connected account, as Stripe sends it. */
export function applicationEvent(
  account: string,
  type: 'account.application.deauthorized' | 'account.application.authorized',
  id: string,
  created: number,
): string {
  return JSON.stringify({
    id,
    object: 'event',
    account,
    api_version: '2025-09-30.clover',
    created,
    data: { object: { id: 'ca_platform_application', object: 'application', name: 'Platform' } },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
}

/**
 * The fake Stripe API as Connect behaves: a charge belongs to one account and is found only when
 * the request names that account in `Stripe-Account` (without it, Stripe looks in the platform's
 * own account: 404). Requests are counted per Stripe-Account value ('' for none).
 */
export function serveConnectedCharges(gateway: FakeGateway, owners: Map<string, { account: string; charge: Record<string, unknown> }>): Map<string, number> {
  const perAccount = new Map<string, number>();
  gateway.rules.push((request) => {
    const named = request.headers['stripe-account'];
    const account = typeof named === 'string' ? named : '';
    perAccount.set(account, (perAccount.get(account) ?? 0) + 1);
    const match = /^\/v1\/charges\/([^/]+)$/.exec(request.pathname);
    const owned = match ? owners.get(decodeURIComponent(match[1]!)) : undefined;
    if (!owned || owned.account !== account)
      return { status: 404, json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such charge: '${match?.[1]}'` } } };
    return { status: 200, json: owned.charge };
  });
  return perAccount;
}

/** Fisher–Yates with a seeded generator: the same shuffle on every run, so a failure can be replayed. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0;
  const next = () => (state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32;
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
