/**
 * A confirmed legacy SOL transfer as getTransaction returns it (json or base64 encoding), and
 * sendTransaction: the submitted transaction's first signature, admitted to the node's mempool.
 */
import { solanaTransactionSignature } from '../core/protocol/transaction-id.js';
import { base58Encode, seededBytes } from './encoding.js';
import { InvalidParamsError, configAt, stringAt, type MethodContext } from './method-spec.js';
import { NodeErrorAnswer } from './node-errors.js';
import { SYSTEM_PROGRAM, contextJson } from './solana-accounts.js';

const TRANSFER_LAMPORTS = 10_000_000;
const FEE = 5000;

interface Transfer {
  readonly signature: Buffer;
  readonly from: Buffer;
  readonly to: Buffer;
  readonly blockhash: Buffer;
  readonly data: Buffer;
}

function transferFor(seed: string): Transfer {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemInstruction::Transfer
  data.writeBigUInt64LE(BigInt(TRANSFER_LAMPORTS), 4);
  return {
    signature: seededBytes(`sig:${seed}`, 64),
    from: seededBytes(`from:${seed}`),
    to: seededBytes(`to:${seed}`),
    blockhash: seededBytes(`bh:${seed}`),
    data,
  };
}

/** Wire bytes of the transfer: signatures, then the legacy message. */
function wireBytes(tx: Transfer): Buffer {
  const system = Buffer.alloc(32);
  return Buffer.concat([
    Buffer.from([1]),
    tx.signature,
    Buffer.from([1, 0, 1, 3]),
    tx.from,
    tx.to,
    system,
    tx.blockhash,
    Buffer.from([1, 2, 2, 0, 1, tx.data.length]),
    tx.data,
  ]);
}

function messageJson(tx: Transfer): string {
  const keys = [base58Encode(tx.from), base58Encode(tx.to), SYSTEM_PROGRAM];
  return (
    `{"accountKeys":${JSON.stringify(keys)},` +
    `"header":{"numReadonlySignedAccounts":0,"numReadonlyUnsignedAccounts":1,"numRequiredSignatures":1},` +
    `"instructions":[{"accounts":[0,1],"data":"${base58Encode(tx.data)}","programIdIndex":2,"stackHeight":null}],` +
    `"recentBlockhash":"${base58Encode(tx.blockhash)}"}`
  );
}

function metaJson(): string {
  const pre = 5_000_000_000;
  return (
    `{"computeUnitsConsumed":150,"err":null,"fee":${FEE},"innerInstructions":[],` +
    `"loadedAddresses":{"readonly":[],"writable":[]},` +
    `"logMessages":["Program 11111111111111111111111111111111 invoke [1]","Program 11111111111111111111111111111111 success"],` +
    `"postBalances":[${pre - TRANSFER_LAMPORTS - FEE},${TRANSFER_LAMPORTS},1],` +
    `"postTokenBalances":[],"preBalances":[${pre},0,1],"preTokenBalances":[],"rewards":[],` +
    `"status":{"Ok":null}}`
  );
}

/** getTransaction's result for `signature` confirmed in `slot`. */
export function transactionJson(
  signature: string,
  slot: number,
  blockTime: number,
  config: Record<string, unknown>,
): string {
  const tx = transferFor(signature);
  const transaction =
    config.encoding === 'base64'
      ? `["${wireBytes(tx).toString('base64')}","base64"]`
      : `{"message":${messageJson(tx)},"signatures":["${base58Encode(tx.signature)}"]}`;
  const version = config.maxSupportedTransactionVersion === undefined ? '' : ',"version":"legacy"';
  return `{"blockTime":${blockTime},"meta":${metaJson()},"slot":${slot},"transaction":${transaction}${version}}`;
}

/**
 * sendTransaction as agave's rpc.rs answers it: the first signature, once the transaction
 * decodes. A resubmission gets AlreadyProcessed from the preflight simulation, unless
 * skipPreflight skips that simulation (agave then answers the signature again).
 */
export function sendTransaction(params: unknown, ctx: MethodContext): string {
  const wire = stringAt(params, 0, 'transaction');
  const config = configAt(params, 1);
  const encoding = config.encoding ?? 'base58';
  if (encoding !== 'base58' && encoding !== 'base64') {
    throw new InvalidParamsError(
      `unsupported encoding: ${typeof encoding === 'string' ? encoding : JSON.stringify(encoding)}. Supported encodings: base58, base64`,
    );
  }
  const signature = solanaTransactionSignature(wire, encoding);
  if (signature === undefined) {
    throw new InvalidParamsError(
      'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: unexpected end of file',
    );
  }
  if (!ctx.admit('solana', signature) && config.skipPreflight !== true) {
    throw new NodeErrorAnswer(ctx.alreadyKnown('solana'));
  }
  return `"${signature}"`;
}

/** simulateTransaction's value. */
export function simulationJson(slot: number, blockHeight: number, replace: boolean): string {
  const replacement = replace
    ? `{"blockhash":"${base58Encode(seededBytes(`bh:${slot}`))}","lastValidBlockHeight":${blockHeight + 150}}`
    : 'null';
  return (
    `{"context":${contextJson(slot)},"value":{"accounts":null,"err":null,"innerInstructions":null,` +
    `"logs":["Program 11111111111111111111111111111111 invoke [1]","Program 11111111111111111111111111111111 success"],` +
    `"replacementBlockhash":${replacement},"returnData":null,"unitsConsumed":150}}`
  );
}
