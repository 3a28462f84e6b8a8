import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, trustedProxyList } from './client-address.js';

function request(peer: string | undefined, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

const TRUSTED = trustedProxyList(['10.0.0.0/8', '192.0.2.10', 'fd00::/8']);

describe('clientAddress', () => {
  it('is the peer, whatever the header says, when no proxies are configured', () => {
    expect(clientAddress(request('203.0.113.5', '1.1.1.1'), undefined)).toBe('203.0.113.5');
  });

  it('ignores the header of a peer that is not a trusted proxy', () => {
    expect(clientAddress(request('203.0.113.5', '1.1.1.1'), TRUSTED)).toBe('203.0.113.5');
  });

  it.each<[string, string, string, string]>([
    ['one balancer', '10.0.0.5', '198.51.100.7', '198.51.100.7'],
    ['two trusted hops', '10.0.0.5', '198.51.100.7, 192.0.2.10', '198.51.100.7'],
    ['a spoofed left part', '10.0.0.5', '1.2.3.4, 198.51.100.7, 10.1.1.1', '198.51.100.7'],
    ['every hop trusted: the left-most', '10.0.0.5', '10.9.9.9, 10.8.8.8', '10.9.9.9'],
    ['ports and brackets', '10.0.0.5', '[2001:db8::9]:4711, 198.51.100.7:80', '198.51.100.7'],
    ['IPv6 hops', 'fd00::1', '2001:db8::9, fd00::2', '2001:db8::9'],
    ['an IPv4-mapped peer', '::ffff:10.0.0.5', '198.51.100.7', '198.51.100.7'],
    ['a garbage hop ends the walk', '10.0.0.5', 'evil, 10.2.2.2', '10.2.2.2'],
    ['no header: the trusted peer itself', '10.0.0.5', '', '10.0.0.5'],
  ])('a trusted peer with %s', (_name, peer, header, expected) => {
    expect(clientAddress(request(peer, header === '' ? undefined : header), TRUSTED)).toBe(
      expected,
    );
  });

  it('reports an IPv4-mapped peer in its IPv4 form', () => {
    expect(clientAddress(request('::ffff:203.0.113.5'), undefined)).toBe('203.0.113.5');
  });

  it("reads a connection's peer once, and a closed one's again", () => {
    let reads = 0;
    let address: string | undefined = undefined;
    const socket = {
      get remoteAddress() {
        reads++;
        return address;
      },
    };
    const req = { socket, headers: {} } as unknown as IncomingMessage;
    expect(clientAddress(req, undefined)).toBe('unknown');
    expect(clientAddress(req, undefined)).toBe('unknown');
    expect(reads).toBe(2);
    address = '::ffff:198.51.100.7';
    expect(clientAddress(req, undefined)).toBe('198.51.100.7');
    expect(clientAddress(req, TRUSTED)).toBe('198.51.100.7');
    expect(reads).toBe(3);
    // Another connection from elsewhere is its own.
    expect(clientAddress(request('203.0.113.9'), undefined)).toBe('203.0.113.9');
  });

  it('builds no list when there are no trusted proxies', () => {
    expect(trustedProxyList([])).toBeUndefined();
  });
});
