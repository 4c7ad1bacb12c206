// All-pairs join within Hamming distance k on sorted permuted tables (Manku, Jain, Das Sarma 2007).
//
// The fingerprint's bits are split into b blocks. Two fingerprints within k differ in at most k blocks, so they
// agree exactly on at least b - k of them (pigeonhole). Each table takes one (b - k)-subset of blocks as its key:
// every fingerprint is permuted so the key blocks come first (the top bits), the table is radix-sorted on the
// top `sortBits` bits, and only fingerprints in the same run of equal top bits are compared with popcount.
// A pair that agrees on the key blocks of several tables is emitted only by the first of them. The tables are the
// (b - k)-subsets of blocks in lexicographic order, so the first one whose key the pair agrees on is the set of
// the first b - k blocks it agrees on: a table emits a pair when the pair agrees on its key and on none of the
// other blocks below its last key block (`earlier`, a bit per block id). Near-duplicates agree on most blocks,
// so for all but their one table the test stops at the first block it looks at. The planner (src/join/join-plan.ts) chooses b and sortBits; sortBits may be fewer than the key's bits
// (the runs are then coarser, never wrong: the canonical test decides). A plan with no key blocks compares all.
//
// Pairs are written as u64 `(a << shift) | b` with a < b, so one radix sort orders them by (a, b) at the end.
// The walk stops when the output is full and records where it was in `state` (i, j), so the caller can make
// room and call again: no allocation happens in WebAssembly.
//
// Layouts (all little-endian, prepared by src/join/join.ts):
//   segs:  nsegs segments: the permutation as bit-range moves (src/join/join-layout.shared.ts).
//   masks: b × u64 (64-bit) or b × [lo u64, hi u64] (128-bit): each block's bits in permuted coordinates.
//   hist:  passes × 2^digitBits × u32.

import { SEGMENT_BYTES, S_SOURCE_SHIFT, S_TARGET_SHIFT, S_WIDTH } from '../src/join/join-layout.shared';

// @ts-ignore: decorator
@inline function lowMask(width: u32): u64 {
  return width >= 64 ? <u64>-1 : (<u64>1 << <u64>width) - 1;
}

// @ts-ignore: decorator
@inline function extract128(lo: u64, hi: u64, shift: u32, width: u32): u64 {
  let v: u64;
  if (shift >= 64) v = hi >> <u64>(shift - 64);
  else if (shift == 0) v = lo;
  else v = (lo >> <u64>shift) | (hi << <u64>(64 - shift));
  return v & lowMask(width);
}

// @ts-ignore: decorator
@inline function permute64(fp: u64, segs: usize, nsegs: u32): u64 {
  let p: u64 = 0;
  for (let s: u32 = 0; s < nsegs; s++) {
    let d = segs + <usize>s * SEGMENT_BYTES;
    p |= ((fp >> <u64>load<u32>(d, S_SOURCE_SHIFT)) & lowMask(load<u32>(d, S_WIDTH))) << <u64>load<u32>(d, S_TARGET_SHIFT);
  }
  return p;
}

// @ts-ignore: decorator
@inline function countDigits(key: u64, lowShift: u32, digitBits: u32, passes: u32, hist: usize): void {
  let buckets = <u32>1 << digitBits;
  let dmask = <u64>(buckets - 1);
  for (let q: u32 = 0; q < passes; q++) {
    let h = hist + ((<usize>(q * buckets + <u32>((key >> <u64>(lowShift + q * digitBits)) & dmask))) << 2);
    store<u32>(h, load<u32>(h) + 1);
  }
}

// @ts-ignore: decorator
@inline function prefixSums(h: usize, buckets: u32): void {
  let sum: u32 = 0;
  for (let d: u32 = 0; d < buckets; d++) {
    let c = load<u32>(h + (<usize>d << 2));
    store<u32>(h + (<usize>d << 2), sum);
    sum += c;
  }
}

// Segment parameters of the 64-bit permutation, hoisted out of the per-fingerprint loops: up to six moves run
// from locals (the loops store to memory, so loads from the segment table could not be hoisted otherwise); an
// unused move has mask 0. Plans with more moves take the generic loop.
// @ts-ignore: decorator
@inline const FAST_SEGS: u32 = 6;

// @ts-ignore: decorator
@inline function segShift(segs: usize, nsegs: u32, s: u32): u64 {
  return s < nsegs ? <u64>load<u32>(segs + <usize>s * SEGMENT_BYTES, S_SOURCE_SHIFT) : 0;
}
// @ts-ignore: decorator
@inline function segMask(segs: usize, nsegs: u32, s: u32): u64 {
  return s < nsegs ? lowMask(load<u32>(segs + <usize>s * SEGMENT_BYTES, S_WIDTH)) : 0;
}
// @ts-ignore: decorator
@inline function segDst(segs: usize, nsegs: u32, s: u32): u64 {
  return s < nsegs ? <u64>load<u32>(segs + <usize>s * SEGMENT_BYTES, S_TARGET_SHIFT) : 0;
}

/**
 * Counts the radix digits of every pass over the permuted 64-bit fingerprints (nothing is stored: the first
 * scatter permutes again, which is cheaper than writing and re-reading a permuted copy).
 * Digit q of a key is (key >> (lowShift + q * digitBits)) & (2^digitBits - 1).
 */
