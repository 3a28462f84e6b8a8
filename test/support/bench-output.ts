/** Reading and checking the files `cascade bench` writes (JSON reports, SVG charts). */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/** A latency summary as the reports write it, ms. */
export interface Percentiles {
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p99_9: number;
  max: number;
}

/** The parsed JSON file at `file`. */
export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Percentiles rise from min to max, and the mean lies within. */
export function expectOrdered(l: Percentiles): void {
  expect(l.min).toBeGreaterThan(0);
  expect(l.min).toBeLessThanOrEqual(l.p50);
  expect(l.p50).toBeLessThanOrEqual(l.p90);
  expect(l.p90).toBeLessThanOrEqual(l.p95);
  expect(l.p95).toBeLessThanOrEqual(l.p99);
  expect(l.p99).toBeLessThanOrEqual(l.p99_9);
  expect(l.p99_9).toBeLessThanOrEqual(l.max);
  expect(l.mean).toBeLessThanOrEqual(l.max);
}

/** Well-formed XML with an <svg> root: tags nest and close, text has no raw `&` or `<`. */
export function expectWellFormedSvg(file: string): void {
  const xml = readFileSync(file, 'utf8');
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg ')).toBe(true);
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  const roots: string[] = [];
  for (const match of body.matchAll(/<(\/?)([a-zA-Z][\w:-]*)(?:\s[^>]*?)?(\/?)>/g)) {
    const [, closing, tag, selfClosing] = match;
    if (stack.length === 0 && !closing) roots.push(tag!);
    if (closing) expect(stack.pop()).toBe(tag);
    else if (!selfClosing) stack.push(tag!);
  }
  expect(roots).toEqual(['svg']);
  expect(stack).toEqual([]);
  expect(body.replace(/<[^>]*>/g, '')).not.toMatch(/&(?!amp;|lt;|gt;|quot;|#\d+;)|</);
  expect(xml).toMatch(/<text[^>]*>latency \(ms\)<\/text>/);
}
