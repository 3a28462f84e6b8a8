/** `validate-config --online`: each node's chain identity (expect_chain) and head, on anvil. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../../test/support/config-files.js';
import { anvilUnavailable, startAnvil, type Anvil } from '../../test/support/anvil.js';
import { useTempDir } from '../../test/support/temp-dir.js';
import { runValidateConfig } from './validate-config.js';

const unavailable = anvilUnavailable();
const temp = useTempDir('cascade-online-');
let right: Anvil | undefined;
let wrong: Anvil | undefined;

beforeAll(async () => {
  if (unavailable !== undefined) return;
  [right, wrong] = await Promise.all([startAnvil(), startAnvil(['--chain-id', '5'])]);
  await right.call('anvil_mine', ['0x7']);
}, 30_000);
afterAll(async () => {
  await Promise.all([right?.stop(), wrong?.stop()]);
});

describe.skipIf(unavailable !== undefined)(`validate-config --online ${unavailable ?? ''}`, () => {
  it('prints each node chain and head; exits 1 when one is on another chain', async () => {
    temp.write({
      'c.toml': balancerToml({
        server: { expect_chain: '31337' },
        nodes: [
          nodeFields('right', { url: right!.url, provider_pricing_path: 'prices.toml' }),
          nodeFields('wrong', { url: wrong!.url, provider_pricing_path: 'prices.toml' }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    const out: string[] = [];
    const io = {
      out: (t: string) => out.push(t),
      err: (t: string) => out.push(t),
      env: {},
      cwd: temp.dir,
    };
    expect(await runValidateConfig({ config: 'c.toml', online: true }, io)).toBe(1);
    const text = out.join('');
    expect(text).toMatch(/right\s+│?\s*same\s+│?\s*7/);
    expect(text).toMatch(/wrong\s+│?\s*other \(5\)\s+│?\s*0/);
    out.length = 0;
    expect(await runValidateConfig({ config: 'c.toml', online: true, json: true }, io)).toBe(1);
    expect(out).toHaveLength(1);
    const online = JSON.parse(out[0]!) as {
      online: { name: string; chain: string; head: number }[];
    };
    expect(online.online).toEqual([
      expect.objectContaining({ name: 'right', chain: 'same', head: 7 }),
      expect.objectContaining({ name: 'wrong', chain: 'other', got: '5', head: 0 }),
    ]);
  });
});
