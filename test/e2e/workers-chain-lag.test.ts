/**
 * `cascade serve --workers 2` judges lag with the heads the whole fleet has seen (issue 26):
 * a worker that starts after the other has learned the chain knows at once that the fast node
 * is behind, and never relays its stale getSlot — before, each worker learned alone and a
 * late one served the lagging node's answers until its own traffic had sampled the fresh one.
 */
import { describe, expect, it } from 'vitest';
import { MockChain, startMockNodes } from '../../src/mock/index.js';
import { startCli } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { freePort } from '../support/free-port.js';
import { postOnNewConnection } from '../support/fresh-connection.js';
import { holdWorker } from '../support/held-worker.js';

const fixture = useE2eFixture();
const LAG = 30;

/** getSlot on a new connection each time: the workers take turns. */
async function getSlot(url: string, id: number): Promise<number> {
  const { text } = await postOnNewConnection(
    url,
    `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}`,
  );
  return (JSON.parse(text) as { result: number }).result;
}

describe('--workers 2 share what the answers showed of the chain', () => {
  it('a worker that starts late never relays the lagging node’s getSlot', async () => {
    const temp = fixture.tempDir();
    const held = holdWorker(temp, 2);
    // One chain that stays put: `behind` answers from LAG slots back, and faster.
    const chain = new MockChain({ manual: true });
    const mocks = await startMockNodes([
      { name: 'behind', chain, lag: LAG },
      { name: 'fresh', chain, delayMs: 15 },
    ]);
    fixture.mocks.push(...mocks);
    const port = await freePort();
    const node = (name: string) =>
      `[[nodes]]\nname = "${name}"\nurl = "${mocks.find((m) => m.name === name)!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`;
    temp.write({
      'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\n',
      'config.toml': [
        `[server]\nhost = "127.0.0.1"\nport = ${port}\nhead_sample_percent = 10\n`,
        '[cache]\nenabled = false\ncoalesce = false\n',
        node('behind'),
        node('fresh'),
      ].join('\n'),
    });
    const proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], {
      cwd: temp.dir,
      env: held.env,
    });
    fixture.processes.push(proxy);
    const url = `http://127.0.0.1:${port}`;
    await expect
      .poll(async () => (await fetch(`${url}/health`).catch(() => undefined))?.status)
      .toBe(200);

    // Worker 1 alone serves until its answers (and its samples) showed both heads.
    const lagOfBehind = async (): Promise<number | undefined> => {
      const health = (await (await fetch(`${url}/health`)).json()) as {
        nodes: Array<{ name: string; lag?: number }>;
      };
      return health.nodes.find((n) => n.name === 'behind')?.lag;
    };
    for (let id = 0; id < 400 && (await lagOfBehind()) !== LAG; id++) await getSlot(url, id);
    expect(await lagOfBehind()).toBe(LAG);

    held.release();
    await proxy.waitFor(/"worker":2,.*worker serving/);
    // Both workers take these in turn; not one answer comes from the lagging node.
    const slots: number[] = [];
    for (let id = 0; id < 40; id++) slots.push(await getSlot(url, id));
    expect(slots.filter((slot) => slot < chain.slot())).toEqual([]);
    expect(mocks.find((m) => m.name === 'fresh')!.stats().byMethod.getSlot).toBeGreaterThan(20);
  });
});
