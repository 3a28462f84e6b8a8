/**
 * `head_probe_seconds` (issue 26), off by default: for a node that sees no traffic, one call
 * every so many seconds that shows its head — `getSlot` on a Solana fleet, `eth_blockNumber`
 * on an EVM one — booked and priced like any call. Which family: the one `expect_chain` names,
 * else the one the traffic's heads were read in (Solana when none yet). Its answer is read by
 * the same code as any answer's (chain/read-heads.ts).
 */
import { Family, headSlot, Level, type ChainState } from '../chain/chain-state.js';
import { methodHeads } from '../chain/method-heads.js';
import { readAnswer } from '../chain/read-heads.js';
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import type { AttemptResponse } from '../node/attempt-response.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { MethodRegistry } from '../protocol/method-registry.js';

const REGISTRY = new MethodRegistry();
const PROBE_TIMEOUT_MS = 5000;
const PROBES = {
  [Family.solana]: 'getSlot',
  [Family.evm]: 'eth_blockNumber',
} as const;

/** The family a probe asks in. */
function familyOf(chain: ChainState, expectChain: string | undefined, now: number): Family {
  if (expectChain !== undefined)
    return /^(0x[0-9a-fA-F]+|\d+)$/.test(expectChain) ? Family.evm : Family.solana;
  for (const heads of chain.all()) {
    if (chain.headOf(heads, headSlot(Family.evm, Level.latest), now) >= 0) return Family.evm;
  }
  return Family.solana;
}

/** When each node was last probed (clock ms), by name. */
export class HeadProber {
  readonly #last = new Map<string, number>();

  /** Sends the probes that are due at `now` (called once a second by the health ticker). */
  tick(
    nodes: readonly UpstreamNode[],
    chain: ChainState,
    expectChain: string | undefined,
    now: number,
  ): void {
    for (const node of nodes) {
      const seconds = node.config.headProbeSeconds;
      if (seconds === undefined || node.retired || node.cordoned || node.heads.wrongChain) continue;
      const last = this.#last.get(node.name);
      if (last !== undefined && now - last < seconds * 1000) continue;
      this.#last.set(node.name, now);
      probe(node, chain, PROBES[familyOf(chain, expectChain, now)], now);
    }
  }
}

function probe(node: UpstreamNode, chain: ChainState, method: string, sentAt: number): void {
  const methodId = REGISTRY.idOf(method);
  const cost = priceOf(node.config.pricing, methodId);
  if (cost === UNPRICED) return;
  // A reload may bill the node to another account before the answer: refund what was charged.
  const usage = node.usage;
  usage.add(cost);
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`);
  node.transport.send(
    body,
    PROBE_TIMEOUT_MS,
    undefined,
    false,
    (response: AttemptResponse) => {
      if (response.kind === 'transport_error' && !response.sent) usage.add(-cost);
      if (response.kind !== 'answer' || response.status < 200 || response.status >= 300) return;
      const request = { requestBody: body };
      readAnswer(chain, node.heads, methodHeads(methodId)!, request, response.body, false, sentAt);
    },
    undefined,
  );
}
