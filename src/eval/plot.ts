// A small self-contained SVG line chart (no dependencies, no external service): y in [0, 1] against integer x.

export interface Series {
  name: string;
  color: string;
  /** Dashed line (e.g. a second corpus or the verified variant). */
  dashed?: boolean;
  /** Dotted line. */
  dotted?: boolean;
  points: ReadonlyArray<readonly [number, number]>;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Vertical markers, e.g. the recommended k. */
  markers?: ReadonlyArray<{ x: number; label: string }>;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const fmt = (v: number): string => (Math.round(v * 10) / 10).toString();

export function lineChart(series: readonly Series[], options: ChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 420;
  const left = 56;
  const right = 200; // legend column
  const top = 40;
  const bottom = 52;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const xMin = Math.min(...xs, 0);
  const xMax = Math.max(...xs, 1);
  const x = (v: number): number => left + ((v - xMin) / (xMax - xMin)) * plotW;
  const y = (v: number): number => top + (1 - Math.max(0, Math.min(1, v))) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
  );
  // Grid and axes.
  for (let i = 0; i <= 10; i++) {
    const v = i / 10;
    out.push(
      `<line x1="${left}" y1="${fmt(y(v))}" x2="${left + plotW}" y2="${fmt(y(v))}" stroke="${i % 5 === 0 ? '#bbbbbb' : '#eeeeee'}"/>`,
    );
    out.push(`<text x="${left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end">${v.toFixed(1)}</text>`);
  }
  const step = Math.max(1, Math.ceil((xMax - xMin) / 16));
  for (let v = Math.ceil(xMin); v <= xMax; v += step) {
    out.push(
      `<line x1="${fmt(x(v))}" y1="${top + plotH}" x2="${fmt(x(v))}" y2="${top + plotH + 4}" stroke="#555555"/>`,
    );
    out.push(`<text x="${fmt(x(v))}" y="${top + plotH + 18}" text-anchor="middle">${v}</text>`);
  }
  out.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#555555"/>`);
  out.push(`<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`);
  out.push(
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`,
  );
  (options.markers ?? []).forEach((marker, i) => {
    const mx = fmt(x(marker.x));
    // Labels stagger upwards from the bottom so that markers one k apart stay readable.
    const ly = top + plotH - 6 - i * 14;
    out.push(`<line x1="${mx}" y1="${top}" x2="${mx}" y2="${top + plotH}" stroke="#888888" stroke-dasharray="2 3"/>`);
    out.push(
      `<text x="${fmt(x(marker.x) + 3)}" y="${ly}" fill="#555555" font-size="11">${escapeXml(marker.label)}</text>`,
    );
  });
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${fmt(x(p[0]))} ${fmt(y(p[1]))}`).join(' ');
    const dash = s.dotted
      ? ' stroke-dasharray="1 4" stroke-linecap="round"'
      : s.dashed
        ? ' stroke-dasharray="6 4"'
        : '';
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.dotted ? 3 : 2}"${dash}/>`);
    const ly = top + 10 + i * 20;
    out.push(
      `<line x1="${left + plotW + 14}" y1="${ly}" x2="${left + plotW + 40}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    out.push(`<text x="${left + plotW + 46}" y="${ly + 4}">${escapeXml(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
