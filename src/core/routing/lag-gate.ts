/**
 * Lag-aware routing (issue 26), as two questions the one engine asks: may this node take this
 * candidate now (admission), and is this answer too stale to relay (settling)? Both are judged
 * against the chain state the traffic built (chain/chain-state.ts). A node is passed over only
 * while a node known to be fresh enough can take the request in the *same tier* — lag never
 * spills a request to a more expensive tier — and an unknown head is never "behind": with no
 * heads read (a plain fleet), nothing here changes routing.
 */
import { Bound, Family, STALE_ALLOWANCE, type ChainState } from '../chain/chain-state.js';
import {
  LOGS_FILTER,
  Reads,
  Tolerance,
  methodHeads,
  type MethodHeads,
} from '../chain/method-heads.js';
import {
  minContextSlotOfRequest,
  reading,
  slotOfRequest,
  toleranceOf,
} from '../chain/read-heads.js';
import { priceOf } from '../config/price-list.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { BlockTag, blockParamOf, logsToBlockOf } from '../protocol/head-scan.js';
import { STANDARD_METHODS } from '../protocol/method-registry.js';
import type { AdmissionRound, Candidate } from './admission.js';
import {
  BAR_NONE,
  BAR_PENALIZED,
  DOOR_REQUEST,
  eligibility,
  nodeBar,
  passedOver,
} from './eligibility.js';

/**
 * What the request itself asks for: Solana `minContextSlot`, or the EVM block it names (a
 * number, not a tag); for eth_getLogs the filter's `toBlock`, and with `latest` (or none) the
 * chain's head — logs up to the head need a node at the head. -1: nothing. Solana's is read
 * once per request (chain/read-heads.ts); the EVM block is a byte scan run only for a node
 * known to be behind.
 */
function askedOf(
  chain: ChainState,
  heads: MethodHeads,
  candidate: Candidate,
  slot: number,
  now: number,
): number {
  const body = candidate.requestBody;
  if (body === undefined || body.length === 0) return -1;
  if (heads.family === Family.solana) return minContextSlotOfRequest(candidate);
  if (heads.blockParam === LOGS_FILTER) {
    const to = logsToBlockOf(body);
    if (to >= 0) return to;
    return to === BlockTag.latest ? chain.chainHead(slot, now) : -1;
  }
  return heads.blockParam < 0 ? -1 : blockParamOf(body, heads.blockParam);
}

/** The head a node must have reached to serve the request in `slot`, or -1 (not judged). */
function needOf(
  chain: ChainState,
  heads: MethodHeads,
  slot: number,
  candidate: Candidate,
  now: number,
): number {
  const head = chain.chainHead(slot, now);
  const need = head < 0 ? -1 : head - toleranceOf(chain, heads);
  return Math.max(need, askedOf(chain, heads, candidate, slot, now));
}

/**
 * Whether another node than `node`, `sameTier` as it or any, could take `candidate` in this
 * round and is known to be at `need` or past it.
 */
export function fresherNode(
  chain: ChainState,
  node: UpstreamNode,
  candidate: Candidate,
  round: AdmissionRound,
  slot: number,
  need: number,
  sameTier: boolean,
  now: number,
): UpstreamNode | undefined {
  for (const other of round.nodes) {
    if (other === node) continue;
    if (sameTier && other.config.tier !== node.config.tier) continue;
    if (candidate.tried.includes(other)) continue;
    // Could it take the request at all: the one eligibility rule, as admission asks it.
    const cost = priceOf(other.config.pricing, candidate.methodId);
    const bar = eligibility(other, DOOR_REQUEST, round.startedAt, round.failOpen, cost);
    if (bar !== BAR_NONE) continue;
    if (chain.headOf(other.heads, slot, now) >= need) return other;
  }
  return undefined;
}

/**
 * Admission's check: true when `node` is known to be behind what `candidate` tolerates and a
 * fresh enough node of its tier can take it instead (counted in rpc_lag_skips_total).
 */
