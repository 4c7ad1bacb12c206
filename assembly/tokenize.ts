// The built-in tokenizers, fused with feature hashing: each finished token goes straight to the reducer.
//
// Both word scanners work on 64-byte blocks: a 64-bit mask of token bytes is built (v128 compares with SIMD,
// SWAR or a byte loop without), and token boundaries are read off the mask with ctz, so the per-byte work has
// no data-dependent branches. Words: a block of pure ASCII is case-folded 64 bytes at a time into `scratch`;
// a block with any non-ASCII byte goes through the code-point path (decode, classify, fold, encode).
// Mode numbers and the width limit are shared with the TypeScript side (defined once, in that file).
import { MAX_WIDTH, MODE_SHINGLES, MODE_WORDS, SPEC_V1 } from '../src/fingerprint/modes.shared';
import { xxh3, xxh3Mid, SEED_HIGH } from './xxh3';
import { featureHash, featureHashV1, shingleHash, shingleHash3, shingleHashV1 } from './feature-hash';
import { addUnit, addUnitAt, unitCursor, unitLimit, unitsUpTo } from './reducer';
import { classOf, fold, decode, decodedLength, encode, SEPARATOR, STANDALONE } from './unicode';

// @ts-ignore: decorator
@inline const BATCH: i32 = 128; // words found before they are hashed together (shingles)
// @ts-ignore: decorator
@inline const HISTORY: i32 = 256; // word hashes kept for shingles before sliding back (>= BATCH + MAX_WIDTH)

// Profiling builds only (bench/profile-stages.ts compiles with `--use SIMHASH_PROFILE_STAGE=n`): stop the
// pipeline after stage n and fold what it produced into `profileSink`, so the cost of each stage is the
// difference between two builds. 1: tokenizer; 2: + word hash; 3: + shingle hash (no reducer). 0 (the package
// build): everything. Constant-folded: the package's code is unchanged.
// @ts-ignore: decorator
@inline const STAGE: i32 = isDefined(SIMHASH_PROFILE_STAGE) ? SIMHASH_PROFILE_STAGE : 0;
let profileSink: u64 = 0;

/** Profiling builds: what the stopped pipeline produced (keeps the optimizer from removing it). */
export function stageSink(): u64 {
  return profileSink;
}

let wide: bool = false;
let v1: bool = false; // spec simhash-wasm/1's hashes (feature-hash.ts)
let mode: i32 = 0;
let width: i32 = 1;
let words: i32 = 0; // words hashed in the document (shingles)
let held: i32 = 0; // word hashes in WORD_HASHES
let pending: i32 = 0; // shingles mode: words in TOKEN_STARTS / TOKEN_LENGTHS, not hashed yet
let inToken: bool = false;
let tokenStart: usize = 0;
// Verification (assembly/verify-pairs.ts): when set, shingle hashes (low word) are stored here, one u64 each,
// instead of going to the reducer, so verification sees exactly the fingerprint's shingle values.
let sink: usize = 0;
let collected: i32 = 0;
// With a sink: the hashes go to the reducer as well (dedup's fingerprints and shingle sets in one pass).
let tee: bool = false;
// And when set too, the words themselves (case-folded UTF-8), each followed by a space (src/dedup/shingle-jaccard.ts).
let wordSink: usize = 0;

const WORD_HASHES = memory.data(HISTORY * 8, 16);
const TOKEN_STARTS = memory.data(BATCH * 4, 16);
const TOKEN_LENGTHS = memory.data(BATCH * 4, 16);
const RING = memory.data(MAX_WIDTH * 4); // n-grams: starts of the last `width` code points
// ASCII byte -> folded byte, 0 for separators (everything but letters and digits).
const ASCII_FOLD = memory.data(128);
const TAIL = memory.data(64, 16); // a document's last, partial block, padded with spaces

export function setupTokenizers(): void {
  for (let b = 0; b < 128; b++) {
    let f: u8 = 0;
    if (b >= 48 && b <= 57) f = <u8>b;
    else if (b >= 97 && b <= 122) f = <u8>b;
    else if (b >= 65 && b <= 90) f = <u8>(b + 32);
    store<u8>(ASCII_FOLD + b, f);
  }
}

