/**
 * Close names, for not-found and access refusals that suggest what the caller may have meant (issue 19 item 5). The
 * caller passes only names it may see: this module never decides visibility.
 */

/** Most names one suggestion offers. */
export const MAX_SUGGESTIONS = 3;

/**
 * Edit distance with adjacent transpositions (optimal string alignment: insertions, deletions, substitutions and
 * swaps of two neighbours, each 1; the measure commander's "did you mean" uses) between two strings, by UTF-16 code
 * unit; pds's names are DNS labels, so that is by character. Three rows of the table: O(a·b) time, O(b) space.
 * @example editDistance('acm', 'acme') // 1
 * @example editDistance('wbe', 'web') // 1
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** One name is the other with `-words` added before or after (`gamma-team` and `gamma`, `web` and `acme-web`). */
function sharesLabel(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return long.startsWith(`${short}-`) || long.endsWith(`-${short}`);
}

/**
 * The names of `candidates` close to `name`, closest first (then alphabetical), at most {@link MAX_SUGGESTIONS}: within
 * an edit distance of a third of the longer name (at least 1), or the same name with `-words` added or dropped.
 * `name` itself is never suggested.
 * @param options.maxDistance a lower bound on the edit distance, for names that share a long common part (workflow
 *   names differ only in a 5-character suffix).
 * @example nearNames('gamma-team', ['gamma', 'delta']) // ['gamma']
 */
export function nearNames(name: string, candidates: Iterable<string>, options: { maxDistance?: number } = {}): string[] {
  const scored: { candidate: string; distance: number }[] = [];
  for (const candidate of new Set(candidates)) {
    if (candidate === name) continue;
    const distance = editDistance(name, candidate);
    const limit = Math.min(options.maxDistance ?? Infinity, Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 3)));
    if (distance <= limit || sharesLabel(name, candidate)) scored.push({ candidate, distance });
  }
  scored.sort((x, y) => x.distance - y.distance || (x.candidate < y.candidate ? -1 : 1));
  return scored.slice(0, MAX_SUGGESTIONS).map((s) => s.candidate);
}

/**
 * The suggestion a refusal appends, `; did you mean "gamma"?` or `; did you mean "web", "api" or "www"?`, or `''`
 * when no candidate is close ({@link nearNames}, with the same options).
 */
export function didYouMean(name: string, candidates: Iterable<string>, options: { maxDistance?: number } = {}): string {
  const near = nearNames(name, candidates, options).map((n) => `"${n}"`);
  if (!near.length) return '';
  const list = near.length === 1 ? near[0] : `${near.slice(0, -1).join(', ')} or ${near.at(-1)}`;
  return `; did you mean ${list}?`;
}
