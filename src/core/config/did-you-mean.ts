/** Edit distance between two short strings (Levenshtein, two-row). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The closest candidate to `word`, if one is close enough to be a plausible typo. */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = candidate.toLowerCase() === lower ? 0 : distance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Keys that belong at the top of the file: written under a `[table]` header, TOML makes them
 * that table's (the usual slip: `keys_file` pasted below `[server]`).
 */
const TOP_LEVEL_ONLY: ReadonlySet<string> = new Set(['keys_file']);

/** A "did you mean" hint for an unknown key, or a list of what is allowed. */
export function unknownKeyHint(word: string, candidates: readonly string[]): string {
  if (TOP_LEVEL_ONLY.has(word) && !candidates.includes(word)) {
    return `${word} belongs at the top level: move it above the first [table] header of the file (a key written under a header belongs to that table)`;
  }
  const match = closestMatch(word, candidates);
  return match
    ? `did you mean '${match}'?`
    : `allowed keys: ${candidates.join(', ')}; remove the key`;
}
