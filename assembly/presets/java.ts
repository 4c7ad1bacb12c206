// The Java reference's compatibility mode: tokens split on " \t\n\r\f" over UTF-16 code units, each hashed with
// the Python-2-style string hash (x = c0 << 7; x = (x * 1000003) ^ c per unit; x ^= length) modulo 2^bits,
// every token weight 1, and a counter of exactly 0 sets its bit (so an empty document is all ones).
import { beginDocument, addUnit, addWeighted, endDocument } from '../reducer';

// @ts-ignore: decorator
@inline const M: u64 = 1000003;

let hashHigh: u64 = 0;

/** Hash of `len` code units at `p`, modulo 2^bits; the high word (128 bits) is left in hashHigh. */
function javaHash(p: usize, len: usize, bits: i32): u64 {
  hashHigh = 0;
  if (len == 0) return 0;
  let lo: u64 = <u64>load<u16>(p) << 7;
  let hi: u64 = 0;
  for (let i: usize = 0; i < len; i++) {
    let c = <u64>load<u16>(p + (i << 1));
    if (bits == 128) {
      // (hi:lo) * M with M < 2^20: split lo into 32-bit halves to get the carry into hi.
      let l0 = (lo & 0xFFFFFFFF) * M;
      let l1 = (lo >> 32) * M + (l0 >> 32);
      hi = hi * M + (l1 >> 32);
      lo = (l1 << 32) | (l0 & 0xFFFFFFFF);
    } else {
      lo = lo * M;
    }
    lo ^= c;
  }
  lo ^= <u64>len;
  if (bits == 32) lo &= 0xFFFFFFFF;
  hashHigh = hi;
  return lo;
}

// @ts-ignore: decorator
@inline function isSplit(c: u32): bool {
  return c == 32 || c == 9 || c == 10 || c == 13 || c == 12;
}

/** Documents as UTF-16 code units at `text`, document d spanning offsets[d]..offsets[d+1] (u32, in units). */
export function javaTexts(text: usize, offsets: usize, count: i32, bits: i32, out: usize, counts: usize): void {
  let stride: usize = bits == 128 ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let p = text + (<usize>load<u32>(offsets + (<usize>d << 2)) << 1);
    let end = text + (<usize>load<u32>(offsets + (<usize>d << 2), 4) << 1);
    beginDocument(bits, false);
    while (p < end) {
      while (p < end && isSplit(<u32>load<u16>(p))) p += 2;
      let start = p;
      while (p < end && !isSplit(<u32>load<u16>(p))) p += 2;
      if (p > start) {
        let lo = javaHash(start, (p - start) >> 1, bits);
        addUnit(lo, hashHigh);
      }
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, true));
  }
}

/** Features as UTF-16 code units (offsets in units), laid out as in fingerprintFeatures. */
export function javaFeatures(
  text: usize, featOffsets: usize, docOffsets: usize, count: i32, weights: usize, bits: i32,
  out: usize, counts: usize
): void {
  let stride: usize = bits == 128 ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let first = load<u32>(docOffsets + (<usize>d << 2));
    let last = load<u32>(docOffsets + (<usize>d << 2), 4);
    beginDocument(bits, weights != 0);
    for (let j = first; j < last; j++) {
      let a = load<u32>(featOffsets + (<usize>j << 2));
      let b = load<u32>(featOffsets + (<usize>j << 2), 4);
      let lo = javaHash(text + (<usize>a << 1), <usize>(b - a), bits);
      if (weights != 0) addWeighted(lo, hashHigh, load<f64>(weights + (<usize>j << 3)));
      else addUnit(lo, hashHigh);
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, true));
  }
}
