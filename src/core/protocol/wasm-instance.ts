/**
 * The request path's WebAssembly modules (answer-scan.wat, request-scan.wat), instantiated
 * from their base64 text and compiled by V8's optimizing tier at once: its baseline tier
 * (Liftoff) runs these scans at half the speed, and tiering up on the way left them there for a
 * while (~40% more instructions per call after 500,000 calls, measured under callgrind). The
 * flag is set back right after, so nothing else compiles differently.
 */
import { setFlagsFromString } from 'node:v8';

// The global WebAssembly as far as these modules use it (lib "ES2023" declares none).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: object };
};

/** The exports of the module `base64` holds, compiled optimized; no imports. */
export function instantiateOptimized(base64: string): object {
  // Eagerly: a lazily compiled function is compiled at its first call, by then with Liftoff
  // back on, and tiered up later by a background task (which a busy process may starve).
  setFlagsFromString('--no-liftoff');
  setFlagsFromString('--no-wasm-lazy-compilation');
  let module: object;
  try {
    module = new WebAssembly.Module(Buffer.from(base64, 'base64'));
  } finally {
    setFlagsFromString('--wasm-lazy-compilation');
    setFlagsFromString('--liftoff');
  }
  return new WebAssembly.Instance(module).exports;
}
