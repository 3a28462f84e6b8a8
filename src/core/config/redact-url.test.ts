import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it.each<[string, string]>([
    ['https://rpc.example.com/', 'https://rpc.example.com/'],
    ['https://rpc.example.com', 'https://rpc.example.com/'],
    ['http://127.0.0.1:8891', 'http://127.0.0.1:8891/'],
    ['https://rpc.example.com:8443/solana/mainnet', 'https://rpc.example.com:8443/solana/mainnet'],
    ['https://rpc.example.com/?api-key=***', 'https://rpc.example.com/?api-key=***'],
    ['https://rpc.example.com/?api-key=literal', 'https://rpc.example.com/?api-key=***'],
    ['https://h/?a=1&b=two&c=', 'https://h/?a=***&b=***&c=***'],
    ['https://h/?flag', 'https://h/?flag=***'],
    ['https://h/v2/***', 'https://h/v2/***'],
    ['https://h/v2/***/rpc?x=1', 'https://h/v2/***/rpc?x=***'],
    ['https://user:password@h/', 'https://***@h/'],
    ['https://user@h/', 'https://***@h/'],
    ['https://***:***@h/', 'https://***@h/'],
    ['https://***/rpc', 'https://***/rpc'],
    ['https://h/path#fragment-token', 'https://h/path'],
  ])('shows %s as %s', (masked, shown) => {
    expect(redactUrl(masked)).toBe(shown);
  });

  it.each<[string, string]>([
    ['not a url', '***'],
    ['https://[broken/?k=literal', 'https://***'],
    ['http://***:***/', 'http://***'],
  ])('hides everything after the scheme of an unparseable %j', (masked, shown) => {
    expect(redactUrl(masked)).toBe(shown);
  });

  it('never shows a literal query value or password', () => {
    const shown = redactUrl('https://u:sk_pw_1@h/rpc?api-key=sk_live_SECRET123&other=sk_x');
    for (const secret of ['sk_pw_1', 'sk_live_SECRET123', 'sk_x']) {
      expect(shown).not.toContain(secret);
    }
  });
});
