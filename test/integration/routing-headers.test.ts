/**
 * `[server] routing_headers = true`: answers say which node served them, after how many
 * attempts, at what price. Off by default — they disclose provider names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function post(body: unknown): Promise<Response> {
  return fetch(harness!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('routing headers', () => {
  it('are absent by default', async () => {
    harness = await startHarness([{ name: 'Helius-1', prices: { getSlot: 3 } }]);
    const response = await post(rpc('getSlot'));
    expect(response.status).toBe(200);
    for (const name of ['x-cascade-node', 'x-cascade-attempts', 'x-cascade-credits'])
      expect(response.headers.get(name)).toBeNull();
  });

  it('name the node, the attempts and the credits of a request that needed a retry', async () => {
    harness = await startHarness(
      [
        { name: 'dead', tier: 0, dead: true },
        { name: 'Helius-1', tier: 1, prices: { getSlot: 3 } },
      ],
      { server: { routingHeaders: true } },
    );
    const response = await post(rpc('getSlot'));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-cascade-node')).toBe('Helius-1');
    expect(response.headers.get('x-cascade-attempts')).toBe('2');
    // Credits booked for the request's attempts, as the access log counts them (1 + 3).
    expect(response.headers.get('x-cascade-credits')).toBe('4');
  });

  it('list every node of a batch', async () => {
    harness = await startHarness(
      [
        { name: 'a', prices: { getSlot: 1 }, unknownCost: null },
        { name: 'b', tier: 1, prices: { getBalance: 5 } },
      ],
      { server: { routingHeaders: true } },
    );
    const response = await post([rpc('getSlot', 1), rpc('getBalance', 2, ['x'])]);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-cascade-node')).toBe('a,b');
    expect(response.headers.get('x-cascade-credits')).toBe('6');
  });
});
