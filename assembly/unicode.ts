// UTF-8 decoding, character classes and simple case folding for the word tokenizers.
import { CLASS_INDEX, CLASS_BLOCKS, FOLD_INDEX, FOLD_BLOCKS, FOLD_LIMIT } from './unicode-data';

// @ts-ignore: decorator
@inline export const SEPARATOR: i32 = 0;
// @ts-ignore: decorator
@inline export const WORD: i32 = 1;
// @ts-ignore: decorator
@inline export const STANDALONE: i32 = 2;

// @ts-ignore: decorator
@inline export function classOf(cp: u32): i32 {
  let block = <usize>load<u8>(CLASS_INDEX + <usize>(cp >> 8));
  let packed = <i32>load<u8>(CLASS_BLOCKS + (block << 6) + <usize>((cp & 255) >> 2));
  return (packed >> ((cp & 3) << 1)) & 3;
}

// @ts-ignore: decorator
@inline export function fold(cp: u32): u32 {
  if (cp >= FOLD_LIMIT) return cp;
  let block = <usize>load<u8>(FOLD_INDEX + <usize>(cp >> 5));
  return <u32>(<i32>cp + load<i32>(FOLD_BLOCKS + (block << 7) + (<usize>(cp & 31) << 2)));
}

/** Decoded code point of the last `decode` call, and how many bytes it took. */
export let decodedLength: usize = 1;

/**
 * Decodes the code point at p (first byte b >= 0x80). Malformed sequences (bad continuation, overlong,
 * surrogate, > U+10FFFF, truncated) decode as U+FFFD one byte at a time, like the WHATWG decoder's replacement.
 */
// @ts-ignore: decorator
@inline export function decode(p: usize, end: usize, b: u32): u32 {
  decodedLength = 1;
  if (b < 0xC2) return 0xFFFD;
  if (b < 0xE0) {
    if (p + 1 >= end) return 0xFFFD;
    let c1 = <u32>load<u8>(p, 1);
    if ((c1 & 0xC0) != 0x80) return 0xFFFD;
    decodedLength = 2;
    return ((b & 0x1F) << 6) | (c1 & 0x3F);
  }
  if (b < 0xF0) {
    if (p + 2 >= end) return 0xFFFD;
    let c1 = <u32>load<u8>(p, 1), c2 = <u32>load<u8>(p, 2);
    if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80) return 0xFFFD;
    let cp = ((b & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
    decodedLength = 3;
    return cp;
  }
  if (b < 0xF5) {
    if (p + 3 >= end) return 0xFFFD;
    let c1 = <u32>load<u8>(p, 1), c2 = <u32>load<u8>(p, 2), c3 = <u32>load<u8>(p, 3);
    if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80) return 0xFFFD;
    let cp = ((b & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F);
    if (cp < 0x10000 || cp > 0x10FFFF) return 0xFFFD;
    decodedLength = 4;
    return cp;
  }
  return 0xFFFD;
}

/** Writes cp as UTF-8 at q; returns the byte count. */
// @ts-ignore: decorator
@inline export function encode(q: usize, cp: u32): usize {
  if (cp < 0x80) { store<u8>(q, <u8>cp); return 1; }
  if (cp < 0x800) {
    store<u8>(q, <u8>(0xC0 | (cp >> 6)));
    store<u8>(q, <u8>(0x80 | (cp & 0x3F)), 1);
    return 2;
  }
  if (cp < 0x10000) {
    store<u8>(q, <u8>(0xE0 | (cp >> 12)));
    store<u8>(q, <u8>(0x80 | ((cp >> 6) & 0x3F)), 1);
    store<u8>(q, <u8>(0x80 | (cp & 0x3F)), 2);
    return 3;
  }
  store<u8>(q, <u8>(0xF0 | (cp >> 18)));
  store<u8>(q, <u8>(0x80 | ((cp >> 12) & 0x3F)), 1);
  store<u8>(q, <u8>(0x80 | ((cp >> 6) & 0x3F)), 2);
  store<u8>(q, <u8>(0x80 | (cp & 0x3F)), 3);
  return 4;
}
