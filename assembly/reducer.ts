// The SimHash reducer: turns a stream of feature hashes (and weights) into per-bit counters and a fingerprint.
// Feature hashing lives elsewhere; this file only counts bits.
//
// Unit weights (the common case) use bit-sliced carry-save counters (Harley–Seal): 16 hash words are folded
// into ones/twos/fours/eights planes with ~2.5 logic ops per word, so no per-bit loop runs per feature.
// Hash words are processed as two lanes (even and odd words): for 64-bit fingerprints the lanes are two
// independent streams of hashes that are summed at the end; for 128-bit they are the low and high halves.
// With SIMD one v128 holds both lanes; without it the same code runs once per lane on u64.
//
// Weighted features use f64 counters: counter_i += w where bit i is 1 and -= w where it is 0, in feature order,
// so results equal a plain loop bit for bit. The sign flip comes from a 256-entry table per hash byte.

// @ts-ignore: decorator
@inline const BUF_WORDS: i32 = 512; // hash words buffered before folding (multiple of 32)
// @ts-ignore: decorator
@inline const LEVELS: i32 = 27; // ripple levels above the eights plane: 16 * 2^27 words per lane before a drain

const BUF = memory.data(BUF_WORDS * 8 + 64, 16); // hash words (and padding)
const WBUF = memory.data(BUF_WORDS / 2 * 8, 16); // weights, one per feature
const PLANES = memory.data(16 * (4 + LEVELS), 16); // ones, twos, fours, eights, then ripple levels; two lanes each
const COUNT = memory.data(128 * 8, 16); // i64 count of one bits per fingerprint bit and lane
const WCOUNT = memory.data(128 * 8, 16); // f64 weighted counters
const SIGNS = memory.data(256 * 64, 16); // per byte value: 8 f64 masks, sign bit set where the bit is 0
const ONES = memory.data(128 * 4, 16); // i32 sum of the weights of features with each bit set (integer mode)
const MASKS = memory.data(256 * 32, 16); // per byte value: 8 i32 masks, all ones where the bit is 1
const IWBUF = memory.data(BUF_WORDS / 2 * 4, 16); // the block's weights as i32 (integer mode)

let wide: bool = false; // 128-bit fingerprints
let narrow: bool = false; // 32-bit fingerprints: the low half of the 64-bit reduction
let weighted: bool = false;
// Weighted documents start in integer mode: while every weight is an integer and the sum of |w| stays below 2^31,
// counter i is 2 * ONES[i] - total exactly (what f64 summation gives too), at a third of the cost.
let integral: bool = true;
let absTotal: f64 = 0;
let total: i64 = 0;
let buffered: i32 = 0; // words in BUF
let step: i32 = 1; // words per feature hash: 1, or 2 for 128 bits
let features: u64 = 0;
let sixteens: u32 = 0; // sixteens added since the last drain
let drained: bool = false; // COUNT holds part of this document's counts
let drainAt: u32 = (1 << LEVELS) - 64;

/** Test hook: drain the planes every `n` blocks of 16 words (0 restores the default), to exercise drain(). */
export function setDrainInterval(n: u32): void {
  drainAt = n == 0 ? (1 << LEVELS) - 64 : n;
}

export function setupReducer(): void {
  for (let b = 0; b < 256; b++) {
    for (let i = 0; i < 8; i++) {
      store<u64>(SIGNS + (b * 8 + i) * 8, ((b >> i) & 1) ? 0 : 0x8000000000000000);
      store<i32>(MASKS + (b * 8 + i) * 4, ((b >> i) & 1) ? -1 : 0);
    }
  }
}

/** Starts a document. */
export function beginDocument(bits: i32, isWeighted: bool): void {
  wide = bits == 128;
  narrow = bits == 32;
  weighted = isWeighted;
  integral = true;
  absTotal = 0;
  total = 0;
  buffered = 0;
  step = wide ? 2 : 1;
  features = 0;
  sixteens = 0;
  drained = false;
  // PLANES, COUNT and WCOUNT are all zero here: endDocument clears what it reads.
}

