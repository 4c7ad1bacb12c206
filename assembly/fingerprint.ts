// Batch entry points that turn documents into fingerprints: tokenize, hash each feature, reduce.
// Every entry takes raw pointers into linear memory laid out by src/fingerprint/presets/default.ts (texts and
// feature lists) and src/fingerprint/fingerprint.ts (hashes); nothing here allocates.
import { xxh3, SEED_HIGH } from './xxh3';
import { MODE_NGRAMS, MODE_WHITESPACE } from '../src/fingerprint/modes.shared';
import { beginDocument, addUnit, addWeighted, endDocument } from './reducer';
import {
  beginTokens, endTokens, whitespaceTokens, wordTokens, normalizeForNgrams, ngramTokens,
} from './tokenize';

// @ts-ignore: decorator
@inline const SEED_LOW: u64 = 0;

/**
 * Fingerprints `count` documents stored back to back at `text` (UTF-8), document i spanning
 * offsets[i]..offsets[i+1] (u32). `scratch` needs 2 * (longest document) + 16 bytes for word modes.
 * Writes fingerprints to `out` (1 or 2 u64 per document) and feature counts to `counts` (f64).
 */
export function fingerprintTexts(
  text: usize, offsets: usize, count: i32, mode: i32, width: i32, bits: i32,
  scratch: usize, out: usize, counts: usize
): void {
  let stride: usize = bits == 128 ? 16 : 8;
  for (let d = 0; d < count; d++) {
    let p = text + <usize>load<u32>(offsets + (<usize>d << 2));
    let end = text + <usize>load<u32>(offsets + (<usize>d << 2), 4);
    beginDocument(bits, false);
    beginTokens(bits, mode, width);
    if (mode == MODE_WHITESPACE) whitespaceTokens(p, end);
    else if (mode == MODE_NGRAMS) ngramTokens(scratch, normalizeForNgrams(p, end, scratch));
    else wordTokens(p, end, scratch);
    endTokens();
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
      let lo = xxh3(p, len, SEED_LOW);
      let hi = wideHash ? xxh3(p, len, SEED_HIGH) : 0;
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

/** XXH3-64 of each of `n` features (offsets as in fingerprintFeatures), for tests and for users who store hashes. */
export function hashFeatures(bytes: usize, featOffsets: usize, n: i32, seed: u64, out: usize): void {
  for (let j = 0; j < n; j++) {
    let a = load<u32>(featOffsets + (<usize>j << 2));
    let b = load<u32>(featOffsets + (<usize>j << 2), 4);
    store<u64>(out + (<usize>j << 3), xxh3(bytes + <usize>a, <usize>(b - a), seed));
  }
}
