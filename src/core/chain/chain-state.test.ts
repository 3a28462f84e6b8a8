import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import {
  Bound,
  ChainState,
  Family,
  Level,
  headSlot,
  ownReadings,
  type RelayedReading,
} from './chain-state.js';

const LATEST = headSlot(Family.solana, Level.latest);
const FINAL = headSlot(Family.solana, Level.finalized);
const EVM = headSlot(Family.evm, Level.latest);

function setup() {
  const clock = new ManualClock();
  const chain = new ChainState({ maxAgeMs: 10_000, confirmWindow: 1000, maxLag: [50, 4] });
  return { clock, chain, a: chain.nodeHeads('a'), b: chain.nodeHeads('b') };
}

describe('ChainState', () => {
  it('judges no lag with one node, or before any sample', () => {
    const { clock, chain, a, b } = setup();
    expect(chain.active).toBe(false);
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(-1);
    chain.observe(a, LATEST, 500, Bound.exact, clock.now());
    expect(chain.active).toBe(true);
    expect(chain.chainHead(LATEST, clock.now())).toBe(-1);
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(-1);
    // b is unknown, not "0 behind".
    expect(chain.lagOf(b, LATEST, clock.now())).toBe(-1);
  });

  it('takes the highest head another node confirms', () => {
    const { clock, chain, a, b } = setup();
    chain.observe(a, LATEST, 800, Bound.exact, clock.now());
    chain.observe(b, LATEST, 1000, Bound.exact, clock.now());
    expect(chain.chainHead(LATEST, clock.now())).toBe(1000);
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(200);
    expect(chain.lagOf(b, LATEST, clock.now())).toBe(0);
  });

  it('a head far in the future cannot push honest nodes out', () => {
    const { clock, chain, a, b } = setup();
    const liar = chain.nodeHeads('liar');
    chain.observe(a, LATEST, 1000, Bound.exact, clock.now());
    chain.observe(b, LATEST, 998, Bound.exact, clock.now());
    chain.observe(liar, LATEST, 9_000_000, Bound.exact, clock.now());
    expect(chain.chainHead(LATEST, clock.now())).toBe(1000);
    expect(chain.lagOf(b, LATEST, clock.now())).toBe(2);
    // Two nodes far apart with nobody to side with either: no head at all.
    const two = setup();
    two.chain.observe(two.a, LATEST, 1000, Bound.exact, 0);
    two.chain.observe(two.b, LATEST, 9_000_000, Bound.exact, 0);
    expect(two.chain.chainHead(LATEST, 0)).toBe(-1);
  });

  it('a node marked on the wrong chain never counts', () => {
    const { clock, chain, a, b } = setup();
    const other = chain.nodeHeads('other');
    other.wrongChain = true;
    chain.observe(a, LATEST, 1000, Bound.exact, clock.now());
    chain.observe(other, LATEST, 1001, Bound.exact, clock.now());
    expect(chain.chainHead(LATEST, clock.now())).toBe(-1);
    chain.observe(b, LATEST, 990, Bound.exact, clock.now());
    expect(chain.chainHead(LATEST, clock.now())).toBe(1000);
  });

  it('forgets samples older than maxAgeMs', () => {
    const { clock, chain, a, b } = setup();
    chain.observe(a, LATEST, 800, Bound.exact, clock.now());
    clock.advance(5000);
    chain.observe(b, LATEST, 1000, Bound.exact, clock.now());
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(200);
    clock.advance(5001);
    expect(chain.headOf(a, LATEST, clock.now())).toBe(-1);
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(-1);
    expect(chain.chainHead(LATEST, clock.now())).toBe(-1);
  });

  it('keeps families and levels apart', () => {
    const { clock, chain, a, b } = setup();
    chain.observe(a, LATEST, 320_000_000, Bound.exact, clock.now());
    chain.observe(b, EVM, 21_000_000, Bound.exact, clock.now());
    chain.observe(b, FINAL, 319_999_960, Bound.exact, clock.now());
    expect(chain.lagOf(a, LATEST, clock.now())).toBe(-1);
    expect(chain.headOf(b, LATEST, clock.now())).toBe(-1);
    expect(chain.headOf(b, FINAL, clock.now())).toBe(319_999_960);
  });

  it('gives a recent head only from a node that showed its head, not from the last log it returned', () => {
    const { clock, chain, a } = setup();
    // The last log of a range is where the logs end, not where the chain is.
    chain.observe(a, EVM, 29_901, Bound.atLeast, clock.now());
    expect(chain.recentHead(EVM, clock.now(), 1000)).toBe(-1);
    // Nor is a null for block 30,000: the head is below it, not at 29,999.
    chain.observe(a, EVM, 30_000, Bound.below, clock.now());
    expect(chain.recentHead(EVM, clock.now(), 1000)).toBe(-1);
    chain.observe(a, EVM, 30_000, Bound.exact, clock.now());
    expect(chain.recentHead(EVM, clock.now(), 1000)).toBe(30_000);
    clock.advance(1001);
    expect(chain.recentHead(EVM, clock.now(), 1000)).toBe(-1);
  });

  it('lower bounds only raise, upper bounds only lower', () => {
    const { clock, chain, a } = setup();
    chain.observe(a, EVM, 100, Bound.exact, clock.now());
    chain.observe(a, EVM, 90, Bound.atLeast, clock.now());
    expect(chain.headOf(a, EVM, clock.now())).toBe(100);
    chain.observe(a, EVM, 120, Bound.atLeast, clock.now());
    expect(chain.headOf(a, EVM, clock.now())).toBe(120);
    chain.observe(a, EVM, 130, Bound.below, clock.now());
    expect(chain.headOf(a, EVM, clock.now())).toBe(120);
    chain.observe(a, EVM, 110, Bound.below, clock.now());
    expect(chain.headOf(a, EVM, clock.now())).toBe(109);
    // An exact reading may go down (a provider's balancer switched to a lagging replica).
    chain.observe(a, EVM, 50, Bound.exact, clock.now());
    expect(chain.headOf(a, EVM, clock.now())).toBe(50);
  });

  it('ignores readings that are not heads', () => {
    const { chain, a } = setup();
    chain.observe(a, EVM, -5, Bound.exact, 0);
    chain.observe(a, EVM, 2 ** 60, Bound.exact, 0);
    chain.observe(a, EVM, 1.5, Bound.exact, 0);
    expect(chain.active).toBe(false);
  });
});

