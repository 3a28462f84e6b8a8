import { describe, expect, it } from 'vitest';
import { adminUrl } from '../admin/admin-client.js';
import { hostPort } from './listen.js';

describe('host:port in URLs', () => {
  it('brackets an IPv6 address once', () => {
    expect(hostPort('127.0.0.1', 8545)).toBe('127.0.0.1:8545');
    expect(hostPort('localhost', 1)).toBe('localhost:1');
    expect(hostPort('::1', 2)).toBe('[::1]:2');
    expect(hostPort('[::1]', 2)).toBe('[::1]:2');
  });

  it('reaches an admin listener on a wildcard address over loopback', () => {
    expect(adminUrl('0.0.0.0', 3099)).toBe('http://127.0.0.1:3099');
    expect(adminUrl('::', 3099)).toBe('http://127.0.0.1:3099');
    expect(adminUrl('::1', 3099)).toBe('http://[::1]:3099');
    expect(adminUrl('[::1]', 3099)).toBe('http://[::1]:3099');
  });
});
