// dedup's join when its candidates are verified and every document's shingle-set size is known (the fused pass):
// J(A, B) = |A ∩ B| / |A ∪ B| ≤ min(|A|, |B|) / max(|A|, |B|), so a pair whose sizes are further apart than the
// threshold allows is rejected by the verifier without a look at its sets. The distinct fingerprints are sorted by
// set size and each is compared only with those of sizes it could pass with: a band along the diagonal of the
// self-join. On the bench's 25 MB of license texts (sizes 29 to 1,580 shingles, threshold 0.6) the band holds
// 49 % of all pairs.
//
//   sorted by size →   the self-join compares the pairs above the diagonal, the band only those inside it:
//   s0 ≤ s1 ≤ … ≤ sn   row p ends at the first size s_r with s_p / s_r < threshold (ends grow with p)
//
//        ┌───────────────┐
//        │ ▓▓▓▓          │  ▓ compared   (blank: cannot reach the threshold, not compared)
//        │  ▓▓▓▓▓        │
//        │   ▓▓▓▓▓▓      │
//        │    ▓▓▓▓▓▓▓▓   │
//        └───────────────┘
import type { Collapsed } from './dedup-groups.js';
import { halvesOf, sortPairs } from './dedup-groups.js';
import { selfPairsInBand, sortByA } from '../hamming/hamming.js';
import type { NearDuplicatePairs } from './join.js';

export interface SizeBand {
  /** The groups of identical fingerprints (Collapsed.fpGroups), ordered by their smallest set size. */
  order: Uint32Array;
  /** Position p (in `order`) pairs only with positions p < r < ends[p]; non-decreasing. */
  ends: Uint32Array;
  /** Pairs inside the band: Σ ends[p] − p − 1. */
  pairs: number;
}

/**
 * The band of the distinct fingerprints: document d's shingle-set size is setSizes[setOf[d]], and a document
 * without a set (setOf[d] < 0) means no band (null). A group of several documents with one fingerprint spans their sizes, and two groups stay
 * paired when any two of their members could pass. Pairs of empty sets stay in (the verifier decides those by
 * their trimmed texts); an empty set against a non-empty one never passes.
 */
export function sizeBand(c: Collapsed, setOf: Int32Array, setSizes: Uint32Array, threshold: number): SizeBand | null {
  const { start, members } = c.fpGroups;
  const { joined } = c;
  const groups = start.length - 1;
  const lo = new Uint32Array(groups);
  const hi = new Uint32Array(groups);
  for (let g = 0; g < groups; g++) {
    let min = 0xffffffff;
    let max = 0;
    for (let x = start[g]!; x < start[g + 1]!; x++) {
      const set = setOf[joined[members[x]!]!]!;
      if (set < 0) return null;
      const size = setSizes[set]!;
      if (size < min) min = size;
      if (size > max) max = size;
    }
    lo[g] = min;
    hi[g] = max;
  }
  const iota = new Uint32Array(groups);
  for (let g = 0; g < groups; g++) iota[g] = g;
  // A stable sort of the groups by their smallest size, carrying the group numbers.
  const { a: sortedLo, b: order } = sortByA(lo, iota, new Uint8Array(groups));
  const ends = new Uint32Array(groups);
  let pairs = 0;
  let reach = 0;
  for (let p = 0; p < groups; p++) {
    const h = hi[order[p]!]!;
    // Position r > p may pass with p while its smallest size is within p's largest, or h / size ≥ threshold (a
    // correctly rounded division, as the verifier's: its accepted ratio |A ∩ B| / |A ∪ B| is never above h / size).
    // Both fail from some r on, since the sizes ascend: the first such r, by bisection.
    let low = p + 1;
    let high = groups;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const size = sortedLo[mid]!;
      if (size <= h || h / size >= threshold) low = mid + 1;
      else high = mid;
    }
    reach = Math.max(reach, low);
    ends[p] = reach;
    pairs += reach - p - 1;
  }
  return { order, ends, pairs };
}

/**
 * The pairs within k of the distinct fingerprints (c.distinctFps, by group number) inside the band, ordered by
 * (a, b) as findNearDuplicates orders the pairs of the whole self-join.
 */
export function joinInBand(c: Collapsed, band: SizeBand, k: number, bits: 64 | 128): NearDuplicatePairs {
  const words = bits / 64;
  const half = 2 * words;
  const { order } = band;
  const sorted = new BigUint64Array(order.length * words);
  const to32 = halvesOf(sorted);
  const from32 = halvesOf(c.distinctFps);
  for (let p = 0; p < order.length; p++)
    for (let h = 0; h < half; h++) to32[p * half + h] = from32[order[p]! * half + h]!;
  const found = selfPairsInBand(sorted, k, bits, band.ends);
  const { a, b } = found;
  for (let p = 0; p < a.length; p++) {
    const x = order[a[p]!]!;
    const y = order[b[p]!]!;
    a[p] = Math.min(x, y);
    b[p] = Math.max(x, y);
  }
  return sortPairs(order.length, found);
}
