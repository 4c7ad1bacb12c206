// Batch entry points that turn documents into fingerprints: tokenize, hash each feature, reduce.
// Every entry takes raw pointers into linear memory laid out by src/fingerprint/presets/default.ts (texts and
// feature lists) and src/fingerprint/fingerprint.ts (hashes); nothing here allocates.
import { SEED_HIGH } from './xxh3';
import { featureHash, featureHashV1 } from './feature-hash';
import { MODE_NGRAMS, MODE_WHITESPACE, SPEC_V1 } from '../src/fingerprint/modes.shared';
import { beginDocument, addUnit, addWeighted, endDocument } from './reducer';
import {
  WEIGHTED_TABLE_MIN, TABLES_DONE, TABLES_RESUM, beginTables, addTables, endTables, addResummed, endResummed,
} from './weighted-tables';
import {
  beginTokens, endTokens, whitespaceTokens, wordTokens, normalizeForNgrams, ngramTokens,
} from './tokenize';

// @ts-ignore: decorator
@inline const SEED_LOW: u64 = 0;

/**
 * Fingerprints `count` documents stored back to back at `text` (UTF-8), document i spanning
 * offsets[i]..offsets[i+1] (u32). `scratch` needs 2 * (longest document) + 64 bytes for word modes (a last,
 * partial block is folded whole). Writes fingerprints to `out` (1 or 2 u64 per document) and feature counts to
 * `counts` (f64). `spec` is the hash version (SPEC_V1, SPEC_V2).
 */
export function fingerprintTexts(
  text: usize, offsets: usize, count: i32, mode: i32, width: i32, bits: i32,
  scratch: usize, out: usize, counts: usize, spec: i32
): void {
  let stride: usize = bits == 128 ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let p = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let end = text + <usize>load<u32>(offsets + (<usize>d << 2), 4);
    beginDocument(bits, false);
    beginTokens(bits, mode, width, spec);
    if (mode == MODE_WHITESPACE) whitespaceTokens(p, end);
    else if (mode == MODE_NGRAMS) ngramTokens(scratch, normalizeForNgrams(p, end, scratch));
    else wordTokens(p, end, scratch);
    endTokens();
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
  }
}

/** The spec's hash of a feature's bytes (feature-hash.ts). */
// @ts-ignore: decorator
@inline function hashOf(p: usize, len: usize, seed: u64, spec: i32): u64 {
  return spec == SPEC_V1 ? featureHashV1(p, len, seed) : featureHash(p, len, seed);
}

/**
 * Fingerprints documents given as features: feature j spans bytes[featOffsets[j]..featOffsets[j+1]) (u32),
 * document d owns features docOffsets[d]..docOffsets[d+1] (u32). `weights` (f64 per feature) or 0 for unit weights.
 */
export function fingerprintFeatures(
  bytes: usize, featOffsets: usize, docOffsets: usize, count: i32, weights: usize, bits: i32,
  out: usize, counts: usize, spec: i32
): void {
  let wideHash = bits == 128;
  let stride: usize = wideHash ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let first = load<u32>(docOffsets + (<usize>d << 2));
    let last = load<u32>(docOffsets + (<usize>d << 2), 4);
    beginDocument(bits, weights != 0);
    for (let j = first; j < last; j++) {
      let a = load<u32>(featOffsets + (<usize>j << 2));
      let b = load<u32>(featOffsets + (<usize>j << 2), 4);
      let p = bytes + <usize>a, len = <usize>(b - a);
      let lo = hashOf(p, len, SEED_LOW, spec);
      let hi = wideHash ? hashOf(p, len, SEED_HIGH, spec) : 0;
      if (weights != 0) addWeighted(lo, hi, load<f64>(weights + (<usize>j << 3)));
      else addUnit(lo, hi);
    }
    store<f64>(counts + (<usize>d << 3), <f64>endDocument(out + <usize>d * stride, false));
  }
}

// One fingerprint from precomputed feature hashes (1 or 2 u64 each, low word first) and optional f64 weights,
// given in chunks: beginHashes, then addHashes per chunk in feature order, then endHashes. When endHashes returns
// 1, the caller passes the same chunks again through addHashes and calls endHashes once more (weighted-tables.ts).
// @ts-ignore: decorator
@inline const HASHES_REDUCER: i32 = 0;
// @ts-ignore: decorator
@inline const HASHES_TABLES: i32 = 1;
// @ts-ignore: decorator
@inline const HASHES_RESUMMED: i32 = 2;
let hashesMode: i32 = HASHES_REDUCER;
let hashesBits: i32 = 64;

/** Starts a document of `features` hashes (f64: documents may pass 2^31 features). */
export function beginHashes(bits: i32, weighted: bool, features: f64): void {
  hashesBits = bits;
  hashesMode = weighted && features >= WEIGHTED_TABLE_MIN ? HASHES_TABLES : HASHES_REDUCER;
  if (hashesMode == HASHES_TABLES) beginTables(bits);
  else beginDocument(bits, weighted);
}

/** Adds `n` hashes and, for a weighted document, their weights (`weights` is 0 for unit weights). */
export function addHashes(hashes: usize, n: i32, weights: usize): void {
  if (hashesMode == HASHES_TABLES) addTables(hashes, n, weights);
  else if (hashesMode == HASHES_RESUMMED) addResummed(hashes, n, weights);
  else if (hashesBits == 128) {
    // A loop per width and, at 64 bits, per kind of weight: no per-hash test of the width, 1.1-2x in cache.
    for (let j = 0; j < n; j++) {
      let p = hashes + (<usize>j << 4);
      if (weights == 0) addUnit(load<u64>(p), load<u64>(p, 8));
      else addWeighted(load<u64>(p), load<u64>(p, 8), load<f64>(weights + (<usize>j << 3)));
    }
  } else if (weights == 0) {
    for (let j = 0; j < n; j++) addUnit(load<u64>(hashes + (<usize>j << 3)), 0);
  } else {
    for (let j = 0; j < n; j++) addWeighted(load<u64>(hashes + (<usize>j << 3)), 0, load<f64>(weights + (<usize>j << 3)));
  }
}

/** Writes the fingerprint to `out` and returns 0, or returns 1: pass the chunks again, then call this again. */
export function endHashes(out: usize): i32 {
  if (hashesMode == HASHES_RESUMMED) {
    endResummed(out);
    return 0;
  }
  if (hashesMode == HASHES_REDUCER) {
    endDocument(out, false);
    return 0;
  }
  let next = endTables(out);
  if (next == TABLES_DONE) return 0;
  if (next == TABLES_RESUM) hashesMode = HASHES_RESUMMED;
  else {
    hashesMode = HASHES_REDUCER;
    beginDocument(hashesBits, true);
  }
  return 1;
}

/** The spec's hash of each of `n` features (offsets as in fingerprintFeatures), for users who store hashes. */
export function hashFeatures(bytes: usize, featOffsets: usize, n: i32, seed: u64, out: usize, spec: i32): void {
  for (let j = 0; j < n; j++) {
    let a = load<u32>(featOffsets + (<usize>j << 2));
    let b = load<u32>(featOffsets + (<usize>j << 2), 4);
    store<u64>(out + (<usize>j << 3), hashOf(bytes + <usize>a, <usize>(b - a), seed, spec));
  }
}
