/** Small dependency-free SVG charts for docs/performance.md. */
export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface LineChart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  /** Horizontal dashed lines such as an SLO bound. */
  readonly thresholds?: readonly { readonly label: string; readonly y: number }[];
}

export interface BarChart {
  readonly title: string;
  readonly yLabel: string;
  readonly categories: readonly string[];
  /** One value per category per series; NaN leaves a gap. */
  readonly series: readonly { readonly name: string; readonly values: readonly number[] }[];
}

const W = 640;
const H = 360;
const PAD = { left: 64, right: 16, top: 36, bottom: 64 };
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2'];

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const color = (i: number) => COLORS[i % COLORS.length] as string;

/** Round axis maximum and tick step (1, 2 or 5 × 10^k). */
function niceScale(max: number, ticks = 5): { max: number; step: number } {
  if (!(max > 0) || !Number.isFinite(max)) return { max: 1, step: 0.2 };
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  return { max: Math.ceil(max / step) * step, step };
}

function formatTick(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (Math.abs(v) >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return String(+v.toPrecision(3));
}

function frame(title: string, yLabel: string, xLabel: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<text transform="translate(14 ${H / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
    `<text x="${(W + PAD.left) / 2}" y="${H - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function yAxis(maxY: number): { y: (v: number) => number; parts: string[] } {
  const { max, step } = niceScale(maxY);
  const plotH = H - PAD.top - PAD.bottom;
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const parts: string[] = [];
  for (let v = 0; v <= max + step / 2; v += step) {
    parts.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end">${formatTick(v)}</text>`,
    );
  }
  return { y, parts };
}

function legend(names: readonly string[]): string[] {
  return names.map((name, i) => {
    const x = PAD.left + (i % 4) * 140;
    const y = H - 34 + Math.floor(i / 4) * 14;
    return `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${color(i)}"/><text x="${x + 14}" y="${y}">${esc(name)}</text>`;
  });
}

export function lineChart(chart: LineChart): string {
  // A series without a point (a system that did not run) would only clutter the legend.
  const c = { ...chart, series: chart.series.filter((s) => s.points.length > 0) };
  const xs = c.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [
    ...c.series.flatMap((s) => s.points.map((p) => p[1])),
    ...(c.thresholds ?? []).map((t) => t.y),
  ].filter(Number.isFinite);
  const minX = Math.min(...xs, 0);
  const { max: maxX, step: stepX } = niceScale(Math.max(...xs, 1));
  const plotW = W - PAD.left - PAD.right;
  const x = (v: number) => PAD.left + ((v - minX) / (maxX - minX || 1)) * plotW;
  const { y, parts } = yAxis(Math.max(...ys, 0));
  const body = [...parts];
  for (let v = minX; v <= maxX + stepX / 2; v += stepX) {
    body.push(
      `<text x="${x(v)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${formatTick(v)}</text>`,
    );
  }
  for (const t of c.thresholds ?? []) {
    body.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(t.y)}" y2="${y(t.y)}" stroke="#c00" stroke-dasharray="6 4"/>`,
      `<text x="${W - PAD.right - 4}" y="${y(t.y) - 4}" text-anchor="end" fill="#c00">${esc(t.label)}</text>`,
    );
  }
  c.series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[1]));
    if (pts.length === 0) return;
    const d = pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    body.push(`<polyline fill="none" stroke="${color(i)}" stroke-width="2" points="${d}"/>`);
    for (const p of pts) {
      body.push(
        `<circle cx="${x(p[0]).toFixed(1)}" cy="${y(p[1]).toFixed(1)}" r="3" fill="${color(i)}"/>`,
      );
    }
  });
  body.push(...legend(c.series.map((s) => s.name)));
  return frame(c.title, c.yLabel, c.xLabel, body);
}

export function barChart(c: BarChart): string {
  const values = c.series.flatMap((s) => s.values).filter(Number.isFinite);
  const { y, parts } = yAxis(Math.max(...values, 0));
  const body = [...parts];
  const plotW = W - PAD.left - PAD.right;
  const groupW = plotW / Math.max(1, c.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, c.series.length);
  c.categories.forEach((cat, ci) => {
    const gx = PAD.left + ci * groupW + groupW * 0.1;
    body.push(
      `<text x="${gx + groupW * 0.4}" y="${H - PAD.bottom + 16}" text-anchor="middle">${esc(cat)}</text>`,
    );
    c.series.forEach((s, si) => {
      const v = s.values[ci] ?? Number.NaN;
      if (!Number.isFinite(v)) return;
      body.push(
        `<rect x="${(gx + si * barW).toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${color(si)}"><title>${esc(`${s.name} ${cat}: ${formatTick(v)}`)}</title></rect>`,
      );
    });
  });
  body.push(...legend(c.series.map((s) => s.name)));
  return frame(c.title, c.yLabel, '', body);
}
