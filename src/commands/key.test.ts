import { describe, expect, it } from 'vitest';
import { keyHash } from '../core/index.js';
import type { CommandIo } from './io.js';
import { runKeyNew } from './key.js';

function capture(): { io: CommandIo; out: string[] } {
  const out: string[] = [];
  return { out, io: { out: (t) => out.push(t), err: (t) => out.push(t), env: {}, cwd: '/' } };
}

describe('cascade key new', () => {
  it('prints a fresh key once and the [[keys]] lines holding only its hash', () => {
    const { io, out } = capture();
    expect(runKeyNew('web-app', {}, io)).toBe(0);
    const text = out.join('');
    const key = /^ {2}(ck_[A-Za-z0-9_-]{43})$/m.exec(text)![1]!;
    expect(text).toContain(`[[keys]]\nname = "web-app"\nkey_sha256 = "${keyHash(key)}"\n`);
    expect(text.split(key).length - 1).toBe(2); // the key line, and the URL example
    const again = capture();
    runKeyNew('web-app', { json: true }, again.io);
    const json = JSON.parse(again.out.join('')) as { key: string; key_sha256: string };
    expect(json.key).not.toBe(key);
    expect(json.key_sha256).toBe(keyHash(json.key));
  });

  it('refuses a name that cannot be a key name', () => {
    expect(() => runKeyNew('a b', {}, capture().io)).toThrow("'a b' is not a key name");
  });
});
