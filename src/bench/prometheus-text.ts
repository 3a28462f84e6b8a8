/**
 * A reader for the Prometheus text exposition format (0.0.4), what GET /metrics serves:
 * families with their HELP and TYPE, and every sample with its labels. Strict, so the tests
 * can assert the format too; `cascade bench` reads the per-node counters with it.
 */

/** One sample line. */
export interface Sample {
  /** The series name as written (`x_bucket`, `x_sum`, … for histograms). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** NaN, ±Infinity included. */
  readonly value: number;
}

/** A metric family: its `# HELP`, `# TYPE` and samples. */
export interface Family {
  readonly name: string;
  help: string | undefined;
  type: string | undefined;
  readonly samples: Sample[];
}

/** Everything one scrape exposes. */
export interface Exposition {
  readonly families: ReadonlyMap<string, Family>;
  readonly samples: readonly Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (!text) return labels;
  LABEL_PAIR.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = LABEL_PAIR.exec(text)) !== null) {
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    if (LABEL_PAIR.lastIndex === text.length) return labels;
  }
  throw new Error(`malformed labels: {${text}}`);
}

/** The family a series belongs to (`x_bucket` → `x` when x is a histogram). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(name);
  if (exact) return exact;
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const base = families.get(name.slice(0, -suffix.length));
    if (base?.type === 'histogram' || base?.type === 'summary') return base;
  }
  return undefined;
}

function family(families: Map<string, Family>, name: string): Family {
  let entry = families.get(name);
  if (!entry) {
    entry = { name, help: undefined, type: undefined, samples: [] };
    families.set(name, entry);
  }
  return entry;
}

/** Parses a scrape; throws on a line that is neither a comment nor a sample. */
export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const entry = family(families, meta[2]!);
      if (meta[1] === 'HELP') entry.help = meta[3];
      else entry.type = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const sample = { name: match[1]!, labels: parseLabels(match[2]), value: parseValue(match[3]!) };
    samples.push(sample);
    const owner = familyOf(sample.name, families);
    if (!owner) throw new Error(`sample ${sample.name} has no # TYPE line before it`);
    owner.samples.push(sample);
  }
  return { families, samples };
}

/** An exposition with nothing in it (no scrape). */
export const EMPTY_EXPOSITION: Exposition = { families: new Map(), samples: [] };

/** Samples of series `name` whose labels include `labels`. */
export function samplesOf(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Sample[] {
  return exposition.samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The value of the one series `name{labels}`; throws when there is not exactly one. */
export function valueOf(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  const found = samplesOf(exposition, name, labels);
  if (found.length !== 1) {
    throw new Error(`${name}${JSON.stringify(labels)}: ${found.length} series, expected 1`);
  }
  return found[0]!.value;
}

/** A stable key for a series: `name{a="1",b="2"}` with labels sorted. */
export function seriesKey(sample: Sample): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((key) => `${key}="${sample.labels[key]}"`)
    .join(',');
  return `${sample.name}{${labels}}`;
}

/** Series of `name` whose value changed between two scrapes, with the change (new = +value). */
export function deltas(before: Exposition, after: Exposition, name: string): Map<string, number> {
  const old = new Map(samplesOf(before, name).map((s) => [seriesKey(s), s.value]));
  const changed = new Map<string, number>();
  for (const sample of samplesOf(after, name)) {
    const key = seriesKey(sample);
    const delta = sample.value - (old.get(key) ?? 0);
    if (delta !== 0) changed.set(key, delta);
  }
  return changed;
}

/** Sum of series `name{labels}` per value of its `node` label, e.g. successes per node. */
export function perNode(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Map<string, number> {
  const result = new Map<string, number>();
  for (const sample of samplesOf(exposition, name, labels)) {
    const node = sample.labels.node;
    if (node !== undefined) result.set(node, (result.get(node) ?? 0) + sample.value);
  }
  return result;
}

/** Fetches `url` (a /metrics endpoint) and parses it, with a deadline. */
export async function scrapeMetrics(url: string, timeoutMs = 5000): Promise<Exposition> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return parseExposition(await response.text());
}
