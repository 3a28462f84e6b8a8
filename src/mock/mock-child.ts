/**
 * The mock-node process that startMockProcess forks, so the nodes get their own event loop and
 * their CPU can be told apart from the proxy's and the load generator's. argv[2] holds the node
 * options as JSON; the child answers `ready` with the URLs, `cpu` with its CPU time, `applied`
 * once a behaviour change reached every node, and closes its nodes when the parent disconnects.
 */
import { startMockNodes } from './mock-node.js';
import type { MockBehaviour, MockNodeOptions } from './types.js';

/** Messages the parent sends. */
export type MockChildRequest =
  | { readonly type: 'cpu' }
  | { readonly type: 'behaviour'; readonly behaviour: Partial<MockBehaviour> };

/** Messages the child sends. */
export type MockChildMessage =
  | { readonly type: 'ready'; readonly nodes: ReadonlyArray<{ name: string; url: string }> }
  | { readonly type: 'cpu'; readonly micros: number }
  | { readonly type: 'applied' }
  | { readonly type: 'failed'; readonly message: string };

const send = (message: MockChildMessage) => process.send?.(message);

try {
  const options = JSON.parse(process.argv[2] ?? '[]') as MockNodeOptions[];
  const nodes = await startMockNodes(options);
  process.on('message', (request: MockChildRequest) => {
    if (request.type === 'behaviour') {
      for (const node of nodes) node.setBehaviour(request.behaviour);
      send({ type: 'applied' });
      return;
    }
    const cpu = process.cpuUsage();
    send({ type: 'cpu', micros: cpu.user + cpu.system });
  });
  process.once('disconnect', () => void Promise.all(nodes.map((node) => node.close())));
  send({ type: 'ready', nodes: nodes.map((node) => ({ name: node.name, url: node.url })) });
} catch (err) {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.disconnect?.();
}
