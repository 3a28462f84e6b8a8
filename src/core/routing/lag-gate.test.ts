/** The stale-answer check: its allowance, and eth_getLogs judged by the node's known head. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Bound,
  ChainState,
  Family,
  Level,
  STALE_ALLOWANCE,
  headSlot,
} from '../chain/chain-state.js';
import { reading } from '../chain/read-heads.js';
import { ManualClock } from '../clock.js';
import { STANDARD_METHODS } from '../protocol/method-registry.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import { AdmissionRound, type Candidate } from './admission.js';
import { staleAnswer } from './lag-gate.js';
import { buildTable } from './routing-table.js';
import { TriedNodes } from './tried-nodes.js';

const clock = new ManualClock();
const nodes = fakeNodes(clock);
afterEach(() => nodes.close());

const SOLANA_FINALIZED = headSlot(Family.solana, Level.finalized);
const EVM_LATEST = headSlot(Family.evm, Level.latest);

function setup(slot: number, behindHead: number, head: number) {
  const chain = new ChainState();
  const behind = nodes.make('behind');
  const fresh = nodes.make('fresh');
  const now = clock.now();
  for (const n of [behind, fresh]) chain.track(n.node.heads);
  chain.observe(behind.node.heads, slot, behindHead, Bound.exact, now);
  chain.observe(fresh.node.heads, slot, head, Bound.exact, now);
  const round = new AdmissionRound(buildTable([behind.node, fresh.node], chain), now, false);
  return { chain, behind: behind.node, round, now };
}

function candidate(method: string, body?: string): Candidate {
  return {
    methodId: STANDARD_METHODS.indexOf(method),
    tried: new TriedNodes(),
    ...(body === undefined ? {} : { requestBody: Buffer.from(body) }),
  };
}

describe('staleAnswer', () => {
  it('relays a head answer within STALE_ALLOWANCE of the head: no paid retry for 1–2 slots', () => {
    expect(STALE_ALLOWANCE[Family.solana]).toBe(2);
    const head = 1000;
    const { chain, behind, round, now } = setup(SOLANA_FINALIZED, head - 2, head);
    const getSlot = candidate('getSlot');
    Object.assign(reading, { slot: SOLANA_FINALIZED, value: head - 2, bound: Bound.exact });
    expect(staleAnswer(chain, behind, getSlot, round, now)).toBe(false);
    Object.assign(reading, { slot: SOLANA_FINALIZED, value: head - 3, bound: Bound.exact });
    expect(staleAnswer(chain, behind, getSlot, round, now)).toBe(true);
  });

  it('retries eth_getLogs up to the head from a node known to be behind it', () => {
    const logs = (filter: string) =>
      candidate(
        'eth_getLogs',
        `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[${filter}]}`,
      );
    const far = setup(EVM_LATEST, 97, 100);
    // The answer showed no block (no logs): the node's known head is what is judged.
    reading.value = -1;
    expect(
      staleAnswer(far.chain, far.behind, logs('{"fromBlock":"0x0"}'), far.round, far.now),
    ).toBe(true);
    const toHead = logs('{"fromBlock":"0x0","toBlock":"0x64"}');
    expect(staleAnswer(far.chain, far.behind, toHead, far.round, far.now)).toBe(true);
    const early = logs('{"fromBlock":"0x0","toBlock":"0x60"}');
    expect(staleAnswer(far.chain, far.behind, early, far.round, far.now)).toBe(false);
    const byHash = logs('{"blockHash":"0xab"}');
    expect(staleAnswer(far.chain, far.behind, byHash, far.round, far.now)).toBe(false);
    const near = setup(EVM_LATEST, 99, 100);
    expect(
      staleAnswer(near.chain, near.behind, logs('{"toBlock":"latest"}'), near.round, near.now),
    ).toBe(false);
  });

  it('does not judge eth_getLogs by a head known only from the logs a node showed', () => {
    // A node whose head is only a lower bound (its last log's block) answered a chunk up to
    // 0x64: it may well be at 0x64 — no paid retry (issue 29: a split's chunks go up in order).
    const { chain, behind, round, now } = setup(EVM_LATEST, 0, 100);
    chain.observe(behind.heads, EVM_LATEST, 90, Bound.atLeast, now);
    reading.value = -1;
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0","toBlock":"0x64"}]}';
    const chunk = candidate('eth_getLogs', body);
    expect(staleAnswer(chain, behind, chunk, round, now)).toBe(false);
    chain.observe(behind.heads, EVM_LATEST, 95, Bound.exact, now);
    expect(staleAnswer(chain, behind, chunk, round, now)).toBe(true);
  });
});
