// Verification of candidate pairs: each document's sorted distinct set of word-shingle hashes, built by the
// fingerprint kernel's own tokenizer and spec-2 shingle values (tokenize.ts in collect mode; a hash only names its
// shingle here, so one version serves every preset), and the Jaccard test
// of each pair by a merge over two sets. A window of documents per call (src/dedup/verify-pairs.ts): its sets
// are built (again from where the set memory ran out, once it has grown), then all its pairs are tested.
import { MODE_SHINGLES, SPEC_V2 } from '../src/fingerprint/modes.shared';
import {
  beginTokens, collectShingles, collectWords, collectedShingles, endTokens, wordTokens,
} from './tokenize';
import { beginDocument, endDocument } from './reducer';

/** Pair flag: both shingle sets are empty (wordless texts); the caller compares the trimmed texts. */
// @ts-ignore: decorator
@inline const BOTH_EMPTY: u8 = 2;

/**
 * Builds the shingle sets of documents from..count-1 (UTF-8 at `text`, document d spanning offsets[d]..offsets[d+1],
 * u32) at `sets` (capacity `capacity` u32 words), document d's at sets[starts[d]..starts[d+1]) (u32 offsets in hashes
 * of `hashBytes`, written here; starts[0] is 0 and starts[from] must be set). Hashes are the shingles' 64-bit values,
 * or with hashBytes 4 their top 32 bits (the verifier's sets: half the bytes to sort, keep, spill and merge, for a
 * chance of about |A|·|B| / 2^32 that two different shingles of a pair of sets share a value). A document takes at
 * most one shingle per byte, or one when it is shorter, so a document is started only when room for its 64-bit
 * hashes is left (and as much again with hashBytes 8, for the sort's scratch). Returns the first document not built
 * (count when all were): the caller grows `sets` and calls again from there.
 * `scratch` holds 2 * (longest document) + 64 bytes. With `out` (not 0) each document is fingerprinted in the same
 * pass, as fingerprintTexts does in shingles mode (`out` one or two u64 each by `bits`, `counts` f64 each): dedup's
 * two readings of a text in one, when the fingerprint's shingles are the verifier's.
 */
export function buildShingleSets(
  text: usize, offsets: usize, from: i32, count: i32, width: i32, scratch: usize, sets: usize, capacity: u32,
  starts: usize, bits: i32, out: usize, counts: usize, hashBytes: i32
): i32 {
  let reduce = out != 0;
  let stride: usize = bits == 128 ? 16 : 8;
  let wide = hashBytes == 8;
  let at = load<u32>(starts + (<usize>from << 2));
  for (let d = from; d < count; d++) {
    let a = load<u32>(offsets + (<usize>d << 2));
    let b = load<u32>(offsets + (<usize>d << 2), 4);
    // Room (in u32 words, at `at` hashes of hashBytes) for the 64-bit shingle hashes, and for distinctSorted's
    // scratch after the hashes it sorts: 4 words per shingle, or 2 when the hashes are narrowed in place first.
    let used: u64 = wide ? 2 * <u64>at : <u64>at;
    if (used + (wide ? 4 : 2) * (<u64>(b - a) + 1) > <u64>capacity) return d;
    let setAt = sets + (<usize>at << (wide ? 3 : 2));
    if (reduce) beginDocument(bits, false);
    let n = shinglesOf(text + <usize>a, text + <usize>b, width, scratch, setAt, reduce ? bits : 64, reduce);
    if (reduce) store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
    if (wide) at += <u32>distinctSorted<u64>(setAt, n, setAt + (<usize>n << 3));
    else {
      // In place: hash i's top half goes to u32 i, over hashes already read.
      for (let i = 0; i < n; i++) store<u32>(setAt + (<usize>i << 2), <u32>(load<u64>(setAt + (<usize>i << 3)) >> 32));
      at += <u32>distinctSorted<u32>(setAt, n, setAt + (<usize>n << 2));
    }
    store<u32>(starts + (<usize>(d + 1) << 2), at);
  }
  return count;
}

/** Pair flag: not tested, its documents were connected by the pairs kept before it (testShingleSets' forest). */
// @ts-ignore: decorator
@inline const CONNECTED: u8 = 3;

