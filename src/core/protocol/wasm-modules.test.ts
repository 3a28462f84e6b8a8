/**
 * Each `*-wasm.ts` module holds the WebAssembly its `.wat` source compiles to: this test
 * compiles every source again (wabt) and fails when a module differs. After editing a .wat,
 * regenerate the modules with `npm run build:wasm`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { ANSWER_SCAN_WASM } from './answer-scan-wasm.js';
import { REQUEST_SCAN_WASM } from './request-scan-wasm.js';

/** Every module: its source's name, its constant's name, and the constant as imported. */
const MODULES: ReadonlyArray<readonly [wat: string, constant: string, imported: string]> = [
  ['answer-scan', 'ANSWER_SCAN_WASM', ANSWER_SCAN_WASM],
  ['request-scan', 'REQUEST_SCAN_WASM', REQUEST_SCAN_WASM],
];

async function compiled(name: string): Promise<string> {
  const wabt = await wabtInit();
  const source = readFileSync(new URL(`./${name}.wat`, import.meta.url), 'utf8');
  const module = wabt.parseWat(`${name}.wat`, source);
  try {
    module.validate();
    return Buffer.from(module.toBinary({}).buffer).toString('base64');
  } finally {
    module.destroy();
  }
}

function moduleText(name: string, constant: string, base64: string): string {
  return [
    `// Generated from ${name}.wat by \`npm run build:wasm\`: edit the .wat, not this file.`,
    '',
    `/** The compiled ${name}.wat, base64. */`,
    `export const ${constant} =`,
    `  '${base64}';`,
    '',
  ].join('\n');
}

describe('WebAssembly modules', () => {
  it.each(MODULES)('%s-wasm.ts is what %s.wat compiles to', async (name, constant, imported) => {
    const base64 = await compiled(name);
    // `npm run build:wasm` writes the module (this run still imported the one it replaces).
    if (process.env.CASCADE_WRITE_WASM === '1') {
      writeFileSync(
        new URL(`./${name}-wasm.ts`, import.meta.url),
        moduleText(name, constant, base64),
      );
      return;
    }
    expect(imported, 'run `npm run build:wasm` after editing the .wat').toBe(base64);
  });
});
