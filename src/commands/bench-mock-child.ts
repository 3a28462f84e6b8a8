/**
 * The mock-node process of `cascade bench load|overhead`: forked by the bench so the nodes
 * get their own event loop (and their CPU can be told apart from the proxy's and the load
 * generator's). argv[2] holds the node options as JSON; the child answers `ready` with the
 * URLs, `cpu` with its CPU time, and closes its nodes when the bench disconnects.
 */
import { startMockNodes, type MockNodeOptions } from '../mock/index.js';

/** Messages the child sends. */
export type MockChildMessage =
  | { readonly type: 'ready'; readonly nodes: ReadonlyArray<{ name: string; url: string }> }
  | { readonly type: 'cpu'; readonly micros: number }
  | { readonly type: 'failed'; readonly message: string };

const send = (message: MockChildMessage) => process.send?.(message);

try {
  const options = JSON.parse(process.argv[2] ?? '[]') as MockNodeOptions[];
  const nodes = await startMockNodes(options);
  process.on('message', () => {
    const cpu = process.cpuUsage();
    send({ type: 'cpu', micros: cpu.user + cpu.system });
  });
  process.once('disconnect', () => void Promise.all(nodes.map((node) => node.close())));
  send({ type: 'ready', nodes: nodes.map((node) => ({ name: node.name, url: node.url })) });
} catch (err) {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.disconnect?.();
}
