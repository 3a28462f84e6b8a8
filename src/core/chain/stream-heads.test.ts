import { describe, expect, it } from 'vitest';
import { ChainState, Family, Level, headSlot } from './chain-state.js';
import { readStreamHead } from './stream-heads.js';

const b = (text: string): Buffer => Buffer.from(text);

describe('heads from held subscriptions', () => {
  it('reads slot, root and newHeads notifications, nothing else', () => {
    const chain = new ChainState();
    const node = chain.nodeHeads('a');
    readStreamHead(chain, node, 'slot', b('{"parent":99,"root":60,"slot":100}'), 0);
    readStreamHead(chain, node, 'root', b('68'), 0);
    readStreamHead(chain, node, 'newHeads', b('{"hash":"0xab","number":"0x1b4"}'), 0);
    readStreamHead(chain, node, 'account', b('{"context":{"slot":5},"value":{}}'), 0);
    expect(chain.headOf(node, headSlot(Family.solana, Level.latest), 0)).toBe(100);
    expect(chain.headOf(node, headSlot(Family.solana, Level.finalized), 0)).toBe(68);
    expect(chain.headOf(node, headSlot(Family.evm, Level.latest), 0)).toBe(436);
  });
});
