/** Where a node's WebSocket endpoint is. */
import type { NodeConfig } from '../config/types.js';
import { nodeRequestHeaders } from '../node/upstream-headers.js';

/**
 * The node's WebSocket URL: its `ws_url`, else its `url` with http→ws / https→wss (same host,
 * port, path and query — how providers such as Helius and Alchemy serve both), plus the
 * same URL safe to print.
 */
export function wsUrlOf(config: NodeConfig): { readonly url: string; readonly redacted: string } {
  if (config.wsUrl !== undefined) {
    return { url: config.wsUrl, redacted: config.redactedWsUrl ?? 'ws://***' };
  }
  return { url: toWs(config.url), redacted: toWs(config.redactedUrl) };
}

function toWs(url: string): string {
  if (url.startsWith('https:')) return `wss:${url.slice('https:'.length)}`;
  if (url.startsWith('http:')) return `ws:${url.slice('http:'.length)}`;
  return url;
}

/**
 * The headers of the upgrade to a node's WebSocket endpoint: the node's configured `headers`
 * (an `x-api-key`, say) and HTTP Basic credentials from the URL's user:password — the same
 * credentials its HTTP requests carry. Secrets: never logged.
 */
export function wsUpgradeHeaders(
  url: string,
  configured: Readonly<Record<string, string>>,
): Record<string, string> {
  const { 'content-type': _json, ...headers } = nodeRequestHeaders(new URL(url), configured);
  return headers;
}
