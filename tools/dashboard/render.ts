/**
 * Renders a Grafana dashboard's panels as one SVG from query results, laid out by each panel's
 * gridPos: rows as headings, stat panels as their value, time series as lines, tables as rows.
 * No Grafana runs here; this draws what the panels' own queries returned from a real Prometheus,
 * in Grafana's layout but not its look.
 */
export interface GridPos {
  readonly h: number;
  readonly w: number;
  readonly x: number;
  readonly y: number;
}

export interface Panel {
  readonly type: string;
  readonly title: string;
  readonly gridPos: GridPos;
  readonly fieldConfig?: { readonly defaults?: { readonly unit?: string } };
}

/** One series of a panel: its legend and its [unix seconds, value] points. */
export interface PanelSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

/** A table panel's rows, already merged by label set, with the columns to show. */
export interface PanelTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export type PanelData =
  { readonly series: readonly PanelSeries[] } | { readonly table: PanelTable };

const COL = 50;
const ROW = 28;
const GAP = 6;
const COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
];

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A value as the panel's unit shows it. */
function formatValue(value: number, unit: string | undefined): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : String(value);
  const n = (v: number) => String(+v.toPrecision(3));
  switch (unit) {
    case 's': {
      const a = Math.abs(value);
      if (a >= 86_400) return `${n(value / 86_400)} d`;
      if (a >= 3_600) return `${n(value / 3_600)} h`;
      if (a >= 60) return `${n(value / 60)} min`;
      if (a >= 1 || a === 0) return `${n(value)} s`;
      return `${n(value * 1000)} ms`;
    }
    case 'ops':
      return `${n(value)} ops/s`;
    case 'reqps':
      return `${n(value)} req/s`;
    default:
      return n(value);
  }
}

function box(p: Panel): { x: number; y: number; w: number; h: number } {
  return {
    x: p.gridPos.x * COL + GAP,
    y: p.gridPos.y * ROW + GAP,
    w: p.gridPos.w * COL - 2 * GAP,
    h: p.gridPos.h * ROW - 2 * GAP,
  };
}

function frame(p: Panel, body: string[]): string[] {
  const { x, y, w, h } = box(p);
  return [
    `<g transform="translate(${x} ${y})">`,
    `<rect width="${w}" height="${h}" rx="3" fill="#ffffff" stroke="#d0d4da"/>`,
    `<text x="8" y="16" font-weight="bold">${esc(p.title)}</text>`,
    ...body,
    '</g>',
  ];
}

function stat(p: Panel, data: PanelData | undefined): string[] {
  const { w, h } = box(p);
  const series = data && 'series' in data ? data.series : [];
  const last = series[0]?.points.at(-1)?.[1];
  const text = last === undefined ? 'No data' : formatValue(last, p.fieldConfig?.defaults?.unit);
  return frame(p, [
    `<text x="${w / 2}" y="${h / 2 + 16}" text-anchor="middle" font-size="28">${esc(text)}</text>`,
  ]);
}

function timeseries(p: Panel, data: PanelData | undefined): string[] {
  const { w, h } = box(p);
  const series = (data && 'series' in data ? data.series : []).filter((s) => s.points.length > 0);
  const unit = p.fieldConfig?.defaults?.unit;
  const plot = { left: 70, right: w - 10, top: 26, bottom: h - 34 };
  const finite = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const times = series.flatMap((s) => s.points.map(([t]) => t));
  if (finite.length === 0 || times.length === 0) {
    return frame(p, [
      `<text x="${w / 2}" y="${h / 2}" text-anchor="middle" fill="#888">No data</text>`,
    ]);
  }
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const vmax = Math.max(...finite, 0);
  const vmin = Math.min(...finite, 0);
  const top = vmax === vmin ? vmax + 1 : vmax;
  const sx = (t: number) =>
    plot.left + ((t - t0) / Math.max(1, t1 - t0)) * (plot.right - plot.left);
  const sy = (v: number) => plot.bottom - ((v - vmin) / (top - vmin)) * (plot.bottom - plot.top);
  const body = [
    `<line x1="${plot.left}" y1="${plot.bottom}" x2="${plot.right}" y2="${plot.bottom}" stroke="#999"/>`,
    `<line x1="${plot.left}" y1="${plot.top}" x2="${plot.left}" y2="${plot.bottom}" stroke="#999"/>`,
    `<text x="${plot.left - 4}" y="${plot.top + 4}" text-anchor="end" font-size="10">${esc(formatValue(top, unit))}</text>`,
    `<text x="${plot.left - 4}" y="${plot.bottom}" text-anchor="end" font-size="10">${esc(formatValue(vmin, unit))}</text>`,
    `<text x="${plot.right}" y="${plot.bottom + 12}" text-anchor="end" font-size="10">${Math.round(t1 - t0)} s</text>`,
  ];
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    // NaN (a quantile with no observations in the window) breaks the line, as in Grafana.
    const parts: string[][] = [[]];
    for (const [t, v] of s.points) {
      if (Number.isFinite(v)) parts.at(-1)!.push(`${sx(t).toFixed(1)},${sy(v).toFixed(1)}`);
      else if (parts.at(-1)!.length > 0) parts.push([]);
    }
    for (const part of parts.filter((q) => q.length > 0)) {
      body.push(
        `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${part.join(' ')}"/>`,
      );
    }
    const lx = 8 + (i % 4) * ((w - 16) / 4);
    const ly = h - 8 - Math.floor(i / 4) * 0;
    body.push(
      `<rect x="${lx}" y="${ly - 8}" width="10" height="3" fill="${color}"/>`,
      `<text x="${lx + 14}" y="${ly - 4}" font-size="10">${esc(s.name.slice(0, 40))}</text>`,
    );
  });
  return frame(p, body);
}

function table(p: Panel, data: PanelData | undefined): string[] {
  const { w } = box(p);
  const t = data && 'table' in data ? data.table : { columns: [], rows: [] };
  const colW = (w - 16) / Math.max(1, t.columns.length);
  const body = t.columns.map(
    (c, i) => `<text x="${8 + i * colW}" y="38" font-weight="bold" font-size="11">${esc(c)}</text>`,
  );
  t.rows.forEach((row, r) => {
    row.forEach((cell, i) =>
      body.push(`<text x="${8 + i * colW}" y="${56 + r * 16}" font-size="11">${esc(cell)}</text>`),
    );
  });
  return frame(p, body);
}

function rowHeading(p: Panel): string[] {
  const y = p.gridPos.y * ROW + ROW / 2 + 5;
  return [`<text x="${GAP + 2}" y="${y}" font-size="15" font-weight="bold">${esc(p.title)}</text>`];
}

export function renderDashboard(
  title: string,
  panels: readonly Panel[],
  data: ReadonlyMap<Panel, PanelData>,
  caption: string,
): string {
  const height = Math.max(...panels.map((p) => p.gridPos.y + p.gridPos.h)) * ROW + 40;
  const width = 24 * COL;
  const body = panels.flatMap((p) => {
    if (p.type === 'row') return rowHeading(p);
    if (p.type === 'stat') return stat(p, data.get(p));
    if (p.type === 'table') return table(p, data.get(p));
    return timeseries(p, data.get(p));
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 30}" viewBox="0 -30 ${width} ${height + 30}" font-family="sans-serif" font-size="12">`,
    `<rect y="-30" width="${width}" height="${height + 30}" fill="#f4f5f8"/>`,
    `<text x="${GAP + 2}" y="-10" font-size="16" font-weight="bold">${esc(title)}</text>`,
    ...body,
    `<text x="${GAP + 2}" y="${height + 10}" font-size="10" fill="#555">${esc(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