/**
 * Shingles mode only: the next document's shingle hashes go to `out` (0: back to the reducer), and with `reduce`
 * to the reducer as well, as without a sink.
 */
export function collectShingles(out: usize, reduce: bool = false): void {
  sink = out;
  collected = 0;
  tee = out != 0 && reduce;
}

/** With collectShingles: the next words go to `out`, each followed by a space; returns where the last one ended. */
export function collectWords(out: usize): usize {
  let end = wordSink;
  wordSink = out;
  return end;
}

/** Shingle hashes stored since collectShingles. */
export function collectedShingles(): i32 {
  return collected;
}

export function beginTokens(bits: i32, tokenizer: i32, w: i32, spec: i32): void {
  wide = bits == 128;
  v1 = spec == SPEC_V1;
  mode = tokenizer;
  width = w;
  words = 0;
  held = 0;
  pending = 0;
  inToken = false;
}

/** The spec's hash of a feature's bytes (seed 0; seed 1 gives the high word at 128 bits). */
// @ts-ignore: decorator
@inline function hashOf(p: usize, len: usize, seed: u64): u64 {
  return v1 ? featureHashV1(p, len, seed) : featureHash(p, len, seed);
}

/** The spec's hash of a shingle of `w` word hashes at `p`. */
// @ts-ignore: decorator
@inline function shingleOf(p: usize, w: i32, seed: u64): u64 {
  return v1 ? shingleHashV1(p, w, seed) : shingleHash(p, w, seed);
}

/** A feature given by its bytes, to the reducer. */
// @ts-ignore: decorator
@inline export function feature(p: usize, len: usize): void {
  if (STAGE == 3) {
    profileSink += hashOf(p, len, 0);
    return;
  }
  addUnit(hashOf(p, len, 0), wide ? hashOf(p, len, SEED_HIGH) : 0);
}

/**
 * A finished token [start, end). Words: a feature, hashed at once. Shingles: queued, and hashed with the rest of
 * its batch, then each window of word hashes (flushTokens): the shingle loop then has a fixed length and no call
 * (same-run: shingles 1.82 -> 1.55 ms per 0.55 MB; queueing word features too measured 2-4 % slower).
 */
// @ts-ignore: decorator
@inline function token(start: usize, end: usize): void {
  if (STAGE == 1) {
    profileSink += <u64>(end - start);
    return;
  }
  if (mode != MODE_SHINGLES) {
    if (STAGE == 2) profileSink += hashOf(start, end - start, 0);
    else feature(start, end - start);
    return;
  }
  let n = pending;
  store<u32>(TOKEN_STARTS + (<usize>n << 2), <u32>start);
  store<u32>(TOKEN_LENGTHS + (<usize>n << 2), <u32>(end - start));
  pending = n + 1;
  if (n + 1 == BATCH) flushTokens();
}

