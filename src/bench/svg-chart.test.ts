import { describe, expect, it } from 'vitest';
import {
  escapeXml,
  lineChartPanel,
  niceTicks,
  stackedBarPanel,
  svgDocument,
  wrapText,
} from './svg-chart.js';
import { percentileX } from './percentile-axis.js';

/** Tags balance and nest, the root is <svg>, and no `&` or `<` is left raw in text. */
function checkXml(xml: string): void {
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  let root: string | undefined;
  for (const match of body.matchAll(/<(\/?)([a-zA-Z][\w:-]*)([^>]*?)(\/?)>/g)) {
    const [, closing, name, , selfClosing] = match;
    root ??= name;
    if (closing) expect(stack.pop()).toBe(name);
    else if (!selfClosing) stack.push(name!);
  }
  expect(root).toBe('svg');
  expect(stack).toEqual([]);
  expect(body.replace(/<[^>]*>/g, '')).not.toMatch(/&(?!amp;|lt;|gt;|quot;)|</);
}

describe('svg charts', () => {
  it('escapes text', () => {
    expect(escapeXml('a < b & "c" > d')).toBe('a &lt; b &amp; &quot;c&quot; &gt; d');
  });

  it('picks 1-2-5 ticks that cover the maximum', () => {
    const ticks = niceTicks(87, 5, ' ms');
    expect(ticks[0]).toEqual({ value: 0, label: '0 ms' });
    expect(ticks.at(-1)!.value).toBeGreaterThanOrEqual(87);
    expect(ticks.length).toBeLessThanOrEqual(7);
  });

  it('puts each nine of a percentile one unit further right', () => {
    expect(percentileX(0)).toBe(0);
    expect(percentileX(90)).toBeCloseTo(1);
    expect(percentileX(99.9)).toBeCloseTo(3);
    expect(percentileX(100)).toBe(4.5);
  });

  it('wraps a long subtitle at spaces', () => {
    expect(wrapText('aaa bbb ccc ddd', 7)).toEqual(['aaa bbb', 'ccc ddd']);
  });

  it('writes a well-formed document with labelled axes, series and bars', () => {
    const line = lineChartPanel(
      {
        title: 'Latency <p50 & p99>',
        x: { label: 'percentile', min: 0, max: 4.5, ticks: [{ value: 0, label: '0%' }] },
        y: { label: 'latency (ms)', min: 0, max: 100, ticks: niceTicks(100) },
        series: [
          {
            name: 'direct',
            color: '#000',
            points: [
              { x: 0, y: 10 },
              { x: 2, y: 80 },
            ],
          },
        ],
      },
      { x: 0, y: 56, width: 500, height: 300 },
    );
    const bars = stackedBarPanel(
      {
        title: 'per node',
        yLabel: 'req/s',
        bars: [{ label: 'Tier 0', segments: [{ name: 'A&B', value: 10, color: '#111' }] }],
      },
      { x: 500, y: 56, width: 300, height: 300 },
    );
    const svg = svgDocument(800, 400, 'title', 'a subtitle '.repeat(40), [line, bars]);
    checkXml(svg);
    expect(svg).toContain('latency (ms)');
    expect(svg).toContain('Latency &lt;p50 &amp; p99&gt;');
    expect(svg).toContain('<path d="M');
  });
});
