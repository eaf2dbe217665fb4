import type { ThroughputBucket } from './types.ts';

// The geometry of the dashboard's charts, apart from their markup (charts-view.tsx) so it is tested without a
// browser. Plain SVG in a fixed viewBox scaled to the box's width: no chart library, no inline style (the page's
// CSP forbids it; SVG's own attributes are not styles).

export const CHART = { width: 600, height: 120, gap: 2 } as const;

export interface StackedBar {
  readonly x: number;
  readonly width: number;
  /** Bottom to top: succeeded, failed, cancelled; empty parts left out. */
  readonly parts: readonly {
    readonly kind: keyof Omit<ThroughputBucket, 'start'>;
    readonly y: number;
    readonly height: number;
  }[];
  readonly total: number;
  readonly bucket: ThroughputBucket;
}

const KINDS = ['succeeded', 'failed', 'cancelled'] as const;

/** One bar per bucket, stacked, scaled so the tallest fills the chart (a chart of nothing draws no bars). */
export function stackedBars(buckets: readonly ThroughputBucket[]): { bars: StackedBar[]; max: number } {
  const totals = buckets.map((b) => b.succeeded + b.failed + b.cancelled);
  const max = Math.max(0, ...totals);
  const step = CHART.width / Math.max(1, buckets.length);
  const scale = max === 0 ? 0 : CHART.height / max;
  const bars = buckets.map((bucket, i) => {
    let y = CHART.height;
    const parts = KINDS.filter((k) => bucket[k] > 0).map((kind) => {
      const height = bucket[kind] * scale;
      y -= height;
      return { kind, y, height };
    });
    return { x: i * step, width: Math.max(1, step - CHART.gap), parts, total: totals[i] ?? 0, bucket };
  });
  return { bars: bars.filter((b) => b.total > 0), max };
}

/** A share of the largest value as a width in 0..100 (a non-zero value is at least a sliver, so it shows). */
export function share(value: number, max: number): number {
  if (value <= 0 || max <= 0) return 0;
  return Math.max(1, (value / max) * 100);
}
