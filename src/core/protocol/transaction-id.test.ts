import type { PublicKey } from '@solana/web3.js';
import {
  AddressLookupTableAccount,
  Keypair,
  SystemProgram,
  Transaction as SolanaTransaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  Transaction as EthersTransaction,
  Wallet,
  encodeBase58,
  keccak256 as ethersKeccak256,
} from 'ethers';
import { keccak256 as viemKeccak256, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { evmTransactionHash, solanaTransactionSignature } from './transaction-id.js';

const PRIVATE_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const BLOCKHASH = 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N';

describe('evmTransactionHash', () => {
  it("matches viem's and ethers' hash of transactions they signed", async () => {
    const account = privateKeyToAccount(PRIVATE_KEY);
    const eip1559 = await account.signTransaction({
      chainId: 1,
      nonce: 7,
      to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
      value: 10n ** 15n,
      gas: 21_000n,
      maxFeePerGas: parseGwei('30'),
      maxPriorityFeePerGas: parseGwei('1'),
    });
    const legacy = await new Wallet(PRIVATE_KEY).signTransaction({
      chainId: 1,
      nonce: 8,
      to: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
      value: 1n,
      gasLimit: 21_000n,
      gasPrice: parseGwei('20'),
    });
    for (const raw of [eip1559, legacy as Hex]) {
      expect(evmTransactionHash(raw)).toBe(viemKeccak256(raw));
      expect(evmTransactionHash(raw)).toBe(ethersKeccak256(raw));
      expect(evmTransactionHash(raw)).toBe(EthersTransaction.from(raw).hash);
    }
    expect(evmTransactionHash(eip1559.toUpperCase().replace('0X', '0x'))).toBe(
      viemKeccak256(eip1559),
    );
  });

  it.each([
    ['no 0x prefix', 'f86c0180'],
    ['no bytes', '0x'],
    ['odd length', '0x02f'],
    ['not hex', '0x02zz'],
    ['empty', ''],
  ])('is undefined for %s', (_what, raw) => {
    expect(evmTransactionHash(raw)).toBeUndefined();
  });
});

function transfer(from: PublicKey) {
  return SystemProgram.transfer({
    fromPubkey: from,
    toPubkey: Keypair.generate().publicKey,
    lamports: 1000,
  });
}

function legacyTransaction(signers: Keypair[]): SolanaTransaction {
  const tx = new SolanaTransaction({ feePayer: signers[0]!.publicKey, recentBlockhash: BLOCKHASH });
  for (const signer of signers) tx.add(transfer(signer.publicKey));
  tx.sign(...signers);
  return tx;
}

function v0Transaction(withLookup: boolean): VersionedTransaction {
  const payer = Keypair.generate();
  const lookup = new AddressLookupTableAccount({
    key: Keypair.generate().publicKey,
    state: {
      deactivationSlot: BigInt('18446744073709551615'),
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      addresses: [Keypair.generate().publicKey, Keypair.generate().publicKey],
    },
  });
  const toLookedUp = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: lookup.state.addresses[0]!,
    lamports: 5,
  });
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: BLOCKHASH,
    instructions: [transfer(payer.publicKey), toLookedUp],
  }).compileToV0Message(withLookup ? [lookup] : []);
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  return tx;
}

/** ethers' base58, an implementation independent of the one under test. */
const base58Of = (bytes: Uint8Array): string => encodeBase58(bytes);

describe('solanaTransactionSignature', () => {
  it('is the first signature of legacy and v0 transactions, base58 or base64', () => {
    const single = legacyTransaction([Keypair.generate()]);
    const double = legacyTransaction([Keypair.generate(), Keypair.generate()]);
    const plainV0 = v0Transaction(false);
    const lookupV0 = v0Transaction(true);
    expect(lookupV0.message.addressTableLookups).toHaveLength(1);
    const cases: Array<[Uint8Array, Uint8Array]> = [
      [single.serialize(), single.signature!],
      [double.serialize(), double.signatures[0]!.signature!],
      [plainV0.serialize(), plainV0.signatures[0]!],
      [lookupV0.serialize(), lookupV0.signatures[0]!],
    ];
    for (const [wire, signature] of cases) {
      const expected = base58Of(signature);
      expect(solanaTransactionSignature(base58Of(wire), 'base58')).toBe(expected);
      expect(solanaTransactionSignature(Buffer.from(wire).toString('base64'), 'base64')).toBe(
        expected,
      );
    }
  });

  it('allows trailing bytes after the message, as agave does', () => {
    const wire = Buffer.concat([
      legacyTransaction([Keypair.generate()]).serialize(),
      Buffer.alloc(3),
    ]);
    expect(solanaTransactionSignature(wire.toString('base64'), 'base64')).toBeDefined();
  });

  it('is undefined for malformed transactions', () => {
    const wire = Buffer.from(v0Transaction(true).serialize());
    const legacy = Buffer.from(legacyTransaction([Keypair.generate()]).serialize());
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
    const malformed: Array<[string, string, 'base58' | 'base64']> = [
      ['truncated message', b64(wire.subarray(0, wire.length - 40)), 'base64'],
      ['truncated signature', b64(wire.subarray(0, 40)), 'base64'],
      ['no signatures', b64(Buffer.concat([Buffer.from([0]), legacy.subarray(65)])), 'base64'],
      [
        'non-canonical count',
        b64(Buffer.concat([Buffer.from([0x81, 0x00]), legacy.subarray(1)])),
        'base64',
      ],
      [
        'message version 1',
        b64(Buffer.concat([wire.subarray(0, 65), Buffer.from([0x81]), wire.subarray(66)])),
        'base64',
      ],
      [
        'signature count mismatch',
        b64(Buffer.concat([Buffer.from([2]), legacy.subarray(1)])),
        'base64',
      ],
      ['oversized', b64(Buffer.alloc(1300, 1)), 'base64'],
      ['base58 with 0', `0${base58Of(legacy)}`, 'base58'],
      ['base64 garbage', '!!!', 'base64'],
      ['empty', '', 'base58'],
    ];
    for (const [what, encoded, encoding] of malformed) {
      expect(solanaTransactionSignature(encoded, encoding), what).toBeUndefined();
    }
  });
});
