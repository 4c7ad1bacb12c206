// dedup's join when its candidates are verified and every document's shingle-set size is known (the fused pass):
// J(A, B) = |A ∩ B| / |A ∪ B| ≤ min(|A|, |B|) / max(|A|, |B|), so a pair whose sizes are further apart than the
// threshold allows is rejected by the verifier without a look at its sets. The distinct fingerprints are sorted by
// set size and each is compared only with those of sizes it could pass with: a band along the diagonal of the
// self-join. On the bench's 25 MB of license texts (sizes 29 to 1,580 shingles, threshold 0.6) the band holds
// 49 % of all pairs, on 210 MB of real text (bench/real-corpus.ts) 36 %. Groups of identical fingerprints whose
// members' sizes spread widely stay out of the band and are compared with all (SizeBand.spread).
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
import type { Pairs } from '../results.js';
import type { Collapsed } from './dedup-groups.js';
import { gatherFingerprints } from './dedup-groups.js';
import { pairsWithinDistance, selfPairChunksInBand, sortByA } from '../hamming/hamming.js';
import { pairKeysRegion, pairShiftFor, sortPairKeys } from '../join/join.js';
import { align16 } from '../runtime/marshal.js';
import { wasm } from '../runtime/wasm.js';

export interface SizeBand {
  /** The groups of identical fingerprints (Collapsed.fpGroups) in the band, ordered by their smallest set size. */
  order: Uint32Array;
  /** Position p (in `order`) pairs only with positions p < r < ends[p]; non-decreasing. */
  ends: Uint32Array;
  /**
   * The groups whose members' sizes spread by more than SPREAD: each is compared with every group instead. A
   * group's row in the band ends where its largest size allows, and the ends must not decrease, so one such group
   * would stretch every row after it (on 210 MB of real text, 21 of 38,143 groups took the band from 36 % of all
   * pairs to 90 %).
   */
  spread: Uint32Array;
  /** Pairs compared: those inside the band, and each spread group's with all groups. */
  pairs: number;
}

/** The most a band group's largest set size may exceed its smallest, as a factor. */
const SPREAD = 1.1;

/**
 * The band of the distinct fingerprints: document d's shingle-set size is setSizes[setOf[d]], and a document
 * without a set (setOf[d] < 0) means no band (null). A group of several documents with one fingerprint spans
 * their sizes, and two groups stay paired when any two of their members could pass. Pairs of empty sets stay in
 * (the verifier decides those by their trimmed texts); an empty set against a non-empty one never passes.
 */
export function sizeBand(c: Collapsed, setOf: Int32Array, setSizes: Uint32Array, threshold: number): SizeBand | null {
  const { start, members } = c.fpGroups;
  const { joined } = c;
  const groups = start.length - 1;
  const lo: number[] = [];
  const hi: number[] = [];
  const inBand: number[] = [];
  const spread: number[] = [];
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
    if (max > min * SPREAD) spread.push(g);
    else {
      inBand.push(g);
      lo.push(min);
      hi.push(max);
    }
  }
  const n = inBand.length;
  // A stable sort of the band's groups by their smallest size, carrying their positions in inBand.
  const iota = new Uint32Array(n);
  for (let q = 0; q < n; q++) iota[q] = q;
  const { a: sortedLo, b: byLo } = sortByA(Uint32Array.from(lo), iota, new Uint8Array(n));
  const order = new Uint32Array(n);
  const ends = new Uint32Array(n);
  let pairs = spread.length * (groups - 1) - (spread.length * (spread.length - 1)) / 2;
  let reach = 0;
  for (let p = 0; p < n; p++) {
    order[p] = inBand[byLo[p]!]!;
    const h = hi[byLo[p]!]!;
    // Position r > p may pass with p while its smallest size is within p's largest, or h / size ≥ threshold (a
    // correctly rounded division, as the verifier's: its accepted ratio |A ∩ B| / |A ∪ B| is never above h / size).
    // Both fail from some r on, since the sizes ascend: the first such r, by bisection.
    let low = p + 1;
    let high = n;
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
  return { order, ends, spread: Uint32Array.from(spread), pairs };
}

interface BandKernels {
  bandPairKeys(
    outA: number,
    outB: number,
    n: number,
    ends: number,
    order: number,
    pairShift: number,
    keys: number,
  ): number;
}

/**
 * The pairs within k of the distinct fingerprints (c.distinctFps, by group number) inside the band, and those of
 * the spread groups with all, ordered by (a, b) as findNearDuplicates orders the pairs of the whole self-join.
 * The kernel's pairs stay in WebAssembly memory: each chunk becomes pair keys of group numbers there
 * (assembly/size-band.ts), and the keys are sorted and unpacked by the join's own code (join.ts).
 */
export function joinInBand(c: Collapsed, band: SizeBand, k: number, bits: 64 | 128): Pairs {
  const rt = wasm();
  const { heap } = rt;
  const kernels = rt.kernels as unknown as BandKernels;
  const words = bits / 64;
  const { order, ends, spread } = band;
  const groups = c.fpGroups.start.length - 1;
  const pairShift = pairShiftFor(groups);
  const keysRegion = pairKeysRegion(heap);
  const endsPtr = heap.alloc(align16(ends.byteLength) + align16(order.byteLength));
  const orderPtr = endsPtr + align16(ends.byteLength);
  let cap = 1 << 16;
  let keys = keysRegion.reserve(cap * 8);
  let count = 0;
  /** Room for `more` keys after the `count` written, keeping those. */
  const room = (more: number): void => {
    if (count + more <= cap) return;
    cap = Math.max(2 * cap, count + more);
    keys = keysRegion.reserve(cap * 8, count * 8);
  };
  try {
    heap.u32.set(ends, endsPtr >>> 2);
    heap.u32.set(order, orderPtr >>> 2);
    selfPairChunksInBand(gatherFingerprints(c.distinctFps, order, words), k, bits, ends, (outA, outB, _outD, n) => {
      room(n); // the kernel writes every pair of the chunk before it drops those beyond the band
      count += kernels.bandPairKeys(outA, outB, n, endsPtr, orderPtr, pairShift, keys + count * 8);
    });
  } finally {
    heap.release(endsPtr);
  }
  if (spread.length > 0) {
    const isSpread = new Uint8Array(groups);
    for (const g of spread) isSpread[g] = 1;
    const cross = pairsWithinDistance(gatherFingerprints(c.distinctFps, spread, words), c.distinctFps, k, { bits });
    room(cross.a.length);
    const u64 = heap.u64;
    for (let p = 0; p < cross.a.length; p++) {
      const g = spread[cross.a[p]!]!;
      const h = cross.b[p]!;
      // Itself, or a spread group's pair found from the other side too: once, from the lower.
      if (h === g || (isSpread[h] === 1 && h < g)) continue;
      u64[(keys >>> 3) + count++] = (BigInt(Math.min(g, h)) << BigInt(pairShift)) | BigInt(Math.max(g, h));
    }
  }
  return sortPairKeys(rt, c.distinctFps, bits, keys, count);
}
