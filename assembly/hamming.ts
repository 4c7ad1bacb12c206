// Batch Hamming distance kernels: one query against many fingerprints (distances, count and indices within k,
// histogram) and many against many (pairs within k, self-join). 64-bit fingerprints are one u64 each, 128-bit
// ones two (low word first). Raw pointers only; src/hamming/hamming.ts validates every argument before calling.
//
// Why scalar popcnt<u64> in both builds: on x64 V8 emulates i8x16.popcnt with byte shuffles and then needs three
// widening adds to get per-u64 counts: best of 30 runs, 0.7-1.15 G fp/s against 2.07 G for the 8-way unrolled
// scalar loop on data in L2, 0.53 against 0.71 G from DRAM, so the SIMD build uses the same code as the scalar one.
// Re-measured on a 2-core Intel Xeon VM (AVX-512 VPOPCNTDQ/BITALG, which V8 does not use): i8x16.popcnt is the
// nibble-table pshufb sequence with its constants reloaded per use, 0.98 G fp/s in L2 (extadd/narrow tree, 16 per
// step) and 1.40 for v128 loads with i64x2 lane extracts into scalar popcnt, against 2.01 G for the scalar loop.
//
// Why four or eight streams: one sequential stream leaves DRAM bandwidth unused, the hardware prefetcher runs only
// so far ahead of one stream (and restarts at every 4 KiB page), so a scan that also spends time on popcnt pays
// part of each miss. The one-query 64-bit scans therefore walk a block of 4 * STREAM fingerprints as four
// interleaved sub-blocks, four fingerprints of each per step (same-run on a 2-core Xeon VM, 10^7 resident:
// distances 1.28-1.35 against 0.78 G fp/s for one stream, 1.03 with 512 per stream; count 1.20 against 0.71,
// and two streams 1.00-1.18; in L2 also faster, 2.40 against 2.02). Touching a line 1-16 KiB ahead from one
// stream, the software-prefetch substitute, did not help (0.70-0.73 against 0.73). Lengths not a multiple of
// the block finish in the one-stream loops. On a quiet machine (2026-12-02), where C's plain loop reached
// 1.55-1.77 G fp/s from DRAM against 1.24 for four streams, eight streams of the same block gave distances
// 1.50-1.53 against 1.24 and count 1.61-1.66 against 1.26-1.27 at 10^7, alternating; so distances walk eight,
// and so does the count from EIGHT_STREAMS_MIN fingerprints per call on (on data in L2 eight ran 1.93-2.03
// against 2.47). Streams 16 KiB + 64 B apart (no two on one L1 set) were slower (1.09-1.15), and so were
// sixteen. The 128-bit scans walk eight-stream blocks too (5*10^6 resident, alternating: distances 0.37 ->
// 0.69-0.78 G fp/s, count 0.37-0.38 -> 0.63-0.65, collect 0.36-0.37 -> 0.71-0.74); in L2 distances went 1.33 ->
// 1.65, while the count ran 0.82-0.84 against 1.21-1.22 and the collect 0.95-0.97 against 1.06, so those two
// keep their one-stream loops below EIGHT_STREAMS_MIN / 2.
//
// Why a choice of layout: the same scans on a 2-core AMD EPYC VM (Zen 5, 2026-12-02) ran the other way round.
// Alternating builds, 10^7 resident: one stream gave distances 2.12-2.75 against 1.52-1.80 G fp/s for eight,
// count 2.16-2.82 against 1.39-1.77, collect 2.83-2.86 against 1.65-2.04, 128-bit distances 1.25-1.36 against
// 0.89-0.91 (in L2 the same or better); two streams were slower than one there too. So the blocks are used only
// while `blockedLayout` is set: src/hamming/scan-layout.ts times both layouts on a caller's first large scans,
// keeps the faster one and checks it now and then (the results are the same either way).
//
// The "any match?" test for a group of fingerprints folds several comparisons into one branch: with
// off = 127 - k (64-bit) the sum d + off has bit 7 set exactly when d > k (d + off stays below 256), so the AND
// of the sums has bit 7 clear when at least one d <= k. For 128-bit, off = 255 - k and bit 8.

// @ts-ignore: decorator
@inline const MISS64: u64 = 128;
// @ts-ignore: decorator
@inline const MISS128: u64 = 256;
/** Candidates per cache tile in the joins: 8 KiB of 64-bit fingerprints stays in L1 while every query group sweeps it. */
// @ts-ignore: decorator
@inline const TILE: i32 = 1024;
/** Queries held in registers per candidate load: 8 for 64-bit, 4 for 128-bit (two words each). */
// @ts-ignore: decorator
@inline const GROUP64: i32 = 8;
// @ts-ignore: decorator
@inline const GROUP128: i32 = 4;
/** The most pairs one (tile, query group) step can emit: callers pass at least this much room. */
// @ts-ignore: decorator
@inline const STEP_PAIRS: i32 = TILE * GROUP64;

