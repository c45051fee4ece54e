import { html } from 'hono/html';
import type { StatusCounts } from '../../inbox/sql/counts.ts';
import { formatClock, formatCount } from './format.ts';

/** The statuses a bar stacks, bottom to top: the healthy mass first, the alarming sliver on top. */
export const chartStatuses = ['processed', 'ignored', 'pending', 'failed'] as const;

export interface ChartBucket {
  start: Date;
  counts: StatusCounts;
}

export interface BarChartOptions {
  title: string;
  buckets: ChartBucket[];
  bucketSeconds: number;
  /** Labels under the x axis: bucket index → text. */
  ticks: { index: number; label: string }[];
}

// Close to the size a chart is drawn at in a provider card, so 10-unit text reads as ~10 px.
const WIDTH = 290;
const HEIGHT = 120;
const LEFT = 30;
const RIGHT = 4;
const TOP = 8;
const BOTTOM = 18;

export const totalOf = (counts: StatusCounts) => counts.processed + counts.ignored + counts.pending + counts.failed;

/** 0..7 → 8, 13 → 15, 230 → 250: an axis maximum that reads as a round number. */
export function niceMaximum(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

/**
 * A stacked bar chart as inline SVG, rendered on the server: no script, no CDN, nothing to build.
 * Colours come from CSS classes (`s-processed`, …) so the page's stylesheet is the one palette.
 * Each bar carries a <title>, which browsers show as a tooltip.
 */
export function renderBarChart(options: BarChartOptions) {
  const { buckets } = options;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const maximum = niceMaximum(Math.max(0, ...buckets.map((b) => totalOf(b.counts))));
  const slot = plotWidth / Math.max(1, buckets.length);
  const barWidth = Math.max(1, slot - Math.min(3, slot * 0.2));
  const y = (value: number) => TOP + plotHeight - (value / maximum) * plotHeight;
  const bars = buckets.map((bucket, index) => {
    const x = LEFT + index * slot + (slot - barWidth) / 2;
    let base = 0;
    const segments = chartStatuses.map((status) => {
      const count = bucket.counts[status];
      if (count === 0) return '';
      const top = y(base + count);
      const segment = html`<rect class="s-${status}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(y(base) - top).toFixed(1)}"/>`;
      base += count;
      return segment;
    });
    const end = new Date(bucket.start.getTime() + options.bucketSeconds * 1000);
    const detail = chartStatuses.map((s) => `${bucket.counts[s]} ${s}`).join(', ');
    return html`<g><title>${formatClock(bucket.start)}–${formatClock(end)} UTC: ${formatCount(totalOf(bucket.counts))} received (${detail})</title><rect class="hover" x="${(LEFT + index * slot).toFixed(1)}" y="${TOP}" width="${slot.toFixed(1)}" height="${plotHeight}"/>${segments}</g>`;
  });
  // The first and last labels hug the plot's edges so they are never clipped.
  const ticks = options.ticks.map(({ index, label }) => {
    const [x, anchor] =
      index === 0 ? [LEFT, 'start'] : index === buckets.length - 1 ? [LEFT + buckets.length * slot, 'end'] : [LEFT + index * slot + slot / 2, 'middle'];
    return html`<text class="tick" x="${x.toFixed(1)}" y="${HEIGHT - 5}" text-anchor="${anchor}">${label}</text>`;
  });
  const total = buckets.reduce((sum, b) => sum + totalOf(b.counts), 0);
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${options.title}: ${formatCount(total)} received">
<title>${options.title}</title>
<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(maximum)}" y2="${y(maximum)}"/>
<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(maximum / 2)}" y2="${y(maximum / 2)}"/>
<line class="axis" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(0)}" y2="${y(0)}"/>
<text class="tick" x="${LEFT - 4}" y="${y(maximum) + 3}" text-anchor="end">${formatCount(maximum)}</text>
<text class="tick" x="${LEFT - 4}" y="${y(maximum / 2) + 3}" text-anchor="end">${formatCount(maximum / 2)}</text>
<text class="tick" x="${LEFT - 4}" y="${y(0) + 3}" text-anchor="end">0</text>
${bars}${ticks}</svg>`;
}