// @ts-ignore: decorator
@inline export function addUnit(lo: u64, hi: u64): void {
  // Both words are always stored (BUF has slack): in 64-bit mode the next hash overwrites `hi`. The feature
  // count is derived from `buffered` at each flush, so the per-feature work is two stores and one add.
  let b = buffered;
  let p = BUF + (<usize>b << 3);
  store<u64>(p, lo);
  store<u64>(p, hi, 8);
  b += step;
  buffered = b;
  if (b >= BUF_WORDS) flushUnit();
}

// 64-bit unit features written straight into the buffer by a loop that keeps its cursor in a local (the default
// words loop, tokenize.ts): unitCursor where the next hash goes, unitsUpTo when the cursor reaches unitLimit.
// @ts-ignore: decorator
@inline export function unitCursor(): usize {
  return BUF + (<usize>buffered << 3);
}

// @ts-ignore: decorator
@inline export function unitLimit(): usize {
  return BUF + (<usize>BUF_WORDS << 3);
}

/** Writes the 64-bit unit feature `h` at `cursor` and returns where the next one goes (at `limit`: unitsUpTo). */
// @ts-ignore: decorator
@inline export function addUnitAt(cursor: usize, limit: usize, h: u64): usize {
  store<u64>(cursor, h);
  cursor += 8;
  return cursor < limit ? cursor : unitsUpTo(cursor);
}

/** The features written up to `cursor` are added (a full buffer is folded); returns where the next one goes. */
export function unitsUpTo(cursor: usize): usize {
  buffered = <i32>((cursor - BUF) >> 3);
  if (buffered >= BUF_WORDS) flushUnit();
  return BUF + (<usize>buffered << 3);
}

// @ts-ignore: decorator
@inline export function addWeighted(lo: u64, hi: u64, w: f64): void {
  let i = <i32>(features & (BUF_WORDS / 2 - 1));
  store<u64>(BUF + (<usize>i << 4), lo);
  store<u64>(BUF + (<usize>i << 4), hi, 8);
  store<f64>(WBUF + (<usize>i << 3), w);
  features++;
  if ((features & (BUF_WORDS / 2 - 1)) == 0) flushWeighted(BUF_WORDS / 2);
}

// ---- unit weights -------------------------------------------------------------------------------------------

// A call: it runs once per BUF_WORDS features, and inlined into every addUnit it bloats the tokenizers' loops.
// @ts-ignore: decorator
@noinline function flushUnit(): void {
  if (buffered == 0) return;
  features += <u64>(buffered >> (step - 1));
  // Pad with zero words up to a multiple of 32 words (16 per lane): zeros add no one bits.
  let padded = (buffered + 31) & ~31;
  memory.fill(BUF + (<usize>buffered << 3), 0, <usize>(padded - buffered) << 3);
  if (ASC_FEATURE_SIMD) foldSimd(padded >> 5);
  else {
    foldScalar(0, padded >> 5);
    foldScalar(1, padded >> 5);
  }
  buffered = 0;
  sixteens += <u32>(padded >> 5);
  if (sixteens >= drainAt) drain();
}

// @ts-ignore: decorator
@inline function csaHigh(a: v128, b: v128, c: v128): v128 {
  return v128.or(v128.and(a, b), v128.and(v128.xor(a, b), c));
}