/** Fingerprints per stream in a four-stream block (32 KiB each; the block is 128 KiB, in L2). */
// @ts-ignore: decorator
@inline const STREAM: usize = 4096;
// @ts-ignore: decorator
@inline const STREAM_BYTES: usize = STREAM << 3;
/** Fingerprints per stream when a block is walked as eight streams (16 KiB each; the block is the same). */
// @ts-ignore: decorator
@inline const STREAM8: usize = STREAM >> 1;
// @ts-ignore: decorator
@inline const STREAM8_BYTES: usize = STREAM8 << 3;
/**
 * The count walks eight streams from this many 64-bit fingerprints per call on (2 MiB of them, a core's L2 here),
 * four below: eight keep more DRAM misses in flight, but on data in L2 they ran 20 % slower than four. 128-bit
 * counts and collects walk eight from half as many on (the same bytes), one stream below.
 */
// @ts-ignore: decorator
@inline const EIGHT_STREAMS_MIN: i32 = 1 << 18;
/** 128-bit fingerprints per stream of an eight-stream block (16 KiB), and per block (128 KiB). */
// @ts-ignore: decorator
@inline const STREAM128: usize = 1024;
// @ts-ignore: decorator
@inline const STREAM128_BYTES: usize = STREAM128 << 4;
// @ts-ignore: decorator
@inline const BLOCK128: i32 = <i32>STREAM128 * 8;
/** Fingerprints per four-stream block. */
// @ts-ignore: decorator
@inline const BLOCK: i32 = <i32>STREAM * 4;
/**
 * The groups of four with a hit found in one block, one list per stream (addresses, u32): the block's hits are
 * written stream by stream afterwards, which is index order. A stream has at most STREAM / 4 groups.
 */
const HIT_GROUPS = memory.data(<i32>STREAM * 4, 16);

/** Whether the one-query scans walk their multi-stream blocks (true) or the whole array as one stream. */
let blockedLayout = true;

/** Chooses the layout of the one-query scans (see blockedLayout); returns the previous one. */
export function hammingSetBlocked(blocked: bool): bool {
  let was = blockedLayout;
  blockedLayout = blocked;
  return was;
}

/** Four interleaved histograms (132 u32 each) so that equal distances in a row do not wait on one counter. */
const HIST = memory.data(4 * 132 * 4, 16);

// @ts-ignore: decorator
@inline function d64(p: usize, q: u64): u64 {
  return popcnt<u64>(load<u64>(p) ^ q);
}

// @ts-ignore: decorator
@inline function d128(p: usize, lo: u64, hi: u64): u64 {
  return popcnt<u64>(load<u64>(p) ^ lo) + popcnt<u64>(load<u64>(p, 8) ^ hi);
}

/** The distances of fps[p..p+4) from q, one byte each, packed little-endian. */
// @ts-ignore: decorator
@inline function distances4(p: usize, q: u64): u64 {
  return popcnt<u64>(load<u64>(p) ^ q) | (popcnt<u64>(load<u64>(p, 8) ^ q) << 8) |
    (popcnt<u64>(load<u64>(p, 16) ^ q) << 16) | (popcnt<u64>(load<u64>(p, 24) ^ q) << 24);
}

/** The 128-bit distances of fps[p..p+4) from (lo, hi), one byte each, packed little-endian. */
// @ts-ignore: decorator
@inline function distances4x128(p: usize, lo: u64, hi: u64): u64 {
  return d128(p, lo, hi) | (d128(p + 16, lo, hi) << 8) | (d128(p + 32, lo, hi) << 16) | (d128(p + 48, lo, hi) << 24);
}

/** 256 times how many of the 128-bit fps[p..p+4) are farther than k from (lo, hi), with off = 255 - k. */
// @ts-ignore: decorator
@inline function misses4x128(p: usize, lo: u64, hi: u64, off: u64): u64 {
  return ((d128(p, lo, hi) + off) & MISS128) + ((d128(p + 16, lo, hi) + off) & MISS128) +
    ((d128(p + 32, lo, hi) + off) & MISS128) + ((d128(p + 48, lo, hi) + off) & MISS128);
}

/** Bit 8 clear exactly when one of the 128-bit fps[p..p+4) is within k of (lo, hi) (off = 255 - k). */
// @ts-ignore: decorator
@inline function anyHit4x128(p: usize, lo: u64, hi: u64, off: u64): u64 {
  return (d128(p, lo, hi) + off) & (d128(p + 16, lo, hi) + off) & (d128(p + 32, lo, hi) + off) &
    (d128(p + 48, lo, hi) + off);
}

/** Bit 7 clear exactly when one of fps[p..p+4) is within k of q (off = 127 - k). */
// @ts-ignore: decorator
@inline function anyHit4(p: usize, q: u64, off: u64): u64 {
  return (popcnt<u64>(load<u64>(p) ^ q) + off) & (popcnt<u64>(load<u64>(p, 8) ^ q) + off) &
    (popcnt<u64>(load<u64>(p, 16) ^ q) + off) & (popcnt<u64>(load<u64>(p, 24) ^ q) + off);
}

/** Where the multi-stream blocks of fps[0..n) end (fps: none, in the one-stream layout); the rest is one stream. */
// @ts-ignore: decorator
@inline function blocksEnd(fps: usize, n: i32): usize {
  return blockedLayout ? fps + (<usize>(n & ~(BLOCK - 1)) << 3) : fps;
}

