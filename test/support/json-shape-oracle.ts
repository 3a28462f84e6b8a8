/**
 * The oracle the jsonShape tests hold the byte scan to: what JSON.parse of the UTF-8 text says,
 * and the exact verdict expected for a value JSON.stringify wrote.
 */
import { expect } from 'vitest';
import { JsonShape, jsonShape } from '../../src/core/protocol/json-shape.js';

const { invalid, object, array, scalar, unsure } = JsonShape;

/** Verdict names by JsonShape value, for readable failures. */
export const NAMES = ['invalid', 'object', 'array', 'scalar', 'unsure'];

/** A text as UTF-8 bytes (bytes pass through). */
export const bytesOf = (text: string | Uint8Array): Uint8Array =>
  typeof text === 'string' ? Buffer.from(text, 'utf8') : text;

/** The verdict's name for a text. */
export const shapeName = (text: string | Uint8Array): string => NAMES[jsonShape(bytesOf(text))]!;

type Parsed = { ok: true; value: unknown } | { ok: false };

/** The oracle: what the code this replaces would see. */
export function parse(bytes: Uint8Array): Parsed {
  try {
    return { ok: true, value: JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const kindOf = (value: unknown): number =>
  Array.isArray(value) ? array : isObject(value) ? object : scalar;

/**
 * The verdict is consistent with JSON.parse; `unsure` only for valid objects. The property
 * tests call this tens of thousands of times: it compares plainly and builds an assertion (with
 * the input as its message) only on a mismatch, so their run time is the scanner's and
 * JSON.parse's rather than the assertion library's.
 */
export function expectAgreesWithParse(bytes: Uint8Array): void {
  const shape = jsonShape(bytes);
  const parsed = parse(bytes);
  const text = (): string => Buffer.from(bytes).toString('utf8');
  if (!parsed.ok) {
    if (shape !== invalid) expect(NAMES[shape], text()).toBe('invalid');
    return;
  }
  const { value } = parsed;
  const seen = shape === unsure ? object : shape;
  if (seen !== kindOf(value)) expect(NAMES[seen], text()).toBe(NAMES[kindOf(value)]);
  if (shape === object && Object.hasOwn(value as object, 'error')) {
    expect(Object.hasOwn(value as object, 'error'), text()).toBe(false);
  }
}

/** The exact verdict for a value serialized by JSON.stringify (escapes only where needed). */
export function expectedShape(value: unknown): number {
  if (!isObject(value)) return kindOf(value);
  const suspect = Object.keys(value).some((k) => k === 'error' || JSON.stringify(k).includes('\\'));
  return suspect ? unsure : object;
}