function foldSimd(blocks: i32): void {
  let ones = v128.load(PLANES);
  let twos = v128.load(PLANES, 16);
  let fours = v128.load(PLANES, 32);
  let eights = v128.load(PLANES, 48);
  let p = BUF;
  for (let k = 0; k < blocks; k++) {
    let twosA: v128, twosB: v128, foursA: v128, foursB: v128, eightsA: v128, eightsB: v128, d0: v128, d1: v128, u: v128;
    // Each step: (high, low) = a + b + c as carry-save.
    d0 = v128.load(p); d1 = v128.load(p, 16); u = v128.xor(ones, d0);
    twosA = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    d0 = v128.load(p, 32); d1 = v128.load(p, 48); u = v128.xor(ones, d0);
    twosB = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    u = v128.xor(twos, twosA); foursA = csaHigh(twos, twosA, twosB); twos = v128.xor(u, twosB);
    d0 = v128.load(p, 64); d1 = v128.load(p, 80); u = v128.xor(ones, d0);
    twosA = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    d0 = v128.load(p, 96); d1 = v128.load(p, 112); u = v128.xor(ones, d0);
    twosB = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    u = v128.xor(twos, twosA); foursB = csaHigh(twos, twosA, twosB); twos = v128.xor(u, twosB);
    u = v128.xor(fours, foursA); eightsA = csaHigh(fours, foursA, foursB); fours = v128.xor(u, foursB);
    d0 = v128.load(p, 128); d1 = v128.load(p, 144); u = v128.xor(ones, d0);
    twosA = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    d0 = v128.load(p, 160); d1 = v128.load(p, 176); u = v128.xor(ones, d0);
    twosB = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    u = v128.xor(twos, twosA); foursA = csaHigh(twos, twosA, twosB); twos = v128.xor(u, twosB);
    d0 = v128.load(p, 192); d1 = v128.load(p, 208); u = v128.xor(ones, d0);
    twosA = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    d0 = v128.load(p, 224); d1 = v128.load(p, 240); u = v128.xor(ones, d0);
    twosB = csaHigh(ones, d0, d1); ones = v128.xor(u, d1);
    u = v128.xor(twos, twosA); foursB = csaHigh(twos, twosA, twosB); twos = v128.xor(u, twosB);
    u = v128.xor(fours, foursA); eightsB = csaHigh(fours, foursA, foursB); fours = v128.xor(u, foursB);
    u = v128.xor(eights, eightsA); let carry = csaHigh(eights, eightsA, eightsB); eights = v128.xor(u, eightsB);
    // Ripple the sixteens into the levels above; the carry dies out after ~2 levels on average.
    let q = PLANES + 64;
    while (v128.any_true(carry)) {
      let level = v128.load(q);
      v128.store(q, v128.xor(level, carry));
      carry = v128.and(level, carry);
      q += 16;
    }
    p += 256;
  }
  v128.store(PLANES, ones);
  v128.store(PLANES, twos, 16);
  v128.store(PLANES, fours, 32);
  v128.store(PLANES, eights, 48);
}

// @ts-ignore: decorator
@inline function csaHigh64(a: u64, b: u64, c: u64): u64 {
  return (a & b) | ((a ^ b) & c);
}

function foldScalar(lane: i32, blocks: i32): void {
  let s = PLANES + (<usize>lane << 3);
  let ones = load<u64>(s);
  let twos = load<u64>(s, 16);
  let fours = load<u64>(s, 32);
  let eights = load<u64>(s, 48);
  let p = BUF + (<usize>lane << 3);
  for (let k = 0; k < blocks; k++) {
    let twosA: u64, twosB: u64, foursA: u64, foursB: u64, eightsA: u64, eightsB: u64, d0: u64, d1: u64, u: u64;
    d0 = load<u64>(p); d1 = load<u64>(p, 16); u = ones ^ d0;
    twosA = csaHigh64(ones, d0, d1); ones = u ^ d1;
    d0 = load<u64>(p, 32); d1 = load<u64>(p, 48); u = ones ^ d0;
    twosB = csaHigh64(ones, d0, d1); ones = u ^ d1;
    u = twos ^ twosA; foursA = csaHigh64(twos, twosA, twosB); twos = u ^ twosB;
    d0 = load<u64>(p, 64); d1 = load<u64>(p, 80); u = ones ^ d0;
    twosA = csaHigh64(ones, d0, d1); ones = u ^ d1;
    d0 = load<u64>(p, 96); d1 = load<u64>(p, 112); u = ones ^ d0;
    twosB = csaHigh64(ones, d0, d1); ones = u ^ d1;
    u = twos ^ twosA; foursB = csaHigh64(twos, twosA, twosB); twos = u ^ twosB;
    u = fours ^ foursA; eightsA = csaHigh64(fours, foursA, foursB); fours = u ^ foursB;
    d0 = load<u64>(p, 128); d1 = load<u64>(p, 144); u = ones ^ d0;
    twosA = csaHigh64(ones, d0, d1); ones = u ^ d1;
    d0 = load<u64>(p, 160); d1 = load<u64>(p, 176); u = ones ^ d0;
    twosB = csaHigh64(ones, d0, d1); ones = u ^ d1;
    u = twos ^ twosA; foursA = csaHigh64(twos, twosA, twosB); twos = u ^ twosB;
    d0 = load<u64>(p, 192); d1 = load<u64>(p, 208); u = ones ^ d0;
    twosA = csaHigh64(ones, d0, d1); ones = u ^ d1;
    d0 = load<u64>(p, 224); d1 = load<u64>(p, 240); u = ones ^ d0;
    twosB = csaHigh64(ones, d0, d1); ones = u ^ d1;
    u = twos ^ twosA; foursB = csaHigh64(twos, twosA, twosB); twos = u ^ twosB;
    u = fours ^ foursA; eightsB = csaHigh64(fours, foursA, foursB); fours = u ^ foursB;
    u = eights ^ eightsA; let carry = csaHigh64(eights, eightsA, eightsB); eights = u ^ eightsB;
    let q = s + 64;
    while (carry != 0) {
      let level = load<u64>(q);
      store<u64>(q, level ^ carry);
      carry &= level;
      q += 16;
    }
    p += 256;
  }
  store<u64>(s, ones);
  store<u64>(s, twos, 16);
  store<u64>(s, fours, 32);
  store<u64>(s, eights, 48);
}