/**
 * Where the eight-stream blocks of the 128-bit fps[0..n) end: none in the one-stream layout, nor below `from`
 * fingerprints per call; the rest is one stream.
 */
// @ts-ignore: decorator
@inline function blocksEnd128(fps: usize, n: i32, from: i32): usize {
  return blockedLayout && n >= from ? fps + (<usize>(n & ~(BLOCK128 - 1)) << 4) : fps;
}

// ---------------------------------------------------------------------------------------------------------------
// Distances

/**
 * out[i] = distance(fps[i], q) for i < n, as bytes. Whole blocks in eight streams (four per stream per step, one
 * u32 store each); the rest eight per step, packed into one u64 store, a pointer walk and two independent halves
 * per step keeping the loop to the loads, popcnts and the packing (same-run, in cache: 2.63 against 2.51 G fp/s
 * for the indexed four-and-four version).
 */
export function hammingDistances64(fps: usize, n: i32, q: u64, out: usize): void {
  let p = fps;
  let o = out;
  let endBlocks = blocksEnd(fps, n);
  while (p < endBlocks) {
    for (let end = p + STREAM8_BYTES; p < end; p += 32) {
      store<u32>(o, <u32>distances4(p, q));
      store<u32>(o + STREAM8, <u32>distances4(p + STREAM8_BYTES, q));
      store<u32>(o + 2 * STREAM8, <u32>distances4(p + 2 * STREAM8_BYTES, q));
      store<u32>(o + 3 * STREAM8, <u32>distances4(p + 3 * STREAM8_BYTES, q));
      store<u32>(o + 4 * STREAM8, <u32>distances4(p + 4 * STREAM8_BYTES, q));
      store<u32>(o + 5 * STREAM8, <u32>distances4(p + 5 * STREAM8_BYTES, q));
      store<u32>(o + 6 * STREAM8, <u32>distances4(p + 6 * STREAM8_BYTES, q));
      store<u32>(o + 7 * STREAM8, <u32>distances4(p + 7 * STREAM8_BYTES, q));
      o += 4;
    }
    p += 7 * STREAM8_BYTES;
    o += 7 * STREAM8;
  }
  let end8 = fps + (<usize>(n & ~7) << 3);
  while (p < end8) {
    let a = popcnt<u64>(load<u64>(p) ^ q) | (popcnt<u64>(load<u64>(p, 8) ^ q) << 8) |
      (popcnt<u64>(load<u64>(p, 16) ^ q) << 16) | (popcnt<u64>(load<u64>(p, 24) ^ q) << 24);
    let b = popcnt<u64>(load<u64>(p, 32) ^ q) | (popcnt<u64>(load<u64>(p, 40) ^ q) << 8) |
      (popcnt<u64>(load<u64>(p, 48) ^ q) << 16) | (popcnt<u64>(load<u64>(p, 56) ^ q) << 24);
    store<u64>(o, a | (b << 32));
    p += 64;
    o += 8;
  }
  let end = fps + (<usize>n << 3);
  for (; p < end; p += 8) store<u8>(o++, <u8>d64(p, q));
}

export function hammingDistances128(fps: usize, n: i32, lo: u64, hi: u64, out: usize): void {
  let p = fps;
  let o = out;
  let endBlocks = blocksEnd128(fps, n, 0);
  while (p < endBlocks) {
    for (let end = p + STREAM128_BYTES; p < end; p += 64) {
      store<u32>(o, <u32>distances4x128(p, lo, hi));
      store<u32>(o + STREAM128, <u32>distances4x128(p + STREAM128_BYTES, lo, hi));
      store<u32>(o + 2 * STREAM128, <u32>distances4x128(p + 2 * STREAM128_BYTES, lo, hi));
      store<u32>(o + 3 * STREAM128, <u32>distances4x128(p + 3 * STREAM128_BYTES, lo, hi));
      store<u32>(o + 4 * STREAM128, <u32>distances4x128(p + 4 * STREAM128_BYTES, lo, hi));
      store<u32>(o + 5 * STREAM128, <u32>distances4x128(p + 5 * STREAM128_BYTES, lo, hi));
      store<u32>(o + 6 * STREAM128, <u32>distances4x128(p + 6 * STREAM128_BYTES, lo, hi));
      store<u32>(o + 7 * STREAM128, <u32>distances4x128(p + 7 * STREAM128_BYTES, lo, hi));
      o += 4;
    }
    p += 7 * STREAM128_BYTES;
    o += 7 * STREAM128;
  }
  let i = <i32>((p - fps) >> 4);
  for (; i + 4 <= n; i += 4) store<u32>(out + i, <u32>distances4x128(fps + (<usize>i << 4), lo, hi));
  for (; i < n; i++) store<u8>(out + i, <u8>d128(fps + (<usize>i << 4), lo, hi));
}

// ---------------------------------------------------------------------------------------------------------------
// Count within k

