/**
 * `required_filters` of a key (issue 29): a heavy read passes only when it names at least one of
 * the filters listed for its method. A filter is a member with a value of one of the call's
 * object params (eth_getLogs' `address` and `topics`, getTokenAccountsByOwner's `mint` or
 * `programId`) or of an element of a `filters` list in one (getProgramAccounts' `dataSize`,
 * `memcmp`). An empty value names nothing: `null`, `""`, `[]`, `[null, null]`.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` narrows anything (a topic list of nulls does not). */
function narrows(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.some(narrows);
  return true;
}

/** Whether one object param carries filter `name`, itself or in its `filters` list. */
function carries(param: Record<string, unknown>, name: string): boolean {
  if (narrows(param[name])) return true;
  const filters = param.filters;
  return Array.isArray(filters) && filters.some((f) => isObject(f) && narrows(f[name]));
}

/** Whether the call's `params` name at least one filter of `required`. */
export function hasRequiredFilter(params: unknown, required: readonly string[]): boolean {
  if (!Array.isArray(params)) return false;
  for (const param of params) {
    if (!isObject(param)) continue;
    if (required.some((name) => carries(param, name))) return true;
  }
  return false;
}
