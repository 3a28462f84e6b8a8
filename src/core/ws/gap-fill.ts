/**
 * Closing the gap a move leaves: what a subscription's clients would have been sent while its
 * upstream socket was gone (a failover), or between the old node's last notification and the
 * new node's first (a voluntary move to a node ahead of the old one), fetched through the router
 * (routed, priced and retried like any request) and passed through the subscription's filter,
 * so nothing arrives twice.
 *
 *   signature   getSignatureStatuses: a transaction that reached the asked commitment during
 *               the gap gets its notification now
 *   newHeads    eth_getBlockByNumber for each block after the last one sent, up to the head
 *               (at most MAX_BACKFILL_BLOCKS)
 *   evmLogs     eth_getLogs with the subscription's filter over the same range
 *   account     getAccountInfo: sent when the account changed during the gap
 * The head a newHeads or logs fill goes up to is a routed `eth_blockNumber` — routing already
 * judges that answer against the one chain tracker (a lagging node's head is not relayed while
 * a fresher node can answer) — and, when that call fails, the tracker's own head if a node
 * showed it within HEAD_FRESH_MS (chain/chain-state.ts `recentHead`).
 * Slot-like streams need no fill: a missed slot is history, and the filter keeps the stream
 * from going backwards or repeating. Program, logs (Solana), block and vote streams cannot be
 * replayed by any standard call and are documented as such.
 */
import { GAP_FILL_KINDS } from '../metrics.js';
import type { SharedSubscription } from './shared-subscription.js';
import type { StreamKind } from './subscription-methods.js';

// The stream kinds a gap fill can close (the others: see above); metrics.ts names them for
// the series' labels.
const FILLABLE: ReadonlySet<StreamKind> = new Set(GAP_FILL_KINDS);

/** True when a gap in a `kind` stream can be filled. */
export function canFillGap(kind: StreamKind): boolean {
  return FILLABLE.has(kind);
}

/** Most blocks one newHeads or logs back-fill covers. */
export const MAX_BACKFILL_BLOCKS = 128;
/** Members of an eth_getBlockByNumber answer that a newHeads header does not have. */
const BODY_ONLY = ['size', 'totalDifficulty', 'transactions', 'uncles', 'withdrawals'];
const COMMITMENT_RANK: Record<string, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** A routed call: the parsed `result`. */
export type RouterCall = (method: string, paramsJson: string) => Promise<unknown>;

/** The EVM latest head the chain tracker knows fresh, or -1. */
export type KnownHead = () => number;

/** How recent the tracker's newest EVM head sample must be to count. */
export const HEAD_FRESH_MS = 2000;

const UNKNOWN_HEAD: KnownHead = () => -1;

function deliverJson(sub: SharedSubscription, value: unknown): void {
  sub.deliver(Buffer.from(JSON.stringify(value)), value, true);
}

function configOf(sub: SharedSubscription): Record<string, unknown> {
  const config = sub.params[1];
  return typeof config === 'object' && config !== null && !Array.isArray(config)
    ? (config as Record<string, unknown>)
    : {};
}

function quantity(n: number): string {
  return `0x${n.toString(16)}`;
}

async function headNumber(call: RouterCall, known: KnownHead): Promise<number> {
  let asked = NaN;
  try {
    const head = await call('eth_blockNumber', '[]');
    asked = typeof head === 'string' ? Number.parseInt(head, 16) : NaN;
  } catch (err) {
    const tracked = known();
    if (tracked < 0) throw err;
    return tracked;
  }
  if (Number.isNaN(asked)) {
    const tracked = known();
    if (tracked >= 0) return tracked;
  }
  return asked;
}

async function fillSignature(sub: SharedSubscription, call: RouterCall): Promise<number> {
  const answer = (await call('getSignatureStatuses', JSON.stringify([[sub.params[0]]]))) as {
    context?: { slot?: number };
    value?: Array<{ confirmationStatus?: string; err?: unknown } | null>;
  };
  const status = answer?.value?.[0];
  if (status === null || status === undefined) return 0;
  const commitment = configOf(sub).commitment;
  const wanted = typeof commitment === 'string' ? commitment : 'finalized';
  const reached = COMMITMENT_RANK[status.confirmationStatus ?? 'processed'] ?? 0;
  if (reached < (COMMITMENT_RANK[wanted] ?? 2)) return 0;
  deliverJson(sub, {
    context: { slot: answer.context?.slot ?? 0 },
    value: { err: status.err ?? null },
  });
  return 1;
}

async function fillHeads(
  sub: SharedSubscription,
  call: RouterCall,
  known: KnownHead,
): Promise<number> {
  const last = sub.filter.last;
  if (last === undefined) return 0;
  const head = await headNumber(call, known);
  const to = Math.min(head, last + MAX_BACKFILL_BLOCKS);
  let sent = 0;
  for (let n = last + 1; n <= to; n++) {
    const block = (await call('eth_getBlockByNumber', `["${quantity(n)}",false]`)) as Record<
      string,
      unknown
    > | null;
    if (block === null || typeof block !== 'object') break;
    for (const key of BODY_ONLY) delete block[key];
    deliverJson(sub, block);
    sent++;
  }
  return sent;
}

async function fillLogs(
  sub: SharedSubscription,
  call: RouterCall,
  known: KnownHead,
): Promise<number> {
  const from = sub.filter.last ?? sub.anchor;
  if (from === undefined) return 0;
  const head = await headNumber(call, known);
  const to = Math.min(head, from + MAX_BACKFILL_BLOCKS);
  if (to < from) return 0;
  const filter = { ...configOf(sub), fromBlock: quantity(from), toBlock: quantity(to) };
  const logs = await call('eth_getLogs', JSON.stringify([filter]));
  if (!Array.isArray(logs)) return 0;
  for (const log of logs) deliverJson(sub, log);
  return logs.length;
}

async function fillAccount(sub: SharedSubscription, call: RouterCall): Promise<number> {
  const config = configOf(sub);
  const answer = (await call('getAccountInfo', JSON.stringify([sub.params[0], config]))) as {
    context?: unknown;
    value?: unknown;
  };
  if (answer === null || typeof answer !== 'object') return 0;
  if (JSON.stringify(answer.value) === sub.lastValue) return 0;
  deliverJson(sub, { context: answer.context, value: answer.value });
  return 1;
}

/** Fills the gap of `sub` (just moved); resolves with the notifications sent. */
export function fillGap(
  sub: SharedSubscription,
  call: RouterCall,
  known: KnownHead = UNKNOWN_HEAD,
): Promise<number> {
  switch (sub.spec.kind) {
    case 'signature':
      return fillSignature(sub, call);
    case 'newHeads':
      return fillHeads(sub, call, known);
    case 'evmLogs':
      return fillLogs(sub, call, known);
    case 'account':
      return fillAccount(sub, call);
    default:
      return Promise.resolve(0);
  }
}