/**
 * How many of fps[0..n) are within distance k (0 <= k <= 64) of q. With off = 127 - k, d + off has bit 7 set
 * exactly for a miss (d + off < 256). Eight distances are packed into one u64, a byte each as the distances kernel
 * packs them, offset in every byte by one add, and one popcnt of the bits 7 counts their misses: 34 operations
 * per eight where adding each (d + off) >> 7 took 40 (one popcnt more, seven other operations fewer; alternating
 * ABBA rounds on the 2-core Xeon VM: 1.10x in cache, 1.17-1.22x at 10^7, either build). Whole blocks in eight
 * streams (from EIGHT_STREAMS_MIN on) or four, the rest eight per step.
 */
export function hammingCount64(fps: usize, n: i32, q: u64, k: i32): i32 {
  let off = <u64>(127 - k) * 0x0101010101010101;
  let m0: u64 = 0, m1: u64 = 0;
  let p = fps;
  let endBlocks = blocksEnd(fps, n);
  if (n >= EIGHT_STREAMS_MIN) {
    while (p < endBlocks) {
      for (let end = p + STREAM8_BYTES; p < end; p += 32) {
        m0 += misses8(distances4(p, q) | (distances4(p + STREAM8_BYTES, q) << 32), off);
        m1 += misses8(distances4(p + 2 * STREAM8_BYTES, q) | (distances4(p + 3 * STREAM8_BYTES, q) << 32), off);
        m0 += misses8(distances4(p + 4 * STREAM8_BYTES, q) | (distances4(p + 5 * STREAM8_BYTES, q) << 32), off);
        m1 += misses8(distances4(p + 6 * STREAM8_BYTES, q) | (distances4(p + 7 * STREAM8_BYTES, q) << 32), off);
      }
      p += 7 * STREAM8_BYTES;
    }
  }
  while (p < endBlocks) {
    for (let end = p + STREAM_BYTES; p < end; p += 32) {
      m0 += misses8(distances4(p, q) | (distances4(p + STREAM_BYTES, q) << 32), off);
      m1 += misses8(distances4(p + 2 * STREAM_BYTES, q) | (distances4(p + 3 * STREAM_BYTES, q) << 32), off);
    }
    p += 3 * STREAM_BYTES;
  }
  let end8 = fps + (<usize>(n & ~7) << 3);
  while (p < end8) {
    m0 += misses8(distances4(p, q) | (distances4(p + 32, q) << 32), off);
    p += 64;
  }
  let end = fps + (<usize>n << 3);
  let offByte = off & 255;
  for (; p < end; p += 8) m0 += (d64(p, q) + offByte) >> 7;
  return n - <i32>(m0 + m1);
}

/** How many of the eight distances packed in `d` (a byte each) are misses, with `off` = (127 - k) in every byte. */
// @ts-ignore: decorator
@inline function misses8(d: u64, off: u64): u64 {
  return popcnt<u64>((d + off) & 0x8080808080808080);
}

export function hammingCount128(fps: usize, n: i32, lo: u64, hi: u64, k: i32): i32 {
  let off = <u64>(255 - k);
  let m0: u64 = 0, m1: u64 = 0;
  let p = fps;
  let endBlocks = blocksEnd128(fps, n, EIGHT_STREAMS_MIN >> 1);
  while (p < endBlocks) {
    for (let end = p + STREAM128_BYTES; p < end; p += 64) {
      m0 += misses4x128(p, lo, hi, off) + misses4x128(p + STREAM128_BYTES, lo, hi, off);
      m1 += misses4x128(p + 2 * STREAM128_BYTES, lo, hi, off) + misses4x128(p + 3 * STREAM128_BYTES, lo, hi, off);
      m0 += misses4x128(p + 4 * STREAM128_BYTES, lo, hi, off) + misses4x128(p + 5 * STREAM128_BYTES, lo, hi, off);
      m1 += misses4x128(p + 6 * STREAM128_BYTES, lo, hi, off) + misses4x128(p + 7 * STREAM128_BYTES, lo, hi, off);
    }
    p += 7 * STREAM128_BYTES;
  }
  let misses = m0 + m1;
  let i = <i32>((p - fps) >> 4);
  for (; i + 4 <= n; i += 4) misses += misses4x128(fps + (<usize>i << 4), lo, hi, off);
  for (; i < n; i++) misses += (d128(fps + (<usize>i << 4), lo, hi) + off) & MISS128;
  return n - <i32>(misses >> 8);
}

// ---------------------------------------------------------------------------------------------------------------
// Collect indices within k

// @ts-ignore: decorator
@inline function emit(c: i32, d: u64, k: i32, index: u32, outIndex: usize, outDistance: usize): i32 {
  if (<i32>d <= k) {
    store<u32>(outIndex + (<usize>c << 2), index);
    store<u8>(outDistance + <usize>c, <u8>d);
    return c + 1;
  }
  return c;
}

/** Writes the hits among fps[i..i+8) (at least one is within k): kept out of the scan loop, hits are rare. */
// @ts-ignore: decorator
@inline function emitGroup8(p: usize, q: u64, k: i32, at: u32, c: i32, outIndex: usize, outDistance: usize): i32 {
  for (let j = 0; j < 8; j++) c = emit(c, d64(p + (<usize>j << 3), q), k, at + <u32>j, outIndex, outDistance);
  return c;
}

function hitGroup8(p: usize, q: u64, k: i32, at: u32, c: i32, outIndex: usize, outDistance: usize): i32 {
  return emitGroup8(p, q, k, at, c, outIndex, outDistance);
}