/** Adds every plane into the integer counters and clears the planes (only for documents of > 2^31 words). */
function drain(): void {
  drained = true;
  for (let lane = 0; lane < 2; lane++) {
    let c = COUNT + (<usize>lane << 9);
    for (let level = 0; level < 4 + LEVELS; level++) {
      let q = PLANES + (<usize>level << 4) + (<usize>lane << 3);
      let x = load<u64>(q);
      if (x == 0) continue;
      store<u64>(q, 0);
      do {
        let bit = <usize>ctz<u64>(x);
        let at = c + (bit << 3);
        store<u64>(at, load<u64>(at) + (<u64>1 << <u64>level));
        x &= x - 1;
      } while (x != 0);
    }
  }
  sixteens = 0;
}

// The per-bit counts live bit-sliced in PLANES: level L holds bit L of every count (ones, twos, fours, eights,
// then the ripple levels). The result bit is set where count > T, with T = floor(n/2) (counter 2*count - n > 0)
// or, where ties set the bit, T = ceil(n/2) - 1. All 64 or 128 comparisons run at once on the planes, from the
// top level down; in 64-bit mode the two lanes are first added with a bit-sliced ripple-carry adder.
const SUM = memory.data(8 * (4 + LEVELS + 1), 16);
let majorityHigh: u64 = 0;

function majority(tiesSetBit: bool): u64 {
  let n = features;
  majorityHigh = 0;
  if (n == 0) {
    memory.fill(PLANES, 0, 16 * (4 + LEVELS));
    if (!tiesSetBit) return 0;
    majorityHigh = wide ? ~(<u64>0) : 0;
    return ~(<u64>0);
  }
  // No lane counts more than n one bits, so the levels from bit length(n) up are zero (and so are t's bits there):
  // a document of 200 features reads 8 levels, not all 31 (per document, that was 4 % of a batch of mail-sized ones).
  let levels = min(4 + LEVELS, 64 - <i32>clz<u64>(n));
  let t: u64 = tiesSetBit ? ((n + 1) >> 1) - 1 : n >> 1;
  if (wide) {
    let gt0: u64 = 0, eq0: u64 = ~(<u64>0), gt1: u64 = 0, eq1: u64 = ~(<u64>0);
    // Bits of t above the top level make every count smaller; t < 2^levels always holds here.
    for (let l = levels - 1; l >= 0; l--) {
      let q = PLANES + (<usize>l << 4);
      let a = load<u64>(q), b = load<u64>(q, 8);
      store<u64>(q, 0);
      store<u64>(q, 0, 8);
      if ((t >> <u64>l) & 1) { eq0 &= a; eq1 &= b; }
      else { gt0 |= eq0 & a; eq0 &= ~a; gt1 |= eq1 & b; eq1 &= ~b; }
    }
    majorityHigh = gt1;
    return gt0;
  }
  let carry: u64 = 0;
  for (let l = 0; l < levels; l++) {
    let q = PLANES + (<usize>l << 4);
    let a = load<u64>(q), b = load<u64>(q, 8);
    store<u64>(q, 0);
    store<u64>(q, 0, 8);
    let x = a ^ b;
    store<u64>(SUM + (<usize>l << 3), x ^ carry);
    carry = (a & b) | (x & carry);
  }
  store<u64>(SUM + (<usize>levels << 3), carry);
  let gt: u64 = 0, eq: u64 = ~(<u64>0);
  for (let l = levels; l >= 0; l--) {
    let a = load<u64>(SUM + (<usize>l << 3));
    if ((t >> <u64>l) & 1) eq &= a;
    else { gt |= eq & a; eq &= ~a; }
  }
  return gt;
}

