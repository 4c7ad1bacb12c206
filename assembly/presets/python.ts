// The python-simhash preset: bit-exact with the Python package `simhash` (1e0ng) 2.x. Each feature is hashed with
// MD5 over its UTF-8 bytes and the last bits/8 digest bytes, read big-endian, are its hash; a bit is set where
// the weight of the features having it exceeds half the total weight (Python: `sums > count / 2`).
//
// Texts arrive already lowercased and filtered to \w runs by src/fingerprint/presets/python.ts (regex work stays in JS); the
// sliding windows of 4 code points are cut here, over UTF-8, so a document crosses the boundary as one string.
// A window is at most 16 bytes: the SIMD build hashes four windows at once (md5Short4), the scalar one each alone.
// Unit weights use the shared bit-sliced reducer. Weighted features use f64 counters of their own that replay
// the package's summation order, because float sums depend on it: integer weights up to 50 (and bare strings)
// go into a batch summed exactly and flushed into the totals every 200 entries; other weights are added at once.
import { beginDocument, addUnit, endDocument } from '../reducer';
import { md5, md5Short, md5A, md5B, md5C, md5D, md5ShortLane, md5Short4, DIGESTS } from '../md5';

// @ts-ignore: decorator
@inline const WINDOW: i32 = 4; // code points per feature (Simhash._slide's width)
// @ts-ignore: decorator
@inline const BATCH_SIZE: i32 = 200; // Simhash.batch_size

const ONES = memory.data(128 * 8, 16); // f64 per fingerprint bit: weight of the features whose bit is 1
const BATCH = memory.data(128 * 8, 16); // f64 per bit: the open batch's exact integer sums

let hashHigh: u64 = 0;

/** MD5 of `len` bytes at `p` into md5A..md5D, by the register-only path when it fits (windows always do). */
// @ts-ignore: decorator
@inline function digest(p: usize, len: usize): void {
  if (len <= 16) md5Short(p, len);
  else md5(p, len);
}

/** MD5 of the bytes, as the fingerprint-width hash: the low 64 bits returned, the next 64 in hashHigh. */
// @ts-ignore: decorator
@inline function pythonHash(p: usize, len: usize): u64 {
  digest(p, len);
  // Digest bytes 8..15 are md5C, md5D (little-endian words); read big-endian they are the low 64 bits.
  hashHigh = (<u64>bswap<u32>(md5A) << 32) | <u64>bswap<u32>(md5B);
  return (<u64>bswap<u32>(md5C) << 32) | <u64>bswap<u32>(md5D);
}