/**
 * Writes the hits of the groups of four listed in [list, listEnd) (addresses into fps), in list order; returns
 * the new count. The caller has checked that they fit.
 */
function emitListed(list: usize, listEnd: usize, fps: usize, q: u64, k: i32, base: u32, c: i32, outIndex: usize, outDistance: usize): i32 {
  for (let l = list; l < listEnd; l += 4) {
    let g = <usize>load<u32>(l);
    let at = base + <u32>((g - fps) >> 3);
    for (let j = 0; j < 4; j++) c = emit(c, d64(g + (<usize>j << 3), q), k, at + <u32>j, outIndex, outDistance);
  }
  return c;
}

/** emitListed for 128-bit fingerprints (lo, hi the query's words). */
function emitListed128(list: usize, listEnd: usize, fps: usize, lo: u64, hi: u64, k: i32, base: u32, c: i32, outIndex: usize, outDistance: usize): i32 {
  for (let l = list; l < listEnd; l += 4) {
    let g = <usize>load<u32>(l);
    let at = base + <u32>((g - fps) >> 4);
    for (let j = 0; j < 4; j++) c = emit(c, d128(g + (<usize>j << 4), lo, hi), k, at + <u32>j, outIndex, outDistance);
  }
  return c;
}

/**
 * Writes base + i and the distance of every fps[i] within k of q, in index order, stopping once `cap` entries
 * are written. Returns the number written; when it equals cap the caller resumes after the last index written.
 * Whole blocks in four streams that only note which groups of four hold a hit, written afterwards stream by
 * stream; the rest one branch per eight, the rare group with a hit handled out of line, so the scan loop stays
 * small (same-run, in cache: 2.09 against 1.20 G fp/s for four per branch with the writes inline).
 */
export function hammingCollect64(fps: usize, n: i32, q: u64, k: i32, base: u32, outIndex: usize, outDistance: usize, cap: i32): i32 {
  let off = <u64>(127 - k);
  let c = 0;
  let p = fps;
  let endBlocks = blocksEnd(fps, n);
  while (p < endBlocks) {
    // The block's four streams, noting each group of four with a hit in its stream's list. The block is written
    // whole afterwards, so it runs only while its noted groups fit in the room left; a denser block is left to
    // the one-stream loop below, which stops exactly at cap.
    let roomGroups = (cap - c) >> 2;
    let listed = 0;
    let l0 = HIT_GROUPS, l1 = HIT_GROUPS + STREAM, l2 = HIT_GROUPS + 2 * STREAM, l3 = HIT_GROUPS + 3 * STREAM;
    let s = p;
    for (let end = p + STREAM_BYTES; s < end; s += 32) {
      let t0 = anyHit4(s, q, off);
      let t1 = anyHit4(s + STREAM_BYTES, q, off);
      let t2 = anyHit4(s + 2 * STREAM_BYTES, q, off);
      let t3 = anyHit4(s + 3 * STREAM_BYTES, q, off);
      if ((t0 & t1 & t2 & t3 & MISS64) == 0) {
        if (listed + 4 > roomGroups) break;
        if ((t0 & MISS64) == 0) { store<u32>(l0, <u32>s); l0 += 4; listed++; }
        if ((t1 & MISS64) == 0) { store<u32>(l1, <u32>(s + STREAM_BYTES)); l1 += 4; listed++; }
        if ((t2 & MISS64) == 0) { store<u32>(l2, <u32>(s + 2 * STREAM_BYTES)); l2 += 4; listed++; }
        if ((t3 & MISS64) == 0) { store<u32>(l3, <u32>(s + 3 * STREAM_BYTES)); l3 += 4; listed++; }
      }
    }
    if (s < p + STREAM_BYTES) break;
    c = emitListed(HIT_GROUPS, l0, fps, q, k, base, c, outIndex, outDistance);
    c = emitListed(HIT_GROUPS + STREAM, l1, fps, q, k, base, c, outIndex, outDistance);
    c = emitListed(HIT_GROUPS + 2 * STREAM, l2, fps, q, k, base, c, outIndex, outDistance);
    c = emitListed(HIT_GROUPS + 3 * STREAM, l3, fps, q, k, base, c, outIndex, outDistance);
    p += 4 * STREAM_BYTES;
  }
  let end8 = fps + (<usize>(n & ~7) << 3);
  // A group of eight runs only while all eight could be written, so a full buffer ends exactly after a hit.
  while (p < end8 && c + 8 <= cap) {
    let t = (popcnt<u64>(load<u64>(p) ^ q) + off) & (popcnt<u64>(load<u64>(p, 8) ^ q) + off) &
      (popcnt<u64>(load<u64>(p, 16) ^ q) + off) & (popcnt<u64>(load<u64>(p, 24) ^ q) + off) &
      (popcnt<u64>(load<u64>(p, 32) ^ q) + off) & (popcnt<u64>(load<u64>(p, 40) ^ q) + off) &
      (popcnt<u64>(load<u64>(p, 48) ^ q) + off) & (popcnt<u64>(load<u64>(p, 56) ^ q) + off);
    if ((t & MISS64) == 0) c = hitGroup8(p, q, k, base + <u32>((p - fps) >> 3), c, outIndex, outDistance);
    p += 64;
  }
  let end = fps + (<usize>n << 3);
  for (; p < end && c < cap; p += 8) c = emit(c, d64(p, q), k, base + <u32>((p - fps) >> 3), outIndex, outDistance);
  return c;
}