export function lagSkips(
  node: UpstreamNode,
  candidate: Candidate,
  round: AdmissionRound,
  now: number,
): boolean {
  const chain = round.chain;
  if (chain === undefined || !chain.active) return false;
  const heads = methodHeads(candidate.methodId);
  if (heads === undefined || heads.tolerance === Tolerance.none) return false;
  const slot = slotOfRequest(heads, candidate);
  const own = chain.headOf(node.heads, slot, now);
  // Unknown is never behind; a node at the chain's head has nobody fresher to yield to.
  if (own < 0 || own >= chain.chainHead(slot, now)) return false;
  const need = needOf(chain, heads, slot, candidate, now);
  if (need < 0 || own >= need) return false;
  if (fresherNode(chain, node, candidate, round, slot, need, true, now) === undefined) return false;
  node.metrics.lagSkip?.(STANDARD_METHODS[candidate.methodId]!);
  return true;
}

/**
 * Settling's check, right after readAnswer recorded `reading` from `node`'s answer: true when
 * the answer is more than STALE_ALLOWANCE below what the method tolerates (or a `null` for a
 * block the chain has) and a node known to be at or past it can still take the request — in
 * any tier: a stale answer is worth nothing to the client. For eth_getLogs (whose answer may
 * show no block at all) it is the node's known head that is judged: a node found behind the
 * filter's `toBlock` (or the head, for `latest`) answered short.
 */
export function staleAnswer(
  chain: ChainState,
  node: UpstreamNode,
  candidate: Candidate,
  round: AdmissionRound,
  now: number,
): boolean {
  const heads = methodHeads(candidate.methodId)!;
  if (heads.blockParam === LOGS_FILTER) return staleLogs(chain, node, candidate, round, now);
  const slot = reading.slot;
  let need: number;
  if (reading.bound === Bound.below) {
    // A null / "header not found" for block N: stale only if the chain has N.
    const head = chain.chainHead(slot, now);
    if (head < reading.value) return false;
    need = reading.value;
  } else if (reading.bound === Bound.exact) {
    need = needOf(chain, heads, slot, candidate, now);
    // Honest nodes differ by a slot or two: within the allowance the answer is relayed, so a
    // head method at tolerance 0 does not pay for a retry that gains nothing.
    if (need < 0 || reading.value >= need - STALE_ALLOWANCE[heads.family]) return false;
  } else {
    return false;
  }
  return fresherNode(chain, node, candidate, round, slot, need, false, now) !== undefined;
}

/** staleAnswer for eth_getLogs: `node`'s known head is below the range asked. */
function staleLogs(
  chain: ChainState,
  node: UpstreamNode,
  candidate: Candidate,
  round: AdmissionRound,
  now: number,
): boolean {
  if (!chain.active) return false;
  const heads = methodHeads(candidate.methodId)!;
  const slot = slotOfRequest(heads, candidate);
  const own = chain.headOf(node.heads, slot, now);
  // Known only as a lower bound (the last log it showed): not known to be behind the range.
  if (own < 0 || node.heads.bound[slot] === Bound.atLeast) return false;
  const need = askedOf(chain, heads, candidate, slot, now);
  if (need < 0 || own >= need - STALE_ALLOWANCE[heads.family]) return false;
  return fresherNode(chain, node, candidate, round, slot, need, false, now) !== undefined;
}

/**
 * Sampling with traffic already paid for: when the tracker says a sample is due, a
 * head-showing read goes first to a node of the first tier in its walk whose head is unknown
 * or half-way to expiry (same tier: the same kind of price), so no node of a tier stays unknown
 * because the fastest takes everything. No probe is ever sent.
 */
export function sampleTarget(
  candidate: Candidate,
  round: AdmissionRound,
  now: number,
): UpstreamNode | undefined {
  const chain = round.chain!;
  const heads = methodHeads(candidate.methodId);
  if (heads === undefined || heads.reads === Reads.nothing || !chain.sampleDue()) return undefined;
  const slot = slotOfRequest(heads, candidate);
  const old = chain.options.maxAgeMs / 2;
  let tier = -1;
  for (const node of round.ranked) {
    const bar = nodeBar(node, DOOR_REQUEST, round.startedAt, false);
    if (passedOver(bar)) continue;
    if (tier === -1) tier = node.config.tier;
    else if (node.config.tier !== tier) break;
    if (candidate.tried.includes(node) || bar === BAR_PENALIZED) continue;
    const seen = node.heads.values[slot]! >= 0 ? node.heads.seenAt[slot]! : -Infinity;
    // The first node of the walk gets the read anyway: sampling it changes nothing.
    if (now - seen > old && node !== round.ranked[0]) return node;
  }
  return undefined;
}
