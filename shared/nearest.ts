/** Nearest-match helpers for "did you mean": context keys (bin/), change-file fields (tools/keys). Pure. */

/** Levenshtein distance: the fewest single-character edits that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The candidate closest to `typed`, ignoring case; the first in order on a tie; '' when there is none. */
export function nearest(typed: string, candidates: readonly string[]): string {
  const lowered = typed.toLowerCase();
  let best = { candidate: '', distance: Infinity };
  for (const candidate of candidates) {
    const distance = editDistance(lowered, candidate.toLowerCase());
    if (distance < best.distance) best = { candidate, distance };
  }
  return best.candidate;
}

/**
 * The candidate `typed` most likely meant, or undefined when none is close (at most a third of its length away, and
 * at least 2): a name far from every candidate may be anything, a pasted key included, and gets no suggestion.
 */
export function closeMatch(typed: string, candidates: readonly string[]): string | undefined {
  const best = nearest(typed, candidates);
  const allowed = Math.max(2, Math.floor(best.length / 3));
  return best !== '' && editDistance(typed.toLowerCase(), best.toLowerCase()) <= allowed ? best : undefined;
}
