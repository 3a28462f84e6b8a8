import { describe, expect, it } from 'vitest';
import { ERROR_RULES, errorFault, matchErrorRule } from './upstream-errors.js';

describe('the upstream error table', () => {
  it.each(ERROR_RULES.map((rule, index) => [index, rule.clients, rule] as const))(
    'row %i (%s): its example matches the row itself, not an earlier one',
    (_index, _clients, rule) => {
      expect(matchErrorRule(rule.example.code, rule.example.message)).toBe(rule);
    },
  );

  it.each([
    // Codes shared across chains are told apart by their message.
    [-32004, 'Upfront cost exceeds account balance', 'request'], // besu
    [-32004, 'Block not available for slot 9', 'node_state'], // agave
    [-32005, 'Node is unhealthy', 'node_unhealthy'],
    [-32005, 'daily request count exceeded, request rate limited', 'rate_limited'],
    [-32007, 'request limit reached', 'rate_limited'], // QuickNode, not agave's skipped slot
    [-32002, 'Transaction simulation failed: Blockhash not found', 'node_state'],
    [
      -32002,
      'Transaction simulation failed: This transaction has already been processed',
      'request',
    ],
    [-32000, 'execution reverted: Ownable: caller is not the owner', 'request'],
    [-32000, 'something nobody has seen before', 'unknown'],
    [-32603, 'Internal error', 'unknown'],
    [0, '', 'unknown'],
  ] as const)('%i %s → %s', (code, message, fault) => {
    expect(errorFault(code, message)).toBe(fault);
  });
});
