// Exact ground truth: every pair of documents whose word-shingle sets have Jaccard similarity >= a threshold,
// found without comparing all pairs (an all-pairs set-similarity join with prefix and size filtering) and then
// verified exactly. Shingles are interned to integers, so nothing here is approximate.
import { jaccardSorted, shinglesOfWords, wordsOf } from '../dedup/shingle-jaccard.js';

/** A similar pair, a < b, with its exact Jaccard similarity. */
export interface SimilarPair {
  a: number;
  b: number;
  jaccard: number;
}

/** Each document's distinct shingles as sorted integer ids (ids shared across the corpus). */
export function shingleSets(texts: readonly string[], width = 3): Uint32Array[] {
  const ids = new Map<string, number>();
  return wordsOf(texts).map((words) => {
    const set = shinglesOfWords(words, width);
    const out = new Uint32Array(set.size);
    let i = 0;
    for (const s of set) {
      let id = ids.get(s);
      if (id === undefined) ids.set(s, (id = ids.size));
      out[i++] = id;
    }
    return out.sort();
  });
}

/** Exact Jaccard of two sorted id sets in the same order; 0 if either is empty (no evidence of similarity). */
export const jaccard: (a: Uint32Array, b: Uint32Array) => number = jaccardSorted;

function checkThreshold(threshold: number): void {
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    throw new RangeError(`threshold must be a number in (0, 1], got ${String(threshold)}`);
  }
}

function byPair(x: SimilarPair, y: SimilarPair): number {
  return x.a - y.a || x.b - y.b;
}

/** The reference: compares every pair. O(n²); for tests and tiny corpora. */
export function similarPairsBruteForce(sets: readonly Uint32Array[], threshold: number): SimilarPair[] {
  checkThreshold(threshold);
  const out: SimilarPair[] = [];
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      const j = jaccard(sets[a]!, sets[b]!);
      if (j >= threshold) out.push({ a, b, jaccard: j });
    }
  }
  return out.sort(byPair);
}

// Slack on the float bounds below: rounding may only lengthen prefixes and loosen the size filter (never prune).
const EPS = 1e-9;

/**
 * All pairs with Jaccard >= threshold (0 < threshold <= 1), sorted by (a, b).
 *
 * Why none is missed (AllPairs, Bayardo et al. 2007): tokens are ranked rarest first and each set is sorted by rank.
 * If J(x, y) >= t then their overlap is at least α = ⌈t/(1+t)·(|x|+|y|)⌉, and any two sets sharing α tokens share a
 * token among the first |x|-α+1 of x and the first |y|-α+1 of y. Sets are processed by increasing size, so when x
 * probes, every earlier y has |y| <= |x|, hence α >= ⌈t·|x|⌉ (x's probe prefix |x|-⌈t|x|⌉+1 is long enough) and
 * α >= ⌈2t/(1+t)·|y|⌉ (y's indexed prefix |y|-⌈2t/(1+t)|y|⌉+1 is long enough). J >= t also needs |y| >= t·|x|
 * (size filter). Every candidate that passes is verified with the exact Jaccard.
 */
export function similarPairs(
  sets: readonly Uint32Array[],
  threshold: number,
  stats?: { candidates: number },
): SimilarPair[] {
  checkThreshold(threshold);
  const n = sets.length;
  // Global order: rarest tokens first, so prefixes hold the most selective tokens and posting lists stay short.
  let vocabulary = 0;
  for (const s of sets) for (let i = 0; i < s.length; i++) vocabulary = Math.max(vocabulary, s[i]! + 1);
  const frequency = new Uint32Array(vocabulary);
  for (const s of sets) for (let i = 0; i < s.length; i++) frequency[s[i]!]!++;
  const byRarity = Array.from({ length: vocabulary }, (_, i) => i).sort(
    (x, y) => frequency[x]! - frequency[y]! || x - y,
  );
  const rank = new Uint32Array(vocabulary);
  byRarity.forEach((token, r) => (rank[token] = r));
  const ranked = sets.map((s) => s.map((t) => rank[t]!).sort());

  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => ranked[x]!.length - ranked[y]!.length || x - y);
  const postings: number[][] = Array.from({ length: vocabulary }, () => []);
  const seen = new Int32Array(n).fill(-1);
  const indexShare = (2 * threshold) / (1 + threshold);
  const out: SimilarPair[] = [];
  const candidates: number[] = [];
  for (const x of order) {
    const xs = ranked[x]!;
    const size = xs.length;
    if (size === 0) continue; // an empty set is similar to nothing
    const probe = size - Math.ceil(threshold * size - EPS) + 1;
    const minSize = threshold * size - EPS;
    candidates.length = 0;
    for (let p = 0; p < probe; p++) {
      for (const y of postings[xs[p]!]!) {
        if (seen[y] === x || ranked[y]!.length < minSize) continue;
        seen[y] = x;
        candidates.push(y);
      }
    }
    if (stats) stats.candidates += candidates.length;
    for (const y of candidates) {
      const j = jaccard(xs, ranked[y]!);
      if (j >= threshold) out.push(x < y ? { a: x, b: y, jaccard: j } : { a: y, b: x, jaccard: j });
    }
    const indexed = size - Math.ceil(indexShare * size - EPS) + 1;
    for (let p = 0; p < indexed; p++) postings[xs[p]!]!.push(x);
  }
  return out.sort(byPair);
}
