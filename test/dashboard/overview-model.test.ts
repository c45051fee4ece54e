import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { activitySince, bucketStarts, summarizeProviders } from '../../src/dashboard/overview-model.ts';
import { niceMaximum, renderBarChart } from '../../src/dashboard/views/bar-chart.ts';
import { formatRatio } from '../../src/dashboard/views/format.ts';
import { formatDuration } from '../../src/format/duration.ts';

const now = new Date('2026-06-01T12:07:30Z');
const at = (iso: string) => Date.parse(iso) / 1000;

describe('summarizeProviders', () => {
  const summary = summarizeProviders({
    now,
    providers: ['stripe', 'asaas'],
    activity: [
      { provider: 'stripe', status: 'processed', bucket: at('2026-06-01T12:05:00Z'), events: 6 },
      { provider: 'stripe', status: 'ignored', bucket: at('2026-06-01T12:05:00Z'), events: 2 },
      { provider: 'stripe', status: 'failed', bucket: at('2026-06-01T11:00:00Z'), events: 1 },
      { provider: 'stripe', status: 'processed', bucket: at('2026-05-31T13:10:00Z'), events: 10 },
      { provider: 'github', status: 'ignored', bucket: at('2026-06-01T12:00:00Z'), events: 3 },
    ],
    lag: [{ provider: 'stripe', lastHour: { events: 8, p50Seconds: 0.2, p99Seconds: 3 }, lastDay: { events: 18, p50Seconds: 0.3, p99Seconds: 9 } }],
    backlog: [{ provider: 'asaas', status: 'pending', events: 4, oldestAgeSeconds: 700 }],
    conflicts: [{ provider: 'stripe', count: 2, latestEventId: 'evt_2' }],
  });

  test('configured providers first, then any other name found in the inbox', () => {
    assert.deepEqual(
      summary.map((p) => p.provider),
      ['stripe', 'asaas', 'github'],
    );
  });

  test('conflicting duplicates of the last day per provider, 0 where there were none', () => {
    assert.deepEqual(
      summary.map((p) => p.conflictsLastDay),
      [2, 0, 0],
    );
  });

  test('the hour and the day add up their buckets, with the ignored ratio of each', () => {
    const stripe = summary[0]!;
    assert.deepEqual(stripe.lastHour.counts, { processed: 6, ignored: 2, pending: 0, failed: 0 });
    assert.equal(stripe.lastHour.ignoredRatio, 0.25);
    assert.deepEqual(stripe.lastDay.counts, { processed: 16, ignored: 2, pending: 0, failed: 1 });
    assert.equal(stripe.lastHour.buckets.length, 12);
    assert.equal(stripe.lastDay.buckets.length, 24);
    assert.equal(stripe.lastHour.buckets.at(-1)!.start.toISOString(), '2026-06-01T12:05:00.000Z', 'the current partial bucket is last');
    assert.equal(stripe.lag.lastHour.p99Seconds, 3);
  });

  test('nothing received means no ratio, and backlog figures come from the backlog query', () => {
    const asaas = summary[1]!;
    assert.equal(asaas.lastDay.ignoredRatio, undefined);
    assert.equal(asaas.pendingNow, 4);
    assert.equal(asaas.oldestPendingSeconds, 700);
    assert.equal(asaas.lag.lastHour.p50Seconds, undefined);
  });

  test('the activity query starts where the day chart starts', () => {
    assert.equal(activitySince(now).toISOString(), '2026-05-31T13:00:00.000Z');
    assert.equal(bucketStarts(now, 3600, 24)[0], at('2026-05-31T13:00:00Z'));
  });
});

describe('the SVG bar chart', () => {
  test('one rect per non-empty segment, a tooltip per bar, round axis maxima', () => {
    const svg = String(
      renderBarChart({
        title: 'a <chart>',
        bucketSeconds: 300,
        buckets: [
          { start: new Date('2026-06-01T12:00:00Z'), counts: { processed: 3, ignored: 0, pending: 0, failed: 1 } },
          { start: new Date('2026-06-01T12:05:00Z'), counts: { processed: 0, ignored: 0, pending: 0, failed: 0 } },
        ],
        ticks: [{ index: 0, label: '12:00' }],
      }),
    );
    assert.equal((svg.match(/class="s-processed"/g) ?? []).length, 1);
    assert.equal((svg.match(/class="s-failed"/g) ?? []).length, 1);
    assert.match(svg, /<title>12:00–12:05 UTC: 4 received \(3 processed, 0 ignored, 0 pending, 1 failed\)<\/title>/);
    assert.match(svg, /aria-label="a &lt;chart&gt;: 4 received"/);
    assert.deepEqual([3, 7, 13, 230, 1001].map(niceMaximum), [4, 8, 15, 250, 1500]);
  });

  test('figures read like a person wrote them', () => {
    assert.deepEqual([0.012, 0, 4.25, 75, 95, 7300, 200_000, undefined].map(formatDuration), ['12ms', '0s', '4s', '1m15s', '1m35s', '2h01m', '2d07h', '—']);
    assert.deepEqual([undefined, 0, 0.004, 0.25].map(formatRatio), ['—', '0%', '0.4%', '25%']);
  });
});