// ---- weighted -----------------------------------------------------------------------------------------------

function flushWeighted(n: i32): void {
  if (integral) {
    let abs = absTotal;
    let ok = true;
    for (let i = 0; i < n; i++) {
      let w = load<f64>(WBUF + (<usize>i << 3));
      abs += Math.abs(w);
      ok = ok && Math.trunc(w) == w;
    }
    if (ok && abs < 2147483647) {
      absTotal = abs;
      for (let i = 0; i < n; i++) {
        let w = <i32>load<f64>(WBUF + (<usize>i << 3));
        store<i32>(IWBUF + (<usize>i << 2), w);
        total += <i64>w;
      }
      flushIntegral(n);
      return;
    }
    // Leave integer mode: the exact integer counters become the f64 counters, then summation goes on in order.
    integral = false;
    let groups = wide ? 128 : 64;
    for (let i = 0; i < groups; i++) {
      let c = 2 * <i64>load<i32>(ONES + (<usize>i << 2)) - total;
      store<i32>(ONES + (<usize>i << 2), 0);
      store<f64>(WCOUNT + (<usize>i << 3), <f64>c);
    }
  }
  flushFloat(n);
}

function flushIntegral(n: i32): void {
  let groups = wide ? 16 : 8;
  for (let g = 0; g < groups; g++) {
    let byteAt = BUF + <usize>((g & 7) + ((g >> 3) << 3));
    let cp = ONES + (<usize>g << 5);
    if (ASC_FEATURE_SIMD) {
      let c0 = v128.load(cp), c1 = v128.load(cp, 16);
      for (let i = 0; i < n; i++) {
        let m = MASKS + (<usize>load<u8>(byteAt + (<usize>i << 4)) << 5);
        let w = i32x4.splat(load<i32>(IWBUF + (<usize>i << 2)));
        c0 = i32x4.add(c0, v128.and(w, v128.load(m)));
        c1 = i32x4.add(c1, v128.and(w, v128.load(m, 16)));
      }
      v128.store(cp, c0);
      v128.store(cp, c1, 16);
    } else {
      for (let j = 0; j < 8; j++) {
        let acc = load<i32>(cp + (<usize>j << 2));
        for (let i = 0; i < n; i++) {
          let b = <i32>load<u8>(byteAt + (<usize>i << 4));
          acc += load<i32>(IWBUF + (<usize>i << 2)) & -((b >> j) & 1);
        }
        store<i32>(cp + (<usize>j << 2), acc);
      }
    }
  }
}

