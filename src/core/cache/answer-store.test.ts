import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { AnswerStore, ENTRY_OVERHEAD_BYTES } from './answer-store.js';

const ID = { start: 0, end: 1 };

function answer(bytes: number, fill = 0x61): Buffer {
  return Buffer.alloc(bytes, fill);
}

describe('AnswerStore', () => {
  it('evicts the least recently used entries past its byte bound', () => {
    const entry = 1000 + 1 + ENTRY_OVERHEAD_BYTES;
    const store = new AnswerStore(entry * 3);
    for (const key of ['a', 'b', 'c']) store.set(key, 'm', answer(1000), ID, 'json', Infinity);
    expect(store.get('a', 0)).toBeDefined(); // a is now the most recently used
    store.set('d', 'm', answer(1000), ID, 'json', Infinity);
    expect(store.get('b', 0)).toBeUndefined();
    expect(store.get('a', 0)).toBeDefined();
    expect(store.get('c', 0)).toBeDefined();
    expect(store.get('d', 0)).toBeDefined();
    expect(store.bytes).toBe(entry * 3);
    expect(store.entries).toBe(3);
  });

  it('serves an entry until its expiry, then forgets it', () => {
    const store = new AnswerStore(1 << 20);
    store.set('k', 'm', answer(10), ID, 'json', 1400);
    expect(store.get('k', 1399)).toBeDefined();
    expect(store.get('k', 1400)).toBeUndefined();
    expect(store.entries).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('never stores an answer bigger than the whole bound, and shrinks on resize', () => {
    const store = new AnswerStore(4096);
    store.set('big', 'm', answer(5000), ID, 'json', Infinity);
    expect(store.entries).toBe(0);
    store.set('x', 'm', answer(1000), ID, 'json', Infinity);
    store.set('y', 'm', answer(1000), ID, 'json', Infinity);
    store.resize(1500);
    expect(store.entries).toBe(1);
    expect(store.get('y', 0)).toBeDefined();
  });

  it('copies answers, so a slice never pins the buffer it came from', () => {
    const network = Buffer.alloc(64 * 1024, 0x62);
    const store = new AnswerStore(1 << 20);
    store.set('k', 'm', network.subarray(0, 100), ID, 'json', Infinity);
    const stored = store.get('k', 0)!.body;
    expect(stored.buffer.byteLength).toBe(100);
    expect(stored.equals(network.subarray(0, 100))).toBe(true);
  });

  it('holds memory within its bound plus the documented overhead when overfilled', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const bound = 16 * 1024 * 1024;
    gc();
    const before = process.memoryUsage();
    const store = new AnswerStore(bound);
    // Eight times the bound, in answers of 16 KiB (copied from one source: the test makes no
    // garbage of its own, so what RSS shows is the store's).
    const source = answer(16 * 1024);
    for (let i = 0; i < 8 * 1024; i++) {
      source[0] = i & 0xff;
      store.set(`key-${i}`, 'm', source, ID, 'json', Infinity);
    }
    // Evicted answers are freed by the collector (their backing stores a moment later).
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const after = process.memoryUsage();
    expect(store.bytes).toBeLessThanOrEqual(bound);
    // Answer bytes live outside the JS heap: exactly what the store counts, nothing more.
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThanOrEqual(bound);
    // The process as a whole: the bound, plus keys and entry objects, plus what the allocator
    // keeps of evicted answers freed between collections (README: 48 MiB) — far from the
    // 128 MiB the answers would take unbounded.
    expect(after.rss - before.rss).toBeLessThan(bound + 48 * 1024 * 1024);
    expect(store.entries).toBeGreaterThan(900);
  });
});
