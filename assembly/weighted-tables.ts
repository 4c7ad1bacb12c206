// Weighted SimHash of resident feature hashes in about 8 adds per feature instead of 64 (128 bits: 16, not 128).
//
// The reference (reducer.ts, and a plain loop) adds ±w to each of the 64 counters in feature order. Here each
// feature adds its weight to one entry per hash byte: T[g][byte g of the hash] += w. Afterwards the sum P_i of the
// weights of features whose bit i = 8g + j is set is the sum of the 128 entries of T[g] whose index has bit j set,
// and counter i = 2 P_i - W, W the sum of all weights.
//
// That sums in another order than the reference, so a counter can round differently. Its sign cannot, where the
// counter is further from 0 than both summations' error bounds together: each is at most (adds in a chain) *
// 2^-53 * A, A the sum of |w| (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2). Integer
// weights whose |w| sum stays below 2^52 sum exactly in any order, so their counters (ties too) are certain. A
// counter within the bound is summed again in feature order; with many of those the whole document goes through
// the reference reducer instead. So the fingerprint always equals the reference's, bit for bit.
//
// The hashes arrive in chunks (src/fingerprint/fingerprint.ts copies each into linear memory and calls add), so
// a document of any length needs only one chunk of memory; a second pass over the chunks sums the uncertain
// counters again.

// @ts-ignore: decorator
@inline const ENTRIES: i32 = 256;
/** Uncertain counters summed again one at a time; with more, the document goes through the reference reducer. */
// @ts-ignore: decorator
@inline const MAX_RESUMMED: i32 = 8;

const TABLES = memory.data(16 * ENTRIES * 8, 16); // 16 hash bytes (128 bits) x 256 byte values, f64 sums
const COUNTERS = memory.data(128 * 8, 16);
const RESUMMED = memory.data(MAX_RESUMMED * 4, 16); // the uncertain counters' bit numbers (i32)

// What endTables asks for next: nothing (the fingerprint is written), a second pass of addResummed, or the
// reference reducer over the whole document.
// @ts-ignore: decorator
@inline export const TABLES_DONE: i32 = 0;
// @ts-ignore: decorator
@inline export const TABLES_RESUM: i32 = 1;
// @ts-ignore: decorator
@inline export const TABLES_REFERENCE: i32 = 2;

/** The fewest features for which the tables pay: below, summing them costs more than the reference reducer. */
export const WEIGHTED_TABLE_MIN: f64 = 512;

let wide = false;
let bits: i32 = 64;
let features: f64 = 0;
let total: f64 = 0;
let abs: f64 = 0;
let integral = true;
let resummed: i32 = 0;

// @ts-ignore: decorator
@inline function addByte(table: usize, byte: u32, w: f64): void {
  let p = table + (<usize>byte << 3);
  store<f64>(p, load<f64>(p) + w);
}

/** Adds w to the entries of the 8 bytes at h in the 8 tables from `tables` on. */
// @ts-ignore: decorator
@inline function addBytes8(tables: usize, h: usize, w: f64): void {
  addByte(tables, load<u8>(h), w);
  addByte(tables + 1 * ENTRIES * 8, load<u8>(h, 1), w);
  addByte(tables + 2 * ENTRIES * 8, load<u8>(h, 2), w);
  addByte(tables + 3 * ENTRIES * 8, load<u8>(h, 3), w);
  addByte(tables + 4 * ENTRIES * 8, load<u8>(h, 4), w);
  addByte(tables + 5 * ENTRIES * 8, load<u8>(h, 5), w);
  addByte(tables + 6 * ENTRIES * 8, load<u8>(h, 6), w);
  addByte(tables + 7 * ENTRIES * 8, load<u8>(h, 7), w);
}

export function beginTables(fingerprintBits: i32): void {
  bits = fingerprintBits;
  wide = bits == 128;
  features = 0;
  total = 0;
  abs = 0;
  integral = true;
}

/**
 * Adds `n` hashes (1 or 2 u64 each, low word first) with their f64 weights, all finite, in feature order. The
 * running sums live in locals: as globals, V8 kept them in memory, and each feature waited for the last one's
 * store of `total` and `abs` (a chain of store, load and add). Each hash byte is read by itself: one load where a
 * shift and a zero-extend of the word took three. Old and new alternating on the same 10^6 hashes: 64-bit float
 * weights 1.27-1.47x, integer counts 1.28-1.35x, 128-bit 1.94-2.15x.
 */
