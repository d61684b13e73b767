/** Edit distance with adjacent transpositions (optimal string alignment): `lsit` is one edit from `list`. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j * +!i));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/**
 * The candidates closest to `word`, best first: within a third of the word's length (at least 1, at most 3) edits,
 * or that the word is a prefix of (`desc` → describe).
 */
export function suggestions(word: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return candidates
    .map((candidate) => ({ candidate, distance: editDistance(word, candidate) }))
    .filter(({ candidate, distance }) => distance <= limit || (word.length >= 2 && candidate.startsWith(word)))
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map(({ candidate }) => candidate);
}

/** `Did you mean "node"?` / `Did you mean one of "list", "logs"?`; empty when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const close = suggestions(word, candidates);
  if (close.length === 0) return "";
  const quoted = close.map((c) => `"${c}"`);
  return close.length === 1 ? `\nDid you mean ${quoted[0]}?` : `\nDid you mean one of ${quoted.join(", ")}?`;
}
