import { decodeErrorResult, encodeErrorResult, parseAbi, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { ALREADY_KNOWN, revertData } from './evm-errors.js';
import {
  NODE_ERROR_NAMES,
  NODE_ERROR_PRESETS,
  nodeError,
  parseNodeErrorSpec,
  prepareMethodErrors,
} from './node-errors.js';

const ERROR_ABI = parseAbi(['error Error(string)']);

describe('node error presets', () => {
  it('geth.revert: code 3, the reason in the message, Error(string) data viem decodes', () => {
    const error = nodeError('geth.revert', 'ERC20: transfer amount exceeds balance');
    expect(error).toMatchObject({
      code: 3,
      message: 'execution reverted: ERC20: transfer amount exceeds balance',
    });
    const decoded = decodeErrorResult({ abi: ERROR_ABI, data: error.data as Hex });
    expect(decoded.args).toEqual(['ERC20: transfer amount exceeds balance']);
    for (const reason of ['', 'user error', 'é'.repeat(40)]) {
      expect(revertData(reason)).toBe(
        encodeErrorResult({ abi: ERROR_ABI, errorName: 'Error', args: [reason] }),
      );
    }
  });

  it('parametrises messages: nonce, slot, reason', () => {
    expect(nodeError('geth.nonce_too_low', 7).message).toBe(
      'nonce too low: next nonce 8, tx nonce 7',
    );
    expect(nodeError('solana.slot_skipped', 123)).toEqual({
      code: -32007,
      message: 'Slot 123 was skipped, or missing due to ledger jump to recent snapshot',
    });
    expect(nodeError('solana.min_context_slot', 99)).toEqual({
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: 99 },
    });
    expect(nodeError('solana.node_behind', 12)).toEqual({
      code: -32005,
      message: 'Node is behind by 12 slots',
      data: { numSlotsBehind: 12 },
    });
    expect(parseNodeErrorSpec('hardhat.revert:a: b').message).toBe(
      "Error: VM Exception while processing transaction: reverted with reason string 'a: b'",
    );
  });

  it("shapes agave's preflight failure data as serde writes RpcSimulateTransactionResult", () => {
    const error = nodeError('solana.custom_program_error');
    expect(error.code).toBe(-32002);
    expect(error.message).toBe(
      'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
    );
    const data = error.data as Record<string, unknown>;
    expect(Object.keys(data)).toEqual([
      'err',
      'logs',
      'accounts',
      'unitsConsumed',
      'loadedAccountsDataSize',
      'returnData',
      'innerInstructions',
      'replacementBlockhash',
      'fee',
      'preBalances',
      'postBalances',
      'preTokenBalances',
      'postTokenBalances',
      'loadedAddresses',
    ]);
    expect(data.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect((data.logs as string[]).at(-1)).toMatch(/failed: custom program error: 0x1$/);
    expect(nodeError('solana.custom_program_error', 6001).message).toMatch(/0x1771$/);
    expect(nodeError('solana.already_processed')).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: This transaction has already been processed',
      data: { err: 'AlreadyProcessed', logs: [], unitsConsumed: 0 },
    });
  });

  it("spells each EVM client's already-known answer its own way", () => {
    expect(ALREADY_KNOWN).toEqual({
      geth: { code: -32000, message: 'already known' },
      nethermind: { code: -32010, message: 'AlreadyKnown' },
      besu: { code: -32000, message: 'Known transaction' },
      erigon: { code: -32000, message: 'ALREADY_EXISTS: already known' },
      reth: { code: -32603, message: 'already known' },
      anvil: { code: -32003, message: 'transaction already imported' },
    });
  });

  it('rate limits come with HTTP 429', () => {
    for (const name of ['alchemy.rate_limit', 'infura.rate_limit', 'rpcpool.rate_limit']) {
      expect(nodeError(name).status).toBe(429);
    }
  });

  it('every preset builds with its default argument and has a summary', () => {
    expect(NODE_ERROR_NAMES.length).toBeGreaterThanOrEqual(30);
    for (const name of NODE_ERROR_NAMES) {
      const error = nodeError(name);
      expect(Number.isInteger(error.code), name).toBe(true);
      expect(error.message.length, name).toBeGreaterThan(0);
      expect(NODE_ERROR_PRESETS[name]!.summary.length, name).toBeGreaterThan(0);
    }
  });

  it('names the bad preset, argument or field and lists the presets', () => {
    expect(() => nodeError('geth.revrt')).toThrow(
      /unknown node error preset "geth.revrt"; presets: geth.revert, /,
    );
    expect(() => nodeError('solana.slot_skipped', 'soon')).toThrow(
      /slot = "soon"; expected a whole number/,
    );
    expect(() => nodeError('geth.header_not_found', 'x')).toThrow(/takes no argument/);
    expect(() => prepareMethodErrors({ eth_call: 'nope' })).toThrow(
      /methodErrors\["eth_call"\]: unknown node error preset "nope"/,
    );
    expect(() => prepareMethodErrors({ eth_call: { code: 1.5, message: 'x' } })).toThrow(
      /methodErrors\["eth_call"\]\.code = 1\.5; expected an integer/,
    );
    expect(() => prepareMethodErrors({ eth_call: { code: 1, message: 'x', status: 700 } })).toThrow(
      /status = 700/,
    );
  });
});