/**
 * hammingCollect64 for 128-bit fingerprints: from EIGHT_STREAMS_MIN / 2 on, whole blocks in eight streams that note
 * the groups of four with a hit (the block written afterwards, stream by stream, while its groups fit the room
 * left); the rest four per step (in L2 the blocks ran 0.95-0.97 against 1.06 G fp/s).
 */
export function hammingCollect128(fps: usize, n: i32, lo: u64, hi: u64, k: i32, base: u32, outIndex: usize, outDistance: usize, cap: i32): i32 {
  let off = <u64>(255 - k);
  let c = 0;
  let p = fps;
  let endBlocks = blocksEnd128(fps, n, EIGHT_STREAMS_MIN >> 1);
  while (p < endBlocks) {
    let roomGroups = (cap - c) >> 2;
    let listed = 0;
    // A stream has at most STREAM128 / 4 groups: its list takes STREAM128 bytes of HIT_GROUPS.
    let l0 = HIT_GROUPS, l1 = l0 + STREAM128, l2 = l0 + 2 * STREAM128, l3 = l0 + 3 * STREAM128;
    let l4 = l0 + 4 * STREAM128, l5 = l0 + 5 * STREAM128, l6 = l0 + 6 * STREAM128, l7 = l0 + 7 * STREAM128;
    let s = p;
    for (let end = p + STREAM128_BYTES; s < end; s += 64) {
      let t0 = anyHit4x128(s, lo, hi, off);
      let t1 = anyHit4x128(s + STREAM128_BYTES, lo, hi, off);
      let t2 = anyHit4x128(s + 2 * STREAM128_BYTES, lo, hi, off);
      let t3 = anyHit4x128(s + 3 * STREAM128_BYTES, lo, hi, off);
      let t4 = anyHit4x128(s + 4 * STREAM128_BYTES, lo, hi, off);
      let t5 = anyHit4x128(s + 5 * STREAM128_BYTES, lo, hi, off);
      let t6 = anyHit4x128(s + 6 * STREAM128_BYTES, lo, hi, off);
      let t7 = anyHit4x128(s + 7 * STREAM128_BYTES, lo, hi, off);
      if ((t0 & t1 & t2 & t3 & t4 & t5 & t6 & t7 & MISS128) == 0) {
        if (listed + 8 > roomGroups) break;
        if ((t0 & MISS128) == 0) { store<u32>(l0, <u32>s); l0 += 4; listed++; }
        if ((t1 & MISS128) == 0) { store<u32>(l1, <u32>(s + STREAM128_BYTES)); l1 += 4; listed++; }
        if ((t2 & MISS128) == 0) { store<u32>(l2, <u32>(s + 2 * STREAM128_BYTES)); l2 += 4; listed++; }
        if ((t3 & MISS128) == 0) { store<u32>(l3, <u32>(s + 3 * STREAM128_BYTES)); l3 += 4; listed++; }
        if ((t4 & MISS128) == 0) { store<u32>(l4, <u32>(s + 4 * STREAM128_BYTES)); l4 += 4; listed++; }
        if ((t5 & MISS128) == 0) { store<u32>(l5, <u32>(s + 5 * STREAM128_BYTES)); l5 += 4; listed++; }
        if ((t6 & MISS128) == 0) { store<u32>(l6, <u32>(s + 6 * STREAM128_BYTES)); l6 += 4; listed++; }
        if ((t7 & MISS128) == 0) { store<u32>(l7, <u32>(s + 7 * STREAM128_BYTES)); l7 += 4; listed++; }
      }
    }
    if (s < p + STREAM128_BYTES) break;
    c = emitListed128(HIT_GROUPS, l0, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + STREAM128, l1, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 2 * STREAM128, l2, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 3 * STREAM128, l3, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 4 * STREAM128, l4, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 5 * STREAM128, l5, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 6 * STREAM128, l6, fps, lo, hi, k, base, c, outIndex, outDistance);
    c = emitListed128(HIT_GROUPS + 7 * STREAM128, l7, fps, lo, hi, k, base, c, outIndex, outDistance);
    p += 8 * STREAM128_BYTES;
  }
  let i = <i32>((p - fps) >> 4);
  for (; i + 4 <= n && c + 4 <= cap; i += 4) {
    let q = fps + (<usize>i << 4);
    let e0 = d128(q, lo, hi);
    let e1 = d128(q + 16, lo, hi);
    let e2 = d128(q + 32, lo, hi);
    let e3 = d128(q + 48, lo, hi);
    if (((e0 + off) & (e1 + off) & (e2 + off) & (e3 + off) & MISS128) == 0) {
      let at = base + <u32>i;
      c = emit(c, e0, k, at, outIndex, outDistance);
      c = emit(c, e1, k, at + 1, outIndex, outDistance);
      c = emit(c, e2, k, at + 2, outIndex, outDistance);
      c = emit(c, e3, k, at + 3, outIndex, outDistance);
    }
  }
  for (; i < n && c < cap; i++) c = emit(c, d128(fps + (<usize>i << 4), lo, hi), k, base + <u32>i, outIndex, outDistance);
  return c;
}