describe('ChainState with readings relayed from other workers', () => {
  it('takes a newer reading, never over a newer one of its own, and never an expired one', () => {
    const { clock, chain, a, b } = setup();
    clock.advance(20_000);
    const now = clock.now();
    chain.observe(a, LATEST, 900, Bound.exact, now - 100);
    // Older than its own: kept its own.
    chain.observeRelayed(a, LATEST, ['a', LATEST, 880, Bound.exact, 0], now - 200, now);
    expect(chain.headOf(a, LATEST, now)).toBe(900);
    // Newer: taken, and b's relayed head makes the chain head known.
    chain.observeRelayed(a, LATEST, ['a', LATEST, 905, Bound.exact, 0], now - 50, now);
    chain.observeRelayed(b, LATEST, ['b', LATEST, 700, Bound.exact, 0], now - 50, now);
    expect(chain.chainHead(LATEST, now)).toBe(905);
    expect(chain.lagOf(b, LATEST, now)).toBe(205);
    // Past the age limit: ignored.
    const c = chain.nodeHeads('c');
    chain.observeRelayed(c, LATEST, ['c', LATEST, 906, Bound.exact, 0], now - 11_000, now);
    expect(chain.headOf(c, LATEST, now)).toBe(-1);
    // A lower bound below the head known adds nothing.
    chain.observeRelayed(a, LATEST, ['a', LATEST, 800, Bound.atLeast, 0], now - 10, now);
    expect(chain.headOf(a, LATEST, now)).toBe(905);
  });

  it('reports only its own readings, so none echoes back', () => {
    const { clock, chain, a, b } = setup();
    const now = clock.now();
    chain.observe(a, LATEST, 900, Bound.exact, now);
    chain.observeRelayed(b, LATEST, ['b', LATEST, 899, Bound.exact, 0], now, now);
    const out: RelayedReading[] = [];
    ownReadings(a, 0, now + 5, out);
    ownReadings(b, 0, now + 5, out);
    expect(out).toEqual([['a', LATEST, 900, Bound.exact, 5]]);
    // Seen again here: its own from now on.
    chain.observe(b, LATEST, 901, Bound.exact, now + 5);
    ownReadings(b, now + 1, now + 5, out);
    expect(out).toEqual([
      ['a', LATEST, 900, Bound.exact, 5],
      ['b', LATEST, 901, Bound.exact, 0],
    ]);
    // Only readings since the last report.
    const later: RelayedReading[] = [];
    ownReadings(a, now + 1, now + 5, later);
    expect(later).toEqual([]);
  });
});
