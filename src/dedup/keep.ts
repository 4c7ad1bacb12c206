// Which member of each cluster a deduplicated corpus keeps (the `keep` option of dedup() and dedupStream, the
// CLI's --keep): the first in input order (default), the longest or the shortest text, ties going to the first.
import { show } from '../errors.js';

/**
 * Which member of a cluster is kept (duplicateOf -1) while the others point at it: the first in input order, or the
 * longest or shortest text (string length, or bytes of a Uint8Array), ties going to the first.
 */
export type KeepRule = 'first' | 'longest' | 'shortest';

/** Every KeepRule; 'first' is the default. */
export const KEEP_RULES: readonly KeepRule[] = ['first', 'longest', 'shortest'];

/** `keep`, checked: a RangeError naming the value for an unknown rule, a TypeError for a value not a string. */
export function checkKeep(keep: unknown): KeepRule {
  if (typeof keep !== 'string') throw new TypeError(`keep must be 'first', 'longest' or 'shortest', got ${show(keep)}`);
  if (!(KEEP_RULES as readonly string[]).includes(keep))
    throw new RangeError(`keep must be 'first', 'longest' or 'shortest', got ${show(keep)}`);
  return keep as KeepRule;
}

/**
 * For each document, the index of the document its cluster keeps in its place, or -1 for a document kept (every
 * document alone in its cluster, and one per cluster of two or more). `clusterOf` gives each document's cluster
 * as its lowest index (dedup's representative); `lengthOf` a document's text length (string length, or bytes of a
 * Uint8Array text), read only for documents in clusters of two or more and only under 'longest' and 'shortest'.
 */
export function duplicatesOf(clusterOf: Uint32Array, keep: KeepRule, lengthOf: (i: number) => number): Int32Array {
  const n = clusterOf.length;
  const kept = new Int32Array(n).fill(-1); // by representative: its cluster's kept document
  if (keep === 'first') {
    for (let i = 0; i < n; i++) kept[clusterOf[i]!] = clusterOf[i]!;
  } else {
    // Members in index order: a later member replaces the one held only when strictly longer (shorter).
    const best = new Float64Array(n);
    const sign = keep === 'longest' ? 1 : -1;
    const size = new Uint32Array(n);
    for (let i = 0; i < n; i++) size[clusterOf[i]!]!++;
    for (let i = 0; i < n; i++) {
      const rep = clusterOf[i]!;
      if (size[rep] === 1) {
        kept[rep] = i;
        continue;
      }
      const value = sign * lengthOf(i);
      if (kept[rep] === -1 || value > best[rep]!) {
        kept[rep] = i;
        best[rep] = value;
      }
    }
  }
  const duplicateOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const k = kept[clusterOf[i]!]!;
    duplicateOf[i] = k === i ? -1 : k;
  }
  return duplicateOf;
}
