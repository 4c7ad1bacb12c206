// Batch entry points that turn documents into fingerprints: tokenize, hash each feature, reduce.
// Every entry takes raw pointers into linear memory laid out by src/wasm.ts; nothing here allocates.
import { xxh64, SEED_HIGH } from "./common";
import { beginDocument, addUnit, addWeighted, endDocument } from "./reducer";
import { classOf, fold, decode, decodedLength, encode, SEPARATOR, STANDALONE } from "./unicode";

// Tokenizer modes (src/options.ts mirrors these).
// @ts-ignore: decorator
@inline const WHITESPACE: i32 = 0;
// @ts-ignore: decorator
@inline const WORDS: i32 = 1;
// @ts-ignore: decorator
@inline const SHINGLES: i32 = 2;
// @ts-ignore: decorator
@inline const NGRAMS: i32 = 3;

// @ts-ignore: decorator
@inline export const MAX_WIDTH: i32 = 64;

let wideHash: bool = false;

// @ts-ignore: decorator
@inline function feature(p: usize, len: usize): void {
  addUnit(xxh64(p, len, 0), wideHash ? xxh64(p, len, SEED_HIGH) : 0);
}

// Per byte: 1 where the Java reference splits tokens (" \t\n\r\f").
const SPLIT = memory.data<u8>([
  0,0,0,0,0,0,0,0,0,1,1,0,1,1,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 1
]);
// ASCII byte -> folded byte, 0 for separators (everything but letters and digits).
const ASCII_FOLD = memory.data(128);
const RING = memory.data(MAX_WIDTH * 4); // starts of the last `width` words or code points

export function setupTokenizers(): void {
  for (let b = 0; b < 128; b++) {
    let f: u8 = 0;
    if (b >= 48 && b <= 57) f = <u8>b;
    else if (b >= 97 && b <= 122) f = <u8>b;
    else if (b >= 65 && b <= 90) f = <u8>(b + 32);
    store<u8>(ASCII_FOLD + b, f);
  }
}

// @ts-ignore: decorator
@inline function isSplit(b: u32): bool {
  return b <= 32 && load<u8>(SPLIT + b) != 0;
}

function whitespaceTokens(p: usize, end: usize): void {
  while (p < end) {
    while (p < end && isSplit(<u32>load<u8>(p))) p++;
    let start = p;
    while (p < end && !isSplit(<u32>load<u8>(p))) p++;
    if (p > start) feature(start, p - start);
  }
}

/**
 * Writes the normalized text to `out`: words (letters, numbers, marks) case-folded and separated by one space;
 * in word modes every character of a script written without spaces is a word of its own.
 * Calls `wordEnd` per word; returns the end of the written text (without a trailing space).
 */
// @ts-ignore: decorator
@inline function normalize(p: usize, end: usize, out: usize, mode: i32, width: i32): usize {
  let q = out;
  let inWord = false;
  let wordStart = out;
  let words: i32 = 0;
  while (p < end) {
    let b = <u32>load<u8>(p);
    if (b < 0x80) {
      let f = load<u8>(ASCII_FOLD + b);
      p++;
      if (f != 0) {
        if (!inWord) { inWord = true; wordStart = q; }
        store<u8>(q++, f);
      } else if (inWord) {
        inWord = false;
        q = wordEnd(out, wordStart, q, mode, width, words++);
      }
      continue;
    }
    let cp = decode(p, end, b);
    p += decodedLength;
    let cls = classOf(cp);
    if (cls == SEPARATOR) {
      if (inWord) { inWord = false; q = wordEnd(out, wordStart, q, mode, width, words++); }
      continue;
    }
    if (cls == STANDALONE && mode != NGRAMS) {
      if (inWord) { inWord = false; q = wordEnd(out, wordStart, q, mode, width, words++); }
      wordStart = q;
      q += encode(q, fold(cp));
      q = wordEnd(out, wordStart, q, mode, width, words++);
      continue;
    }
    if (!inWord) { inWord = true; wordStart = q; }
    q += encode(q, fold(cp));
  }
  if (inWord) q = wordEnd(out, wordStart, q, mode, width, words++);
  if (mode == SHINGLES && words > 0 && words < width) {
    // Fewer words than one shingle: the whole text is the one feature.
    feature(out, q - 1 - out);
  }
  return q > out ? q - 1 : out;
}