export function addTables(hashes: usize, n: i32, weights: usize): void {
  features += <f64>n;
  let sum = total;
  let sumAbs = abs;
  let whole = integral;
  if (wide) {
    for (let j = 0; j < n; j++) {
      let h = hashes + (<usize>j << 4);
      let w = load<f64>(weights + (<usize>j << 3));
      sum += w;
      sumAbs += Math.abs(w);
      whole &= Math.trunc(w) == w;
      addBytes8(TABLES, h, w);
      addBytes8(TABLES + 8 * ENTRIES * 8, h + 8, w);
    }
  } else {
    for (let j = 0; j < n; j++) {
      let w = load<f64>(weights + (<usize>j << 3));
      sum += w;
      sumAbs += Math.abs(w);
      whole &= Math.trunc(w) == w;
      addBytes8(TABLES, hashes + (<usize>j << 3), w);
    }
  }
  total = sum;
  abs = sumAbs;
  integral = whole;
}

/**
 * Ends the tables' pass. Returns TABLES_DONE with the fingerprint written to `out` when every counter's sign is
 * certain; TABLES_RESUM when a few counters must be summed again in feature order (a second pass of addResummed,
 * then endResummed); TABLES_REFERENCE when so many must that the whole document should go through the reference
 * reducer.
 */
export function endTables(out: usize): i32 {
  let groups = wide ? 16 : 8;
  // Per bit of each byte: the entries whose index has that bit set, in runs of 2^j.
  for (let g = 0; g < groups; g++) {
    let table = TABLES + <usize>(g * ENTRIES * 8);
    for (let j = 0; j < 8; j++) {
      let run = 1 << j;
      let sum: f64 = 0;
      for (let start = run; start < ENTRIES; start += run << 1) {
        for (let v = start; v < start + run; v++) sum += load<f64>(table + (<usize>v << 3));
      }
      store<f64>(COUNTERS + (<usize>(g * 8 + j) << 3), 2 * sum - total);
    }
    memory.fill(table, 0, ENTRIES * 8);
  }
  let exact = integral && abs < 4503599627370496; // 2^52
  // Both error bounds together: here 2 (n + 127) + n + 2 chained adds, in feature order n - 1, each 2^-53 * abs;
  // (3n + 512) * 2^-52 leaves half again to spare, for the bounds' own rounding and for abs's. From abs = 2^1022
  // on, 2 P could overflow: every counter is then uncertain, and the document goes through the reference reducer.
  let bound = exact ? 0 : abs < 4.49423283715579e307 ? (3 * features + 512) * 2.220446049250313e-16 * abs : Infinity;
  resummed = 0;
  for (let i = 0, width = counters(); i < width; i++) {
    let c = load<f64>(COUNTERS + (<usize>i << 3));
    if (exact || Math.abs(c) > bound) continue;
    if (resummed == MAX_RESUMMED) return TABLES_REFERENCE;
    store<i32>(RESUMMED + (<usize>resummed << 2), i);
    store<f64>(COUNTERS + (<usize>i << 3), 0);
    resummed++;
  }
  if (resummed > 0) return TABLES_RESUM;
  endResummed(out);
  return TABLES_DONE;
}

/** The second pass: the uncertain counters summed as the reference sums them, +w where the bit is 1, -w where 0. */
export function addResummed(hashes: usize, n: i32, weights: usize): void {
  let stride = wide ? 4 : 3;
  for (let r = 0; r < resummed; r++) {
    let bit = load<i32>(RESUMMED + (<usize>r << 2));
    let at = hashes + (bit >= 64 ? 8 : 0);
    let shift = <u64>(bit & 63);
    let c = load<f64>(COUNTERS + (<usize>bit << 3));
    for (let j = 0; j < n; j++) {
      let h = load<u64>(at + (<usize>j << stride));
      let w = load<u64>(weights + (<usize>j << 3));
      // The sign bit flipped where the hash bit is 0: no f64 select, which engines compile to a branch.
      c += reinterpret<f64>(w ^ ((~h >> shift) << 63));
    }
    store<f64>(COUNTERS + (<usize>bit << 3), c);
  }
}

/** The counters the fingerprint reads: 32-bit fingerprints are the low half of the 64-bit reduction. */
function counters(): i32 {
  return bits == 32 ? 32 : wide ? 128 : 64;
}

/** Writes the fingerprint from the counters (after endTables, or after the second pass). */
export function endResummed(out: usize): void {
  let lo: u64 = 0, hi: u64 = 0;
  for (let i = 0, width = counters(); i < width; i++) {
    if (load<f64>(COUNTERS + (<usize>i << 3)) > 0) {
      if (i < 64) lo |= <u64>1 << <u64>i;
      else hi |= <u64>1 << <u64>(i - 64);
    }
  }
  store<u64>(out, lo);
  if (wide) store<u64>(out, hi, 8);
}