export function joinHistogram64(fps: usize, n: u32, segs: usize, nsegs: u32, lowShift: u32, digitBits: u32, passes: u32, hist: usize): void {
  memory.fill(hist, 0, <usize>(passes << digitBits) << 2);
  if (nsegs > FAST_SEGS) {
    for (let i: u32 = 0; i < n; i++) {
      countDigits(permute64(load<u64>(fps + (<usize>i << 3)), segs, nsegs), lowShift, digitBits, passes, hist);
    }
    return;
  }
  let a0 = segShift(segs, nsegs, 0), m0 = segMask(segs, nsegs, 0), d0 = segDst(segs, nsegs, 0);
  let a1 = segShift(segs, nsegs, 1), m1 = segMask(segs, nsegs, 1), d1 = segDst(segs, nsegs, 1);
  let a2 = segShift(segs, nsegs, 2), m2 = segMask(segs, nsegs, 2), d2 = segDst(segs, nsegs, 2);
  let a3 = segShift(segs, nsegs, 3), m3 = segMask(segs, nsegs, 3), d3 = segDst(segs, nsegs, 3);
  let a4 = segShift(segs, nsegs, 4), m4 = segMask(segs, nsegs, 4), d4 = segDst(segs, nsegs, 4);
  let a5 = segShift(segs, nsegs, 5), m5 = segMask(segs, nsegs, 5), d5 = segDst(segs, nsegs, 5);
  // One loop per segment count: a move with mask 0 still costs its four operations, and six moves' 18 values
  // do not fit the registers (6 moves: 7-9 ns per fingerprint in cache, 2 moves: 2.5-3.5).
  if (nsegs <= 1) histogramLoop(fps, n, lowShift, digitBits, passes, hist, 1, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else if (nsegs == 2) histogramLoop(fps, n, lowShift, digitBits, passes, hist, 2, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else if (nsegs <= 4) histogramLoop(fps, n, lowShift, digitBits, passes, hist, 4, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else histogramLoop(fps, n, lowShift, digitBits, passes, hist, 6, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
}

/** The permutation by up to six moves held in locals; `S` (a constant where inlined) is how many are used. */
// @ts-ignore: decorator
@inline function permuteMoves(
  fp: u64, S: u32, a0: u64, m0: u64, d0: u64, a1: u64, m1: u64, d1: u64, a2: u64, m2: u64, d2: u64,
  a3: u64, m3: u64, d3: u64, a4: u64, m4: u64, d4: u64, a5: u64, m5: u64, d5: u64,
): u64 {
  let p = ((fp >> a0) & m0) << d0;
  if (S > 1) p |= ((fp >> a1) & m1) << d1;
  if (S > 2) p |= (((fp >> a2) & m2) << d2) | (((fp >> a3) & m3) << d3);
  if (S > 4) p |= (((fp >> a4) & m4) << d4) | (((fp >> a5) & m5) << d5);
  return p;
}

// @ts-ignore: decorator
@inline function histogramLoop(
  fps: usize, n: u32, lowShift: u32, digitBits: u32, passes: u32, hist: usize, S: u32,
  a0: u64, m0: u64, d0: u64, a1: u64, m1: u64, d1: u64, a2: u64, m2: u64, d2: u64,
  a3: u64, m3: u64, d3: u64, a4: u64, m4: u64, d4: u64, a5: u64, m5: u64, d5: u64,
): void {
  let buckets = <u32>1 << digitBits;
  let dmask = <u64>(buckets - 1);
  let h1 = hist + (<usize>buckets << 2);
  let shift0 = <u64>lowShift;
  let shift1 = <u64>(lowShift + digitBits);
  for (let i: u32 = 0; i < n; i++) {
    let p = permuteMoves(load<u64>(fps + (<usize>i << 3)), S, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
    if (passes <= 2) {
      let x = hist + (<usize>(<u32>((p >> shift0) & dmask)) << 2);
      store<u32>(x, load<u32>(x) + 1);
      if (passes == 2) {
        let y = h1 + (<usize>(<u32>((p >> shift1) & dmask)) << 2);
        store<u32>(y, load<u32>(y) + 1);
      }
    } else countDigits(p, lowShift, digitBits, passes, hist);
  }
}

/**
 * The first radix pass: permutes each fingerprint again and scatters it by digit 0, with its index: i, or
 * srcIdx[i] when the fingerprints are a bucket of an earlier scatter (srcIdx != 0). With `permuted` false the
 * fingerprint is stored as it was, and `nsegs` need only cover digit 0: for a table that no later pass sorts,
 * whose walk tests runs and rules with masks in the fingerprints' own bit order (src/join/join.ts).
 */
export function joinScatter64(
  fps: usize, srcIdx: usize, n: u32, segs: usize, nsegs: u32, keys: usize, idx: usize, lowShift: u32, digitBits: u32, hist: usize,
  permuted: bool,
): void {
  let buckets = <u32>1 << digitBits;
  let dmask = <u64>(buckets - 1);
  prefixSums(hist, buckets);
  let shift = <u64>lowShift;
  if (nsegs > FAST_SEGS) {
    for (let i: u32 = 0; i < n; i++) {
      let fp = load<u64>(fps + (<usize>i << 3));
      let p = permute64(fp, segs, nsegs);
      let hp = hist + (<usize>(<u32>((p >> shift) & dmask)) << 2);
      let at = load<u32>(hp);
      store<u32>(hp, at + 1);
      store<u64>(keys + (<usize>at << 3), select<u64>(p, fp, permuted));
      store<u32>(idx + (<usize>at << 2), srcIdx != 0 ? load<u32>(srcIdx + (<usize>i << 2)) : i);
    }
    return;
  }
  let a0 = segShift(segs, nsegs, 0), m0 = segMask(segs, nsegs, 0), d0 = segDst(segs, nsegs, 0);
  let a1 = segShift(segs, nsegs, 1), m1 = segMask(segs, nsegs, 1), d1 = segDst(segs, nsegs, 1);
  let a2 = segShift(segs, nsegs, 2), m2 = segMask(segs, nsegs, 2), d2 = segDst(segs, nsegs, 2);
  let a3 = segShift(segs, nsegs, 3), m3 = segMask(segs, nsegs, 3), d3 = segDst(segs, nsegs, 3);
  let a4 = segShift(segs, nsegs, 4), m4 = segMask(segs, nsegs, 4), d4 = segDst(segs, nsegs, 4);
  let a5 = segShift(segs, nsegs, 5), m5 = segMask(segs, nsegs, 5), d5 = segDst(segs, nsegs, 5);
  if (nsegs <= 1) scatterLoop(fps, srcIdx, n, keys, idx, shift, dmask, hist, permuted, 1, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else if (nsegs == 2) scatterLoop(fps, srcIdx, n, keys, idx, shift, dmask, hist, permuted, 2, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else if (nsegs <= 4) scatterLoop(fps, srcIdx, n, keys, idx, shift, dmask, hist, permuted, 4, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
  else scatterLoop(fps, srcIdx, n, keys, idx, shift, dmask, hist, permuted, 6, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
}

// @ts-ignore: decorator
@inline function scatterLoop(
  fps: usize, srcIdx: usize, n: u32, keys: usize, idx: usize, shift: u64, dmask: u64, hist: usize, permuted: bool, S: u32,
  a0: u64, m0: u64, d0: u64, a1: u64, m1: u64, d1: u64, a2: u64, m2: u64, d2: u64,
  a3: u64, m3: u64, d3: u64, a4: u64, m4: u64, d4: u64, a5: u64, m5: u64, d5: u64,
): void {
  for (let i: u32 = 0; i < n; i++) {
    let fp = load<u64>(fps + (<usize>i << 3));
    let p = permuteMoves(fp, S, a0, m0, d0, a1, m1, d1, a2, m2, d2, a3, m3, d3, a4, m4, d4, a5, m5, d5);
    let hp = hist + (<usize>(<u32>((p >> shift) & dmask)) << 2);
    let at = load<u32>(hp);
    store<u32>(hp, at + 1);
    store<u64>(keys + (<usize>at << 3), select<u64>(p, fp, permuted));
    store<u32>(idx + (<usize>at << 2), srcIdx != 0 ? load<u32>(srcIdx + (<usize>i << 2)) : i);
  }
}

// @ts-ignore: decorator
@inline function permuteHigh(lo: u64, hi: u64, segs: usize, nsegs: u32): u64 {
  let phi: u64 = 0;
  for (let s: u32 = 0; s < nsegs; s++) {
    let d = segs + <usize>s * SEGMENT_BYTES;
    let width = load<u32>(d, S_WIDTH);
    let dst = load<u32>(d, S_TARGET_SHIFT);
    if (dst + width <= 64) continue;
    let v = extract128(lo, hi, load<u32>(d, S_SOURCE_SHIFT), width);
    phi |= dst >= 64 ? v << <u64>(dst - 64) : v >> <u64>(64 - dst);
  }
  return phi;
}

// @ts-ignore: decorator
@inline function permuteLow(lo: u64, hi: u64, segs: usize, nsegs: u32): u64 {
  let plo: u64 = 0;
  for (let s: u32 = 0; s < nsegs; s++) {
    let d = segs + <usize>s * SEGMENT_BYTES;
    let dst = load<u32>(d, S_TARGET_SHIFT);
    if (dst >= 64) continue;
    plo |= extract128(lo, hi, load<u32>(d, S_SOURCE_SHIFT), load<u32>(d, S_WIDTH)) << <u64>dst;
  }
  return plo;
}

/** The 128-bit histogram: fingerprint i is (lo, hi) = fps[2i], fps[2i+1]; keys are the permuted high words. */
export function joinHistogram128(fps: usize, n: u32, segs: usize, nsegs: u32, lowShift: u32, digitBits: u32, passes: u32, hist: usize): void {
  memory.fill(hist, 0, <usize>(passes << digitBits) << 2);
  for (let i: u32 = 0; i < n; i++) {
    let p = fps + (<usize>i << 4);
    countDigits(permuteHigh(load<u64>(p), load<u64>(p, 8), segs, nsegs), lowShift, digitBits, passes, hist);
  }
}

/** The first 128-bit radix pass: permuted high words to `keys`, low words to `los`, indices to `idx`. */
export function joinScatter128(fps: usize, n: u32, segs: usize, nsegs: u32, keys: usize, los: usize, idx: usize, lowShift: u32, digitBits: u32, hist: usize): void {
  let buckets = <u32>1 << digitBits;
  let dmask = <u64>(buckets - 1);
  prefixSums(hist, buckets);
  for (let i: u32 = 0; i < n; i++) {
    let p = fps + (<usize>i << 4);
    let lo = load<u64>(p);
    let hi = load<u64>(p, 8);
    let phi = permuteHigh(lo, hi, segs, nsegs);
    let hp = hist + (<usize>(<u32>((phi >> <u64>lowShift) & dmask)) << 2);
    let at = load<u32>(hp);
    store<u32>(hp, at + 1);
    store<u64>(keys + (<usize>at << 3), phi);
    store<u64>(los + (<usize>at << 3), permuteLow(lo, hi, segs, nsegs));
    store<u32>(idx + (<usize>at << 2), i);
  }
}

/** Counts digits of `keys` for each pass (used for the final sort of pairs). */
export function radixHistogram(keys: usize, n: u32, lowShift: u32, digitBits: u32, passes: u32, hist: usize): void {
  memory.fill(hist, 0, <usize>(passes << digitBits) << 2);
  for (let i: u32 = 0; i < n; i++) countDigits(load<u64>(keys + (<usize>i << 3)), lowShift, digitBits, passes, hist);
}

/**
 * Stable LSD radix sort of u64 `keys` with optional payloads `los` (u64) and `idx` (u32) (0 = none), ping-ponging
 * between the A and B buffers from pass `fromPass` on, the data starting in B if `inB`. `hist` holds every pass's
 * digit counts. Returns 0 if the result is in A, 1 if in B.
 */
export function radixSort(
  keysA: usize, losA: usize, idxA: usize, keysB: usize, losB: usize, idxB: usize,
  n: u32, lowShift: u32, digitBits: u32, fromPass: u32, passes: u32, inB: u32, hist: usize,
): u32 {
  let buckets = <u32>1 << digitBits;
  let dmask = <u64>(buckets - 1);
  for (let q: u32 = fromPass; q < passes; q++) {
    let h = hist + (<usize>(q * buckets) << 2);
    // Skip a pass whose digit is the same for every key: it would only copy.
    let first = <u32>((load<u64>(inB ? keysB : keysA) >> <u64>(lowShift + q * digitBits)) & dmask);
    if (n == 0 || load<u32>(h + (<usize>first << 2)) == n) continue;
    prefixSums(h, buckets);
    let sk = inB ? keysB : keysA;
    let sl = inB ? losB : losA;
    let si = inB ? idxB : idxA;
    let dk = inB ? keysA : keysB;
    let dl = inB ? losA : losB;
    let di = inB ? idxA : idxB;
    let shift = <u64>(lowShift + q * digitBits);
    if (sl != 0) {
      for (let i: u32 = 0; i < n; i++) {
        let key = load<u64>(sk + (<usize>i << 3));
        let hp = h + (<usize>(<u32>((key >> shift) & dmask)) << 2);
        let at = load<u32>(hp);
        store<u32>(hp, at + 1);
        store<u64>(dk + (<usize>at << 3), key);
        store<u64>(dl + (<usize>at << 3), load<u64>(sl + (<usize>i << 3)));
        store<u32>(di + (<usize>at << 2), load<u32>(si + (<usize>i << 2)));
      }
    } else if (si != 0) {
      for (let i: u32 = 0; i < n; i++) {
        let key = load<u64>(sk + (<usize>i << 3));
        let hp = h + (<usize>(<u32>((key >> shift) & dmask)) << 2);
        let at = load<u32>(hp);
        store<u32>(hp, at + 1);
        store<u64>(dk + (<usize>at << 3), key);
        store<u32>(di + (<usize>at << 2), load<u32>(si + (<usize>i << 2)));
      }
    } else {
      for (let i: u32 = 0; i < n; i++) {
        let key = load<u64>(sk + (<usize>i << 3));
        let hp = h + (<usize>(<u32>((key >> shift) & dmask)) << 2);
        let at = load<u32>(hp);
        store<u32>(hp, at + 1);
        store<u64>(dk + (<usize>at << 3), key);
      }
    }
    inB ^= 1;
  }
  return inB;
}

/** Whether a pair (x: the xor of its permuted words) agrees on none of the `earlier` blocks (the table's rule). */
// @ts-ignore: decorator
@inline function firstTable64(x: u64, masks: usize, earlier: u32): bool {
  for (let e = earlier; e != 0; e &= e - 1) {
    if ((x & load<u64>(masks + (<usize>ctz<u32>(e) << 3))) == 0) return false;
  }
  return true;
}

// @ts-ignore: decorator
@inline function firstTable128(xlo: u64, xhi: u64, masks: usize, earlier: u32): bool {
  for (let e = earlier; e != 0; e &= e - 1) {
    let m = masks + (<usize>ctz<u32>(e) << 4);
    if ((xlo & load<u64>(m)) == 0 && (xhi & load<u64>(m, 8)) == 0) return false;
  }
  return true;
}

// @ts-ignore: decorator
@inline export function pairKey(x: u32, y: u32, shift: u32): u64 {
  return x < y ? (<u64>x << <u64>shift) | <u64>y : (<u64>y << <u64>shift) | <u64>x;
}

/**
 * `roots` (u32 per fingerprint index, or 0): the group each fingerprint's documents are known to be in (dedup's
 * clusters so far), NO_ROOT for one that must never be skipped. A pair of one group is not emitted: it could change
 * nothing. A run (or the rest of one, when the walk resumes) whose members all share a group is skipped whole, so a
 * run of m near-duplicates already clustered costs O(m), not O(m²).
 */
// @ts-ignore: decorator
@inline export const NO_ROOT: u32 = 0xffffffff;

// @ts-ignore: decorator
@inline function rootOf(idx: usize, roots: usize, at: u32): u32 {
  return load<u32>(roots + (<usize>load<u32>(idx + (<usize>at << 2)) << 2));
}

function oneRoot(idx: usize, roots: usize, from: u32, end: u32): bool {
  let r = rootOf(idx, roots, from);
  if (r == NO_ROOT) return false;
  for (let q = from + 1; q < end; q++) if (rootOf(idx, roots, q) != r) return false;
  return true;
}

/**
 * Orders the run [lo, hi) of a table by group (rootOf), NO_ROOT last, moving its keys (and `los`, when not 0) with
 * its indices. The order of a run's members is free: a pair's table is decided by its xor, and the pair is written
 * canonically.
 */
function sortRunByRoot(keys: usize, los: usize, idx: usize, roots: usize, lo: u32, hi: u32): void {
  while (hi - lo > 16) {
    let mid = lo + ((hi - lo) >> 1);
    let x = rootOf(idx, roots, lo), y = rootOf(idx, roots, mid), z = rootOf(idx, roots, hi - 1);
    let pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    let i = <i64>lo - 1, j = <i64>hi;
    for (;;) {
      do i++; while (rootOf(idx, roots, <u32>i) < pivot);
      do j--; while (rootOf(idx, roots, <u32>j) > pivot);
      if (i >= j) break;
      swapMembers(keys, los, idx, <u32>i, <u32>j);
    }
    // [lo, j] <= pivot <= [j + 1, hi): the smaller side recurses.
    let split = <u32>j + 1;
    if (split - lo < hi - split) {
      sortRunByRoot(keys, los, idx, roots, lo, split);
      lo = split;
    } else {
      sortRunByRoot(keys, los, idx, roots, split, hi);
      hi = split;
    }
  }
  for (let i = lo + 1; i < hi; i++) {
    for (let q = i; q > lo && rootOf(idx, roots, q - 1) > rootOf(idx, roots, q); q--) swapMembers(keys, los, idx, q - 1, q);
  }
}

// @ts-ignore: decorator
@inline function swapMembers(keys: usize, los: usize, idx: usize, a: u32, b: u32): void {
  let pa = keys + (<usize>a << 3), pb = keys + (<usize>b << 3);
  let t = load<u64>(pa);
  store<u64>(pa, load<u64>(pb));
  store<u64>(pb, t);
  if (los != 0) {
    pa = los + (<usize>a << 3);
    pb = los + (<usize>b << 3);
    t = load<u64>(pa);
    store<u64>(pa, load<u64>(pb));
    store<u64>(pb, t);
  }
  let qa = idx + (<usize>a << 2), qb = idx + (<usize>b << 2);
  let u = load<u32>(qa);
  store<u32>(qa, load<u32>(qb));
  store<u32>(qb, u);
}

/**
 * A run (from i, when the walk starts or resumes in it) whose members change group more often than this is
 * ordered by group first, when no pair of it has been walked yet: ordering costs O(r log r), and walking a run of r
 * members in s segments of one group costs O(r·s) steps beyond the pairs that cross groups (segmentEnds).
 */
// @ts-ignore: decorator
@inline const SORT_SEGMENTS: u32 = 32;

/**
 * Writes at ends[q], for each member q of [i, end), the end of the segment of consecutive members of q's group
 * (NO_ROOT members are segments of one: they pair with everything). A member then skips the rest of its own
 * segment, and any later segment of its group, in one step each: a run mixing clusters already formed costs what
 * its pairs across groups cost, not the square of the run. When the run is fresh (`fresh`) and fragmented, it is
 * ordered by group first (sortRunByRoot). Roots change only between calls, and the ends are rebuilt at each.
 */
function segmentEnds(
  keys: usize, los: usize, idx: usize, roots: usize, ends: usize, i: u32, end: u32, fresh: bool
): void {
  let segments = fillEnds(idx, roots, ends, i, end);
  if (fresh && segments > SORT_SEGMENTS) {
    sortRunByRoot(keys, los, idx, roots, i, end);
    fillEnds(idx, roots, ends, i, end);
  }
}

function fillEnds(idx: usize, roots: usize, ends: usize, i: u32, end: u32): u32 {
  let segments: u32 = 1;
  let next = rootOf(idx, roots, end - 1);
  store<u32>(ends + (<usize>(end - 1) << 2), end);
  for (let q = end - 1; q > i; q--) {
    let r = rootOf(idx, roots, q - 1);
    let e = r == next && r != NO_ROOT ? load<u32>(ends + (<usize>q << 2)) : q;
    segments += <u32>(e == q);
    store<u32>(ends + (<usize>(q - 1) << 2), e);
    next = r;
  }
  return segments;
}

/**
 * Segments of one group with at least this many members are scan blocks of their own, which a fingerprint of
 * another group may skip whole (scanBlocks); smaller segments are scanned together, four at a time at 64 bits.
 */
// @ts-ignore: decorator
@inline const BLOCK_MIN: u32 = 8;
/** A scan block of small segments: no radius, every member is compared. */
// @ts-ignore: decorator
@inline const NO_RADIUS: u32 = 0xffffffff;

/**
 * Where scanBlocks' arrays lie in the walk's scratch at `ends` (after the segment ends, n entries each): the blocks'
 * ends, first members and radii (u32), then the bits in which members differ (u64), and for a 128-bit table as
 * many again for the low words. One layout for scanBlocks and both walks.
 */
// @ts-ignore: decorator
@inline const BLOCK_ENDS: u32 = 1;
// @ts-ignore: decorator
@inline const BLOCK_FIRST: u32 = 2;
// @ts-ignore: decorator
@inline const BLOCK_RADIUS: u32 = 3;
// @ts-ignore: decorator
@inline const BLOCK_VARIES: u32 = 4; // u64: two u32 strides
// @ts-ignore: decorator
@inline const BLOCK_VARIES_LO: u32 = 6;
// @ts-ignore: decorator
@inline function scratchAt(ends: usize, n: u32, part: u32): usize {
  return ends + ((<usize>n * <usize>part) << 2);
}

/**
 * Splits [i, end) of a sorted table into scan blocks (scratchAt: each entry's block end and first member, the
 * block's radius and the bits in which some member differs from the first, read at its first member). A segment of
 * one group with BLOCK_MIN members or more is a block, and each stretch of smaller segments between them is one
 * block with NO_RADIUS, scanned member by member. The walk skips a block in one step when no pair of it can come
 * out of this table: by the triangle inequality a fingerprint farther than k + radius from the first member is
 * farther than k from every member; and where it agrees with the first member on bits that no member changes, it
 * agrees with every member there, so a key bit it differs on, or an earlier block it agrees on (the table rule),
 * rules out every member at once. On 2 GB of edited copies 82 % of the walk's 13.7 G comparisons were against
 * members of such segments, and each pair within k was met in 14.6 tables on average: the walk took 2.7 G single
 * steps against 5.1 G, and met near pairs 341 M times against 536 M.
 */
function scanBlocks(keys: usize, los: usize, idx: usize, roots: usize, ends: usize, n: u32, i: u32, end: u32): void {
  let span = scratchAt(ends, n, BLOCK_ENDS);
  let first = scratchAt(ends, n, BLOCK_FIRST);
  let radius = scratchAt(ends, n, BLOCK_RADIUS);
  let varies = scratchAt(ends, n, BLOCK_VARIES);
  let variesLo = scratchAt(ends, n, BLOCK_VARIES_LO); // 128-bit tables: the low words' bits (`los`)
  let q = i;
  while (q < end) {
    let e = load<u32>(ends + (<usize>q << 2));
    if (e - q >= BLOCK_MIN && rootOf(idx, roots, q) != NO_ROOT) {
      let head = load<u64>(keys + (<usize>q << 3));
      let headLo = los != 0 ? load<u64>(los + (<usize>q << 3)) : 0;
      let r: u32 = 0;
      let vary: u64 = 0;
      let varyLo: u64 = 0;
      for (let m = q + 1; m < e; m++) {
        let x = head ^ load<u64>(keys + (<usize>m << 3));
        let xlo = los != 0 ? headLo ^ load<u64>(los + (<usize>m << 3)) : 0;
        r = max(r, <u32>(popcnt<u64>(x) + popcnt<u64>(xlo)));
        vary |= x;
        varyLo |= xlo;
      }
      store<u32>(radius + (<usize>q << 2), r);
      store<u64>(varies + (<usize>q << 3), vary);
      if (los != 0) store<u64>(variesLo + (<usize>q << 3), varyLo);
      for (let m = q; m < e; m++) {
        store<u32>(span + (<usize>m << 2), e);
        store<u32>(first + (<usize>m << 2), q);
      }
      q = e;
      continue;
    }
    let t = e;
    while (t < end) {
      let u = load<u32>(ends + (<usize>t << 2));
      if (u - t >= BLOCK_MIN && rootOf(idx, roots, t) != NO_ROOT) break;
      t = u;
    }
    for (let m = q; m < t; m++) {
      store<u32>(span + (<usize>m << 2), t);
      store<u32>(first + (<usize>m << 2), q);
    }
    store<u32>(radius + (<usize>q << 2), NO_RADIUS);
    q = t;
  }
}

/**
 * Whether fingerprints a and b may hold a pair of documents whose shingle Jaccard reaches `ratio`: J <= |A| / |B|
 * for |A| <= |B|, so a pair is possible only when some size of one reaches ratio times some size of the other.
 * `sizes` holds the smallest and largest set size (u32 each) of every fingerprint's documents. The verifier
 * rejects exactly when |A| < ratio * |B| (up to its own 1e-9): SIZE_SLACK keeps this test on the safe side of it.
 * (Skipping whole segments of a run by their size range was tried: on 2 GB of edited copies it walked no faster.)
 */
// @ts-ignore: decorator
@inline export function sizesMayPass(sizes: usize, a: u32, b: u32, ratio: f64): bool {
  let pa = sizes + (<usize>a << 3);
  let pb = sizes + (<usize>b << 3);
  return !(<f64>load<u32>(pa, 4) < ratio * <f64>load<u32>(pb) - SIZE_SLACK ||
    <f64>load<u32>(pb, 4) < ratio * <f64>load<u32>(pa) - SIZE_SLACK);
}
// @ts-ignore: decorator
@inline const SIZE_SLACK: f64 = 1e-6;

/** walkCandidate's answer when the output is full: the walk's state (i, j) is saved, and the walk returns. */
// @ts-ignore: decorator
@inline const OUTPUT_FULL: u64 = 0xffffffffffffffff;

/**
 * Both walks' rule for a candidate j of i within k whose pair is first in this table: passed over when j is of i's
 * own group (the walk goes on after j's segment: the rest of it is i's group too) or the set sizes rule the pair
 * out; else the pair goes to out[count]. Returns where the walk stands, j << 32 | count (j the last position
 * looked at), or OUTPUT_FULL with (i, j) saved in `state`: AssemblyScript has no out-parameters, and inlined, the
 * packing folds away.
 */
// @ts-ignore: decorator
@inline function walkCandidate(
  i: u32, j: u32, ri: u32, idx: usize, roots: usize, ends: usize, sizes: usize, ratio: f64, out: usize, count: u32,
  cap: u32, state: usize, pairShift: u32,
): u64 {
  if (ri != NO_ROOT && rootOf(idx, roots, j) == ri) return (<u64>(load<u32>(ends + (<usize>j << 2)) - 1) << 32) | count;
  let a = load<u32>(idx + (<usize>i << 2));
  let b = load<u32>(idx + (<usize>j << 2));
  if (sizes != 0 && !sizesMayPass(sizes, a, b, ratio)) return (<u64>j << 32) | count;
  if (count == cap) {
    store<u32>(state, i);
    store<u32>(state, j, 4);
    return OUTPUT_FULL;
  }
  store<u64>(out + (<usize>count << 3), pairKey(a, b, pairShift));
  return (<u64>j << 32) | (count + 1);
}

/** Whether the walk is at the first member of its run, with no pair of it walked (state i, j). */
// @ts-ignore: decorator
@inline function freshRun(keys: usize, i: u32, j: u32, topMask: u64, prefix: u64): bool {
  return j <= i + 1 && (i == 0 || (load<u64>(keys + (<usize>(i - 1) << 3)) & topMask) != prefix);
}

/**
 * Walks runs of equal `keys & topMask` in a sorted 64-bit table and writes the canonical pairs within k to `out`
 * (at most `cap`). Resumes from and saves (i, j) in `state`; state[2] becomes 1 when the table is finished.
 * Returns the number of pairs written. With `roots`, pairs of one group are skipped (above); with `sizes`, pairs
 * whose shingle-set sizes rule out the verifier's threshold (sizesMayPass).
 */
export function joinWalk64(
  keys: usize, idx: usize, n: u32, topMask: u64, k: u32, masks: usize, keyMask: u64, earlier: u32,
  pairShift: u32, out: usize, cap: u32, state: usize, roots: usize, ends: usize, sizes: usize, ratio: f64,
): u32 {
  let i = load<u32>(state);
  let j = load<u32>(state, 4);
  let count: u32 = 0;
  let off = <u64>(127 - k);
  while (i < n) {
    let prefix = load<u64>(keys + (<usize>i << 3)) & topMask;
    let end = i + 1;
    while (end < n && (load<u64>(keys + (<usize>end << 3)) & topMask) == prefix) end++;
    if (roots != 0 && oneRoot(idx, roots, i, end)) {
      i = end;
      j = 0;
      continue;
    }
    if (roots != 0) {
      segmentEnds(keys, 0, idx, roots, ends, i, end, freshRun(keys, i, j, topMask, prefix));
      scanBlocks(keys, 0, idx, roots, ends, n, i, end);
    }
    let span = scratchAt(ends, n, BLOCK_ENDS);
    let first = scratchAt(ends, n, BLOCK_FIRST);
    let radius = scratchAt(ends, n, BLOCK_RADIUS);
    let varies = scratchAt(ends, n, BLOCK_VARIES);
    for (; i < end; i++) {
      let pi = load<u64>(keys + (<usize>i << 3));
      let ri = roots != 0 ? rootOf(idx, roots, i) : NO_ROOT;
      if (j <= i) j = i + 1;
      if (ri != NO_ROOT) j = max(j, load<u32>(ends + (<usize>i << 2)));
      while (j < end) {
        // The scan block at j, skipped whole when no pair of i with its members can come out here (scanBlocks).
        let stop = end;
        if (roots != 0) {
          stop = load<u32>(span + (<usize>j << 2));
          let f = load<u32>(first + (<usize>j << 2));
          let r = load<u32>(radius + (<usize>f << 2));
          if (r != NO_RADIUS) {
            let x = pi ^ load<u64>(keys + (<usize>f << 3));
            let v = load<u64>(varies + (<usize>f << 3));
            if (
              <u32>popcnt<u64>(x) > k + r || (x & ~v & keyMask) != 0 || !firstTable64(x | v, masks, earlier) ||
              rootOf(idx, roots, f) == ri
            ) {
              j = stop;
              continue;
            }
          }
        }
        // Four candidates per step, tested together: bit 7 of popcount + 127 - k is set exactly when popcount > k,
        // so one AND tells that all four are too far (nearly every step of a long run), and no branch per
        // candidate waits on its popcount (k = 12 at 15 blocks: runs of ~100, the walk was 14.5 s of 19.7).
        for (; j + 4 <= stop; j += 4) {
          let p = keys + (<usize>j << 3);
          let t = (popcnt<u64>(pi ^ load<u64>(p)) + off) & (popcnt<u64>(pi ^ load<u64>(p, 8)) + off)
            & (popcnt<u64>(pi ^ load<u64>(p, 16)) + off) & (popcnt<u64>(pi ^ load<u64>(p, 24)) + off);
          if ((t & 128) != 0) continue;
          break; // one of them is near: the loop below takes them one by one from j
        }
        for (; j < stop; j++) {
          let x = pi ^ load<u64>(keys + (<usize>j << 3));
          if (<u32>popcnt<u64>(x) > k) continue;
          if ((x & keyMask) != 0 || !firstTable64(x, masks, earlier)) continue;
          let next = walkCandidate(i, j, ri, idx, roots, ends, sizes, ratio, out, count, cap, state, pairShift);
          if (next == OUTPUT_FULL) return count;
          j = <u32>(next >> 32);
          count = <u32>next;
        }
      }
      j = 0;
    }
  }
  store<u32>(state, n);
  store<u32>(state, 0, 4);
  store<u32>(state, 1, 8);
  return count;
}

/** The 128-bit walk: `keys` holds the permuted high words (sorted), `los` the permuted low words. */
export function joinWalk128(
  keys: usize, los: usize, idx: usize, n: u32, topMask: u64, k: u32, masks: usize, keyMaskHi: u64, keyMaskLo: u64,
  earlier: u32, pairShift: u32, out: usize, cap: u32, state: usize, roots: usize, ends: usize, sizes: usize,
  ratio: f64,
): u32 {
  let i = load<u32>(state);
  let j = load<u32>(state, 4);
  let count: u32 = 0;
  while (i < n) {
    let prefix = load<u64>(keys + (<usize>i << 3)) & topMask;
    let end = i + 1;
    while (end < n && (load<u64>(keys + (<usize>end << 3)) & topMask) == prefix) end++;
    if (roots != 0 && oneRoot(idx, roots, i, end)) {
      i = end;
      j = 0;
      continue;
    }
    if (roots != 0) {
      segmentEnds(keys, los, idx, roots, ends, i, end, freshRun(keys, i, j, topMask, prefix));
      scanBlocks(keys, los, idx, roots, ends, n, i, end);
    }
    let span = scratchAt(ends, n, BLOCK_ENDS);
    let first = scratchAt(ends, n, BLOCK_FIRST);
    let radius = scratchAt(ends, n, BLOCK_RADIUS);
    let varies = scratchAt(ends, n, BLOCK_VARIES);
    let variesLo = scratchAt(ends, n, BLOCK_VARIES_LO);
    for (; i < end; i++) {
      let hi = load<u64>(keys + (<usize>i << 3));
      let lo = load<u64>(los + (<usize>i << 3));
      let ri = roots != 0 ? rootOf(idx, roots, i) : NO_ROOT;
      if (j <= i) j = i + 1;
      if (ri != NO_ROOT) j = max(j, load<u32>(ends + (<usize>i << 2)));
      while (j < end) {
        // The scan block at j, skipped whole as in joinWalk64.
        let stop = end;
        if (roots != 0) {
          stop = load<u32>(span + (<usize>j << 2));
          let f = load<u32>(first + (<usize>j << 2));
          let r = load<u32>(radius + (<usize>f << 2));
          if (r != NO_RADIUS) {
            let xhi = hi ^ load<u64>(keys + (<usize>f << 3));
            let xlo = lo ^ load<u64>(los + (<usize>f << 3));
            let vhi = load<u64>(varies + (<usize>f << 3));
            let vlo = load<u64>(variesLo + (<usize>f << 3));
            if (
              <u32>(popcnt<u64>(xhi) + popcnt<u64>(xlo)) > k + r || (xhi & ~vhi & keyMaskHi) != 0 ||
              (xlo & ~vlo & keyMaskLo) != 0 || !firstTable128(xlo | vlo, xhi | vhi, masks, earlier) ||
              rootOf(idx, roots, f) == ri
            ) {
              j = stop;
              continue;
            }
          }
        }
        for (; j < stop; j++) {
          let xhi = hi ^ load<u64>(keys + (<usize>j << 3));
          let xlo = lo ^ load<u64>(los + (<usize>j << 3));
          if (<u32>(popcnt<u64>(xhi) + popcnt<u64>(xlo)) > k) continue;
          if ((xhi & keyMaskHi) != 0 || (xlo & keyMaskLo) != 0 || !firstTable128(xlo, xhi, masks, earlier)) continue;
          let next = walkCandidate(i, j, ri, idx, roots, ends, sizes, ratio, out, count, cap, state, pairShift);
          if (next == OUTPUT_FULL) return count;
          j = <u32>(next >> 32);
          count = <u32>next;
        }
      }
      j = 0;
    }
  }
  store<u32>(state, n);
  store<u32>(state, 0, 4);
  store<u32>(state, 1, 8);
  return count;
}

/** Splits sorted pair keys into a, b (u32) and their distance (u8) from the original fingerprints. */
export function joinUnpack(keys: usize, count: u32, pairShift: u32, fps: usize, words: u32, outA: usize, outB: usize, outD: usize): void {
  let low = lowMask(pairShift);
  for (let i: u32 = 0; i < count; i++) {
    let key = load<u64>(keys + (<usize>i << 3));
    let a = <u32>(key >> <u64>pairShift);
    let b = <u32>(key & low);
    let d: u64;
    if (words == 1) d = popcnt<u64>(load<u64>(fps + (<usize>a << 3)) ^ load<u64>(fps + (<usize>b << 3)));
    else {
      let pa = fps + (<usize>a << 4);
      let pb = fps + (<usize>b << 4);
      d = popcnt<u64>(load<u64>(pa) ^ load<u64>(pb)) + popcnt<u64>(load<u64>(pa, 8) ^ load<u64>(pb, 8));
    }
    store<u32>(outA + (<usize>i << 2), a);
    store<u32>(outB + (<usize>i << 2), b);
    store<u8>(outD + <usize>i, <u8>d);
  }
}
