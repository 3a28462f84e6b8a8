import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startMockNode } from '../mock-node.js';
import type { MockNode } from '../types.js';
import { MockChain } from './mock-chain.js';

const PUBKEY = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const SIGNATURE = '5'.repeat(88);

/** A client socket that queues what it receives. */
class TestSocket {
  readonly messages: unknown[] = [];
  #waiters: Array<() => void> = [];
  readonly closed: Promise<number>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.messages.push(JSON.parse(data.toString()));
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }

  static async open(url: string): Promise<TestSocket> {
    const ws = new WebSocket(url);
    const socket = new TestSocket(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return socket;
  }

  send(value: unknown): void {
    this.ws.send(JSON.stringify(value));
  }

  /** Resolves once `count` messages have arrived, with them. */
  async next(count = 1): Promise<unknown[]> {
    while (this.messages.length < count) await new Promise<void>((r) => this.#waiters.push(r));
    return this.messages.splice(0, count);
  }
}

let node: MockNode | undefined;
const sockets: TestSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.ws.terminate();
  await node?.close();
  node = undefined;
});

async function setUp(): Promise<{ node: MockNode; chain: MockChain; socket: TestSocket }> {
  const chain = new MockChain({ manual: true });
  node = await startMockNode({ name: 'ws', chain });
  const socket = await TestSocket.open(node.wsUrl);
  sockets.push(socket);
  return { node, chain, socket };
}

describe('mock node WebSocket endpoint', () => {
  it('notifies slots as the chain advances, with agave shapes and merged ids', async () => {
    const { chain, socket, node } = await setUp();
    socket.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
    socket.send({ jsonrpc: '2.0', id: 2, method: 'slotSubscribe' });
    const [first, second] = (await socket.next(2)) as Array<{ result: number }>;
    expect(first!.result).toBe(second!.result);
    chain.advanceSlots(2);
    const notes = (await socket.next(2)) as Array<{
      method: string;
      params: { result: { slot: number }; subscription: number };
    }>;
    expect(notes[0]).toMatchObject({
      method: 'slotNotification',
      params: { subscription: first!.result },
    });
    expect(notes[1]!.params.result.slot).toBe(notes[0]!.params.result.slot + 1);
    expect(node.ws.stats()).toMatchObject({ connections: 1, subscriptions: 1, notifications: 2 });
    socket.send({ jsonrpc: '2.0', id: 3, method: 'slotUnsubscribe', params: [first!.result] });
    expect(await socket.next()).toEqual([{ jsonrpc: '2.0', result: true, id: 3 }]);
    expect(node.ws.stats().subscriptions).toBe(0);
  });

  it('confirms a transaction the node accepted once it lands, and answers plain calls', async () => {
    const { chain, socket } = await setUp();
    chain.accept('solana', SIGNATURE);
    socket.send({ jsonrpc: '2.0', id: 'q', method: 'getSignatureStatuses', params: [[SIGNATURE]] });
    const [statuses] = (await socket.next()) as Array<{ result: { value: unknown[] } }>;
    expect(statuses!.result.value).toEqual([null]);
    socket.send({ jsonrpc: '2.0', id: 1, method: 'signatureSubscribe', params: [SIGNATURE] });
    const [subscribed] = (await socket.next()) as Array<{ result: number }>;
    chain.advanceSlots();
    const [note] = (await socket.next()) as Array<{
      params: { result: { value: unknown }; subscription: number };
    }>;
    expect(note!.params).toMatchObject({
      result: { value: { err: null } },
      subscription: subscribed!.result,
    });
  });

  it('announces newHeads whose hashes match eth_getBlockByNumber and logs matching eth_getLogs', async () => {
    const { chain, socket } = await setUp();
    socket.send({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] });
    socket.send({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', {}] });
    const [heads, logs] = (await socket.next(2)) as Array<{ result: string }>;
    expect(heads!.result).toMatch(/^0x[0-9a-f]{32}$/);
    chain.advanceBlocks();
    const notes = (await socket.next(2)) as Array<{
      params: {
        subscription: string;
        result: { number?: string; hash?: string; blockHash?: string };
      };
    }>;
    const head = notes.find((n) => n.params.subscription === heads!.result)!.params.result;
    const log = notes.find((n) => n.params.subscription === logs!.result)!.params.result;
    socket.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'eth_getBlockByNumber',
      params: [head.number, false],
    });
    socket.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'eth_getLogs',
      params: [{ fromBlock: head.number, toBlock: head.number }],
    });
    const [block, ranged] = (await socket.next(2)) as Array<{ result: unknown }>;
    expect((block!.result as { hash: string }).hash).toBe(head.hash);
    expect(ranged!.result).toEqual([log]);
  });

  it('announces account changes made on demand, which getAccountInfo then reads', async () => {
    const { chain, socket } = await setUp();
    socket.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'accountSubscribe',
      params: [PUBKEY, { encoding: 'base64' }],
    });
    await socket.next();
    chain.setAccount(PUBKEY, { lamports: 42 });
    const [note] = (await socket.next()) as Array<{
      params: { result: { value: { lamports: number } } };
    }>;
    expect(note!.params.result.value.lamports).toBe(42);
    socket.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'getAccountInfo',
      params: [PUBKEY, { encoding: 'base64' }],
    });
    const [info] = (await socket.next()) as Array<{ result: { value: { lamports: number } } }>;
    expect(info!.result.value.lamports).toBe(42);
  });

  it('refuses subscriptions, stalls and drops on demand', async () => {
    const { chain, socket, node } = await setUp();
    node.ws.setFault({ kind: 'refuse_subscribe' });
    socket.send({ jsonrpc: '2.0', id: 1, method: 'rootSubscribe' });
    expect(await socket.next()).toEqual([
      {
        jsonrpc: '2.0',
        error: { code: -32603, message: expect.stringContaining('Subscription refused') },
        id: 1,
      },
    ]);
    node.ws.setFault({ kind: 'none' });
    socket.send({ jsonrpc: '2.0', id: 2, method: 'rootSubscribe' });
    await socket.next();
    node.ws.setFault({ kind: 'stall' });
    chain.advanceSlots(3);
    socket.send({ jsonrpc: '2.0', id: 3, method: 'getSlot' });
    node.ws.setFault({ kind: 'none' });
    // The stall skipped the three slots' notifications; the call waited and is answered now.
    expect(await socket.next()).toEqual([{ jsonrpc: '2.0', result: chain.slot(), id: 3 }]);
    node.ws.drop();
    expect(await socket.closed).toBe(1006);
  });
});
