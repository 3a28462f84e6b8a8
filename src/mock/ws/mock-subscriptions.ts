/**
 * What a mock node's subscriptions are: the subscribe methods it takes (agave's pubsub and
 * geth's eth_subscribe kinds), how their params are checked, and which chain events each one
 * turns into a notification (`result` JSON), the way the real servers decide it.
 */
import type { ChainView } from '../chain-clock.js';
import { isRecord, paramAt } from '../method-spec.js';
import type { ChainEvent } from './mock-chain.js';
import {
  accountUpdateJson,
  blockLogJson,
  blockUpdateJson,
  headerJson,
  logsJson,
  matchesLogFilter,
  programUpdateJson,
  rootJson,
  signatureJson,
  slotJson,
  slotsUpdateJson,
  voteJson,
} from './notification-json.js';

/** One kind of subscription. */
export type SubscriptionKind =
  | 'account'
  | 'program'
  | 'logs'
  | 'signature'
  | 'slot'
  | 'slotsUpdates'
  | 'root'
  | 'block'
  | 'vote'
  | 'newHeads'
  | 'evmLogs'
  | 'newPendingTransactions'
  | 'syncing';

/** Solana subscribe method → kind, its unsubscribe method and its notification method. */
export const SOLANA_SUBSCRIBE: ReadonlyMap<string, { kind: SubscriptionKind; notify: string }> =
  new Map([
    ['accountSubscribe', { kind: 'account', notify: 'accountNotification' }],
    ['programSubscribe', { kind: 'program', notify: 'programNotification' }],
    ['logsSubscribe', { kind: 'logs', notify: 'logsNotification' }],
    ['signatureSubscribe', { kind: 'signature', notify: 'signatureNotification' }],
    ['slotSubscribe', { kind: 'slot', notify: 'slotNotification' }],
    ['slotsUpdatesSubscribe', { kind: 'slotsUpdates', notify: 'slotsUpdatesNotification' }],
    ['rootSubscribe', { kind: 'root', notify: 'rootNotification' }],
    ['blockSubscribe', { kind: 'block', notify: 'blockNotification' }],
    ['voteSubscribe', { kind: 'vote', notify: 'voteNotification' }],
  ]);

/** Solana unsubscribe method names. */
export const SOLANA_UNSUBSCRIBE: ReadonlySet<string> = new Set(
  [...SOLANA_SUBSCRIBE.keys()].map((name) => name.replace('Subscribe', 'Unsubscribe')),
);

/** eth_subscribe's first param → kind. */
export const EVM_KINDS: ReadonlyMap<string, SubscriptionKind> = new Map([
  ['newHeads', 'newHeads'],
  ['logs', 'evmLogs'],
  ['newPendingTransactions', 'newPendingTransactions'],
  ['syncing', 'syncing'],
]);

/** A live subscription on one connection. */
export interface MockSubscription {
  readonly kind: SubscriptionKind;
  readonly params: unknown;
  /** Notification method (Solana); EVM uses eth_subscription. */
  readonly notify: string;
}

function isBase58Key(value: unknown, min = 32): value is string {
  return typeof value === 'string' && value.length >= min && /^[1-9A-HJ-NP-Za-km-z]+$/.test(value);
}

/** agave's message for bad subscribe params, or undefined when they are fine. */
export function paramProblem(kind: SubscriptionKind, params: unknown): string | undefined {
  const first = paramAt(params, 0);
  switch (kind) {
    case 'account':
      return isBase58Key(first) ? undefined : 'Invalid Request: Invalid pubkey provided';
    case 'program':
      return isBase58Key(first) ? undefined : 'Invalid Request: Invalid pubkey provided';
    case 'signature':
      return isBase58Key(first, 64) ? undefined : 'Invalid Request: Invalid signature provided';
    case 'logs':
      return first === 'all' ||
        first === 'allWithVotes' ||
        (isRecord(first) && Array.isArray(first.mentions))
        ? undefined
        : 'Invalid params: expected "all", "allWithVotes" or { mentions: [pubkey] }';
    default:
      return undefined;
  }
}

function configOf(params: unknown): Record<string, unknown> {
  const value = paramAt(params, 1);
  return isRecord(value) ? value : {};
}

/**
 * The notification results `event` means for `sub` (usually none or one). `done` is set when
 * the subscription ends with this notification (signatureSubscribe).
 */
export function resultsFor(
  sub: MockSubscription,
  event: ChainEvent,
  chain: ChainView,
): { results: string[]; done: boolean } {
  const none = { results: [], done: false };
  const one = (json: string) => ({ results: [json], done: false });
  switch (event.kind) {
    case 'slot': {
      const s = event.slot;
      if (sub.kind === 'slot') return one(slotJson(s));
      if (sub.kind === 'root') return one(rootJson(s));
      if (sub.kind === 'slotsUpdates') return one(slotsUpdateJson(s, Date.now()));
      if (sub.kind === 'block') return one(blockUpdateJson(s, chain));
      if (sub.kind === 'vote') return one(voteJson(s, chain.slotTime(s)));
      return none;
    }
    case 'block': {
      const n = event.number;
      if (sub.kind === 'newHeads') return one(headerJson(n, chain.blockTime(n)));
      if (sub.kind === 'evmLogs' && matchesLogFilter(paramAt(sub.params, 1)))
        return one(blockLogJson(n));
      return none;
    }
    case 'landed':
      if (event.chain !== 'solana') return none;
      if (sub.kind === 'signature' && paramAt(sub.params, 0) === event.id) {
        return { results: [signatureJson(event.slot)], done: true };
      }
      if (sub.kind === 'logs' && typeof paramAt(sub.params, 0) === 'string')
        return one(logsJson(event.slot, event.id));
      return none;
    case 'pending':
      if (event.chain === 'evm' && sub.kind === 'newPendingTransactions')
        return one(`"${event.id}"`);
      return none;
    case 'account': {
      const encoding = configOf(sub.params).encoding;
      if (sub.kind === 'account' && paramAt(sub.params, 0) === event.pubkey)
        return one(accountUpdateJson(event.slot, event.account, encoding));
      if (sub.kind === 'program' && paramAt(sub.params, 0) === event.account.owner)
        return one(programUpdateJson(event.slot, event.pubkey, event.account, encoding));
      return none;
    }
  }
}

/** Whether a signature subscription asked for the "receivedSignature" notification too. */
export function wantsReceived(params: unknown): boolean {
  return configOf(params).enableReceivedNotification === true;
}

/** The received / processed notification a new signature subscription is owed right away. */
export function signatureOnSubscribe(
  status: 'pending' | { readonly slot: number } | undefined,
  params: unknown,
  slot: number,
): { result: string; done: boolean } | undefined {
  if (status === undefined) return undefined;
  if (status === 'pending')
    return wantsReceived(params) ? { result: signatureJson(slot, true), done: false } : undefined;
  return { result: signatureJson(status.slot), done: true };
}
