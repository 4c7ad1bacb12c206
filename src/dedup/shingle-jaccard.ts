// Verification of SimHash candidate pairs by the similarity SimHash only estimates: the Jaccard similarity of the
// documents' word-shingle sets, computed exactly (sorted shingle hashes) or estimated from a fixed-size MinHash
// sketch kept beside each fingerprint. The evaluation's ground truth uses the same shingles (see src/eval/).
import { show } from '../errors.js';

// A word is a run of letters, numbers and marks; each character of a script written without spaces is a word of
// its own. This mirrors the WebAssembly 'words' tokenizer (scripts/gen-unicode.mjs), with toLowerCase for folding.
const STANDALONE = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}`;
const WORD = String.raw`\p{L}\p{N}\p{M}`;
const WORDS = new RegExp(`(?=[${WORD}])[${STANDALONE}]|(?:(?![${STANDALONE}])[${WORD}])+`, 'gu');

/** The words of `text`, lowercased. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORDS)) out.push(m[0]);
  return out;
}

function checkWidth(width: unknown): number {
  if (typeof width !== 'number') throw new TypeError(`width must be a number, got ${show(width)}`);
  if (!Number.isInteger(width) || width < 1 || width > 64)
    throw new RangeError(`width must be an integer from 1 to 64, got ${width}`);
  return width;
}

/**
 * The distinct word shingles of `text` (`width` consecutive words joined by one space). A text with fewer words
 * than `width` has one shingle, all its words (as the 'shingles' tokenizer does); a text without words has none.
 */
export function shingles(text: string, width = 3): Set<string> {
  if (typeof text !== 'string') throw new TypeError(`text must be a string, got ${show(text)}`);
  checkWidth(width);
  const w = words(text);
  const out = new Set<string>();
  if (w.length === 0) return out;
  if (w.length < width) {
    out.add(w.join(' '));
    return out;
  }
  for (let i = 0; i + width <= w.length; i++) out.add(w.slice(i, i + width).join(' '));
  return out;
}

/**
 * A 53-bit hash of a string (two 32-bit multiply-xorshift lanes over its UTF-16 code units). With a million distinct
 * shingles the chance that any two collide is about 1e-4, so Jaccard on these hashes is exact in practice.
 */
export function hash53(s: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The sorted, distinct 53-bit hashes of a text's shingles: the exact verifier's per-document data. */
export function shingleHashes(text: string, width = 3): Float64Array {
  if (typeof text !== 'string') throw new TypeError(`text must be a string, got ${show(text)}`);
  checkWidth(width);
  // Each word is hashed once into two 32-bit lanes; a shingle's hash chains the lanes of its words in order, so
  // no shingle string is built (about 2× faster than hashing joined strings; same sets up to 53-bit collisions).
  const w = words(text);
  const lo = new Int32Array(w.length);
  const hi = new Int32Array(w.length);
  for (let i = 0; i < w.length; i++) {
    const s = w[i]!;
    let h1 = 0xdeadbeef;
    let h2 = 0x41c6ce57;
    for (let j = 0; j < s.length; j++) {
      const c = s.charCodeAt(j);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    lo[i] = h1;
    hi[i] = h2;
  }
  const span = Math.min(width, w.length);
  const count = w.length === 0 ? 0 : w.length - span + 1;
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let h1 = 0x2545f491;
    let h2 = 0x9e3779b9;
    for (let j = i; j < i + span; j++) {
      h1 = Math.imul(h1 ^ lo[j]!, 0x85ebca6b);
      h1 = (h1 << 13) | (h1 >>> 19);
      h2 = Math.imul(h2 ^ hi[j]!, 0xc2b2ae35);
      h2 = (h2 << 17) | (h2 >>> 15);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    out[i] = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  }
  out.sort();
  // Repeated shingles (and collisions) count once: drop repeats.
  let n = 0;
  for (let j = 0; j < out.length; j++) if (j === 0 || out[j] !== out[n - 1]) out[n++] = out[j]!;
  return n === out.length ? out : out.slice(0, n);
}

/** Jaccard similarity of two sorted distinct hash lists; two empty lists have similarity 0 (no evidence). */
export function jaccardSorted(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      common++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return common / (a.length + b.length - common);
}

// MinHash: value i of a sketch is the minimum over the document's shingles of an independent 32-bit mix of the
// shingle hash with seed i. Two sketches agree at each position with probability equal to the Jaccard similarity.
function mix32(x: number, seed: number): number {
  let h = (x ^ seed) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const SEEDS: number[] = [];
function seed(i: number): number {
  while (SEEDS.length <= i) SEEDS.push(mix32(SEEDS.length * 0x9e3779b9, 0x5bd1e995));
  return SEEDS[i]!;
}

/** A MinHash sketch of `size` 32-bit values from a document's shingle hashes; an empty document gives all 0xffffffff. */
export function minhashSketch(hashes: Float64Array, size = 128): Uint32Array {
  if (!Number.isInteger(size) || size < 1 || size > 4096)
    throw new RangeError(`size must be an integer from 1 to 4096, got ${show(size)}`);
  const out = new Uint32Array(size).fill(0xffffffff);
  for (let j = 0; j < hashes.length; j++) {
    // Fold the 53-bit hash to 32 bits once; the per-position mixes give the independent permutations.
    const h = hashes[j]!;
    const x = (h >>> 0) ^ Math.imul(Math.floor(h / 4294967296), 0x27d4eb2d);
    for (let i = 0; i < size; i++) {
      const v = mix32(x, seed(i));
      if (v < out[i]!) out[i] = v;
    }
  }
  return out;
}

/** The Jaccard estimate of two sketches of the same size: the fraction of positions where they agree. */
export function sketchJaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length !== b.length) throw new RangeError(`sketches must have the same size, got ${a.length} and ${b.length}`);
  let same = 0;
  let empty = true;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) same++;
    if (a[i] !== 0xffffffff || b[i] !== 0xffffffff) empty = false;
  }
  return empty ? 0 : same / a.length;
}

export interface VerifierOptions {
  /** Words per shingle (default 3). */
  width?: number;
  /** 'exact' keeps each document's sorted shingle hashes; 'sketch' keeps a MinHash sketch (default 'exact'). */
  method?: 'exact' | 'sketch';
  /** Values per sketch for method 'sketch' (default 128: 512 bytes per document). */
  sketchSize?: number;
}

export interface Verifier {
  /** Shingle Jaccard of documents i and j (exact, or the sketch's estimate). */
  similarity(i: number, j: number): number;
  /** The number of documents. */
  readonly size: number;
}

/** Precomputes the per-document verification data for `texts`; `similarity(i, j)` then compares two of them. */
export function createVerifier(texts: readonly string[], options: VerifierOptions = {}): Verifier {
  if (!Array.isArray(texts)) throw new TypeError(`texts must be an array of strings, got ${show(texts)}`);
  const width = checkWidth(options.width ?? 3);
  const method = options.method ?? 'exact';
  if (method !== 'exact' && method !== 'sketch')
    throw new RangeError(`method must be 'exact' or 'sketch', got ${show(method)}`);
  const sketchSize = options.sketchSize ?? 128;
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw new TypeError(`texts[${i}] must be a string, got ${show(t)}`);
  });
  const hashes = texts.map((t) => shingleHashes(t, width));
  const check = (i: number, j: number): void => {
    for (const x of [i, j]) {
      if (!Number.isInteger(x) || x < 0 || x >= texts.length)
        throw new RangeError(`document index must be 0..${texts.length - 1}, got ${show(x)}`);
    }
  };
  if (method === 'exact') {
    const similarity = (i: number, j: number) => {
      check(i, j);
      return jaccardSorted(hashes[i]!, hashes[j]!);
    };
    return { size: texts.length, similarity };
  }
  const sketches = hashes.map((h) => minhashSketch(h, sketchSize));
  const similarity = (i: number, j: number) => {
    check(i, j);
    return sketchJaccard(sketches[i]!, sketches[j]!);
  };
  return { size: texts.length, similarity };
}
