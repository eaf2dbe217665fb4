import { describe, expect, it } from 'vitest';
import { CHART, share, stackedBars } from '../../console/src/charts.ts';

// The dashboard's chart geometry: stacked bars scaled to the tallest, empty buckets drawn as nothing.

const bucket = (i: number, succeeded = 0, failed = 0, cancelled = 0) => ({
  start: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  succeeded,
  failed,
  cancelled,
});

describe('dashboard charts', () => {
  it('stacks each bucket bottom up and scales the tallest to the full height', () => {
    const buckets = [bucket(0, 2, 1, 1), bucket(1), bucket(2, 1)];
    const { bars, max } = stackedBars(buckets);
    expect(max).toBe(4);
    expect(bars.map((b) => b.total)).toEqual([4, 1]);
    const [first, last] = bars;
    expect(first?.parts.map((p) => p.kind)).toEqual(['succeeded', 'failed', 'cancelled']);
    expect(first?.parts.map((p) => p.height)).toEqual([60, 30, 30]);
    expect(first?.parts.at(-1)?.y).toBe(0);
    expect(first?.parts[0]?.y).toBe(CHART.height - 60);
    // The third bucket's place on the axis, a quarter as tall.
    expect(last?.x).toBe((2 * CHART.width) / 3);
    expect(last?.parts).toEqual([{ kind: 'succeeded', y: CHART.height - 30, height: 30 }]);
  });

  it('draws nothing for no tasks, and a sliver for a small non-zero share', () => {
    expect(stackedBars([bucket(0), bucket(1)])).toEqual({ bars: [], max: 0 });
    expect(stackedBars([])).toEqual({ bars: [], max: 0 });
    expect(share(0, 10)).toBe(0);
    expect(share(1, 0)).toBe(0);
    expect(share(1, 1000)).toBe(1);
    expect(share(5, 10)).toBe(50);
  });
});