function flushFloat(n: i32): void {
  let groups = wide ? 16 : 8;
  for (let g = 0; g < groups; g++) {
    // Byte g of the 128-bit hash: low word bytes 0..7, high word bytes 8..15.
    let byteAt = BUF + <usize>((g & 7) + ((g >> 3) << 3));
    let cp = WCOUNT + (<usize>g << 6);
    if (ASC_FEATURE_SIMD) {
      let c0 = v128.load(cp), c1 = v128.load(cp, 16), c2 = v128.load(cp, 32), c3 = v128.load(cp, 48);
      for (let i = 0; i < n; i++) {
        let b = <usize>load<u8>(byteAt + (<usize>i << 4));
        let w = v128.splat<f64>(load<f64>(WBUF + (<usize>i << 3)));
        let m = SIGNS + (b << 6);
        c0 = f64x2.add(c0, v128.xor(w, v128.load(m)));
        c1 = f64x2.add(c1, v128.xor(w, v128.load(m, 16)));
        c2 = f64x2.add(c2, v128.xor(w, v128.load(m, 32)));
        c3 = f64x2.add(c3, v128.xor(w, v128.load(m, 48)));
      }
      v128.store(cp, c0); v128.store(cp, c1, 16); v128.store(cp, c2, 32); v128.store(cp, c3, 48);
    } else {
      // The same sign table, one counter per XOR: no select (engines branch on an f64 select, and the bits are
      // random), and eight independent chains of adds, each counter still summed in feature order.
      let a0 = load<f64>(cp), a1 = load<f64>(cp, 8), a2 = load<f64>(cp, 16), a3 = load<f64>(cp, 24);
      let a4 = load<f64>(cp, 32), a5 = load<f64>(cp, 40), a6 = load<f64>(cp, 48), a7 = load<f64>(cp, 56);
      for (let i = 0; i < n; i++) {
        let m = SIGNS + (<usize>load<u8>(byteAt + (<usize>i << 4)) << 6);
        let w = load<u64>(WBUF + (<usize>i << 3));
        a0 += reinterpret<f64>(w ^ load<u64>(m));
        a1 += reinterpret<f64>(w ^ load<u64>(m, 8));
        a2 += reinterpret<f64>(w ^ load<u64>(m, 16));
        a3 += reinterpret<f64>(w ^ load<u64>(m, 24));
        a4 += reinterpret<f64>(w ^ load<u64>(m, 32));
        a5 += reinterpret<f64>(w ^ load<u64>(m, 40));
        a6 += reinterpret<f64>(w ^ load<u64>(m, 48));
        a7 += reinterpret<f64>(w ^ load<u64>(m, 56));
      }
      store<f64>(cp, a0); store<f64>(cp, a1, 8); store<f64>(cp, a2, 16); store<f64>(cp, a3, 24);
      store<f64>(cp, a4, 32); store<f64>(cp, a5, 40); store<f64>(cp, a6, 48); store<f64>(cp, a7, 56);
    }
  }
}

// ---- result -------------------------------------------------------------------------------------------------

/**
 * Ends the document and writes the fingerprint (1 or 2 u64 words, low word first) to `out`.
 * `tiesSetBit`: a counter of exactly 0 sets the bit (the Java reference's rule); otherwise it needs > 0.
 */
export function endDocument(out: usize, tiesSetBit: bool): u64 {
  let lo: u64 = 0, hi: u64 = 0;
  if (weighted) {
    let rest = <i32>(features & (BUF_WORDS / 2 - 1));
    if (rest != 0) flushWeighted(rest);
    let words = wide ? 128 : 64;
    for (let i = 0; i < words; i++) {
      let set: bool;
      if (integral) {
        let c = 2 * <i64>load<i32>(ONES + (<usize>i << 2)) - total;
        store<i32>(ONES + (<usize>i << 2), 0);
        set = c > 0 || (tiesSetBit && c == 0);
      } else {
        let v = load<f64>(WCOUNT + (<usize>i << 3));
        store<f64>(WCOUNT + (<usize>i << 3), 0);
        set = v > 0 || (tiesSetBit && v == 0);
      }
      if (set) {
        if (i < 64) lo |= <u64>1 << <u64>i;
        else hi |= <u64>1 << <u64>(i - 64);
      }
    }
  } else {
    flushUnit();
    if (drained) {
      drain();
      let n = <i64>features;
      for (let i = 0; i < 64; i++) {
        let a = <i64>load<u64>(COUNT + (<usize>i << 3));
        let b = <i64>load<u64>(COUNT + 512 + (<usize>i << 3));
        store<u64>(COUNT + (<usize>i << 3), 0);
        store<u64>(COUNT + 512 + (<usize>i << 3), 0);
        if (wide) {
          let d = 2 * a - n;
          if (d > 0 || (tiesSetBit && d == 0)) lo |= <u64>1 << <u64>i;
          d = 2 * b - n;
          if (d > 0 || (tiesSetBit && d == 0)) hi |= <u64>1 << <u64>i;
        } else {
          let d = 2 * (a + b) - n;
          if (d > 0 || (tiesSetBit && d == 0)) lo |= <u64>1 << <u64>i;
        }
      }
    } else {
      lo = majority(tiesSetBit);
      hi = majorityHigh;
    }
  }
  if (narrow) lo &= 0xFFFFFFFF;
  store<u64>(out, lo);
  if (wide) store<u64>(out, hi, 8);
  return features;
}
