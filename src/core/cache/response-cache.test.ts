import { describe, expect, it } from 'vitest';
import { Bound, ChainState, Family, Level, headSlot } from '../chain/chain-state.js';
import type { CacheConfig, CacheMethodOverride } from '../config/types.js';
import { ResponseCache } from './response-cache.js';

function config(overrides: Partial<CacheConfig> = {}): CacheConfig {
  return {
    enabled: true,
    coalesce: true,
    maxBytes: 1 << 20,
    maxEntryBytes: 4096,
    ttlMs: 400,
    evmFinalityDepth: undefined,
    responseHeader: false,
    methods: new Map<string, CacheMethodOverride>(),
    ...overrides,
  };
}

function request(method: string, params?: unknown): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));
}

/** Sends `method(params)` through the cache; a miss is answered with `result` (or `error`). */
function ask(
  cache: ResponseCache,
  method: string,
  params: unknown,
  answer: { result?: unknown; error?: unknown; raw?: string },
  now = 0,
): 'hit' | 'miss' | 'bypass' {
  const policy = cache.policyOf(method);
  if (policy === undefined) return 'bypass';
  const body = request(method, params);
  const found = cache.lookup(policy, body, { start: 0, end: body.length }, now);
  if (found === undefined) return 'bypass';
  if (found.kind === 'hit') return 'hit';
  if (found.kind === 'wait') throw new Error('nothing should be in flight');
  const text =
    answer.raw ??
    JSON.stringify(
      'error' in answer
        ? { jsonrpc: '2.0', id: 7, error: answer.error }
        : { jsonrpc: '2.0', id: 7, result: answer.result },
    );
  cache.land(found.flight, 200, 'application/json', Buffer.from(text), now);
  return 'miss';
}

/** Asks twice; true when the second is answered from the cache. */
function cachedAfterOne(
  cache: ResponseCache,
  method: string,
  params: unknown,
  answer: { result?: unknown; error?: unknown; raw?: string },
): boolean {
  expect(ask(cache, method, params, answer)).not.toBe('hit');
  return ask(cache, method, params, answer) === 'hit';
}

const FINALIZED_BLOCK = { number: '0x64', hash: '0xabc' };

const FINALIZED = headSlot(Family.evm, Level.finalized);
const LATEST = headSlot(Family.evm, Level.latest);

/** Routing read `value` in `slot` from node `name`'s answer (the one tracker the cache reads). */
function heard(cache: ResponseCache, name: string, slot: number, value: number, now = 0): void {
  cache.chain.observe(cache.chain.nodeHeads(name), slot, value, Bound.exact, now);
}

/** A cache whose chain tracker has seen the EVM finalized block 100. */
function evmCache(overrides: Partial<CacheConfig> = {}): ResponseCache {
  const cache = new ResponseCache(config(overrides));
  // The cache itself learns nothing from the answers it lands: routing records heads.
  ask(cache, 'eth_getBlockByNumber', ['finalized', false], { result: FINALIZED_BLOCK });
  expect(cache.evmFinalizedBlock(0)).toBeUndefined();
  heard(cache, 'a', FINALIZED, 100);
  expect(cache.evmFinalizedBlock(0)).toBe(100);
  return cache;
}

