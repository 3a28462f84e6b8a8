import { describe, expect, it } from 'vitest';
import { ALREADY_KNOWN } from '../../mock/evm-errors.js';
import { ALREADY_PROCESSED } from '../../mock/solana-errors.js';
import { ALREADY_KNOWN_ANSWERS, isAlreadyKnown } from './already-known.js';
import { matchErrorRule } from './upstream-errors.js';

describe('already known', () => {
  it.each(Object.entries(ALREADY_KNOWN))("recognises %s's answer", (_client, error) => {
    expect(isAlreadyKnown(error.message)).toBe(true);
    expect(matchErrorRule(error.code, error.message)?.fault).toBe('request');
  });

  it("recognises agave's AlreadyProcessed preflight failure", () => {
    expect(isAlreadyKnown(ALREADY_PROCESSED.message)).toBe(true);
  });

  it('each listed example is recognised and classified as the request’s answer', () => {
    for (const answer of ALREADY_KNOWN_ANSWERS) {
      expect(isAlreadyKnown(answer.example.message)).toBe(true);
      expect(matchErrorRule(answer.example.code, answer.example.message)?.fault).toBe('request');
    }
  });

  it.each([
    'nonce too low: next nonce 5, tx nonce 3',
    'replacement transaction underpriced',
    'Transaction simulation failed: Blockhash not found',
    'execution reverted',
  ])('does not take %j for "already known"', (message) => {
    expect(isAlreadyKnown(message)).toBe(false);
  });
});