/** Hashes the queued words (shingles mode) into the window of word hashes, then the shingles they complete. */
function flushTokens(): void {
  let n = pending;
  pending = 0;
  if (STAGE == 2) {
    for (let i = 0; i < n; i++) {
      let at = <usize>i << 2;
      profileSink += hashOf(<usize>load<u32>(TOKEN_STARTS + at), <usize>load<u32>(TOKEN_LENGTHS + at), 0);
    }
    return;
  }
  if (held + n > HISTORY) {
    // Keep the last width - 1 hashes: the next shingles start there. held > HISTORY - BATCH >= width - 1.
    memory.copy(WORD_HASHES, WORD_HASHES + <usize>(held - width + 1) * 8, <usize>(width - 1) * 8);
    held = width - 1;
  }
  let h = WORD_HASHES + (<usize>held << 3);
  // The spec version (and below the width) is tested once per batch of words, not once per word.
  if (v1) {
    for (let i = 0; i < n; i++) {
      let at = <usize>i << 2;
      store<u64>(h + (<usize>i << 3), xxh3(<usize>load<u32>(TOKEN_STARTS + at), <usize>load<u32>(TOKEN_LENGTHS + at), 0));
    }
  } else {
    for (let i = 0; i < n; i++) {
      let at = <usize>i << 2;
      store<u64>(h + (<usize>i << 3), featureHash(<usize>load<u32>(TOKEN_STARTS + at), <usize>load<u32>(TOKEN_LENGTHS + at), 0));
    }
  }
  // The shingle ending at new word i is complete once words + i + 1 >= width.
  let first = h - (<usize>width << 3) + 8;
  let i = max(0, width - 1 - words);
  if (sink != 0) {
    if (wordSink != 0) {
      for (let j = 0; j < n; j++) {
        let len = <usize>load<u32>(TOKEN_LENGTHS + (<usize>j << 2));
        memory.copy(wordSink, <usize>load<u32>(TOKEN_STARTS + (<usize>j << 2)), len);
        store<u8>(wordSink + len, 32);
        wordSink += len + 1;
      }
    }
    // Verification: the same values as below, stored (one test per batch of words, none per shingle).
    let out = sink + (<usize>collected << 3);
    if (!v1 && !wide && width == 3) {
      // dedup's default (fingerprints and shingle sets in one pass): as the default loop below.
      let cursor = unitCursor();
      let limit = unitLimit();
      collected += max(0, n - i);
      for (; i < n; i++) {
        let p = first + (<usize>i << 3);
        let h = shingleHash3(load<u64>(p), load<u64>(p, 8), load<u64>(p, 16));
        store<u64>(out, h);
        out += 8;
        if (tee) cursor = addUnitAt(cursor, limit, h);
      }
      if (tee) unitsUpTo(cursor);
    } else {
      for (; i < n; i++) {
        let p = first + (<usize>i << 3);
        let h = shingleOf(p, width, 0);
        store<u64>(out, h);
        if (tee) addUnit(h, wide ? shingleOf(p, width, SEED_HIGH) : 0);
        out += 8;
        collected++;
      }
    }
  } else if (!v1 && !wide) {
    // The default: the reducer's cursor in a local, as in tokenRun, and the window of three words unrolled.
    let cursor = unitCursor();
    let limit = unitLimit();
    if (width == 3) {
      for (; i < n; i++) {
        let p = first + (<usize>i << 3);
        let h = shingleHash3(load<u64>(p), load<u64>(p, 8), load<u64>(p, 16));
        if (STAGE == 3) profileSink += h;
        else cursor = addUnitAt(cursor, limit, h);
      }
    } else {
      for (; i < n; i++) {
        let h = shingleHash(first + (<usize>i << 3), width, 0);
        if (STAGE == 3) profileSink += h;
        else cursor = addUnitAt(cursor, limit, h);
      }
    }
    if (STAGE != 3) unitsUpTo(cursor);
  } else if (v1 && width >= 3 && width <= 8) {
    // Spec 1's widths 3..8: XXH3's straight-line 17..64-byte path, inlined here once (not in every tokenizer).
    let len = <usize>width << 3;
    for (; i < n; i++) {
      let p = first + (<usize>i << 3);
      if (STAGE == 3) profileSink += xxh3Mid(p, len, 0);
      else addUnit(xxh3Mid(p, len, 0), wide ? xxh3Mid(p, len, SEED_HIGH) : 0);
    }
  } else {
    for (; i < n; i++) {
      let p = first + (<usize>i << 3);
      if (STAGE == 3) profileSink += shingleOf(p, width, 0);
      else addUnit(shingleOf(p, width, 0), wide ? shingleOf(p, width, SEED_HIGH) : 0);
    }
  }
  held += n;
  words += n;
}

/** Ends the document's tokens: a document with fewer words than one shingle is one shingle of all of them. */
export function endTokens(): void {
  if (pending > 0) flushTokens();
  if (mode == MODE_SHINGLES && words > 0 && words < width) {
    let h = shingleOf(WORD_HASHES, words, 0);
    if (sink != 0) {
      store<u64>(sink + (<usize>collected << 3), h);
      collected++;
    }
    if (sink == 0 || tee) addUnit(h, wide ? shingleOf(WORD_HASHES, words, SEED_HIGH) : 0);
  }
}

/**
 * Emits the tokens whose boundaries fall in a 64-byte block at `base` with token-byte mask `m`. Starts and ends are
 * taken in pairs (the k-th start opens the token the k-th end closes), so the loop runs once per token with no
 * branch on whether a token is open.
 */