// ---------------------------------------------------------------------------------------------------------------
// Histogram

// @ts-ignore: decorator
@inline function bump(table: usize, d: u64): void {
  let at = table + (<usize>d << 2);
  store<u32>(at, load<u32>(at) + 1);
}

/** Adds the four interleaved tables into hist[0..entries) and clears them for the next call. */
function drainHistogram(hist: usize, entries: i32): void {
  for (let d = 0; d < entries; d++) {
    let at = <usize>d << 2;
    let sum = load<u32>(HIST + at) + load<u32>(HIST + 528 + at) + load<u32>(HIST + 1056 + at) + load<u32>(HIST + 1584 + at);
    store<u32>(hist + at, load<u32>(hist + at) + sum);
  }
  memory.fill(HIST, 0, 4 * 132 * 4);
}

/** hist[d] += number of fps[i] at distance d from q (hist has 65 u32 entries). */
export function hammingHistogram64(fps: usize, n: i32, q: u64, hist: usize): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    let p = fps + (<usize>i << 3);
    bump(HIST, d64(p, q));
    bump(HIST + 528, d64(p + 8, q));
    bump(HIST + 1056, d64(p + 16, q));
    bump(HIST + 1584, d64(p + 24, q));
  }
  for (; i < n; i++) bump(HIST, d64(fps + (<usize>i << 3), q));
  drainHistogram(hist, 65);
}

/** hist[d] += number of fps[i] at distance d from (lo, hi) (hist has 129 u32 entries). */
export function hammingHistogram128(fps: usize, n: i32, lo: u64, hi: u64, hist: usize): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    let p = fps + (<usize>i << 4);
    bump(HIST, d128(p, lo, hi));
    bump(HIST + 528, d128(p + 16, lo, hi));
    bump(HIST + 1056, d128(p + 32, lo, hi));
    bump(HIST + 1584, d128(p + 48, lo, hi));
  }
  for (; i < n; i++) bump(HIST, d128(fps + (<usize>i << 4), lo, hi));
  drainHistogram(hist, 129);
}

// ---------------------------------------------------------------------------------------------------------------
// Many against many

// @ts-ignore: decorator
@inline function emitPair(c: i32, d: u64, k: i32, ai: i32, bj: i32, outA: usize, outB: usize, outD: usize): i32 {
  if (<i32>d <= k) {
    let at = <usize>c << 2;
    store<u32>(outA + at, ai);
    store<u32>(outB + at, bj);
    store<u8>(outD + <usize>c, <u8>d);
    return c + 1;
  }
  return c;
}

/** Eight queries a[i0..i0+8) against candidates b[j0..j1). */
function block64(a: usize, i0: i32, b: usize, j0: i32, j1: i32, k: i32, c: i32, outA: usize, outB: usize, outD: usize): i32 {
  let off = <u64>(127 - k);
  let p = a + (<usize>i0 << 3);
  let q0 = load<u64>(p), q1 = load<u64>(p, 8), q2 = load<u64>(p, 16), q3 = load<u64>(p, 24);
  let q4 = load<u64>(p, 32), q5 = load<u64>(p, 40), q6 = load<u64>(p, 48), q7 = load<u64>(p, 56);
  let end = b + (<usize>j1 << 3);
  for (let pb = b + (<usize>j0 << 3); pb < end; pb += 8) {
    let x = load<u64>(pb);
    let t = (popcnt<u64>(x ^ q0) + off) & (popcnt<u64>(x ^ q1) + off) & (popcnt<u64>(x ^ q2) + off) & (popcnt<u64>(x ^ q3) + off) &
      (popcnt<u64>(x ^ q4) + off) & (popcnt<u64>(x ^ q5) + off) & (popcnt<u64>(x ^ q6) + off) & (popcnt<u64>(x ^ q7) + off);
    if ((t & MISS64) == 0) {
      let j = <i32>((pb - b) >> 3);
      c = emitPair(c, popcnt<u64>(x ^ q0), k, i0, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q1), k, i0 + 1, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q2), k, i0 + 2, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q3), k, i0 + 3, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q4), k, i0 + 4, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q5), k, i0 + 5, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q6), k, i0 + 6, j, outA, outB, outD);
      c = emitPair(c, popcnt<u64>(x ^ q7), k, i0 + 7, j, outA, outB, outD);
    }
  }
  return c;
}