/**
 * Stores the shingle hashes of the text [p, end) at `out` (unsorted, repeats kept); returns how many. With
 * `reduce`, they also go to the open document of the reducer, at `bits` bits.
 */
// @ts-ignore: decorator
@noinline function shinglesOf(
  p: usize, end: usize, width: i32, scratch: usize, out: usize, bits: i32 = 64, reduce: bool = false
): i32 {
  collectShingles(out, reduce);
  beginTokens(bits, MODE_SHINGLES, width, SPEC_V2);
  wordTokens(p, end, scratch);
  endTokens();
  let n = collectedShingles();
  collectShingles(0);
  return n;
}

/** A document not yet in a centre's cluster (testShingleSets' centre mode). */
// @ts-ignore: decorator
@inline const UNASSIGNED: u32 = 0xffffffff;

/**
 * Tests `nPairs` pairs of built sets (indices a[p], b[p], u32) for Jaccard >= threshold: flags[p] (u8) is 1 (kept),
 * 0, or BOTH_EMPTY. The indices are the sets' own, or with `setOf` (not 0) documents', whose set is setOf[d] (u32
 * each): dedup passes its pairs and its document forest as they are, with no remapping per pair in JavaScript. With
 * `forest` (a union-find parent per index, u32; 0 for none), a pair whose two are already connected by the pairs
 * kept before it is not tested (CONNECTED), and a kept pair joins them: the kept pairs are then a spanning forest of
 * the clusters, in pair order. With `centre` instead (u32 per index: UNASSIGNED, the index itself for a centre, or
 * any other value for a member of some centre's cluster), pairs come ordered by a and a pair is tested only when a
 * is a centre or unassigned (it becomes a centre) and b is unassigned; a kept pair assigns b: clusters('centre') on
 * the kept pairs, with no pair tested that could not change them.
 */
export function testShingleSets(
  sets: usize, starts: usize, a: usize, b: usize, nPairs: i32, threshold: f64, flags: usize, forest: usize,
  setOf: usize, hist: usize, nSets: i32, centre: usize
): void {
  if (hist != 0) assignHistograms(starts, nSets, hist);
  for (let q = 0; q < nPairs; q++) {
    let di = <usize>load<u32>(a + (<usize>q << 2));
    let dj = <usize>load<u32>(b + (<usize>q << 2));
    let ri: usize = 0, rj: usize = 0;
    if (forest != 0) {
      ri = root(forest, di);
      rj = root(forest, dj);
      if (ri == rj) {
        store<u8>(flags + <usize>q, CONNECTED);
        continue;
      }
    } else if (centre != 0) {
      let ci = load<u32>(centre + (di << 2));
      if ((ci != UNASSIGNED && <usize>ci != di) || load<u32>(centre + (dj << 2)) != UNASSIGNED) {
        store<u8>(flags + <usize>q, CONNECTED);
        continue;
      }
      store<u32>(centre + (di << 2), <u32>di);
    }
    let i = setOf != 0 ? <usize>load<u32>(setOf + (di << 2)) : di;
    let j = setOf != 0 ? <usize>load<u32>(setOf + (dj << 2)) : dj;
    let si = load<u32>(starts + (i << 2));
    let ni = <i32>(load<u32>(starts + (i << 2), 4) - si);
    let sj = load<u32>(starts + (j << 2));
    let nj = <i32>(load<u32>(starts + (j << 2), 4) - sj);
    let flag: u8;
    if (ni == 0 || nj == 0) flag = ni == 0 && nj == 0 ? BOTH_EMPTY : 0;
    else if (hist != 0 && !mayReach(sets, starts, hist, nSets, i, j, ni, nj, threshold)) flag = 0;
    else flag = jaccardAtLeast(sets + (<usize>si << 2), ni, sets + (<usize>sj << 2), nj, threshold) ? 1 : 0;
    // BOTH_EMPTY is decided by the caller (trimmed texts): it joins nothing here. Documents without shingles pair
    // only with each other (flag 0 with any other), so what the caller decides never changes a test made here.
    if (flag == 1) {
      if (forest != 0) store<u32>(forest + (max(ri, rj) << 2), <u32>min(ri, rj));
      else if (centre != 0) store<u32>(centre + (dj << 2), <u32>di);
    }
    store<u8>(flags + <usize>q, flag);
  }
}

