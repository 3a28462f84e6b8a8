/**
 * The subscriptions cascade fans out: agave's pubsub methods and geth's eth_subscribe kinds,
 * each with its unsubscribe method, the method its notifications carry, and the stream kind
 * that decides ordering, de-duplication and how a failover's gap is closed.
 */

/** A chain family: ids are integers for Solana (web3.js requires a number), hex for EVM. */
export type Family = 'solana' | 'evm';

/** What a stream's notifications are, for ordering, de-duplication and gap filling. */
export type StreamKind =
  | 'slot'
  | 'root'
  | 'slotsUpdates'
  | 'block'
  | 'vote'
  | 'account'
  | 'program'
  | 'logs'
  | 'signature'
  | 'newHeads'
  | 'evmLogs'
  | 'pendingTransactions'
  | 'syncing';

/** One subscribe method. */
export interface SubscribeMethod {
  readonly family: Family;
  /** The method sent upstream (`eth_subscribe` for every EVM kind). */
  readonly method: string;
  readonly unsubscribe: string;
  /** The `method` of its notifications. */
  readonly notification: string;
  readonly kind: StreamKind;
}

const solana = (name: string, kind: StreamKind): [string, SubscribeMethod] => [
  `${name}Subscribe`,
  {
    family: 'solana',
    method: `${name}Subscribe`,
    unsubscribe: `${name}Unsubscribe`,
    notification: `${name}Notification`,
    kind,
  },
];

const SOLANA: ReadonlyMap<string, SubscribeMethod> = new Map([
  solana('account', 'account'),
  solana('program', 'program'),
  solana('logs', 'logs'),
  solana('signature', 'signature'),
  solana('slot', 'slot'),
  solana('slotsUpdates', 'slotsUpdates'),
  solana('root', 'root'),
  solana('block', 'block'),
  solana('vote', 'vote'),
]);

const evm = (kind: StreamKind): SubscribeMethod => ({
  family: 'evm',
  method: 'eth_subscribe',
  unsubscribe: 'eth_unsubscribe',
  notification: 'eth_subscription',
  kind,
});

const EVM: ReadonlyMap<string, SubscribeMethod> = new Map([
  ['newHeads', evm('newHeads')],
  ['logs', evm('evmLogs')],
  ['newPendingTransactions', evm('pendingTransactions')],
  ['syncing', evm('syncing')],
]);

const UNSUBSCRIBE: ReadonlyMap<string, Family> = new Map([
  ...[...SOLANA.values()].map((m): [string, Family] => [m.unsubscribe, 'solana']),
  ['eth_unsubscribe', 'evm'],
]);

/**
 * The subscribe method a call names; for eth_subscribe, the kind in its first param (`kind`
 * undefined: an eth_subscribe of a kind cascade does not know, answered like geth does).
 */
export function subscribeMethodOf(
  method: string,
  firstParam: unknown,
): SubscribeMethod | 'unknown_kind' | undefined {
  const found = SOLANA.get(method);
  if (found) return found;
  if (method !== 'eth_subscribe') return undefined;
  return (typeof firstParam === 'string' && EVM.get(firstParam)) || 'unknown_kind';
}

/** The family of an unsubscribe method, or undefined. */
export function unsubscribeFamilyOf(method: string): Family | undefined {
  return UNSUBSCRIBE.get(method);
}
