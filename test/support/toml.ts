/**
 * A tiny TOML writer for test configs: scalar values only, which is all a balancer config or
 * price list holds. `raw('50_000_000')` writes text verbatim (digit separators, broken values).
 */

/** TOML text written exactly as given. */
export interface RawToml {
  readonly raw: string;
}

/** A value a test config may hold; `undefined` leaves the key out. */
export type TomlValue = string | number | boolean | RawToml | undefined;

/** A flat table of keys. */
export type TomlFields = Readonly<Record<string, TomlValue>>;

/** Marks text to be written into the TOML file verbatim. */
export function raw(text: string): RawToml {
  return { raw: text };
}

/** One value as TOML text. */
export function tomlValue(value: Exclude<TomlValue, undefined>): string {
  if (typeof value === 'object') return value.raw;
  // JSON string escapes are valid TOML basic-string escapes.
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/** `key = value` lines, skipping undefined values. Keys that are not bare are quoted. */
export function tomlLines(fields: TomlFields): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, Exclude<TomlValue, undefined>] => entry[1] !== undefined)
    .map(([key, value]) => {
      const name = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
      return `${name} = ${tomlValue(value)}\n`;
    })
    .join('');
}

/** `[header]` followed by its fields. */
export function tomlTable(header: string, fields: TomlFields): string {
  return `[${header}]\n${tomlLines(fields)}`;
}

/** `[[header]]` followed by its fields. */
export function tomlArrayTable(header: string, fields: TomlFields): string {
  return `[[${header}]]\n${tomlLines(fields)}`;
}