// @ts-ignore: decorator
@inline function scanMask(base: usize, m: u64): void {
  let shifted = (m << 1) | <u64>inToken;
  let starts = m & ~shifted;
  let ends = ~m & shifted;
  if (inToken) {
    if (ends == 0) return; // the open token runs through the whole block
    token(tokenStart, base + <usize>ctz<u64>(ends));
    ends &= ends - 1;
  }
  while (ends != 0) {
    token(base + <usize>ctz<u64>(starts), base + <usize>ctz<u64>(ends));
    starts &= starts - 1;
    ends &= ends - 1;
  }
  // At most one start is left: a token still open at the end of the block.
  inToken = starts != 0;
  tokenStart = base + <usize>ctz<u64>(starts);
}

// ---- whitespace (the Java reference's split, over UTF-8 bytes) ---------------------------------------------

// @ts-ignore: decorator
@inline function swarSeparators(x: u64): u64 {
  // Bit 7 of each byte set where the byte is one of " \t\n\r\f": 0x20, or 0x09-0x0D but not 0x0B. With
  // a = x & 0x7F7F..., a byte's bit 7 of a + (0x80 - c) is set exactly when its low seven bits are >= c (no carry
  // leaves the byte). The thresholds 09 0B 0C 0E 20 21 nest, so the parity of the six tests is 1 exactly in
  // [09, 0B), [0C, 0E) and [20, 21): 15 operations (the earlier sum of three range tests took 22; callgrind had
  // the scalar whitespace scan at 14.9 instructions per byte with it). Bytes >= 0x80 are not separators.
  let a = x & 0x7F7F7F7F7F7F7F7F;
  let parity = (a + 0x7777777777777777) ^ (a + 0x7575757575757575) ^ (a + 0x7474747474747474)
    ^ (a + 0x7272727272727272) ^ (a + 0x6060606060606060) ^ (a + 0x5F5F5F5F5F5F5F5F);
  return parity & ~x & 0x8080808080808080;
}

/**
 * The 64-bit mask of a 64-byte block from the bit-7 masks of its eight words, given as their sum
 * t = sum of (mask of word i) >> (7 - i), where byte j's bit i is byte 8i + j's bit: an 8x8 bit transpose
 * (Hacker's Delight 7-3, three swaps of 6 operations) puts it at bit 8i + j. 33 operations for the block, against
 * 48 for a multiply-gather per word.
 */
// @ts-ignore: decorator
@inline function transpose8(t: u64): u64 {
  let s = (t ^ (t >> 7)) & 0x00AA00AA00AA00AA;
  t ^= s ^ (s << 7);
  s = (t ^ (t >> 14)) & 0x0000CCCC0000CCCC;
  t ^= s ^ (s << 14);
  s = (t ^ (t >> 28)) & 0x00000000F0F0F0F0;
  return t ^ s ^ (s << 28);
}

// Per low nibble: the one separator byte with that nibble (0x20 for 0, \t \n \f \r for 9, 10, 12, 13), else a
// value whose low nibble differs, so that no byte matches.
// @ts-ignore: decorator
@inline function simdSeparators16(v: v128): i32 {
  let table = i8x16(0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0x09, 0x0A, 0, 0x0C, 0x0D, 0, 0);
  return i8x16.bitmask(i8x16.eq(i8x16.swizzle(table, v128.and(v, i8x16.splat(0x0F))), v));
}

/** The separator mask of the 64 bytes at p. */
// @ts-ignore: decorator
@inline function separatorBlock(p: usize): u64 {
  if (ASC_FEATURE_SIMD) {
    return <u64>(<u32>simdSeparators16(v128.load(p)))
      | (<u64>(<u32>simdSeparators16(v128.load(p, 16))) << 16)
      | (<u64>(<u32>simdSeparators16(v128.load(p, 32))) << 32)
      | (<u64>(<u32>simdSeparators16(v128.load(p, 48))) << 48);
  }
  // Written out: binaryen keeps the loop, with its counter and variable shifts.
  return transpose8(
    (swarSeparators(load<u64>(p)) >> 7) | (swarSeparators(load<u64>(p, 8)) >> 6)
      | (swarSeparators(load<u64>(p, 16)) >> 5) | (swarSeparators(load<u64>(p, 24)) >> 4)
      | (swarSeparators(load<u64>(p, 32)) >> 3) | (swarSeparators(load<u64>(p, 40)) >> 2)
      | (swarSeparators(load<u64>(p, 48)) >> 1) | swarSeparators(load<u64>(p, 56)),
  );
}

