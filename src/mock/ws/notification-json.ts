/**
 * The `result` of each subscription's notifications, shaped as agave's pubsub and geth's
 * eth_subscribe write them (agave rpc/src/rpc_subscriptions.rs, rpc-client-api response.rs;
 * geth eth/filters/api.go), and the envelopes around them.
 */
import { base58Of } from '../encoding.js';
import { blockHashOf, blockJson, logJson } from '../evm-objects.js';
import type { ChainView } from '../chain-clock.js';
import type { MockAccount } from '../method-spec.js';
import { accountJson, contextJson } from '../solana-accounts.js';

/** Slots between a slot and its root in the mock (agave roots trail by ~32). */
const ROOT_DEPTH = 32;
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
/** Members of an eth_getBlockByNumber answer that a newHeads header does not carry. */
const BODY_ONLY = ['size', 'totalDifficulty', 'transactions', 'uncles', 'withdrawals'];

/** A Solana notification: `{"jsonrpc","method","params":{"result","subscription"}}`. */
export function solanaNotification(method: string, resultJson: string, id: number): string {
  return `{"jsonrpc":"2.0","method":"${method}","params":{"result":${resultJson},"subscription":${id}}}`;
}

/** An EVM notification: geth writes `subscription` before `result`. */
export function evmNotification(id: string, resultJson: string): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${resultJson}}}`;
}

/** `{ context, value }` as notifications carry it. */
function contextual(slot: number, valueJson: string): string {
  return `{"context":${contextJson(slot)},"value":${valueJson}}`;
}

/** slotNotification: the slot whose processing began. */
export function slotJson(slot: number): string {
  return `{"parent":${slot - 1},"root":${slot - ROOT_DEPTH},"slot":${slot}}`;
}

/** rootNotification: the newest root at `slot`. */
export function rootJson(slot: number): string {
  return String(slot - ROOT_DEPTH);
}

/** slotsUpdatesNotification: the bank for `slot` was created. */
export function slotsUpdateJson(slot: number, timestampMs: number): string {
  return `{"parent":${slot - 1},"slot":${slot},"timestamp":${timestampMs},"type":"createdBank"}`;
}

/** blockNotification with signatures only (`transactionDetails: "signatures"` shape). */
export function blockUpdateJson(slot: number, chain: ChainView): string {
  const block =
    `{"blockHeight":${chain.blockHeight() - (chain.slot() - slot)},"blockTime":${chain.slotTime(slot)},` +
    `"blockhash":"${base58Of(`bh:${slot}`)}","parentSlot":${slot - 1},` +
    `"previousBlockhash":"${base58Of(`bh:${slot - 1}`)}","rewards":[],"signatures":[]}`;
  return contextual(slot, `{"block":${block},"err":null,"slot":${slot}}`);
}

/** voteNotification: one validator's vote on `slot`. */
export function voteJson(slot: number, timestamp: number): string {
  return (
    `{"hash":"${base58Of(`bank:${slot}`)}","signature":"${base58Of(`vote:${slot}`, 64)}",` +
    `"slots":[${slot}],"timestamp":${timestamp},"votePubkey":"${base58Of('vote-account')}"}`
  );
}

/** signatureNotification: processed (err null), or received when asked for. */
export function signatureJson(slot: number, received = false): string {
  return contextual(slot, received ? '"receivedSignature"' : '{"err":null}');
}

/** accountNotification: the account as getAccountInfo encodes it. */
export function accountUpdateJson(slot: number, account: MockAccount, encoding: unknown): string {
  return contextual(slot, accountJson(account.data, encoding, account.lamports, account.owner));
}

/** programNotification: `{pubkey, account}`. */
export function programUpdateJson(
  slot: number,
  pubkey: string,
  account: MockAccount,
  encoding: unknown,
): string {
  const value = `{"account":${accountJson(account.data, encoding, account.lamports, account.owner)},"pubkey":"${pubkey}"}`;
  return contextual(slot, value);
}

/** logsNotification for a transaction that landed. */
export function logsJson(slot: number, signature: string): string {
  const logs =
    '["Program 11111111111111111111111111111111 invoke [1]","Program 11111111111111111111111111111111 success"]';
  return contextual(slot, `{"err":null,"logs":${logs},"signature":"${signature}"}`);
}

/** newHeads: block `n`'s header, the same hashes eth_getBlockByNumber answers. */
export function headerJson(n: number, timestamp: number): string {
  const block = JSON.parse(blockJson(n, timestamp, false)) as Record<string, unknown>;
  for (const key of BODY_ONLY) delete block[key];
  return JSON.stringify(block);
}

/** The mock's log for block `n` (one USDC Transfer), as eth_getLogs answers it too. */
export function blockLogJson(n: number): string {
  return logJson(n, 0, 0);
}

/** Whether an eth_subscribe logs filter matches the mock's USDC Transfer logs. */
export function matchesLogFilter(filter: unknown): boolean {
  if (filter === undefined || filter === null) return true;
  if (typeof filter !== 'object' || Array.isArray(filter)) return false;
  const { address, topics } = filter as { address?: unknown; topics?: unknown };
  if (address !== undefined && address !== null) {
    const list = Array.isArray(address) ? address : [address];
    if (!list.some((one) => typeof one === 'string' && one.toLowerCase() === USDC)) return false;
  }
  if (Array.isArray(topics) && topics.length > 0) {
    const first: unknown = topics[0];
    const wanted = Array.isArray(first) ? first : [first];
    if (
      first !== null &&
      !wanted.some((t) => typeof t === 'string' && t.toLowerCase() === TRANSFER_TOPIC)
    )
      return false;
  }
  return true;
}

/** The hash newHeads announces for block `n` (exported for tests). */
export { blockHashOf };
