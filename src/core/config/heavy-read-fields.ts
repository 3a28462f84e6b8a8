/**
 * A key's guards for the reads that drain credits (issue 29), beside `params` (which already
 * limits a method to listed first params, e.g. getProgramAccounts to listed program ids):
 *
 *   required_filters = { getProgramAccounts = ["dataSize", "memcmp"], eth_getLogs = ["address", "topics"] }
 *   max_answer_bytes = 5_000_000
 *
 * A method in `required_filters` is served only when the call carries at least one of the
 * listed filters (a member of one of its object params, or of an element of a `filters` list);
 * an answer bigger than `max_answer_bytes` is refused instead of being handed to the key.
 */
import type { ProblemList } from './problem-list.js';
import { describeType, isTable, type FieldReader } from './toml-fields.js';

const FILTER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const HINT =
  'e.g. required_filters = { getProgramAccounts = ["dataSize", "memcmp"], eth_getLogs = ["address", "topics"] } (a call needs one of the filters listed for its method)';

/** The two keys as read. */
export interface HeavyReadFields {
  readonly requiredFilters?: Readonly<Record<string, readonly string[]>>;
  readonly maxAnswerBytes?: number;
}

function filterList(
  value: unknown,
  file: string,
  at: string,
  problems: ProblemList,
): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
    problems.error(
      file,
      at,
      `must be a non-empty list of filter names, got ${describeType(value)}`,
      HINT,
    );
    return undefined;
  }
  const names = value as string[];
  const bad = names.find((name) => !FILTER_NAME.test(name));
  if (bad !== undefined) {
    problems.error(file, at, `'${bad}' is not a filter name`, HINT);
    return undefined;
  }
  return names;
}

/** Reads `required_filters` and `max_answer_bytes` of the key at `at`; undefined on errors. */
export function readHeavyReadFields(
  r: FieldReader,
  entry: Readonly<Record<string, unknown>>,
  file: string,
  at: string,
  problems: ProblemList,
): HeavyReadFields | undefined {
  const before = problems.errors.length;
  const maxAnswerBytes = r.integer('max_answer_bytes', {
    min: 1,
    max: 1_000_000_000,
    required: false,
    hint: 'answers bigger than this many bytes are refused instead of being sent to the key, e.g. 5000000',
  });
  r.accept('required_filters');
  const value = entry.required_filters;
  let requiredFilters: Record<string, readonly string[]> | undefined;
  if (value !== undefined && !isTable(value)) {
    problems.error(
      file,
      `${at}.required_filters`,
      `must be a table, got ${describeType(value)}`,
      HINT,
    );
  } else if (value !== undefined) {
    requiredFilters = {};
    for (const [method, list] of Object.entries(value)) {
      const names = filterList(list, file, `${at}.required_filters.${method}`, problems);
      if (names !== undefined) requiredFilters[method] = names;
    }
  }
  if (problems.errors.length > before) return undefined;
  return {
    ...(requiredFilters === undefined ? {} : { requiredFilters }),
    ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }),
  };
}
