import { describe, expect, it } from 'vitest';
import { proxyPathOf, redactedRequestUrl } from './presented-key.js';

/** The rule the walk implements, as the regex it replaced. */
const KEY_SEGMENT = /^\/([A-Za-z0-9_~.-]{16,256})(\/send-request)?\/?$/;

function byRegex(path: string, keysOn: boolean) {
  if (path === '/' || path === '/send-request') return { path, key: undefined };
  if (!keysOn) return undefined;
  const match = KEY_SEGMENT.exec(path);
  return match === null ? undefined : { path: match[2] ?? '/', key: match[1] };
}

const KEY = 'ck_0123456789abcdefABCDEF-_.~';

describe('proxyPathOf', () => {
  it('reads the plain paths and the key paths', () => {
    expect(proxyPathOf('/', false)).toEqual({ path: '/', key: undefined });
    expect(proxyPathOf('/send-request', true)).toEqual({ path: '/send-request', key: undefined });
    expect(proxyPathOf(`/${KEY}`, true)).toEqual({ path: '/', key: KEY });
    expect(proxyPathOf(`/${KEY}/`, true)).toEqual({ path: '/', key: KEY });
    expect(proxyPathOf(`/${KEY}/send-request`, true)).toEqual({
      path: '/send-request',
      key: KEY,
    });
    expect(proxyPathOf(`/${KEY}/send-request/`, true)).toEqual({
      path: '/send-request',
      key: KEY,
    });
  });

  it('refuses what is not a proxy path', () => {
    for (const path of [
      `/${KEY}`.replace('ck_', 'ck%'),
      `/${KEY}//`,
      `/${KEY}/send-request//`,
      `/${KEY}/other`,
      `/${KEY}/send-requests`,
      '/short-key-12345',
      `/${'a'.repeat(257)}`,
      '/health',
      '',
      'no-slash-0123456789abcdef',
    ]) {
      expect(proxyPathOf(path, true), path).toBeUndefined();
    }
    expect(proxyPathOf(`/${KEY}`, false)).toBeUndefined();
  });

  it('agrees with the regex on every length and suffix around the bounds', () => {
    const suffixes = ['', '/', '/send-request', '/send-request/', '//', '/x', '?', '/send'];
    const alphabet = 'aZ09_~.-/%é';
    let checked = 0;
    for (const length of [0, 1, 15, 16, 17, 128, 255, 256, 257, 300]) {
      for (const suffix of suffixes) {
        for (const odd of [...alphabet, '']) {
          const key = 'k'.repeat(length);
          const spots = length === 0 ? [0] : [0, Math.floor(length / 2), length - 1];
          for (const at of spots) {
            const segment = odd === '' ? key : key.slice(0, at) + odd + key.slice(at + 1);
            const path = `/${segment}${suffix}`;
            expect(proxyPathOf(path, true), path).toEqual(byRegex(path, true));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('redacts a key segment from a URL', () => {
    expect(redactedRequestUrl(`/${KEY}/send-request?x=1`)).toBe('/***/send-request?x=1');
    expect(redactedRequestUrl(`/?api-key=${KEY}`)).toBe('/?api-key=***');
  });
});
