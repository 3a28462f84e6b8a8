/**
 * The live status page: one self-contained HTML file shipped in the package (web/status.html,
 * no framework, no CDN), read once. It polls /admin/nodes every second.
 */
import { readFileSync } from 'node:fs';

/** From src/core/admin and from dist/core/admin alike, three levels up is the package root. */
const PAGE = new URL('../../../web/status.html', import.meta.url);

let page: Buffer | undefined;

/** The page's bytes. */
export function statusPage(): Buffer {
  page ??= readFileSync(PAGE);
  return page;
}
