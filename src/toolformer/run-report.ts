import type { ShardOutput, ToolCounts } from './shard-program.ts';

/** A run's report: counts per tool and the delta L histogram's bins (also drawn as SVG). */
export interface RunReport {
  lines: number;
  counts: Record<string, ToolCounts>;
  /** Scored samples' delta L in bins of `binWidth` from `from`; `[low, count]` each. */
  histogram: { from: number; binWidth: number; bins: [number, number][]; tau: number };
}

/** Bins of the histogram (delta L is clamped to [-5, 5): the tails go in the end bins). */
const FROM = -5;
const TO = 5;
const WIDTH = 0.5;

export function emptyReport(tau: number): RunReport {
  const bins: [number, number][] = [];
  for (let low = FROM; low < TO - 1e-9; low += WIDTH) bins.push([Math.round(low * 100) / 100, 0]);
  return { lines: 0, counts: {}, histogram: { from: FROM, binWidth: WIDTH, bins, tau } };
}

/** Adds a shard's output to the report (counts per tool summed, each delta in its bin). */
export function addShard(report: RunReport, shard: ShardOutput): void {
  report.lines += shard.lines;
  for (const [tool, c] of Object.entries(shard.counts)) {
    const into = (report.counts[tool] ??= {
      positions: 0,
      sampled: 0,
      executed: 0,
      scored: 0,
      kept: 0,
      dropped: {},
    });
    into.positions += c.positions;
    into.sampled += c.sampled;
    into.executed += c.executed;
    into.scored += c.scored;
    into.kept += c.kept;
    for (const [reason, n] of Object.entries(c.dropped))
      into.dropped[reason] = (into.dropped[reason] ?? 0) + n;
  }
  const { bins } = report.histogram;
  for (const [, delta] of shard.deltas) {
    const i = Math.min(bins.length - 1, Math.max(0, Math.floor((delta - FROM) / WIDTH)));
    (bins[i] as [number, number])[1]++;
  }
}

const esc = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/**
 * The histogram of delta L as a plain SVG (no script, no external reference): one bar per bin, the bins at or
 * above tau in another colour, tau drawn as a line, the tails' bins labelled as such.
 */
export function deltaHistogramSvg(report: RunReport): string {
  const { bins, binWidth, tau, from } = report.histogram;
  const w = 640;
  const h = 320;
  const left = 48;
  const bottom = 40;
  const top = 30;
  const plotW = w - left - 16;
  const plotH = h - top - bottom;
  const max = Math.max(1, ...bins.map(([, n]) => n));
  const barW = plotW / bins.length;
  const total = bins.reduce((s, [, n]) => s + n, 0);
  const kept = Object.values(report.counts).reduce((s, c) => s + c.kept, 0);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="11">`,
    `<title>delta L of ${total} scored samples (${kept} kept, tau = ${tau})</title>`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<text x="${left}" y="18" font-size="13">delta L = min(L_no_call, L_same) - L_call: ${total} scored, ${kept} kept (tau = ${esc(String(tau))})</text>`,
  ];
  bins.forEach(([low, n], i) => {
    const bh = (n / max) * plotH;
    const x = left + i * barW;
    const fill = low >= tau || low + binWidth > tau ? (low >= tau ? '#2a7a2a' : '#8fbf8f') : '#9a9a9a';
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${(top + plotH - bh).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${bh.toFixed(1)}" fill="${fill}"><title>[${low}, ${low + binWidth})${i === 0 ? ' and below' : i === bins.length - 1 ? ' and above' : ''}: ${n}</title></rect>`,
    );
    if (i % 2 === 0) {
      parts.push(`<text x="${x.toFixed(1)}" y="${h - bottom + 14}" text-anchor="middle">${low}</text>`);
    }
  });
  const tauX =
    left + ((Math.min(Math.max(tau, from), from + bins.length * binWidth) - from) / binWidth) * barW;
  parts.push(
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="black"/>`,
    `<line x1="${tauX.toFixed(1)}" y1="${top}" x2="${tauX.toFixed(1)}" y2="${top + plotH}" stroke="#c03030" stroke-dasharray="4 3"/>`,
    `<text x="${(tauX + 4).toFixed(1)}" y="${top + 12}" fill="#c03030">tau</text>`,
    `<text x="${left - 6}" y="${top + 4}" text-anchor="end">${max}</text>`,
    `<text x="${left - 6}" y="${top + plotH}" text-anchor="end">0</text>`,
    `<text x="${left + plotW / 2}" y="${h - 8}" text-anchor="middle">delta L (nats)</text>`,
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}

/** The report's counts as console lines: per tool, sampled, executed, kept, and the drops by reason. */
export function reportLines(report: RunReport): string[] {
  return Object.entries(report.counts).map(([tool, c]) => {
    const reasons = Object.entries(c.dropped)
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${r} ${n}`)
      .join(', ');
    return `${tool}: ${c.positions} positions, ${c.sampled} sampled, ${c.executed} executed, ${c.scored} scored, ${c.kept} kept${reasons === '' ? '' : `; dropped: ${reasons}`}`;
  });
}
