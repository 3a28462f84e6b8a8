/**
 * "I already have this transaction": how each client answers a signed transaction it has seen
 * before — in its pool, or already landed. One list for every client cascade fronts; the error
 * table (upstream-errors.ts) classifies these as the request's own answer, and the write path
 * (routing/write-route.ts) turns one into a success when an earlier attempt of the same request
 * may have delivered the transaction.
 *
 * Sources: go-ethereum core/txpool/errors.go (ErrAlreadyKnown "already known"; before 1.9.x
 * "known transaction: <hash>"), erigon rpc/jsonrpc/send_transaction.go ("ALREADY_EXISTS:
 * already known"), reth rpc-eth-types error/mod.rs (RpcPoolError::AlreadyKnown, -32603),
 * nethermind TxPool AcceptTxResult.AlreadyKnown (-32010, "AlreadyKnown"; 2026 releases spell it
 * "already known"), besu RpcErrorType ETH_SEND_TX_ALREADY_KNOWN ("Known transaction"), anvil
 * PoolError::AlreadyImported ("transaction already imported"), agave
 * TransactionError::AlreadyProcessed ("This transaction has already been processed", inside a
 * -32002 preflight failure).
 */

/** One client's "already known" answer. */
export interface AlreadyKnownAnswer {
  readonly clients: string;
  readonly message: RegExp;
  /** A real answer (tests run every example through the proxy). */
  readonly example: { readonly code: number; readonly message: string };
}

/** Every client's "already known / already imported / already processed", in one place. */
export const ALREADY_KNOWN_ANSWERS: readonly AlreadyKnownAnswer[] = [
  {
    clients: 'geth, erigon (ALREADY_EXISTS: …), reth, nethermind ≥ 2026',
    message: /^(ALREADY_EXISTS: )?already known/i,
    example: { code: -32000, message: 'already known' },
  },
  {
    clients: 'besu, geth < 1.9',
    message: /^known transaction/i,
    example: { code: -32000, message: 'Known transaction' },
  },
  {
    clients: 'nethermind',
    message: /^AlreadyKnown/,
    example: { code: -32010, message: 'AlreadyKnown' },
  },
  {
    clients: 'anvil, hardhat',
    message: /^transaction already imported/i,
    example: { code: -32003, message: 'transaction already imported' },
  },
  {
    clients: 'agave (Solana)',
    message: /This transaction has already been processed/,
    example: {
      code: -32002,
      message: 'Transaction simulation failed: This transaction has already been processed',
    },
  },
];

/** True when an error message is some client's "already known" for a transaction. */
export function isAlreadyKnown(message: string): boolean {
  for (const answer of ALREADY_KNOWN_ANSWERS) if (answer.message.test(message)) return true;
  return false;
}