export function whitespaceTokens(p: usize, end: usize): void {
  if (!v1 && !wide) p = tokenRun(p, end, 0, 0, RUN_WHITESPACE);
  while (p + 64 <= end) {
    scanMask(p, ~separatorBlock(p));
    p += 64;
  }
  if (p < end) {
    copyTail(p, end);
    scanMask(p, ~separatorBlock(TAIL)); // the padding is separators: any open token ends at `end`
  }
  if (inToken) { token(tokenStart, end); inToken = false; }
}

// ---- Unicode words -------------------------------------------------------------------------------------------

/**
 * Words of [p, end): letters, numbers and marks, case-folded into `scratch`; each character of a script written
 * without spaces is a word by itself. Returns nothing: tokens go to the reducer.
 */
export function wordTokens(p: usize, end: usize, scratch: usize): void {
  let q = scratch;
  let words = mode == MODE_WORDS && !v1 && !wide;
  let shingles = mode == MODE_SHINGLES;
  while (p < end) {
    if (!inToken && pending == 0) q = scratch; // nothing in scratch is needed any more: stay in cache
    if (p + 64 <= end && asciiBlock(p)) {
      if (words || shingles) {
        p = words ? tokenRun(p, end, q, scratch, RUN_WORDS) : tokenRun(p, end, q, scratch, RUN_SHINGLES);
        q = runScratch;
        continue;
      }
      scanMask(q, foldAsciiBlock(p, q));
      p += 64;
      q += 64;
      continue;
    }
    // The last, partial block, when it is ASCII, takes the block path from a copy padded with spaces (separators,
    // so no token stays open): the code-point path costs a branch per byte and the globals per token.
    if (p + 64 > end) {
      copyTail(p, end);
      if (asciiBlock(TAIL)) {
        p = TAIL;
        end = TAIL + 64;
        continue;
      }
    }
    // Code-point path up to the end of this block (a code point may run past it; the next round starts after it).
    let stop = min(p + 64, end);
    while (p < stop) {
      let b = <u32>load<u8>(p);
      if (b < 0x80) {
        let f = load<u8>(ASCII_FOLD + b);
        p++;
        if (f != 0) {
          if (!inToken) { inToken = true; tokenStart = q; }
          store<u8>(q++, f);
        } else if (inToken) {
          inToken = false;
          token(tokenStart, q);
        }
        continue;
      }
      let cp = decode(p, end, b);
      p += decodedLength;
      let cls = classOf(cp);
      if (cls == SEPARATOR) {
        if (inToken) { inToken = false; token(tokenStart, q); }
        continue;
      }
      if (cls == STANDALONE) {
        if (inToken) { inToken = false; token(tokenStart, q); }
        let start = q;
        q += encode(q, fold(cp));
        token(start, q);
        continue;
      }
      if (!inToken) { inToken = true; tokenStart = q; }
      q += encode(q, fold(cp));
    }
  }
  if (inToken) { token(tokenStart, q); inToken = false; }
}

/** Copies the last, partial block [p, end) (under 64 bytes) to TAIL and pads it with spaces. */
// @ts-ignore: decorator
@inline function copyTail(p: usize, end: usize): void {
  for (let i: usize = 0; i < 64; i += 8) store<u64>(TAIL + i, 0x2020202020202020);
  let n = end - p;
  let i: usize = 0;
  for (; i + 8 <= n; i += 8) store<u64>(TAIL + i, load<u64>(p + i));
  for (; i < n; i++) store<u8>(TAIL + i, load<u8>(p + i));
}