/** selectWindow's mark of a document taken into the window (local[d] before the caller numbers the sets). */
// @ts-ignore: decorator
@inline const IN_WINDOW: i32 = 0x7fffffff;

/**
 * The next window of connected-clusters verification, documents indexed as they are: from pair `from` of (a[p], b[p])
 * (u32 each) on, a pair whose documents `forest` connects already is passed over (it could change nothing, and its
 * sets are not needed); the others are taken in order, their documents marked in `local` (i32 per document, -1 when
 * out of the window, set to IN_WINDOW here) and listed at `members`, while the window's cost (f64 per document at
 * `cost`) stays within `budget`; the first pair is always taken. A taken pair's documents go to pa, pb (u32) and its
 * index to `taken`. Returns the first pair not taken (n when all were); counts[0] is the members listed, counts[1] the
 * pairs taken. The selection loop of pair-checks.ts, here so that tens of millions of pairs cost no JavaScript.
 */
export function selectWindow(
  a: usize, b: usize, from: i32, n: i32, forest: usize, local: usize, cost: usize, budget: f64, members: usize,
  pa: usize, pb: usize, taken: usize, counts: usize
): i32 {
  let nm: usize = 0, nt: usize = 0;
  let bytes: f64 = 0;
  let p = from;
  for (; p < n; p++) {
    let i = <usize>load<u32>(a + (<usize>p << 2));
    let j = <usize>load<u32>(b + (<usize>p << 2));
    if (root(forest, i) == root(forest, j)) continue; // (a pair (d, d) too)
    let inI = load<i32>(local + (i << 2)) >= 0;
    let inJ = load<i32>(local + (j << 2)) >= 0;
    let more = (inI ? 0 : load<f64>(cost + (i << 3))) + (inJ ? 0 : load<f64>(cost + (j << 3)));
    if (nt > 0 && bytes + more > budget) break;
    bytes += more;
    if (!inI) {
      store<i32>(local + (i << 2), IN_WINDOW);
      store<u32>(members + (nm++ << 2), <u32>i);
    }
    if (!inJ) {
      store<i32>(local + (j << 2), IN_WINDOW);
      store<u32>(members + (nm++ << 2), <u32>j);
    }
    store<u32>(pa + (nt << 2), <u32>i);
    store<u32>(pb + (nt << 2), <u32>j);
    store<u32>(taken + (nt++ << 2), <u32>p);
  }
  store<u32>(counts, <u32>nm);
  store<u32>(counts, <u32>nt, 4);
  return p;
}

/** The root of x in a union-find forest of u32 parents, halving the path on the way. */
export function root(forest: usize, x: usize): usize {
  let up = <usize>load<u32>(forest + (x << 2));
  while (up != x) {
    let upper = <usize>load<u32>(forest + (up << 2));
    store<u32>(forest + (x << 2), <u32>upper);
    x = upper;
    up = <usize>load<u32>(forest + (x << 2));
  }
  return x;
}

/**
 * The words of each of `count` documents (as in buildShingleSets), case-folded UTF-8 each followed by a space, back to
 * back at `out` (3 * offsets[count] bytes suffice: folding at most doubles a word, plus one space per word);
 * document d's end goes to ends[d] (u32, from `out`). `shingles` holds (longest document + 1) u64 of scratch.
 */
export function documentWords(
  text: usize, offsets: usize, count: i32, scratch: usize, shingles: usize, out: usize, ends: usize
): void {
  let at = out;
  for (let d = 0; d < count; d++) {
    let p = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let end = text + <usize>load<u32>(offsets + (<usize>d << 2), 4);
    collectWords(at);
    shinglesOf(p, end, 1, scratch, shingles);
    at = collectWords(0);
    store<u32>(ends + (<usize>d << 2), <u32>(at - out));
  }
}

/**
 * Whether the Jaccard similarity of two sorted distinct sets of u32 is >= t (the same answer as computing it in full):
 * J >= t needs common >= t(|A| + |B|) / (1 + t), so the merge gives up once the elements left cannot reach that
 * (the size filter is the case of an empty merge), and accepts as soon as the common count found so far gives
 * J >= t (J = c / (|A| + |B| - c) only grows with c).
 */
