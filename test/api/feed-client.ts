import assert from 'node:assert/strict';
import type { PaymentEventBody } from '../../src/delivery/payment-event-body.ts';
import { waitFor } from '../support/wait.ts';

export const API_TOKEN = 'api-test-token-0123456789abcdef0123456789';

export interface FeedPage {
  events: PaymentEventBody[];
  next_cursor: string;
}

/** One page of GET /api/v1/payment-events over a real socket; any answer but 200 fails the test. */
export async function readFeedPage(baseUrl: string, after: string, limit: number, token = API_TOKEN): Promise<FeedPage> {
  const url = `${baseUrl}/api/v1/payment-events?after=${encodeURIComponent(after)}&limit=${limit}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text) as FeedPage;
}

/** Pages until one comes back empty; the events in feed order and the cursor to go on from. */
export async function drainFeed(baseUrl: string, after: string, limit: number): Promise<{ events: PaymentEventBody[]; cursor: string }> {
  const events: PaymentEventBody[] = [];
  let cursor = after;
  for (;;) {
    const page = await readFeedPage(baseUrl, cursor, limit);
    events.push(...page.events);
    if (page.events.length === 0) return { events, cursor: page.next_cursor };
    cursor = page.next_cursor;
  }
}

/**
 * The whole feed once it holds `count` events. The feed shows only rows below the cluster-wide
 * transaction horizon, so a transaction in another test's database can hold a committed event back
 * for a moment: a test that expects N events waits for them rather than reading once.
 */
export async function feedOnceItHolds(baseUrl: string, count: number, query = ''): Promise<PaymentEventBody[]> {
  return waitFor(
    async () => {
      const { events } = await drainFeed(baseUrl, query, 100);
      return events.length >= count ? events : undefined;
    },
    { message: `${count} payment events in the feed` },
  );
}