/** Handles the word [start, q) written at `q`; returns where the next word goes. */
// @ts-ignore: decorator
@inline function wordEnd(out: usize, start: usize, q: usize, mode: i32, width: i32, index: i32): usize {
  if (mode == WORDS) {
    feature(start, q - start);
    return out; // the word is hashed: reuse the space
  }
  if (mode == SHINGLES) {
    store<u32>(RING + (<usize>(index % width) << 2), <u32>(start - out));
    if (index + 1 >= width) {
      let first = out + <usize>load<u32>(RING + (<usize>((index + 1) % width) << 2));
      feature(first, q - first);
    }
  }
  store<u8>(q, 32);
  return q + 1;
}

/** Sliding windows of `width` code points over normalized text [p, end). */
function ngrams(p: usize, end: usize, width: i32): void {
  let i: i32 = 0;
  let start = p;
  while (p < end) {
    store<u32>(RING + (<usize>(i % width) << 2), <u32>(p - start));
    i++;
    // Step over one code point (the text is valid UTF-8: we wrote it).
    p++;
    while (p < end && (load<u8>(p) & 0xC0) == 0x80) p++;
    if (i >= width) {
      let first = start + <usize>load<u32>(RING + (<usize>(i % width) << 2));
      feature(first, p - first);
    }
  }
  if (i > 0 && i < width) feature(start, end - start);
}

/**
 * Fingerprints `count` documents stored back to back at `text` (UTF-8), document i spanning
 * offsets[i]..offsets[i+1] (u32). `scratch` needs 2 * (longest document) + 16 bytes for word modes.
 * Writes fingerprints to `out` (1 or 2 u64 per document) and feature counts to `counts` (f64).
 */
export function fingerprintTexts(
  text: usize, offsets: usize, count: i32, mode: i32, width: i32, bits: i32,
  scratch: usize, out: usize, counts: usize
): void {
  wideHash = bits == 128;
  let stride: usize = wideHash ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let p = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let end = text + <usize>load<u32>(offsets + (<usize>d << 2), 4);
    beginDocument(bits, false);
    if (mode == WHITESPACE) whitespaceTokens(p, end);
    else {
      let normEnd = normalize(p, end, scratch, mode, width);
      if (mode == NGRAMS) ngrams(scratch, normEnd, width);
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
  }
}

/**
 * Fingerprints documents given as features: feature j spans bytes[featOffsets[j]..featOffsets[j+1]) (u32),
 * document d owns features docOffsets[d]..docOffsets[d+1] (u32). `weights` (f64 per feature) or 0 for unit weights.
 */
export function fingerprintFeatures(
  bytes: usize, featOffsets: usize, docOffsets: usize, count: i32, weights: usize, bits: i32,
  out: usize, counts: usize
): void {
  wideHash = bits == 128;
  let stride: usize = wideHash ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let first = load<u32>(docOffsets + (<usize>d << 2));
    let last = load<u32>(docOffsets + (<usize>d << 2), 4);
    beginDocument(bits, weights != 0);
    for (let j = first; j < last; j++) {
      let a = load<u32>(featOffsets + (<usize>j << 2));
      let b = load<u32>(featOffsets + (<usize>j << 2), 4);
      let p = bytes + <usize>a, len = <usize>(b - a);
      let lo = xxh64(p, len, 0);
      let hi = wideHash ? xxh64(p, len, SEED_HIGH) : 0;
      if (weights != 0) addWeighted(lo, hi, load<f64>(weights + (<usize>j << 3)));
      else addUnit(lo, hi);
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
  }
}

/**
 * One fingerprint from `n` precomputed feature hashes (1 or 2 u64 each, low word first) and optional weights.
 */
export function fingerprintHashes(hashes: usize, n: i32, weights: usize, bits: i32, out: usize): void {
  let wide = bits == 128;
  beginDocument(bits, weights != 0);
  for (let j = 0; j < n; j++) {
    let lo = load<u64>(hashes + (<usize>j << (wide ? 4 : 3)));
    let hi = wide ? load<u64>(hashes + (<usize>j << 4), 8) : 0;
    if (weights != 0) addWeighted(lo, hi, load<f64>(weights + (<usize>j << 3)));
    else addUnit(lo, hi);
  }
  endDocument(out, false);
}

/** XXH64 of each of `n` features (offsets as in fingerprintFeatures), for tests and for users who store hashes. */
export function hashFeatures(bytes: usize, featOffsets: usize, n: i32, seed: u64, out: usize): void {
  for (let j = 0; j < n; j++) {
    let a = load<u32>(featOffsets + (<usize>j << 2));
    let b = load<u32>(featOffsets + (<usize>j << 2), 4);
    store<u64>(out + (<usize>j << 3), xxh64(bytes + <usize>a, <usize>(b - a), seed));
  }
}