function jaccardAtLeast(x: usize, nx: i32, y: usize, ny: i32, t: f64): bool {
  let total = nx + ny;
  let needed = commonNeeded(total, t);
  let i = 0, j = 0, common = 0;
  while (i < nx && j < ny) {
    if (common + min(nx - i, ny - j) < needed) return false;
    if (common >= needed && <f64>common / <f64>(total - common) >= t) return true;
    if (ASC_FEATURE_SIMD && nx - i >= 8 && ny - j >= 8) {
      // Blocks of 8 against 8: all 64 hashes compared at once, then the block with the smaller last hash moves
      // on (both when they are equal): none of its hashes can equal a later one of the other set, and no pair is
      // compared in two rounds, so every common hash is counted once. A round moves 8 hashes where a scalar step
      // moves one, and the steps' chain of dependent loads is what limits the merge.
      let rounds = min(8, min((nx - i) >> 3, (ny - j) >> 3));
      for (let r = 0; r < rounds; r++) {
        let px = x + (<usize>i << 2);
        let py = y + (<usize>j << 2);
        let a0 = v128.load(px), a1 = v128.load(px, 16);
        let b0 = v128.load(py), b1 = v128.load(py, 16);
        let m0 = v128.or(i32x4.eq(a0, b0), i32x4.eq(a0, b1));
        let m1 = v128.or(i32x4.eq(a1, b0), i32x4.eq(a1, b1));
        b0 = i32x4.shuffle(b0, b0, 1, 2, 3, 0);
        b1 = i32x4.shuffle(b1, b1, 1, 2, 3, 0);
        m0 = v128.or(m0, v128.or(i32x4.eq(a0, b0), i32x4.eq(a0, b1)));
        m1 = v128.or(m1, v128.or(i32x4.eq(a1, b0), i32x4.eq(a1, b1)));
        b0 = i32x4.shuffle(b0, b0, 1, 2, 3, 0);
        b1 = i32x4.shuffle(b1, b1, 1, 2, 3, 0);
        m0 = v128.or(m0, v128.or(i32x4.eq(a0, b0), i32x4.eq(a0, b1)));
        m1 = v128.or(m1, v128.or(i32x4.eq(a1, b0), i32x4.eq(a1, b1)));
        b0 = i32x4.shuffle(b0, b0, 1, 2, 3, 0);
        b1 = i32x4.shuffle(b1, b1, 1, 2, 3, 0);
        m0 = v128.or(m0, v128.or(i32x4.eq(a0, b0), i32x4.eq(a0, b1)));
        m1 = v128.or(m1, v128.or(i32x4.eq(a1, b0), i32x4.eq(a1, b1)));
        common += <i32>popcnt<u32>(<u32>i32x4.bitmask(m0) | (<u32>i32x4.bitmask(m1) << 4));
        let u = load<u32>(px, 28);
        let v = load<u32>(py, 28);
        i += <i32>(u <= v) << 3;
        j += <i32>(v <= u) << 3;
      }
      continue;
    }
    // A block of branchless merge steps (a step advances i, j or both, so neither runs out within the block):
    // equal and unequal hashes alternate unpredictably, and a branch per step cost more than the steps.
    let steps = min(32, min(nx - i, ny - j));
    for (let s = 0; s < steps; s++) {
      let u = load<u32>(x + (<usize>i << 2));
      let v = load<u32>(y + (<usize>j << 2));
      common += <i32>(u == v);
      i += <i32>(u <= v);
      j += <i32>(v <= u);
    }
  }
  return <f64>common / <f64>(total - common) >= t;
}

/** The common hashes two sets of `total` hashes in all need for Jaccard >= t (never above the exact bound). */
// @ts-ignore: decorator
@inline function commonNeeded(total: i32, t: f64): i32 {
  return <i32>Math.ceil((t * <f64>total) / (1 + t) - 1e-9);
}

