/**
 * The live status page: one self-contained HTML file shipped in the package (web/status.html,
 * no framework, no CDN, no build step), read once. Its script polls /admin/nodes every second;
 * without JavaScript the table rendered here, refreshed by the page every 5 s, is what shows.
 */
import { readFileSync } from 'node:fs';
import type { NodeView } from './node-view.js';
import type { NodesDocument } from './operator.js';

/** From src/core/admin and from dist/core/admin alike, three levels up is the package root. */
const PAGE = new URL('../../../web/status.html', import.meta.url);

let template: string | undefined;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const num = (value: number | null, none = '—'): string =>
  value === null ? none : value.toLocaleString('en-US');

function row(node: NodeView): string {
  const cells = [
    node.name,
    String(node.tier),
    String(node.rank),
    node.state,
    node.latency_ms === null ? '—' : node.latency_ms.toFixed(1),
    `${num(node.rps)} (${num(node.rps_limit, '∞')})`,
    '',
    `${num(node.in_flight)} (${num(node.max_concurrent, '∞')})`,
    node.spillover_threshold === null ? 'unmetered' : `threshold ${num(node.spillover_threshold)}`,
    `${num(node.credits_used)} / ${num(node.monthly_limit, 'unmetered')}`,
    node.next_reset,
    `${num(node.requests_last_minute)} / ${num(node.failures_last_minute)}`,
    node.head === null || node.head === undefined
      ? '—'
      : `${num(node.head)} (${node.lag === null || node.lag === undefined ? '?' : num(node.lag)})`,
  ];
  const tds = cells.map(
    (text, i) => `<td${i === 3 ? ` class="state state-${node.state}"` : ''}>${escape(text)}</td>`,
  );
  return `<tr data-node="${escape(node.name)}">${tds.join('')}</tr>`;
}

/** The page, with the table filled from `doc` (undefined: the script fills it, e.g. behind a token). */
export function renderStatusPage(doc: NodesDocument | undefined): string {
  template ??= readFileSync(PAGE, 'utf8');
  if (doc === undefined) return template.replace('<!--GENERATED-->', 'loading…');
  const events = [...doc.events]
    .reverse()
    .map(
      (e) => `<li>${escape(`${e.at} ${e.node} ${e.kind}${e.detail ? ` — ${e.detail}` : ''}`)}</li>`,
    );
  return template
    .replace('<!--ROWS-->', doc.nodes.map(row).join('\n'))
    .replace('<!--GENERATED-->', escape(`as of ${doc.generated_at} · pid ${doc.pid}`))
    .replace('<!--TIERS-->', '')
    .replace('<!--EVENTS-->', events.join('\n'));
}