// @ts-ignore: decorator
@inline function asciiBlock(p: usize): bool {
  if (ASC_FEATURE_SIMD) {
    return i8x16.bitmask(v128.or(v128.or(v128.load(p), v128.load(p, 16)), v128.or(v128.load(p, 32), v128.load(p, 48)))) == 0;
  }
  return ((load<u64>(p) | load<u64>(p, 8) | load<u64>(p, 16) | load<u64>(p, 24)
    | load<u64>(p, 32) | load<u64>(p, 40) | load<u64>(p, 48) | load<u64>(p, 56)) & 0x8080808080808080) == 0;
}

/** The word-byte mask of the ASCII block at p, stored folded at q. */
// @ts-ignore: decorator
@inline function foldAsciiBlock(p: usize, q: usize): u64 {
  if (ASC_FEATURE_SIMD) {
    return <u64>(<u32>foldAscii16(v128.load(p), q))
      | (<u64>(<u32>foldAscii16(v128.load(p, 16), q + 16)) << 16)
      | (<u64>(<u32>foldAscii16(v128.load(p, 32), q + 32)) << 32)
      | (<u64>(<u32>foldAscii16(v128.load(p, 48), q + 48)) << 48);
  }
  return transpose8(
    (foldAscii8(load<u64>(p), q) >> 7) | (foldAscii8(load<u64>(p, 8), q + 8) >> 6)
      | (foldAscii8(load<u64>(p, 16), q + 16) >> 5) | (foldAscii8(load<u64>(p, 24), q + 24) >> 4)
      | (foldAscii8(load<u64>(p, 32), q + 32) >> 3) | (foldAscii8(load<u64>(p, 40), q + 40) >> 2)
      | (foldAscii8(load<u64>(p, 48), q + 48) >> 1) | foldAscii8(load<u64>(p, 56), q + 56),
  );
}

let runScratch: usize = 0; // where tokenRun left the scratch position

// What a tokenRun does with its tokens (a constant at each call, so each gets its own loop).
// @ts-ignore: decorator
@inline const RUN_WORDS: i32 = 0; // words, spec 2, 64 bits: hashed into the reducer's buffer
// @ts-ignore: decorator
@inline const RUN_WHITESPACE: i32 = 1; // whitespace, spec 2, 64 bits: the same, from the text itself
// @ts-ignore: decorator
@inline const RUN_SHINGLES: i32 = 2; // shingles: queued for flushTokens

/**
 * One token of a tokenRun: hashed to the reducer's buffer at `cursor` (returns where the next hash goes), or queued
 * at index `cursor` for flushTokens (returns the next index; a full queue is flushed).
 */
// @ts-ignore: decorator
@inline function runToken(kind: i32, s: usize, e: usize, cursor: usize, limit: usize): usize {
  if (STAGE == 1) {
    profileSink += <u64>(e - s);
    return cursor;
  }
  if (kind == RUN_SHINGLES) {
    store<u32>(TOKEN_STARTS + (cursor << 2), <u32>s);
    store<u32>(TOKEN_LENGTHS + (cursor << 2), <u32>(e - s));
    if (cursor + 1 < <usize>BATCH) return cursor + 1;
    pending = BATCH;
    flushTokens();
    return 0;
  }
  if (STAGE != 0) {
    profileSink += featureHash(s, e - s, 0);
    return cursor;
  }
  return addUnitAt(cursor, limit, featureHash(s, e - s, 0));
}

/**
 * A run of 64-byte blocks from p (pure ASCII ones for the word modes, folded into scratch at q) with the token
 * state and the reducer's cursor or the queue's length in locals: the general loop (scanMask, token) reads the
 * tokenizer's globals around every token, and TurboFan spills its masks there (same-round, words: 1.65 -> 1.12 ms
 * per 0.55 MB). Returns where the run stopped; the scratch position is left in runScratch.
 */