// Histogram bound: |A ∩ B| = Σ_b |A_b ∩ B_b| <= Σ_b min(|A_b|, |B_b|) over the 512 buckets of the hashes' top 9 bits,
// so a pair whose bound is below commonNeeded is rejected without a merge, with the merge's answer. The rejected
// candidates of the bench's 25 MB (Jaccard 0.41-0.54 in their quartiles, 85 % of the merges) were caught 80 % of
// the time with 256 buckets (23 % with 64, 95 % with 1024). On 2 GB of edited copies (37 M checks, nearly all
// rejected) 256 buckets left most to the merge: the calling thread spent 3.5 s merging and 1.3 s on bounds; with
// 512 buckets 0.5 s and 1.2 s; with 1024, 0.4 s and 3.1 s (the bounds' bytes then cost more than the merges they
// save). 32 vector steps per pair against a merge's hundreds; the SIMD build only: the scalar byte loop cost about
// as much as the merges it saved.

/** Sets with fewer hashes merge quickly: no histogram. */
// @ts-ignore: decorator
@inline const HISTOGRAM_MIN: i32 = 32;
// @ts-ignore: decorator
@inline const HISTOGRAM_BITS: i32 = 9;
// @ts-ignore: decorator
@inline const HISTOGRAM_BYTES: usize = 1 << HISTOGRAM_BITS;
/** Histogram state: not built yet; built and exact; a bucket reached 255 (no bound from this set). */
// @ts-ignore: decorator
@inline const UNBUILT: u8 = 0;
// @ts-ignore: decorator
@inline const EXACT: u8 = 1;
// @ts-ignore: decorator
@inline const SATURATED: u8 = 2;
// @ts-ignore: decorator
@inline const NO_SLOT: u32 = 0xffffffff;

// `hist` holds: the number of slots (u32) at 0; a slot number per set (u32) from 16; a state byte per slot;
// HISTOGRAM_BYTES counts per slot (16-byte aligned). Only sets with HISTOGRAM_MIN hashes or more get a slot.

// @ts-ignore: decorator
@inline function statesAt(nSets: i32): usize {
  return (16 + (<usize>nSets << 2) + 15) & ~15;
}
// @ts-ignore: decorator
@inline function countsAt(nSets: i32, slots: u32): usize {
  return (statesAt(nSets) + <usize>slots + 15) & ~15;
}
// @ts-ignore: decorator
@inline function setSize(starts: usize, i: usize): i32 {
  return <i32>(load<u32>(starts + (i << 2), 4) - load<u32>(starts + (i << 2)));
}

/** Bytes of `hist` that testShingleSets needs for the nSets sets at `starts`; 0 in the scalar build (no bound). */
export function histogramBytes(starts: usize, nSets: i32): i32 {
  if (!ASC_FEATURE_SIMD) return 0;
  let slots: u32 = 0;
  for (let i = 0; i < nSets; i++) slots += <u32>(setSize(starts, <usize>i) >= HISTOGRAM_MIN);
  return slots == 0 ? 0 : <i32>(countsAt(nSets, slots) + <usize>slots * HISTOGRAM_BYTES);
}

/** Numbers the sets that get a histogram and marks every slot unbuilt: histograms are built on first use. */
function assignHistograms(starts: usize, nSets: i32, hist: usize): void {
  let slots: u32 = 0;
  for (let i = 0; i < nSets; i++)
    store<u32>(hist + 16 + (<usize>i << 2), setSize(starts, <usize>i) >= HISTOGRAM_MIN ? slots++ : NO_SLOT);
  store<u32>(hist, slots);
  memory.fill(hist + statesAt(nSets), UNBUILT, <usize>slots);
}

/** Set i's HISTOGRAM_BYTES counts, built on first use; 0 when it has no slot or a bucket saturated. */
// @ts-ignore: decorator
@inline function histogramOf(sets: usize, starts: usize, hist: usize, nSets: i32, i: usize): usize {
  let slot = load<u32>(hist + 16 + (i << 2));
  if (slot == NO_SLOT) return 0;
  let state = hist + statesAt(nSets) + <usize>slot;
  let counts = hist + countsAt(nSets, load<u32>(hist)) + (<usize>slot << HISTOGRAM_BITS);
  let s = load<u8>(state);
  if (s == UNBUILT) {
    s = buildHistogram(sets + (<usize>load<u32>(starts + (i << 2)) << 2), setSize(starts, i), counts);
    store<u8>(state, s);
  }
  return s == EXACT ? counts : 0;
}

