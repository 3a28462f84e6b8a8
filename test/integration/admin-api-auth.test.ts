/** The admin API's bearer token, and the status page with and without it. */
import { describe, expect, it } from 'vitest';
import { nodesOf, startCounting, useAdminCascade } from '../support/admin-harness.js';
import { nodeConfig } from '../support/node-config.js';

const start = useAdminCascade();

describe('the admin token', () => {
  it('answers 401 without "Authorization: Bearer <token>", and serves the page without data', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })], { adminToken: 's3cret' });
    const bare = await fetch(`${s.admin}/admin/nodes`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(`${s.admin}/admin/nodes/a/cordon`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${s.admin}/admin/quota`)).status).toBe(401);
    const doc = await nodesOf(s.admin, { authorization: 'Bearer s3cret' });
    expect(doc.nodes.map((n) => n.name)).toEqual(['a']);
    const page = await fetch(`${s.admin}/status`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain('data-node="a"');
    expect(s.logs.join('')).not.toContain('s3cret');
  });

  it('renders the table into the page on loopback without a token', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a<b>', url: b.url })]);
    const page = await fetch(`${s.admin}/status`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('<tr data-node="a&lt;b&gt;"><td>a&lt;b&gt;</td>');
  });
});
