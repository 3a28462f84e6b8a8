/**
 * Who the client is when cascade sits behind load balancers or reverse proxies. Each proxy
 * appends the address it saw to `X-Forwarded-For`, so the header is read from the right: past
 * every hop that is a trusted proxy, the first address that is not one is the client. Hops
 * left of that were written by the client itself and could say anything. The header is
 * believed only when the peer itself is trusted; otherwise the peer is the client.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import { parseProxyRange } from '../config/proxy-ranges.js';

/** The `[server] trusted_proxies` ranges as a BlockList; undefined when there are none. */
export function trustedProxyList(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const range = parseProxyRange(entry);
    if (range === undefined) throw new RangeError(`not an IP address or CIDR range: ${entry}`);
    list.addSubnet(range.address, range.prefix, range.family);
  }
  return list;
}

/** `10.0.0.1` from `::ffff:10.0.0.1` (how a dual-stack listener reports IPv4 peers). */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** The address in one hop (`203.0.113.7`, `203.0.113.7:4711`, `[2001:db8::1]:443`), if any. */
function hopAddress(hop: string): string | undefined {
  let text = hop.trim();
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    text = close === -1 ? '' : text.slice(1, close);
  } else if (text.indexOf(':') !== -1 && text.indexOf(':') === text.lastIndexOf(':')) {
    text = text.slice(0, text.indexOf(':'));
  }
  return isIP(text) === 0 ? undefined : unmapped(text);
}

function isTrusted(list: BlockList, address: string): boolean {
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Each connection's peer address (unmapped), read once: a keep-alive connection's peer never
 * changes, and Socket#remoteAddress goes through three megamorphic loads of the socket's
 * handle on every read (~500 instructions; a WeakMap lookup is ~70).
 */
const peers = new WeakMap<Socket, string>();

function peerOf(socket: Socket): string | undefined {
  const known = peers.get(socket);
  if (known !== undefined) return known;
  const address = socket.remoteAddress;
  // A socket already closed has none: not remembered, asked again next time.
  if (address === undefined) return undefined;
  const peer = unmapped(address);
  peers.set(socket, peer);
  return peer;
}

/**
 * Reads `socket`'s peer address as it connects (the server's `connection` event), before its
 * first request is read. Why then: `remoteAddress` caches the address on the socket as a new
 * property, and a socket that gains one after its reads began shows node's own per-read and
 * per-write code (net.js `_unrefTimer`) a fifth socket shape; that load goes megamorphic, some
 * 600 instructions a keyed request. Read here, every server socket has the property before
 * that code first sees it.
 */
export function rememberPeer(socket: Socket): void {
  peerOf(socket);
}

/**
 * The client's address: the peer's, or — when the peer is a trusted proxy — the right-most
 * `X-Forwarded-For` hop that is not a trusted proxy (the left-most hop when all are). A hop
 * that is not an address ends the walk at the last address that was checked.
 */
export function clientAddress(req: IncomingMessage, trusted: BlockList | undefined): string {
  const peer = peerOf(req.socket);
  if (peer === undefined) return 'unknown';
  let client = peer;
  if (trusted === undefined || !isTrusted(trusted, client)) return client;
  const header = req.headers['x-forwarded-for'];
  if (typeof header !== 'string') return client;
  const hops = header.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!);
    if (hop === undefined) return client;
    client = hop;
    if (!isTrusted(trusted, hop)) return hop;
  }
  return client;
}
