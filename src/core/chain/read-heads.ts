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
} from '../protocol/head-scan.js';
import { askCommitment, askMinContextSlot, packAsk, solanaAskOf } from '../protocol/request-ask.js';
import { Bound, Family, Level, headSlot, type ChainState, type NodeHeads } from './chain-state.js';
import { Reads, Tolerance, type MethodHeads } from './method-heads.js';

/** What the last readAnswer saw (module state, so the hot path allocates nothing). */
export const reading = { slot: 0, value: -1, bound: Bound.exact as Bound };

const HEADER_NOT_FOUND = Buffer.from('header not found', 'latin1');
const NO_BYTES = Buffer.alloc(0);

/**
 * A request as the chain reads it: its bytes, and what they ask of heads (request-ask.ts,
 * packed) once read — kept on it, so admission's lag check, the reading of its answer and the
 * stale check read the bytes once per request. A request's own routing state is one (it keeps
 * the ask its parse read); a bare `{ requestBody }` works too.
 */
export interface AskingRequest {
  readonly requestBody?: Buffer | undefined;
  headAsk?: number | undefined;
}

/** A request with no bytes at hand: finalized, no minContextSlot (the RPC's defaults). */
const DEFAULT_ASK = packAsk(Level.finalized, -1);

function askOf(request: AskingRequest | undefined): number {
  if (request === undefined) return DEFAULT_ASK;
  let ask = request.headAsk;
  if (ask === undefined) {
    const body = request.requestBody;
    if (body === undefined) return DEFAULT_ASK;
    ask = solanaAskOf(body);
    request.headAsk = ask;
  }
  return ask;
}

/** The head slot a request is judged in: its family and commitment level. */
export function slotOfRequest(heads: MethodHeads, request: AskingRequest | undefined): number {
  if (heads.family === Family.evm) return headSlot(Family.evm, Level.latest);
  return headSlot(Family.solana, askCommitment(askOf(request)));
}

/** A Solana request's `minContextSlot` (-1: none), read once per request. */
export function minContextSlotOfRequest(request: AskingRequest | undefined): number {
  return askMinContextSlot(askOf(request));
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
function readSuccess(heads: MethodHeads, request: AskingRequest, body: Buffer): boolean {
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
      const tag = blockParamOf(request.requestBody ?? NO_BYTES, 0);
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
  request: AskingRequest,
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
  const block = blockParamOf(request.requestBody ?? NO_BYTES, heads.blockParam);
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
  request: AskingRequest,
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
