// Did-you-mean: the one edit distance, and the candidate a mistyped word most likely meant.

/** How {@link editDistance} counts. */
export interface EditDistanceOptions {
  /**
   * Count two swapped neighbours as one edit (Damerau-Levenshtein, optimal string alignment);
   * without it, plain Levenshtein counts them as two.
   * @default true
   */
  transpositions?: boolean;
}

/** The fewest one-character edits (change, insert, delete; and by default swap of neighbours) from `a` to `b`. */
export function editDistance(a: string, b: string, options: EditDistanceOptions = {}): number {
  const transpositions = options.transpositions ?? true;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (transpositions && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j], prev2[j - 2] + 1);
      }
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length];
}

/** What {@link closest} counts as close. */
export interface ClosestOptions extends EditDistanceOptions {
  /**
   * The largest distance still suggested: a number, or one computed from the compared word and
   * candidate (lower-cased when `ignoreCase`).
   * @default 2
   */
  maxDistance?: number | ((word: string, candidate: string) => number);
  /**
   * Compare lower-cased, so that `Replicas` is near `replica`.
   * @default false
   */
  ignoreCase?: boolean;
  /**
   * Suggest only a candidate closer than the shorter word's length: rewriting a whole short word is
   * no typo.
   * @default false
   */
  partialOnly?: boolean;
}

/**
 * The candidate nearest to `word` within the allowed distance, if any; of equally near ones, the
 * first.
 */
export function closest(word: string, candidates: readonly string[], options: ClosestOptions = {}): string | undefined {
  const { maxDistance = 2, ignoreCase = false, partialOnly = false } = options;
  const compared = ignoreCase ? word.toLowerCase() : word;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const other = ignoreCase ? candidate.toLowerCase() : candidate;
    const limit = typeof maxDistance === 'number' ? maxDistance : maxDistance(compared, other);
    // The distance is at least the difference in length: most candidates need no table.
    if (Math.abs(other.length - compared.length) > Math.min(limit, bestDistance - 1)) continue;
    const d = editDistance(compared, other, options);
    if (d > limit || d >= bestDistance) continue;
    if (partialOnly && d >= Math.min(compared.length, other.length)) continue;
    best = candidate;
    bestDistance = d;
  }
  return best;
}

/** Words longer than this get no suggestion: no name is near them, and the search costs length squared. */
const MAX_SUGGESTED_LENGTH = 64;

/** Case, dashes and underscores are the commonest YAML key slips (base_image). */
function loosen(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/**
 * The one of `names` that `word` is most likely a slip of: one spelled the same but for case, then
 * one the same but for case, dashes and underscores, then the nearest within a third of the word's
 * length (at least 2) that does not rewrite a whole word.
 */
export function suggest(word: string, names: readonly string[]): string | undefined {
  if (word.length > MAX_SUGGESTED_LENGTH) return undefined;
  const lower = word.toLowerCase();
  const loose = loosen(word);
  const same = names.find((n) => n.toLowerCase() === lower) ?? names.find((n) => loosen(n) === loose);
  if (same !== undefined) return same;
  return closest(word, names, {
    ignoreCase: true,
    partialOnly: true,
    maxDistance: (w) => Math.max(2, Math.floor(w.length / 3)),
  });
}