describe('ResponseCache policy', () => {
  it('without a [cache] table coalesces reads and stores nothing', () => {
    const cache = new ResponseCache(undefined);
    expect(cache.policyOf('getSlot')).toMatchObject({ cache: 'never', coalesce: true });
    expect(cachedAfterOne(cache, 'getGenesisHash', [], { result: 'g' })).toBe(false);
    expect(cache.policyOf('sendTransaction')).toBeUndefined();
  });

  it.each([
    ['getGenesisHash', undefined, 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG'],
    ['eth_chainId', [], '0x1'],
    ['net_version', [], '1'],
  ])('keeps the chain constant %s forever', (method, params, result) => {
    const cache = new ResponseCache(config());
    expect(cachedAfterOne(cache, method, params, { result })).toBe(true);
    expect(ask(cache, method, params, { result }, 10 ** 12)).toBe('hit');
  });

  it.each([
    ['getTransaction with no commitment (finalized by default)', ['sig'], true],
    ['getTransaction at finalized', ['sig', { commitment: 'finalized' }], true],
    ['getTransaction at confirmed', ['sig', { commitment: 'confirmed' }], false],
    ['getTransaction with the legacy encoding argument', ['sig', 'json'], true],
  ])('Solana %s: cached %s', (_name, params, cached) => {
    const cache = new ResponseCache(config());
    expect(cachedAfterOne(cache, 'getTransaction', params, { result: { slot: 5 } })).toBe(cached);
  });

  it('never caches a null getTransaction or getBlock (it may appear later)', () => {
    const cache = new ResponseCache(config());
    expect(cachedAfterOne(cache, 'getTransaction', ['sig'], { result: null })).toBe(false);
    expect(cachedAfterOne(cache, 'getBlock', [5], { result: null })).toBe(false);
    expect(cachedAfterOne(cache, 'getBlock', [5], { result: { blockhash: 'x' } })).toBe(true);
  });

  it('caches an EVM receipt at or below the finalized head, not above it', () => {
    const cache = evmCache();
    const receipt = (n: number) => ({
      result: { blockNumber: `0x${n.toString(16)}`, status: '0x1' },
    });
    expect(cachedAfterOne(cache, 'eth_getTransactionReceipt', ['0xa'], receipt(100))).toBe(true);
    expect(cachedAfterOne(cache, 'eth_getTransactionReceipt', ['0xb'], receipt(101))).toBe(false);
    expect(cachedAfterOne(cache, 'eth_getTransactionByHash', ['0xc'], receipt(99))).toBe(true);
    expect(cachedAfterOne(cache, 'eth_getTransactionReceipt', ['0xd'], { result: null })).toBe(
      false,
    );
  });

  it('caches nothing head-dependent while the finalized head is unknown', () => {
    const cache = new ResponseCache(config());
    expect(cache.evmFinalizedBlock(0)).toBeUndefined();
    const receipt = { result: { blockNumber: '0x1', status: '0x1' } };
    expect(cachedAfterOne(cache, 'eth_getTransactionReceipt', ['0xa'], receipt)).toBe(false);
    expect(cachedAfterOne(cache, 'eth_getBlockByNumber', ['0x1', false], { result: {} })).toBe(
      false,
    );
  });

  it('caches eth_getBlockByNumber for a number at or below the finalized head, never a tag', () => {
    const cache = evmCache();
    const block = { result: { number: '0x10' } };
    expect(cachedAfterOne(cache, 'eth_getBlockByNumber', ['0x10', false], block)).toBe(true);
    expect(cachedAfterOne(cache, 'eth_getBlockByNumber', ['0x65', false], block)).toBe(false);
    for (const tag of ['latest', 'pending', 'safe', 'finalized']) {
      expect(cachedAfterOne(cache, 'eth_getBlockByNumber', [tag, false], block)).toBe(false);
    }
    expect(cachedAfterOne(cache, 'eth_getBlockByHash', ['0xh', false], block)).toBe(true);
  });

  it('takes the latest head minus evm_finality_depth when set, and never moves it back', () => {
    const cache = new ResponseCache(config({ evmFinalityDepth: 10 }));
    heard(cache, 'a', LATEST, 100);
    expect(cache.evmFinalizedBlock(0)).toBe(90);
    heard(cache, 'a', LATEST, 80, 1000);
    expect(cache.evmFinalizedBlock(1000)).toBe(90);
  });

  it('reads the one ChainState routing feeds: a far-future node cannot make blocks final', () => {
    const chain = new ChainState();
    const cache = new ResponseCache(config(), undefined, [], chain);
    expect(cache.chain).toBe(chain);
    chain.observe(chain.nodeHeads('a'), FINALIZED, 100, Bound.exact, 0);
    chain.observe(chain.nodeHeads('b'), FINALIZED, 99, Bound.exact, 0);
    chain.observe(chain.nodeHeads('liar'), FINALIZED, 1_000_000, Bound.exact, 0);
    expect(cache.evmFinalizedBlock(0)).toBe(100);
    const block = { result: { number: '0x1000' } };
    expect(cachedAfterOne(cache, 'eth_getBlockByNumber', ['0x1000', false], block)).toBe(false);
  });

  it('keeps head-tracking reads for the TTL only', () => {
    const cache = new ResponseCache(config({ ttlMs: 400 }));
    expect(ask(cache, 'getSlot', undefined, { result: 1 }, 1000)).toBe('miss');
    expect(ask(cache, 'getSlot', undefined, { result: 1 }, 1399)).toBe('hit');
    expect(ask(cache, 'getSlot', undefined, { result: 2 }, 1400)).toBe('miss');
    // Different params are a different question.
    expect(ask(cache, 'getSlot', [{ commitment: 'processed' }], { result: 3 }, 1400)).toBe('miss');
  });

  it('never caches errors, oversize answers, or answers it cannot splice an id into', () => {
    const cache = new ResponseCache(config({ maxEntryBytes: 100 }));
    expect(
      cachedAfterOne(cache, 'getGenesisHash', [], { error: { code: -32005, message: 'x' } }),
    ).toBe(false);
    expect(cachedAfterOne(cache, 'eth_chainId', [], { result: 'x'.repeat(200) })).toBe(false);
    expect(
      cachedAfterOne(cache, 'net_version', [], { raw: '{"jsonrpc":"2.0","result":"1"}' }),
    ).toBe(false);
  });

  it('never caches or coalesces writes and unknown methods', () => {
    const cache = new ResponseCache(config());
    for (const method of [
      'sendTransaction',
      'eth_sendRawTransaction',
      'eth_sendTransaction',
      'x_custom',
    ]) {
      expect(cache.policyOf(method)).toBeUndefined();
    }
    // A read with no cache rule is coalesced but not stored.
    expect(cache.policyOf('getBalance')?.coalesce).toBe(true);
    expect(cachedAfterOne(cache, 'getBalance', ['addr'], { result: { value: 1 } })).toBe(false);
  });

  it('never caches or coalesces the methods [routing] write_methods names', () => {
    const cache = new ResponseCache(config(), undefined, ['getBalance', 'x_write']);
    expect(cache.policyOf('getBalance')).toBeUndefined();
    expect(cache.policyOf('getSlot')).toBeDefined();
    cache.reconfigure(config(), ['getSlot']);
    expect(cache.policyOf('getSlot')).toBeUndefined();
    expect(cache.policyOf('getBalance')).toBeDefined();
  });

  it('applies overrides, and a reload drops answers whose rule changed', () => {
    const methods = new Map<string, CacheMethodOverride>([
      ['getBalance', { cache: 'ttl', ttlMs: 50 }],
      ['getSlot', { coalesce: false, cache: 'never' }],
    ]);
    const cache = new ResponseCache(config({ methods }));
    expect(cache.policyOf('getSlot')).toBeUndefined();
    expect(ask(cache, 'getBalance', ['a'], { result: 1 }, 0)).toBe('miss');
    expect(ask(cache, 'getBalance', ['a'], { result: 1 }, 49)).toBe('hit');
    expect(cachedAfterOne(cache, 'getGenesisHash', [], { result: 'g' })).toBe(true);
    cache.reconfigure(config());
    expect(ask(cache, 'getBalance', ['a'], { result: 1 }, 10)).toBe('miss');
    expect(ask(cache, 'getGenesisHash', [], { result: 'g' })).toBe('hit');
    cache.reconfigure(config({ enabled: false }));
    expect(ask(cache, 'getGenesisHash', [], { result: 'g' })).toBe('miss');
    expect(cache.size.entries).toBe(0);
  });

  it('hands the leader’s answer to every waiter, or nothing when there is none', () => {
    const cache = new ResponseCache(config({ enabled: false }));
    const policy = cache.policyOf('getBalance')!;
    const body = request('getBalance', ['a']);
    const span = { start: 0, end: body.length };
    const lead = cache.lookup(policy, body, span, 0)!;
    const wait = cache.lookup(policy, body, span, 0)!;
    expect([lead.kind, wait.kind]).toEqual(['lead', 'wait']);
    const got: unknown[] = [];
    if (wait.kind === 'wait')
      wait.flight.waiters.push({ landed: (a) => got.push(a?.body.toString()) });
    if (lead.kind === 'lead') cache.land(lead.flight, 502, undefined, Buffer.from('{}'), 0);
    expect(got).toEqual([undefined]);
    // An error answer is not shared either: it may be the node's, not the request's.
    const again = cache.lookup(policy, body, span, 0)!;
    const waiting = cache.lookup(policy, body, span, 0)!;
    if (waiting.kind === 'wait') waiting.flight.waiters.push({ landed: (a) => got.push(a) });
    const error = '{"jsonrpc":"2.0","id":7,"error":{"code":-32005,"message":"Node is behind"}}';
    if (again.kind === 'lead') cache.land(again.flight, 200, undefined, Buffer.from(error), 0);
    expect(got).toEqual([undefined, undefined]);
    // The flight is over: the next identical request leads again.
    expect(cache.lookup(policy, body, span, 0)!.kind).toBe('lead');
  });
});
