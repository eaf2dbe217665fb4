// Plain SVG log-log curves for bench/scale.ts: one panel per sweep, a dashed slope-1 line (linear growth) through
// each curve's first point, so a curve steeper than its dashed line grows faster than linearly.

export interface Curve {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface Panel {
  readonly title: string;
  readonly curves: readonly Curve[];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
const W = 460;
const H = 340;
const PAD = { left: 60, right: 20, top: 40, bottom: 110 };

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const decades = (lo: number, hi: number): number[] => {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};
const label = (v: number): string =>
  v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : v >= 1 ? String(v) : v.toPrecision(1);

function panel(p: Panel, offsetX: number): string {
  const all = p.curves.flatMap((c) => c.points);
  const xs = decades(Math.min(...all.map(([x]) => x)), Math.max(...all.map(([x]) => x)));
  const ys = decades(Math.min(...all.map(([, y]) => y)), Math.max(...all.map(([, y]) => y)));
  const [x0, x1] = [Math.log10(xs[0] ?? 1), Math.log10(xs.at(-1) ?? 10)];
  const [y0, y1] = [Math.log10(ys[0] ?? 1), Math.log10(ys.at(-1) ?? 10)];
  const px = (x: number): number =>
    offsetX + PAD.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * (W - PAD.left - PAD.right);
  const py = (y: number): number =>
    H - PAD.bottom - ((Math.log10(y) - y0) / (y1 - y0 || 1)) * (H - PAD.top - PAD.bottom);
  const out: string[] = [
    `<text x="${offsetX + W / 2}" y="20" text-anchor="middle" font-size="14">${esc(p.title)}</text>`,
    `<text x="${offsetX + 14}" y="${(H - PAD.bottom + PAD.top) / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 ${offsetX + 14} ${(H - PAD.bottom + PAD.top) / 2})">ms or MiB</text>`,
  ];
  for (const x of xs) {
    out.push(
      `<line x1="${px(x)}" y1="${py(ys[0] ?? 1)}" x2="${px(x)}" y2="${py(ys.at(-1) ?? 10)}" stroke="#ddd"/>`,
      `<text x="${px(x)}" y="${H - PAD.bottom + 16}" text-anchor="middle" font-size="11">${label(x)}</text>`,
    );
  }
  for (const y of ys) {
    out.push(
      `<line x1="${px(xs[0] ?? 1)}" y1="${py(y)}" x2="${px(xs.at(-1) ?? 10)}" y2="${py(y)}" stroke="#ddd"/>`,
      `<text x="${offsetX + PAD.left - 6}" y="${py(y) + 4}" text-anchor="end" font-size="11">${label(y)}</text>`,
    );
  }
  p.curves.forEach((c, i) => {
    const color = COLORS[i % COLORS.length] ?? '#000';
    const pts = c.points.filter(([x, y]) => x > 0 && y > 0);
    const first = pts[0];
    const last = pts.at(-1);
    if (first && last) {
      // Linear growth from the first point, clipped to the panel's top.
      const yEnd = Math.min(first[1] * (last[0] / first[0]), ys.at(-1) ?? first[1]);
      const xEnd = first[0] * (yEnd / first[1]);
      out.push(
        `<line x1="${px(first[0])}" y1="${py(first[1])}" x2="${px(xEnd)}" y2="${py(yEnd)}" stroke="${color}" stroke-dasharray="4 4" stroke-opacity="0.5"/>`,
      );
    }
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
      ...pts.map(
        ([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`,
      ),
      `<rect x="${offsetX + PAD.left}" y="${H - PAD.bottom + 30 + i * 18}" width="12" height="3" fill="${color}"/>`,
      `<text x="${offsetX + PAD.left + 18}" y="${H - PAD.bottom + 35 + i * 18}" font-size="12">${esc(c.name)}</text>`,
    );
  });
  return out.join('\n');
}

/** Panels side by side, log-log, with the dashed linear reference per curve. */
export function scaleSvg(panels: readonly Panel[]): string {
  const width = W * panels.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" viewBox="0 0 ${width} ${H}" font-family="sans-serif">`,
    `<rect width="${width}" height="${H}" fill="#fff"/>`,
    ...panels.map((p, i) => panel(p, i * W)),
    `<text x="${width - 8}" y="${H - 6}" text-anchor="end" font-size="10" fill="#666">dashed: linear growth from the first point (log-log)</text>`,
    '</svg>',
    '',
  ].join('\n');
}