// @ts-ignore: decorator
@inline function tokenRun(p: usize, end: usize, q: usize, scratch: usize, kind: i32): usize {
  let open = inToken;
  let start = tokenStart;
  let cursor = kind == RUN_SHINGLES ? <usize>pending : unitCursor();
  let limit: usize = kind == RUN_SHINGLES ? 0 : unitLimit();
  while (p + 64 <= end && (kind == RUN_WHITESPACE || asciiBlock(p))) {
    // Nothing in scratch is needed any more: stay in cache.
    if (kind != RUN_WHITESPACE && !open && (kind != RUN_SHINGLES || cursor == 0)) q = scratch;
    let base = kind == RUN_WHITESPACE ? p : q;
    let m = kind == RUN_WHITESPACE ? ~separatorBlock(p) : foldAsciiBlock(p, q);
    let shifted = (m << 1) | <u64>open;
    let starts = m & ~shifted;
    let ends = ~m & shifted;
    p += 64;
    q += 64;
    if (open) {
      if (ends == 0) continue; // the open token runs through the whole block
      cursor = runToken(kind, start, base + <usize>ctz<u64>(ends), cursor, limit);
      ends &= ends - 1;
    }
    while (ends != 0) {
      cursor = runToken(kind, base + <usize>ctz<u64>(starts), base + <usize>ctz<u64>(ends), cursor, limit);
      starts &= starts - 1;
      ends &= ends - 1;
    }
    // At most one start is left: a token still open at the end of the block.
    open = starts != 0;
    start = base + <usize>ctz<u64>(starts);
  }
  if (kind == RUN_SHINGLES) pending = <i32>cursor;
  else unitsUpTo(cursor);
  inToken = open;
  tokenStart = start;
  runScratch = q;
  return p;
}

/**
 * SWAR version of foldAscii16 for 8 ASCII bytes: stores them folded at q, returns bit 7 of each byte set where it
 * is a word byte. As in swarSeparators, the parity of two nested threshold tests is a range test.
 */
// @ts-ignore: decorator
@inline function foldAscii8(x: u64, q: usize): u64 {
  let lower = x | 0x2020202020202020; // letters of either case as lower case
  let letter = ((lower + (0x80 - 0x61) * 0x0101010101010101) ^ (lower + (0x80 - 0x7B) * 0x0101010101010101))
    & 0x8080808080808080;
  let digit = (x + (0x80 - 0x30) * 0x0101010101010101) ^ (x + (0x80 - 0x3A) * 0x0101010101010101);
  store<u64>(q, x | (letter >> 2));
  return letter | (digit & 0x8080808080808080);
}

/**
 * Letters and digits of 16 ASCII bytes: stores them at q with letters lower-cased, returns the 16-bit mask of word
 * bytes. Each range test is one signed compare: adding 0x80 - lo turns lo..lo+n-1 into -128..-128+n-1.
 */
// @ts-ignore: decorator
@inline function foldAscii16(v: v128, q: usize): i32 {
  let lower = v128.or(v, i8x16.splat(0x20));
  let letter = i8x16.lt_s(i8x16.add(lower, i8x16.splat(<i8>(0x80 - 0x61))), i8x16.splat(-128 + 26));
  let digit = i8x16.lt_s(i8x16.add(v, i8x16.splat(<i8>(0x80 - 0x30))), i8x16.splat(-128 + 10));
  v128.store(q, v128.or(v, v128.and(letter, i8x16.splat(0x20))));
  return i8x16.bitmask(v128.or(letter, digit));
}

// ---- character n-grams ---------------------------------------------------------------------------------------

const NGRAM_BLOCK = memory.data(96, 16); // an ASCII block folded (64 bytes), and slack for 16-byte reads
let ngramAscii: bool = false; // the last normalizeForNgrams wrote ASCII only

/** Copies `len` bytes from src to q, 16 at once for a short word (q has slack: see normalizeForNgrams). */
// @ts-ignore: decorator
@inline function copyShort(q: usize, src: usize, len: usize): usize {
  store<u64>(q, load<u64>(src));
  store<u64>(q, load<u64>(src, 8), 8);
  if (len > 16) memory.copy(q + 16, src + 16, len - 16);
  return q + len;
}

/**
 * Writes the normalized text used by n-grams to `out`: words (as for wordTokens, but a script without spaces
 * is not split into characters) case-folded and joined by one space. Returns the end of the text. Pure-ASCII
 * 64-byte blocks are folded at once (foldAsciiBlock) and their words copied out whole, as the word modes read
 * them, instead of a branch per byte (same-round, ASCII documents, width 4: 2.3-2.5x as fast with the fixed
 * windows of ngramTokens); the rest goes a code point at a time. The copies store up to 15 bytes past the text:
 * the scratch holds twice the input (folding never doubles a text) plus 64 bytes.
 */
