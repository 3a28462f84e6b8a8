import { describe, expect, it } from 'vitest';
import { MethodRegistry, STANDARD_METHODS, UNKNOWN_METHOD_ID } from './method-registry.js';
import { EVM_METHODS, SOLANA_METHODS } from './standard-methods.js';

describe('standard method names', () => {
  it("has CascadeRPC's 116 Solana names, each once", () => {
    expect(SOLANA_METHODS).toHaveLength(116);
    expect(new Set(SOLANA_METHODS).size).toBe(116);
  });

  it('has no duplicates across the Solana and EVM sets', () => {
    expect(new Set(STANDARD_METHODS).size).toBe(SOLANA_METHODS.length + EVM_METHODS.length);
  });

  it('includes the names the docs single out', () => {
    for (const name of [
      'StakedConnections',
      'getBalance',
      'webhookEvent',
      'getProgramAccountsV2',
    ]) {
      expect(SOLANA_METHODS).toContain(name);
    }
    expect(SOLANA_METHODS).not.toContain('Unknown');
  });
});

describe('MethodRegistry', () => {
  it('gives standard names the first ids, Solana then EVM', () => {
    const registry = new MethodRegistry();
    expect(registry.standardCount).toBe(STANDARD_METHODS.length);
    expect(registry.size).toBe(STANDARD_METHODS.length);
    expect(registry.idOf('StakedConnections')).toBe(0);
    expect(registry.idOf(EVM_METHODS[0])).toBe(SOLANA_METHODS.length);
    STANDARD_METHODS.forEach((name, id) => expect(registry.nameOf(id)).toBe(name));
    expect(registry.standardNames()).toEqual(STANDARD_METHODS);
  });

  it('matches names exactly and case-sensitively', () => {
    const registry = new MethodRegistry();
    expect(registry.idOf('getBalance')).toBeGreaterThanOrEqual(0);
    for (const near of ['getbalance', 'GetBalance', 'getBalance ', ' getBalance', 'getBalance\0']) {
      expect(registry.idOf(near)).toBe(UNKNOWN_METHOD_ID);
      expect(registry.isStandard(near)).toBe(false);
    }
  });

  it("does not know 'Unknown' or the empty string", () => {
    const registry = new MethodRegistry();
    expect(registry.idOf('Unknown')).toBe(UNKNOWN_METHOD_ID);
    expect(registry.idOf('')).toBe(UNKNOWN_METHOD_ID);
  });

  it('treats EVM names as standard', () => {
    const registry = new MethodRegistry();
    for (const name of ['eth_call', 'eth_getLogs', 'net_version', 'web3_clientVersion']) {
      expect(registry.isStandard(name)).toBe(true);
    }
  });

  it('appends custom names after the standard ones and never renumbers', () => {
    const registry = new MethodRegistry();
    const first = registry.intern('acme_getFoo');
    const second = registry.intern('acme_getBar');
    expect(first).toBe(STANDARD_METHODS.length);
    expect(second).toBe(first + 1);
    expect(registry.intern('acme_getFoo')).toBe(first);
    expect(registry.intern('getBalance')).toBe(registry.idOf('getBalance'));
    expect(registry.size).toBe(STANDARD_METHODS.length + 2);
    expect(registry.isStandard('acme_getFoo')).toBe(false);
    expect(registry.nameOf(second)).toBe('acme_getBar');
    expect(registry.nameOf(registry.size)).toBeUndefined();
    expect(registry.standardNames()).toHaveLength(STANDARD_METHODS.length);
  });

  it('answers a name looked up again the same, also once it was interned in between', () => {
    const registry = new MethodRegistry();
    // A fresh string each time, as a request's method is.
    const name = (): string => ['acme', 'getFoo'].join('_');
    expect(registry.idOf(name())).toBe(UNKNOWN_METHOD_ID);
    expect(registry.idOf(name())).toBe(UNKNOWN_METHOD_ID);
    const id = registry.intern('acme_getFoo');
    expect(registry.idOf(name())).toBe(id);
    expect(registry.idOf('getBalance')).toBe(registry.intern('getBalance'));
    expect(registry.idOf(name())).toBe(id);
    expect(registry.idOf('')).toBe(UNKNOWN_METHOD_ID);
  });

  it('keeps registries independent', () => {
    const a = new MethodRegistry();
    const b = new MethodRegistry();
    a.intern('acme_only_in_a');
    expect(b.idOf('acme_only_in_a')).toBe(UNKNOWN_METHOD_ID);
  });

  it('accepts a custom standard set', () => {
    const registry = new MethodRegistry(['a', 'b']);
    expect(registry.standardCount).toBe(2);
    expect(registry.isStandard('b')).toBe(true);
    expect(registry.idOf('getBalance')).toBe(UNKNOWN_METHOD_ID);
  });
});