/** The counts of the n hashes (u32) at p by their top HISTOGRAM_BITS bits; EXACT, or SATURATED when a bucket would pass 255. */
function buildHistogram(p: usize, n: i32, counts: usize): u8 {
  memory.fill(counts, 0, HISTOGRAM_BYTES);
  let end = p + (<usize>n << 2);
  if (n < 256) {
    // No bucket can pass 255: no check per hash.
    for (; p < end; p += 4) {
      let bucket = counts + <usize>(load<u32>(p) >> (32 - HISTOGRAM_BITS));
      store<u8>(bucket, load<u8>(bucket) + 1);
    }
    return EXACT;
  }
  let s = EXACT;
  for (; p < end; p += 4) {
    let bucket = counts + <usize>(load<u32>(p) >> (32 - HISTOGRAM_BITS));
    let c = load<u8>(bucket);
    if (c == 255) s = SATURATED;
    else store<u8>(bucket, c + 1);
  }
  return s;
}

/**
 * Whether sets i and j (ni + nj hashes) may reach the threshold: false only when their histograms bound the common
 * hashes below commonNeeded, where the merge would reject them too.
 */
function mayReach(sets: usize, starts: usize, hist: usize, nSets: i32, i: usize, j: usize, ni: i32, nj: i32, t: f64): bool {
  if (ASC_FEATURE_SIMD) {
    let hi = histogramOf(sets, starts, hist, nSets, i);
    if (hi == 0) return true;
    let hj = histogramOf(sets, starts, hist, nSets, j);
    if (hj == 0) return true;
    // Per u16 lane at most 32 steps of two mins of 255 each: no overflow.
    let acc = i16x8.splat(0);
    for (let o: usize = 0; o < HISTOGRAM_BYTES; o += 16)
      acc = i16x8.add(acc, i16x8.extadd_pairwise_i8x16_u(i8x16.min_u(v128.load(hi + o), v128.load(hj + o))));
    let sums = i32x4.extadd_pairwise_i16x8_u(acc);
    let bound = i32x4.extract_lane(sums, 0) + i32x4.extract_lane(sums, 1) + i32x4.extract_lane(sums, 2) +
      i32x4.extract_lane(sums, 3);
    return bound >= commonNeeded(ni + nj, t);
  }
  return true;
}

/** Most bits of the buckets that distinctSorted spreads a set over (2^12 u32 counters, static: larger sets get larger buckets). */
// @ts-ignore: decorator
@inline const BUCKET_BITS: i32 = 12;
const BUCKETS = memory.data(4 << BUCKET_BITS, 16);

/**
 * Sorts the n values of type T (u64 or u32) at p and drops repeats, using n more at `tmp` (not overlapping p) as
 * scratch; returns how many distinct values are left at p. Shingle hashes are uniform, so one counting pass over their top bits (about a
 * bucket per value) leaves buckets of one or two, each finished by insertion; a bucket that is large all the same
 * (repeated shingles, or hashes that happen to share their top bits) is quicksorted, so the worst case stays
 * O(n log n). Measured on the bench's 25 MB: 5 times faster than quicksorting each set.
 */
