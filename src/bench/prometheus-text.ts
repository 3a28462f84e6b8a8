/** Reads samples out of a Prometheus text exposition (what GET /metrics returns). */

/** One sample line: its labels and value. */
export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** Every sample of metric `name` (exact name: `rpc_upstream_attempts_total`). */
export function samplesOf(text: string, name: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || line.startsWith('#')) continue;
    const rest = line.slice(name.length);
    let labelText = '';
    let valueText: string;
    if (rest.startsWith('{')) {
      const close = rest.lastIndexOf('}');
      if (close === -1) continue;
      labelText = rest.slice(1, close);
      valueText = rest.slice(close + 1);
    } else if (rest.startsWith(' ')) {
      valueText = rest;
    } else continue;
    const labels: Record<string, string> = {};
    for (const match of labelText.matchAll(LABEL)) labels[match[1]!] = unescape(match[2]!);
    const value = Number(valueText.trim().split(/\s+/)[0]);
    if (!Number.isNaN(value)) samples.push({ labels, value });
  }
  return samples;
}

/** `metric{node=…,<filter>}` per node, e.g. successes per node. */
export function perNode(
  text: string,
  name: string,
  filter: Readonly<Record<string, string>> = {},
): Map<string, number> {
  const result = new Map<string, number>();
  for (const sample of samplesOf(text, name)) {
    const node = sample.labels.node;
    if (node === undefined) continue;
    if (Object.entries(filter).some(([k, v]) => sample.labels[k] !== v)) continue;
    result.set(node, (result.get(node) ?? 0) + sample.value);
  }
  return result;
}

/** Fetches `url` (a /metrics endpoint) as text, with a deadline. */
export async function scrapeMetrics(url: string, timeoutMs = 5000): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return response.text();
}
