import { describe, expect, it } from 'vitest';
import { PerfMap, parseAnnotate, shortName } from './hotpath-functions.js';

const MAP = [
  '296600c2b040 200 JS:*onResponse file:///tmp/cascade-instr-Ksp3N3/this-0/run/dist/core/routing/attempt.js:167:20',
  'd0a6680 100 JS:*_resume /work/main/node_modules/undici/lib/dispatcher/client.js:589:18',
  // The same function compiled again: a second range, added up under one name.
  'd1bb380 80 JS:*_resume /work/main/node_modules/undici/lib/dispatcher/client.js:589:18',
  'bad line',
].join('\n');

// callgrind_annotate --inclusive=no --show=Ir,D1mr --sort=D1mr (its rows, abridged).
const ANNOTATE = `--------------------------------------------------------------------------------
Ir                     D1mr
--------------------------------------------------------------------------------
3,122,670,280 (100.0%) 65,375,918 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                   D1mr                file:function
--------------------------------------------------------------------------------
134,935,277 ( 4.32%) 2,728,987 ( 4.17%)  ???:Builtins_LoadIC [/usr/bin/node]
 10,640,171 ( 0.34%) 1,057,139 ( 1.62%)  ???:0x000000000d1bb380 [???]
 75,059,480 ( 2.40%)   909,519 ( 1.39%)  ???:0x0000296600c2b040 [???]
 28,525,534 ( 0.91%)   891,023 ( 1.36%)  ???:0x000000000d0a6680 [???]
  1,000,000 ( 0.03%)    10,000 ( 0.02%)  ???:0x00000000deadbeef [???]
        264 ( 0.00%)         .           ./libio/./libio/fileops.c:_IO_do_write@@GLIBC_2.2.5 [/usr/lib/x86_64-linux-gnu/libc.so.6]
`;

describe("naming a callgrind dump's functions", () => {
  it('finds the function whose code holds an address, and nothing outside any', () => {
    const map = new PerfMap(MAP);
    expect(map.nameOf(0x296600c2b040n)).toContain('onResponse');
    expect(map.nameOf(0x296600c2b040n + 0x1ffn)).toContain('onResponse');
    expect(map.nameOf(0x296600c2b040n + 0x200n)).toBeUndefined();
    expect(map.nameOf(0x1n)).toBeUndefined();
  });

  it('adds up rows by name, with misses, and names JIT code through the map', () => {
    const costs = parseAnnotate(ANNOTATE, new PerfMap(MAP));
    const byName = new Map(costs.map((c) => [c.name, c]));
    expect(byName.get('Builtins_LoadIC')).toEqual({
      name: 'Builtins_LoadIC',
      instructions: 134935277,
      dataReadMisses: 2728987,
    });
    expect(byName.get('JS:*_resume node_modules/undici/lib/dispatcher/client.js:589:18')).toEqual({
      name: 'JS:*_resume node_modules/undici/lib/dispatcher/client.js:589:18',
      instructions: 10640171 + 28525534,
      dataReadMisses: 1057139 + 891023,
    });
    expect(byName.get('JS:*onResponse dist/core/routing/attempt.js:167:20')?.dataReadMisses).toBe(
      909519,
    );
    expect(byName.get('JIT code (unnamed)')?.instructions).toBe(1000000);
    // No misses is printed as a dot; the name after it stays whole.
    expect(byName.get('./libio/./libio/fileops.c:_IO_do_write@@GLIBC_2.2.5')).toEqual({
      name: './libio/./libio/fileops.c:_IO_do_write@@GLIBC_2.2.5',
      instructions: 264,
      dataReadMisses: 0,
    });
    expect(costs.some((c) => c.name.includes('PROGRAM TOTALS'))).toBe(false);
  });

  it('reads rows of instructions alone (a dump without --cache-sim)', () => {
    const costs = parseAnnotate(
      '  5,000 ( 1.00%)  ???:Builtins_StoreIC [/usr/bin/node]\n',
      undefined,
    );
    expect(costs).toEqual([
      { name: 'Builtins_StoreIC', instructions: 5000, dataReadMisses: undefined },
    ]);
  });

  it("cuts checkouts' paths from names", () => {
    expect(shortName('JS:*search /work/main/node_modules/undici/lib/core/tree.js:91:10')).toBe(
      'JS:*search node_modules/undici/lib/core/tree.js:91:10',
    );
    expect(shortName('JS:*Readable.read node:internal/streams/readable:647:35')).toBe(
      'JS:*Readable.read node:internal/streams/readable:647:35',
    );
    expect(shortName('Builtins_LoadIC [/usr/bin/node]')).toBe('Builtins_LoadIC');
  });
});
