/**
 * answer-scan-wasm.ts holds the WebAssembly that answer-scan.wat compiles to: this test compiles
 * the source again (wabt) and fails when the two differ. After editing the .wat, regenerate
 * the module with `npm run build:wasm`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { ANSWER_SCAN_WASM } from './answer-scan-wasm.js';

const WAT = new URL('./answer-scan.wat', import.meta.url);
const MODULE = new URL('./answer-scan-wasm.ts', import.meta.url);

async function compiled(): Promise<string> {
  const wabt = await wabtInit();
  const module = wabt.parseWat('answer-scan.wat', readFileSync(WAT, 'utf8'));
  try {
    module.validate();
    return Buffer.from(module.toBinary({}).buffer).toString('base64');
  } finally {
    module.destroy();
  }
}

function moduleText(base64: string): string {
  return [
    '// Generated from answer-scan.wat by `npm run build:wasm`: edit the .wat, not this file.',
    '',
    '/** The compiled answer-scan.wat, base64. */',
    `export const ANSWER_SCAN_WASM =`,
    `  '${base64}';`,
    '',
  ].join('\n');
}

describe('answer-scan-wasm.ts', () => {
  it('is what answer-scan.wat compiles to', async () => {
    const base64 = await compiled();
    // `npm run build:wasm` writes the module (this run still imported the one it replaces).
    if (process.env.CASCADE_WRITE_WASM === '1') return writeFileSync(MODULE, moduleText(base64));
    expect(ANSWER_SCAN_WASM, 'run `npm run build:wasm` after editing answer-scan.wat').toBe(base64);
  });
});