// @ts-ignore: decorator
@inline function utf8Length(lead: u32): usize {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/** Feeds the first `n` digests of the last md5Short4() to the reducer, as pythonHash would hash them. */
function addLanes(n: usize): void {
  for (let j: usize = 0; j < n; j++) {
    let q = DIGESTS + (j << 2);
    let hi = (<u64>bswap<u32>(load<u32>(q)) << 32) | <u64>bswap<u32>(load<u32>(q, 16));
    let lo = (<u64>bswap<u32>(load<u32>(q, 32)) << 32) | <u64>bswap<u32>(load<u32>(q, 48));
    addUnit(lo, hi);
  }
}

/**
 * Documents as filtered UTF-8 content at `text`, document d spanning offsets[d]..offsets[d+1] (u32, bytes).
 * Features are the windows content[i:i+4] over code points, or the whole content when it has fewer than 4
 * code points (an empty document is the one feature ""), each with weight 1.
 */
export function pythonTexts(text: usize, offsets: usize, count: i32, bits: i32, out: usize, counts: usize): void {
  let stride: usize = bits == 128 ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let start = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let end = text + <usize>load<u32>(offsets + (<usize>d << 2), 4);
    beginDocument(bits, false);
    let e = start;
    let k = 0;
    while (k < WINDOW && e < end) {
      e += utf8Length(<u32>load<u8>(e));
      k++;
    }
    if (e > end) e = end;
    let s = start;
    let lanes: usize = 0; // windows waiting in MD5's four SIMD lanes (a window is at most 16 bytes)
    while (true) {
      // Four code points of valid UTF-8 are at most 16 bytes, which is all a lane holds.
      if (ASC_FEATURE_SIMD && e - s <= 16) {
        md5ShortLane(lanes, s, e - s);
        if (++lanes == 4) {
          md5Short4();
          addLanes(4);
          lanes = 0;
        }
      } else {
        let lo = pythonHash(s, e - s);
        addUnit(lo, hashHigh);
      }
      if (e >= end) break;
      s += utf8Length(<u32>load<u8>(s));
      e += utf8Length(<u32>load<u8>(e));
      if (e > end) e = end;
    }
    if (lanes > 0) {
      md5Short4();
      addLanes(lanes);
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
  }
}

/** Adds `w` to counters[i] for every set bit i of `x` (bits offset by `base`). */
// @ts-ignore: decorator
@inline function addBits(counters: usize, x: u64, base: usize, w: f64): void {
  while (x != 0) {
    let at = counters + ((base + <usize>ctz<u64>(x)) << 3);
    store<f64>(at, load<f64>(at) + w);
    x &= x - 1;
  }
}

/** Adds the open batch into the totals, in one step, as numpy adds a batch's row of sums. */
function flushBatch(words: i32): void {
  for (let i = 0; i < 64 * words; i++) {
    let at = <usize>i << 3;
    store<f64>(ONES + at, load<f64>(ONES + at) + load<f64>(BATCH + at));
  }
  memory.fill(BATCH, 0, 128 * 8);
}

/**
 * Features as UTF-8 at `bytes` (feature j spans featOffsets[j]..featOffsets[j+1]), document d owning features
 * docOffsets[d]..docOffsets[d+1]. `weights` (f64 per feature) is 0 when every weight is 1. `batched` (u8 per
 * feature, with weights): 1 where the package batches the feature (its weight is an integer; a weight of 0 or
 * less then adds nothing but still counts in the total and in the batch's length), 0 where it adds w at once.
 */
export function pythonFeatures(
  bytes: usize, featOffsets: usize, docOffsets: usize, count: i32, weights: usize, batched: usize, bits: i32,
  out: usize, counts: usize
): void {
  let stride: usize = bits == 128 ? 16 : 8;
  let words = bits == 128 ? 2 : 1;
  for (let d = 0; d < count; d++) {
    let first = load<u32>(docOffsets + (<usize>d << 2));
    let last = load<u32>(docOffsets + (<usize>d << 2), 4);
    let at = out + <usize>d * stride;
    if (weights == 0) {
      beginDocument(bits, false);
      for (let j = first; j < last; j++) {
        let a = load<u32>(featOffsets + (<usize>j << 2));
        let b = load<u32>(featOffsets + (<usize>j << 2), 4);
        let lo = pythonHash(bytes + <usize>a, <usize>(b - a));
        addUnit(lo, hashHigh);
      }
      store<f64>(counts + (<usize>d << 3), <f64>endDocument(at, false));
      continue;
    }
    memory.fill(ONES, 0, 128 * 8);
    memory.fill(BATCH, 0, 128 * 8);
    let total: f64 = 0;
    let inBatch = 0;
    for (let j = first; j < last; j++) {
      let a = load<u32>(featOffsets + (<usize>j << 2));
      let b = load<u32>(featOffsets + (<usize>j << 2), 4);
      let w = load<f64>(weights + (<usize>j << 3));
      let lo = pythonHash(bytes + <usize>a, <usize>(b - a));
      let hi = hashHigh;
      if (bits == 32) lo &= 0xFFFFFFFF;
      total += w;
      if (load<u8>(batched + <usize>j)) {
        if (w > 0) {
          addBits(BATCH, lo, 0, w);
          if (words == 2) addBits(BATCH, hi, 64, w);
        }
        if (++inBatch == BATCH_SIZE) {
          flushBatch(words);
          inBatch = 0;
        }
      } else {
        addBits(ONES, lo, 0, w);
        if (words == 2) addBits(ONES, hi, 64, w);
      }
    }
    if (inBatch > 0) flushBatch(words);
    let half = total / 2;
    let rlo: u64 = 0, rhi: u64 = 0;
    for (let i = 0; i < 64; i++) {
      if (load<f64>(ONES + (<usize>i << 3)) > half) rlo |= <u64>1 << <u64>i;
      if (words == 2 && load<f64>(ONES + (<usize>(i + 64) << 3)) > half) rhi |= <u64>1 << <u64>i;
    }
    if (bits == 32) rlo &= 0xFFFFFFFF;
    store<u64>(at, rlo);
    if (words == 2) store<u64>(at, rhi, 8);
    store<f64>(counts + (<usize>d << 3), <f64>(last - first));
  }
}

const PENDING = memory.data(4 * 4, 16); // md5Digests: the output slot of each SIMD lane

/** Writes the digests of the first `n` SIMD lanes to their pending output slots. */
function storeLanes(n: usize): void {
  md5Short4();
  for (let j: usize = 0; j < n; j++) {
    let o = <usize>load<u32>(PENDING + (j << 2));
    let q = DIGESTS + (j << 2);
    store<u32>(o, load<u32>(q));
    store<u32>(o, load<u32>(q, 16), 4);
    store<u32>(o, load<u32>(q, 32), 8);
    store<u32>(o, load<u32>(q, 48), 12);
  }
}

/**
 * MD5 digests (16 bytes each, in digest order) of the byte strings laid out as in pythonFeatures, through the
 * same paths as the fingerprint kernels (SIMD lanes for up to 16 bytes in the SIMD build): for the cross-check.
 */
export function md5Digests(bytes: usize, featOffsets: usize, n: i32, out: usize): void {
  let lanes: usize = 0;
  for (let j = 0; j < n; j++) {
    let a = load<u32>(featOffsets + (<usize>j << 2));
    let b = load<u32>(featOffsets + (<usize>j << 2), 4);
    let o = out + (<usize>j << 4);
    if (ASC_FEATURE_SIMD && b - a <= 16) {
      md5ShortLane(lanes, bytes + <usize>a, <usize>(b - a));
      store<u32>(PENDING + (lanes << 2), <u32>o);
      if (++lanes == 4) {
        storeLanes(4);
        lanes = 0;
      }
      continue;
    }
    digest(bytes + <usize>a, <usize>(b - a));
    store<u32>(o, md5A);
    store<u32>(o, md5B, 4);
    store<u32>(o, md5C, 8);
    store<u32>(o, md5D, 12);
  }
  if (lanes > 0) storeLanes(lanes);
}
