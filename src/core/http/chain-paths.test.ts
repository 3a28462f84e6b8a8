import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChainPaths } from './chain-paths.js';

const KEY = 'ck_0123456789abcdefghij';

describe('ChainPaths: which chain a path and host reach', () => {
  const paths = new ChainPaths([
    { paths: ['/solana', '/sol'], hosts: [], target: 'solana' },
    { paths: ['/eth/mainnet'], hosts: ['eth.rpc.example.com'], target: 'eth' },
    { paths: ['/'], hosts: [], target: 'root' },
  ]);
  const at = (path: string, host?: string, keys = true) => paths.resolve(path, host, keys);

  it('serves each chain on its paths, with /send-request and key paths under them', () => {
    expect(at('/solana')).toEqual({ target: 'solana', key: undefined });
    expect(at('/solana/')).toEqual({ target: 'solana', key: undefined });
    expect(at('/sol/send-request')).toEqual({ target: 'solana', key: undefined });
    expect(at(`/solana/${KEY}`)).toEqual({ target: 'solana', key: KEY });
    expect(at(`/solana/${KEY}/send-request`)).toEqual({ target: 'solana', key: KEY });
    expect(at('/eth/mainnet')).toEqual({ target: 'eth', key: undefined });
    expect(at(`/eth/mainnet/${KEY}/send-request`)).toEqual({ target: 'eth', key: KEY });
  });

  it('takes no key path when keys are off, and nothing that is not a proxy path', () => {
    expect(at(`/solana/${KEY}`, undefined, false)).toBeUndefined();
    expect(at('/solana/other/path/deep')).toBeUndefined();
    expect(at('/solana/short')).toBeUndefined();
    expect(at('/eth')).toBeUndefined();
  });

  it('sends the root and its key paths to the chain at /', () => {
    expect(at('/')).toEqual({ target: 'root', key: undefined });
    expect(at('/send-request')).toEqual({ target: 'root', key: undefined });
    expect(at(`/${KEY}`)).toEqual({ target: 'root', key: KEY });
  });

  it('sends a host name’s plain paths to its chain, port and case aside', () => {
    expect(at('/', 'ETH.rpc.example.com:443')).toEqual({ target: 'eth', key: undefined });
    expect(at(`/${KEY}/send-request`, 'eth.rpc.example.com')).toEqual({ target: 'eth', key: KEY });
    // Chain paths still reach their chain on that host.
    expect(at('/solana', 'eth.rpc.example.com')).toEqual({ target: 'solana', key: undefined });
    expect(at('/', 'other.example.com')).toEqual({ target: 'root', key: undefined });
  });

  it('answers a one-chain config at / without lookups, and nothing else', () => {
    const one = new ChainPaths([{ paths: ['/'], hosts: [], target: 'only' }]);
    expect(one.resolve('/', 'any', false)).toBe(one.resolve('/send-request', undefined, false));
    expect(one.resolve(`/${KEY}`, undefined, true)).toEqual({ target: 'only', key: KEY });
    expect(one.resolve('/solana', undefined, true)).toBeUndefined();
    expect(one.paths).toEqual(['/']);
  });

  it('answers no path at all when no chain is at / and none claims it', () => {
    const two = new ChainPaths([
      { paths: ['/a'], hosts: [], target: 'a' },
      { paths: ['/b'], hosts: [], target: 'b' },
    ]);
    expect(two.resolve('/', undefined, true)).toBeUndefined();
    expect(two.resolve('/c', undefined, true)).toBeUndefined();
    expect(two.paths).toEqual(['/a', '/b']);
  });

  it('gives a connection its last keyed hit back only for the same path on the same host', () => {
    const one = new ChainPaths([{ paths: ['/'], hosts: [], target: 'only' }]);
    const connection = {};
    const first = one.resolve(`/${KEY}`, 'h', true, connection);
    expect(first).toEqual({ target: 'only', key: KEY });
    expect(one.resolve(`/${KEY}`, 'h', true, connection)).toBe(first);
    // Another connection, another key, another host: resolved afresh.
    expect(one.resolve(`/${KEY}`, 'h', true, {})).not.toBe(first);
    const other = `${KEY.slice(0, -1)}X`;
    expect(one.resolve(`/${other}`, 'h', true, connection)).toEqual({ target: 'only', key: other });
    expect(one.resolve(`/${other}`, 'h2', true, connection)?.key).toBe(other);
    // Keys turned off: the remembered key path is no proxy path any more.
    expect(one.resolve(`/${other}`, 'h2', false, connection)).toBeUndefined();
  });

  it('answers every sequence of requests on one connection as it answers each alone', () => {
    const segment = fc.constantFrom(KEY, `${KEY}Z`, 'ck_0123456789abcdefghiJ', 'short', '');
    const request = fc.record({
      path: fc
        .tuple(
          fc.constantFrom('', '/solana', '/sol', '/eth/mainnet', '/eth'),
          segment,
          fc.constantFrom('', '/', '/send-request', '/send-request/'),
        )
        .map(([chain, key, tail]) => `${chain}/${key}${tail}`),
      host: fc.constantFrom(undefined, 'eth.rpc.example.com', 'other.example.com'),
      keys: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(request, { maxLength: 12 }), (requests) => {
        const connection = {};
        for (const { path, host, keys } of requests) {
          expect(paths.resolve(path, host, keys, connection)).toEqual(
            paths.resolve(path, host, keys),
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});
