/**
 * Hand-written SVG charts for the result files: line charts (percentile curves, req/s over
 * time) and stacked bars (per-node throughput by tier), laid out in panels of one document.
 * No dependencies; the output is plain, well-formed XML.
 */

/** Where a panel is drawn inside the document. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** One axis: its range, its label and the tick marks to print. */
export interface Axis {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly ticks: ReadonlyArray<{ readonly value: number; readonly label: string }>;
}

/** A named line. */
export interface LineSeries {
  readonly name: string;
  readonly color: string;
  readonly points: ReadonlyArray<{ readonly x: number; readonly y: number }>;
}

/** A line chart. */
export interface LineChart {
  readonly title: string;
  readonly x: Axis;
  readonly y: Axis;
  readonly series: readonly LineSeries[];
}

/** A stacked bar chart: one bar per entry, one segment per part. */
export interface StackedBarChart {
  readonly title: string;
  readonly yLabel: string;
  readonly bars: ReadonlyArray<{
    readonly label: string;
    readonly segments: ReadonlyArray<{
      readonly name: string;
      readonly value: number;
      readonly color: string;
    }>;
  }>;
}

/** Colours that stay apart on white and for the common colour-vision deficiencies. */
export const PALETTE = [
  '#d95f02',
  '#1b9e77',
  '#7570b3',
  '#e7298a',
  '#66a61e',
  '#e6ab02',
  '#a6761d',
  '#666666',
] as const;

const MARGIN = { left: 64, right: 16, top: 34, bottom: 46 } as const;
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"';

/** Escapes text for XML content and attributes. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function fmt(n: number): string {
  return String(Math.round(n * 10) / 10);
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${fmt(x)}" y="${fmt(y)}" ${attrs}>${escapeXml(content)}</text>`;
}

/** A 1-2-5 step giving about `count` ticks over [0, max]. */
export function niceTicks(max: number, count = 5, unit = ''): Axis['ticks'] {
  const top = max > 0 ? max : 1;
  const raw = top / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: Array<{ value: number; label: string }> = [];
  for (let value = 0; value <= top + step * 0.999; value += step) {
    const rounded = Math.round(value * 1e6) / 1e6;
    ticks.push({ value: rounded, label: `${rounded.toLocaleString('en-US')}${unit}` });
  }
  return ticks;
}

/** The top of the last tick, for an axis max that leaves the data inside. */
export function axisTop(ticks: Axis['ticks']): number {
  return ticks[ticks.length - 1]?.value ?? 1;
}

function frame(box: Box, title: string, xLabel: string, yLabel: string): string[] {
  const plotBottom = box.y + box.height - MARGIN.bottom;
  const midY = box.y + MARGIN.top + (box.height - MARGIN.top - MARGIN.bottom) / 2;
  return [
    text(
      box.x + box.width / 2,
      box.y + 20,
      title,
      'text-anchor="middle" font-size="14" font-weight="600"',
    ),
    text(
      box.x + MARGIN.left + (box.width - MARGIN.left - MARGIN.right) / 2,
      plotBottom + 36,
      xLabel,
      'text-anchor="middle" font-size="12"',
    ),
    `<text x="${fmt(box.x + 14)}" y="${fmt(midY)}" text-anchor="middle" font-size="12" transform="rotate(-90 ${fmt(box.x + 14)} ${fmt(midY)})">${escapeXml(yLabel)}</text>`,
  ];
}

/** The legend of a line chart, on a white box in the top-left corner of the plot. */
function legend(series: readonly LineSeries[], left: number, top: number): string[] {
  if (series.length === 0) return [];
  const width = Math.max(...series.map((one) => one.name.length)) * 6.6 + 36;
  const parts = [
    `<rect x="${fmt(left + 4)}" y="${fmt(top + 3)}" width="${fmt(width)}" height="${series.length * 16 + 6}" fill="#ffffff" fill-opacity="0.9" stroke="#ddd"/>`,
  ];
  series.forEach((one, i) => {
    const y = top + 14 + i * 16;
    parts.push(
      `<rect x="${fmt(left + 10)}" y="${fmt(y - 5)}" width="14" height="4" fill="${one.color}"/>`,
    );
    parts.push(text(left + 30, y + 1, one.name, 'font-size="12"'));
  });
  return parts;
}