export function normalizeForNgrams(p: usize, end: usize, out: usize): usize {
  let q = out;
  let inWord = false;
  let ascii = true;
  while (p < end) {
    if (p + 64 <= end && asciiBlock(p)) {
      let m = foldAsciiBlock(p, NGRAM_BLOCK);
      let shifted = (m << 1) | <u64>inWord;
      let starts = m & ~shifted;
      let ends = ~m & shifted;
      if (inWord) {
        // The word open at the block's start goes on up to its end here, or through the block.
        q = copyShort(q, NGRAM_BLOCK, ends != 0 ? <usize>ctz<u64>(ends) : 64);
        ends &= ends - 1;
      }
      while (starts != 0) {
        let start = <usize>ctz<u64>(starts);
        if (q > out) store<u8>(q++, 32);
        q = copyShort(q, NGRAM_BLOCK + start, (ends != 0 ? <usize>ctz<u64>(ends) : 64) - start);
        starts &= starts - 1;
        ends &= ends - 1;
      }
      inWord = (m >> 63) != 0;
      p += 64;
      continue;
    }
    // The last, partial block, when it is ASCII, takes the block path from a copy padded with spaces, as in
    // wordTokens (the padding adds no word).
    if (p + 64 > end) {
      copyTail(p, end);
      if (asciiBlock(TAIL)) {
        p = TAIL;
        end = TAIL + 64;
        continue;
      }
    }
    // A code point at a time up to the end of this block (a code point may run past it).
    let stop = min(p + 64, end);
    while (p < stop) {
      let b = <u32>load<u8>(p);
      if (b < 0x80) {
        p++;
        let f = load<u8>(ASCII_FOLD + b);
        if (f != 0) {
          if (!inWord && q > out) store<u8>(q++, 32);
          inWord = true;
          store<u8>(q++, f);
        } else inWord = false;
        continue;
      }
      let cp = decode(p, end, b);
      p += decodedLength;
      if (classOf(cp) == SEPARATOR) { inWord = false; continue; }
      if (!inWord && q > out) store<u8>(q++, 32);
      inWord = true;
      let folded = fold(cp);
      ascii = ascii && folded < 0x80;
      q += encode(q, folded);
    }
  }
  ngramAscii = ascii;
  return q;
}

/**
 * Sliding windows of `width` code points over normalized text [p, end); a shorter text is one feature. A text that
 * normalizeForNgrams wrote in ASCII only (ngramAscii) has a byte per code point and takes fixed windows.
 */
export function ngramTokens(p: usize, end: usize): void {
  if (ngramAscii) {
    // Every code point is one byte: the windows are [i, i + width).
    let w = <usize>width;
    if (p + w > end) {
      if (p < end) feature(p, end - p);
      return;
    }
    let last = end - w;
    if (!v1 && !wide && STAGE == 0) {
      // The default spec's 64-bit reduction (32 and 64 bits): the reducer's cursor in a local, as in tokenRun.
      let cursor = unitCursor();
      let limit = unitLimit();
      for (; p <= last; p++) cursor = addUnitAt(cursor, limit, featureHash(p, w, 0));
      unitsUpTo(cursor);
    } else {
      for (; p <= last; p++) feature(p, w);
    }
    return;
  }
  // RING holds the start offsets of the last `width` code points; `slot` is where the next one goes, which is
  // also where the oldest one is (no division per code point).
  let i: i32 = 0;
  let slot: i32 = 0;
  let start = p;
  while (p < end) {
    store<u32>(RING + (<usize>slot << 2), <u32>(p - start));
    slot = slot + 1 == width ? 0 : slot + 1;
    i++;
    p++;
    while (p < end && (load<u8>(p) & 0xC0) == 0x80) p++;
    if (i >= width) {
      let first = start + <usize>load<u32>(RING + (<usize>slot << 2));
      feature(first, p - first);
    }
  }
  if (i > 0 && i < width) feature(start, end - start);
}