function distinctSorted<T>(p: usize, n: i32, tmp: usize): i32 {
  if (n < 2) return n;
  if (n <= 16) {
    sortValues<T>(p, 0, n - 1);
    return dropRepeats<T>(p, p, n);
  }
  let bits = min(BUCKET_BITS, 32 - clz<i32>(n - 1)); // 2^bits >= n, n >= 17: bits >= 5
  let shift = <T>(<i32>sizeof<T>() * 8 - bits);
  let buckets = 1 << bits; // bits <= 16
  memory.fill(BUCKETS, 0, <usize>buckets << 2);
  for (let i = 0; i < n; i++) {
    let c = BUCKETS + (<usize>(load<T>(p + (<usize>i << alignof<T>())) >> shift) << 2);
    store<u32>(c, load<u32>(c) + 1);
  }
  let sum: u32 = 0;
  for (let q = 0; q < buckets; q++) {
    let c = BUCKETS + (<usize>q << 2);
    let count = load<u32>(c);
    store<u32>(c, sum);
    sum += count;
  }
  for (let i = 0; i < n; i++) {
    let v = load<T>(p + (<usize>i << alignof<T>()));
    let c = BUCKETS + (<usize>(v >> shift) << 2);
    let at = load<u32>(c);
    store<T>(tmp + (<usize>at << alignof<T>()), v);
    store<u32>(c, at + 1);
  }
  // Each counter now holds its bucket's end; the buckets are in order, so sorting each one sorts the whole. Large
  // buckets are quicksorted; then one insertion pass over the whole array sorts the small ones, since no value moves
  // past its bucket (a call per bucket of one or two, sort and copy, took twice as long), and one pass drops repeats.
  let start = 0;
  for (let q = 0; q < buckets; q++) {
    let end = <i32>load<u32>(BUCKETS + (<usize>q << 2));
    if (end - start > 16) sortValues<T>(tmp, start, end - 1);
    start = end;
  }
  // One branch-free exchange pass sorts every bucket of two (most of those not of one), so the insertion pass that
  // finishes the larger ones mispredicts rarely (micro-benchmark: 10.4 -> 9.3 ns per hash with the branch-free
  // dropRepeats below).
  let carry = load<T>(tmp);
  for (let i = 1; i < n; i++) {
    let y = load<T>(tmp + (<usize>i << alignof<T>()));
    store<T>(tmp + (<usize>(i - 1) << alignof<T>()), select<T>(carry, y, carry < y));
    carry = select<T>(y, carry, carry < y);
  }
  store<T>(tmp + (<usize>(n - 1) << alignof<T>()), carry);
  insertionSort<T>(tmp, 0, n - 1);
  return dropRepeats<T>(tmp, p, n);
}

/** Copies the sorted values src[0..n) to out without repeats; returns how many are left. src may be out itself. */
// @ts-ignore: decorator
@inline function dropRepeats<T>(src: usize, out: usize, n: i32): i32 {
  if (n == 0) return 0;
  let last = load<T>(src);
  store<T>(out, last);
  let kept = 1;
  // Every value is stored, and the count moves only past a new one: no branch on repeats.
  for (let i = 1; i < n; i++) {
    let v = load<T>(src + (<usize>i << alignof<T>()));
    store<T>(out + (<usize>kept << alignof<T>()), v);
    kept += <i32>(v != last);
    last = v;
  }
  return kept;
}

/** Insertion sort of p[lo..hi] (inclusive): for short ranges, and for arrays whose values are nearly in place. */
// @ts-ignore: decorator
@inline function insertionSort<T>(p: usize, lo: i32, hi: i32): void {
  for (let i = lo + 1; i <= hi; i++) {
    let v = load<T>(p + (<usize>i << alignof<T>()));
    let k = i - 1;
    while (k >= lo && load<T>(p + (<usize>k << alignof<T>())) > v) {
      store<T>(p + (<usize>(k + 1) << alignof<T>()), load<T>(p + (<usize>k << alignof<T>())));
      k--;
    }
    store<T>(p + (<usize>(k + 1) << alignof<T>()), v);
  }
}

/**
 * Quicksort of p[lo..hi] (inclusive): Hoare partition around the median of three, which splits runs of equal
 * values evenly (repeated shingles); the smaller side recurses, so the depth is O(log n); short ranges by insertion.
 */
function sortValues<T>(p: usize, lo: i32, hi: i32): void {
  while (hi - lo > 16) {
    let mid = lo + ((hi - lo) >> 1);
    let x = load<T>(p + (<usize>lo << alignof<T>()));
    let y = load<T>(p + (<usize>mid << alignof<T>()));
    let z = load<T>(p + (<usize>hi << alignof<T>()));
    let pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    let i = lo - 1, j = hi + 1;
    for (;;) {
      do i++; while (load<T>(p + (<usize>i << alignof<T>())) < pivot);
      do j--; while (load<T>(p + (<usize>j << alignof<T>())) > pivot);
      if (i >= j) break;
      let t = load<T>(p + (<usize>i << alignof<T>()));
      store<T>(p + (<usize>i << alignof<T>()), load<T>(p + (<usize>j << alignof<T>())));
      store<T>(p + (<usize>j << alignof<T>()), t);
    }
    // [lo, j] <= pivot <= [j + 1, hi]
    if (j - lo < hi - j) {
      sortValues<T>(p, lo, j);
      lo = j + 1;
    } else {
      sortValues<T>(p, j + 1, hi);
      hi = j;
    }
  }
  insertionSort<T>(p, lo, hi);
}