/** Draws a line chart into `box`. */
export function lineChartPanel(chart: LineChart, box: Box): string {
  const left = box.x + MARGIN.left;
  const right = box.x + box.width - MARGIN.right;
  const top = box.y + MARGIN.top;
  const bottom = box.y + box.height - MARGIN.bottom;
  const sx = (v: number) =>
    left + ((v - chart.x.min) / (chart.x.max - chart.x.min || 1)) * (right - left);
  const sy = (v: number) =>
    bottom - ((v - chart.y.min) / (chart.y.max - chart.y.min || 1)) * (bottom - top);
  const parts = frame(box, chart.title, chart.x.label, chart.y.label);
  for (const tick of chart.y.ticks) {
    const y = sy(tick.value);
    parts.push(
      `<line x1="${fmt(left)}" y1="${fmt(y)}" x2="${fmt(right)}" y2="${fmt(y)}" stroke="#e5e5e5"/>`,
    );
    parts.push(text(left - 6, y + 4, tick.label, 'text-anchor="end" font-size="11" fill="#444"'));
  }
  for (const tick of chart.x.ticks) {
    const x = sx(tick.value);
    parts.push(
      `<line x1="${fmt(x)}" y1="${fmt(top)}" x2="${fmt(x)}" y2="${fmt(bottom)}" stroke="#f0f0f0"/>`,
    );
    parts.push(text(x, bottom + 16, tick.label, 'text-anchor="middle" font-size="11" fill="#444"'));
  }
  parts.push(
    `<rect x="${fmt(left)}" y="${fmt(top)}" width="${fmt(right - left)}" height="${fmt(bottom - top)}" fill="none" stroke="#999"/>`,
  );
  for (const series of chart.series) {
    if (series.points.length === 0) continue;
    const d = series.points
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${fmt(sx(p.x))},${fmt(sy(p.y))}`)
      .join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${series.color}" stroke-width="2.2"/>`);
    for (const p of series.points) {
      parts.push(
        `<circle cx="${fmt(sx(p.x))}" cy="${fmt(sy(p.y))}" r="2.5" fill="${series.color}"/>`,
      );
    }
  }
  parts.push(...legend(chart.series, left, top));
  return `<g>${parts.join('')}</g>`;
}

/** Draws a stacked bar chart into `box`, labelling each segment that is tall enough. */
export function stackedBarPanel(chart: StackedBarChart, box: Box): string {
  const left = box.x + MARGIN.left;
  const right = box.x + box.width - MARGIN.right;
  const top = box.y + MARGIN.top;
  const bottom = box.y + box.height - MARGIN.bottom;
  const totals = chart.bars.map((bar) => bar.segments.reduce((sum, s) => sum + s.value, 0));
  const ticks = niceTicks(Math.max(0, ...totals));
  const max = axisTop(ticks);
  const sy = (v: number) => bottom - (v / max) * (bottom - top);
  const parts = frame(box, chart.title, '', chart.yLabel);
  for (const tick of ticks) {
    const y = sy(tick.value);
    parts.push(
      `<line x1="${fmt(left)}" y1="${fmt(y)}" x2="${fmt(right)}" y2="${fmt(y)}" stroke="#e5e5e5"/>`,
    );
    parts.push(text(left - 6, y + 4, tick.label, 'text-anchor="end" font-size="11" fill="#444"'));
  }
  const slot = (right - left) / Math.max(1, chart.bars.length);
  const width = Math.min(90, slot * 0.6);
  chart.bars.forEach((bar, i) => {
    const x = left + slot * i + (slot - width) / 2;
    let base = 0;
    for (const segment of bar.segments) {
      if (segment.value <= 0) continue;
      const y0 = sy(base);
      const y1 = sy(base + segment.value);
      parts.push(
        `<rect x="${fmt(x)}" y="${fmt(y1)}" width="${fmt(width)}" height="${fmt(y0 - y1)}" fill="${segment.color}" stroke="#fff"><title>${escapeXml(`${segment.name}: ${Math.round(segment.value).toLocaleString('en-US')}`)}</title></rect>`,
      );
      if (y0 - y1 >= 26) {
        parts.push(
          text(
            x + width / 2,
            (y0 + y1) / 2 - 2,
            segment.name,
            'text-anchor="middle" font-size="10" fill="#fff"',
          ),
        );
        parts.push(
          text(
            x + width / 2,
            (y0 + y1) / 2 + 10,
            Math.round(segment.value).toLocaleString('en-US'),
            'text-anchor="middle" font-size="10" fill="#fff"',
          ),
        );
      }
      base += segment.value;
    }
    parts.push(
      text(
        x + width / 2,
        sy(base) - 4,
        Math.round(base).toLocaleString('en-US'),
        'text-anchor="middle" font-size="11"',
      ),
    );
    parts.push(text(x + width / 2, bottom + 16, bar.label, 'text-anchor="middle" font-size="12"'));
  });
  parts.push(
    `<line x1="${fmt(left)}" y1="${fmt(bottom)}" x2="${fmt(right)}" y2="${fmt(bottom)}" stroke="#999"/>`,
  );
  return `<g>${parts.join('')}</g>`;
}

/** Splits `text` at spaces into lines of at most `width` characters. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Panels are laid out from this y; a subtitle longer than one line pushes them down. */
export const PANELS_TOP = 56;
const SUBTITLE_LINE = 14;

/**
 * A whole SVG document: a heading, a subtitle (wrapped to the width) and the panels, which
 * were laid out from PANELS_TOP and are shifted down by any extra subtitle lines.
 */
export function svgDocument(
  width: number,
  height: number,
  heading: string,
  subtitle: string,
  panels: readonly string[],
): string {
  const lines = wrapText(subtitle, Math.floor(width / 6.1));
  const shift = Math.max(0, lines.length - 1) * SUBTITLE_LINE;
  const total = height + shift;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}" ${FONT}>`,
    `<title>${escapeXml(heading)}</title>`,
    `<rect width="${width}" height="${total}" fill="#ffffff"/>`,
    text(16, 24, heading, 'font-size="16" font-weight="700"'),
    ...lines.map((line, i) => text(16, 42 + i * SUBTITLE_LINE, line, 'font-size="11" fill="#555"')),
    `<g transform="translate(0 ${shift})">`,
    ...panels,
    '</g>',
    '</svg>',
    '',
  ].join('\n');
}
