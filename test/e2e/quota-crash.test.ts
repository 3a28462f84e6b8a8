import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { parseQuotaFile } from '../../src/core/quota/quota-format.js';
import { assertBuilt } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';

let mocks: MockNode[] = [];
let temp: TempDir | undefined;
let running: CliProcess | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await running?.stop('SIGKILL');
  running = undefined;
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
  temp?.cleanup();
});

/** Sends requests back to back until `stop` is set; returns how many got an answer. */
async function load(url: string, stop: { done: boolean }): Promise<number> {
  let answered = 0;
  while (!stop.done) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        body: '{"jsonrpc":"2.0","id":1,"method":"getBalance"}',
      });
      await response.text();
      answered++;
    } catch {
      return answered; // the server was killed
    }
  }
  return answered;
}

/** Resolves once quotas.json on disk books more than `than` credits on node n. */
async function flushedPast(quotas: string, than: number): Promise<void> {
  for (;;) {
    if (existsSync(quotas)) {
      const used = parseQuotaFile(readFileSync(quotas, 'utf8'), quotas).get('n')?.used ?? 0;
      if (used > than) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('quotas.json under kill -9', () => {
  it('is always complete, valid and never goes backwards across crashes during writes', async () => {
    temp = makeTempDir();
    mocks = await startMockNodes([{ name: 'n' }]);
    temp.write({ 'prices.toml': '[limits]\n[routing]\ngetBalance = 3\n' });
    const config = temp.path('config.toml');
    writeFileSync(
      config,
      `[server]\nhost = "127.0.0.1"\nport = 0\nquota_flush_seconds = 1\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n[[nodes]]\nname = "n"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    );
    const quotas = temp.path('quotas.json');
    let previous = 0;
    for (let round = 0; round < 5; round++) {
      const p = startCli(['serve', '--config', config], { cwd: temp.dir });
      running = p;
      const url = (JSON.parse(await p.waitFor(/cascade serving/)) as { url: string }).url;
      const stop = { done: false };
      const clients = [load(url, stop), load(url, stop), load(url, stop)];
      // Wait for a flush that recorded this round's traffic (however slow the machine), then
      // kill at a different point of the 1 s flush cycle each round.
      await flushedPast(quotas, previous);
      await new Promise((resolve) => setTimeout(resolve, round * 230));
      p.child.kill('SIGKILL');
      await p.exited();
      stop.done = true;
      await Promise.all(clients);
      expect(existsSync(quotas)).toBe(true);
      const snapshot = parseQuotaFile(readFileSync(quotas, 'utf8'), quotas);
      const used = snapshot.get('n')!.used;
      expect(used % 3).toBe(0);
      expect(used).toBeGreaterThan(previous);
      previous = used;
    }
    // No temp files left where the writer died mid-write are mistaken for the real file.
    expect(readdirSync(temp.dir).filter((name) => name === 'quotas.json')).toHaveLength(1);
  }, 60_000);
});
