/**
 * Heads from traffic (issue 26): what one answer says about its node's head, read with the
 * byte scans of protocol/head-scan.ts and recorded in the ChainState. Called for an answer only
 * when its method shows a head (method-heads.ts), so a plain fleet pays one array load.
 */
import {
  BlockTag,
  absoluteSlotOf,
  blockNumberOfResult,
  blockParamOf,
  contextSlotOf,
  errorContextSlotOf,
  isNullResult,
  lastBlockNumberOf,
  resultNumberOf,
  slotsBehindOf,
  solanaAskOf,
  type SolanaAsk,
} from '../protocol/head-scan.js';
import { Bound, Family, Level, headSlot, type ChainState, type NodeHeads } from './chain-state.js';
import { Reads, Tolerance, type MethodHeads } from './method-heads.js';

/** What the last readAnswer saw (module state, so the hot path allocates nothing). */
export const reading = { slot: 0, value: -1, bound: Bound.exact as Bound };

const HEADER_NOT_FOUND = Buffer.from('header not found', 'latin1');

/**
 * The last request body scanned for what it asks (its commitment and minContextSlot), and
 * what that was: admission's lag check and settling ask about the same request, so every ask
 * after the first is one identity compare, not another walk of the bytes. Bodies are never
 * written to once parsed, so the same Buffer asks the same.
 */
let lastBody: Buffer | undefined;
const lastAsk: SolanaAsk = { commitment: Level.finalized, minContextSlot: -1 };

function askOf(body: Buffer): SolanaAsk {
  if (body !== lastBody) {
    solanaAskOf(body, lastAsk);
    lastBody = body;
  }
  return lastAsk;
}

/** The head slot a request is judged in: its family and commitment level. */
export function slotOfRequest(heads: MethodHeads, body: Buffer | undefined): number {
  if (heads.family === Family.evm) return headSlot(Family.evm, Level.latest);
  if (body === undefined) return headSlot(Family.solana, Level.finalized);
  return headSlot(Family.solana, askOf(body).commitment);
}

/** A Solana request's `minContextSlot` (-1: none), from the same single scan. */
export function minContextSlotOfRequest(body: Buffer): number {
  return askOf(body).minContextSlot;
}

/** The most a node may be behind to serve a method (slots/blocks); Infinity: not judged. */
export function toleranceOf(chain: ChainState, heads: MethodHeads): number {
  if (heads.tolerance === Tolerance.none) return Infinity;
  return heads.tolerance === Tolerance.head ? 0 : chain.options.maxLag[heads.family];
}

function evmLevel(tag: number): Level {
  if (tag === BlockTag.safe) return Level.safe;
  return tag === BlockTag.finalized ? Level.finalized : Level.latest;
}

/** Reads a successful answer's head into `reading`; false when it shows none. */
function readSuccess(heads: MethodHeads, request: Buffer, body: Buffer): boolean {
  let value = -1;
  reading.bound = Bound.exact;
  reading.slot = slotOfRequest(heads, request);
  switch (heads.reads) {
    case Reads.contextSlot:
      value = contextSlotOf(body);
      break;
    case Reads.slotResult:
      value = resultNumberOf(body);
      break;
    case Reads.epochInfo:
      value = absoluteSlotOf(body);
      break;
    case Reads.blockNumberResult:
      value = resultNumberOf(body);
      break;
    case Reads.blockNumberField:
      value = lastBlockNumberOf(body);
      reading.bound = Bound.atLeast;
      break;
    case Reads.blockByNumber: {
      const tag = blockParamOf(request, 0);
      if (tag >= 0) {
        // A block by number: it exists (a lower bound), or null says the node lacks it.
        value = tag;
        reading.bound = isNullResult(body) ? Bound.below : Bound.atLeast;
      } else if (tag === BlockTag.latest || tag === BlockTag.safe || tag === BlockTag.finalized) {
        value = blockNumberOfResult(body);
        reading.slot = headSlot(Family.evm, evmLevel(tag));
      }
      break;
    }
  }
  reading.value = value;
  return value >= 0;
}

/** Reads a node-state error's head into `reading` (-32016, -32005, header not found). */
function readError(
  chain: ChainState,
  heads: MethodHeads,
  request: Buffer,
  body: Buffer,
  now: number,
): boolean {
  reading.slot = slotOfRequest(heads, request);
  reading.bound = Bound.exact;
  reading.value = -1;
  if (heads.family === Family.solana) {
    const context = errorContextSlotOf(body);
    if (context >= 0) {
      reading.value = context;
      return true;
    }
    const behind = slotsBehindOf(body);
    const head = chain.chainHead(reading.slot, now);
    if (behind >= 0 && head >= behind) reading.value = head - behind;
    return reading.value >= 0;
  }
  if (heads.blockParam < 0 || body.indexOf(HEADER_NOT_FOUND) === -1) return false;
  const block = blockParamOf(request, heads.blockParam);
  if (block < 0) return false;
  reading.value = block;
  reading.bound = Bound.below;
  return true;
}

/**
 * Records what `body` (a successful answer to `request`, or a node-state error when `failed`)
 * says about `node`'s head: true when it showed one (then `reading` holds it).
 */
export function readAnswer(
  chain: ChainState,
  node: NodeHeads,
  heads: MethodHeads,
  request: Buffer,
  body: Buffer,
  failed: boolean,
  now: number,
): boolean {
  const found = failed
    ? readError(chain, heads, request, body, now)
    : readSuccess(heads, request, body);
  if (found) chain.observe(node, reading.slot, reading.value, reading.bound, now);
  return found;
}