/** Four 128-bit queries a[i0..i0+4) against candidates b[j0..j1). */
function block128(a: usize, i0: i32, b: usize, j0: i32, j1: i32, k: i32, c: i32, outA: usize, outB: usize, outD: usize): i32 {
  let off = <u64>(255 - k);
  let p = a + (<usize>i0 << 4);
  let l0 = load<u64>(p), h0 = load<u64>(p, 8), l1 = load<u64>(p, 16), h1 = load<u64>(p, 24);
  let l2 = load<u64>(p, 32), h2 = load<u64>(p, 40), l3 = load<u64>(p, 48), h3 = load<u64>(p, 56);
  for (let j = j0; j < j1; j++) {
    let pb = b + (<usize>j << 4);
    let xl = load<u64>(pb);
    let xh = load<u64>(pb, 8);
    let e0 = popcnt<u64>(xl ^ l0) + popcnt<u64>(xh ^ h0);
    let e1 = popcnt<u64>(xl ^ l1) + popcnt<u64>(xh ^ h1);
    let e2 = popcnt<u64>(xl ^ l2) + popcnt<u64>(xh ^ h2);
    let e3 = popcnt<u64>(xl ^ l3) + popcnt<u64>(xh ^ h3);
    if (((e0 + off) & (e1 + off) & (e2 + off) & (e3 + off) & MISS128) == 0) {
      c = emitPair(c, e0, k, i0, j, outA, outB, outD);
      c = emitPair(c, e1, k, i0 + 1, j, outA, outB, outD);
      c = emitPair(c, e2, k, i0 + 2, j, outA, outB, outD);
      c = emitPair(c, e3, k, i0 + 3, j, outA, outB, outD);
    }
  }
  return c;
}

/** One query a[i] against candidates b[j0..j1), for group tails and the diagonal of a self-join. */
function single(a: usize, i: i32, b: usize, j0: i32, j1: i32, k: i32, wide: bool, c: i32, outA: usize, outB: usize, outD: usize): i32 {
  if (wide) {
    let p = a + (<usize>i << 4);
    let lo = load<u64>(p);
    let hi = load<u64>(p, 8);
    for (let j = j0; j < j1; j++) c = emitPair(c, d128(b + (<usize>j << 4), lo, hi), k, i, j, outA, outB, outD);
  } else {
    let q = load<u64>(a + (<usize>i << 3));
    for (let j = j0; j < j1; j++) c = emitPair(c, d64(b + (<usize>j << 3), q), k, i, j, outA, outB, outD);
  }
  return c;
}

/**
 * Every pair (i, j) with distance(a[i], b[j]) <= k, or with `isSelf` (a and b the same array) every i < j.
 * Loops are blocked: candidates in tiles of TILE (kept in L1), queries in register groups. Work resumes from
 * state[0] (tile start j0) and state[1] (query i0) and stops, saving both, when fewer than STEP_PAIRS slots
 * are left of `cap`; state[0] >= nb means done. Returns the number of pairs written. Within one query, pairs
 * come out in ascending j (tiles ascend); queries interleave, the caller orders them.
 *
 * A banded self-join passes `firsts` (u32 per tile of TILE candidates; 0 for none): tile t is compared only with
 * queries from firsts[t] on, non-decreasing in t. dedup sorts its fingerprints by shingle-set size and a pair whose
 * sizes differ too much cannot reach the Jaccard threshold, so the queries far below a tile are skipped; the pairs
 * of the queries it still takes are all emitted (the caller drops those out of its band).
 */
export function hammingJoin(a: usize, na: i32, b: usize, nb: i32, k: i32, wide: bool, isSelf: bool, state: usize, outA: usize, outB: usize, outD: usize, cap: i32, firsts: usize): i32 {
  let group = wide ? GROUP128 : GROUP64;
  let j0 = load<i32>(state);
  let i0 = load<i32>(state, 4);
  let c = 0;
  while (j0 < nb) {
    let j1 = min(j0 + TILE, nb);
    // In a self-join only queries below the tile's last candidate have partners in it.
    let iEnd = isSelf ? j1 - 1 : na;
    while (i0 < iEnd) {
      if (cap - c < STEP_PAIRS) {
        store<i32>(state, j0);
        store<i32>(state, i0, 4);
        return c;
      }
      let g = min(group, iEnd - i0);
      if (g == group && (!isSelf || i0 + group <= j0)) {
        c = wide ? block128(a, i0, b, j0, j1, k, c, outA, outB, outD) : block64(a, i0, b, j0, j1, k, c, outA, outB, outD);
      } else {
        for (let r = 0; r < g; r++) {
          let i = i0 + r;
          c = single(a, i, b, isSelf ? max(j0, i + 1) : j0, j1, k, wide, c, outA, outB, outD);
        }
      }
      i0 += g;
    }
    j0 = j1;
    i0 = firsts != 0 && j0 < nb ? <i32>load<u32>(firsts + (<usize>(j0 / TILE) << 2)) : 0;
  }
  store<i32>(state, j0);
  store<i32>(state, 0, 4);
  return c;
}

/** Candidates per tile of `hammingJoin`, the unit of its `firsts`. */
export function hammingJoinTile(): i32 {
  return TILE;
}

/** The room `hammingJoin` needs for one step; callers pass a larger cap. */
export function hammingJoinStepPairs(): i32 {
  return STEP_PAIRS;
}

/** Fingerprints per block of the one-query 64-bit scans, for the tests of the block boundaries. */
export function hammingScanBlock(): i32 {
  return BLOCK;
}

/** From how many fingerprints per call the count (and 128-bit collect) walks eight streams, for the tests. */
export function hammingEightStreamsMin(bits: i32): i32 {
  return bits == 128 ? EIGHT_STREAMS_MIN >> 1 : EIGHT_STREAMS_MIN;
}

