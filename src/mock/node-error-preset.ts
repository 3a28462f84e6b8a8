/** The shape of a named, source-grounded node error (see node-errors.ts). */
import type { MockRpcError } from './types.js';

/** The one value a preset's message is parametrised by (a reason, a slot, a nonce…). */
export interface NodeErrorParam {
  readonly name: string;
  /** `integer`: the argument must be a whole number. */
  readonly kind: 'text' | 'integer';
  readonly fallback: string | number;
}

/** A named error as a real client or provider answers it. */
export interface NodeErrorPreset {
  /** One line for help texts and usage errors. */
  readonly summary: string;
  readonly param?: NodeErrorParam;
  /** The error for `arg` (already checked against `param`; the fallback when none was given). */
  readonly build: (arg: string) => MockRpcError;
}
