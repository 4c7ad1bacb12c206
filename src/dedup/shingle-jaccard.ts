// Verification of SimHash candidate pairs by the similarity SimHash only estimates: the Jaccard similarity of the
// documents' word-shingle sets, computed exactly (sorted shingle hashes) or estimated from a fixed-size MinHash
// sketch kept beside each fingerprint. The evaluation's ground truth uses the same shingles (see src/eval/).
import { show } from '../errors.js';
import { align16, encodeTexts, regions } from '../runtime/marshal.js';
import { wasm } from '../runtime/wasm.js';
import { VERIFY_WINDOW_BYTES, shingleSets } from './shingle-sets.js';

interface WordKernels {
  documentWords(
    text: number,
    offsets: number,
    count: number,
    scratch: number,
    shingles: number,
    out: number,
    ends: number,
  ): void;
}

const decoder = new TextDecoder();

/**
 * The words of each text, case-folded, from the fingerprint kernel's own word tokenizer (assembly/tokenize.ts):
 * a word is a run of letters, numbers and marks; each character of a script written without spaces is a word of its
 * own. In windows of about VERIFY_WINDOW_BYTES, one call each.
 */
export function wordsOf(texts: readonly (string | Uint8Array)[]): string[][] {
  const rt = wasm();
  const out: string[][] = [];
  let first = 0;
  while (first < texts.length) {
    let last = first;
    let bytes = 0;
    do bytes += texts[last++]!.length;
    while (last < texts.length && bytes + texts[last]!.length <= VERIFY_WINDOW_BYTES);
    const { heap } = rt;
    const r = regions(rt);
    const count = last - first;
    const { ptr, offsets, longest } = encodeTexts(heap, r.text, texts.slice(first, last));
    const scratch = r.scratch.reserve(2 * longest + 64);
    const offsetBytes = align16((count + 1) * 4);
    const wordBytes = align16(3 * offsets[count]! + 16);
    const work = r.work.reserve(2 * offsetBytes + wordBytes + (longest + 2) * 8);
    const ends = work + offsetBytes;
    const words = ends + offsetBytes;
    const shingles = words + wordBytes;
    heap.u32.set(offsets, work >>> 2);
    (rt.kernels as unknown as WordKernels).documentWords(ptr, work, count, scratch, shingles, words, ends);
    const u32 = heap.u32;
    let at = 0;
    for (let d = 0; d < count; d++) {
      const end = u32[(ends >>> 2) + d]!;
      // Words end with a space each: one decode per document, then split.
      out.push(end === at ? [] : decoder.decode(heap.u8.subarray(words + at, words + end - 1)).split(' '));
      at = end;
    }
    first = last;
  }
  return out;
}

/** The words of `text`, case-folded (wordsOf for one text). */
export function words(text: string | Uint8Array): string[] {
  return wordsOf([text])[0]!;
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
export function shingles(text: string | Uint8Array, width = 3): Set<string> {
  if (typeof text !== 'string' && !(text instanceof Uint8Array))
    throw new TypeError(`text must be a string or a Uint8Array, got ${show(text)}`);
  return shinglesOfWords(words(text), checkWidth(width));
}

/** The distinct shingles of a word list (shingles, once the words are known). */
export function shinglesOfWords(w: readonly string[], width: number): Set<string> {
  const out = new Set<string>();
  if (w.length === 0) return out;
  if (w.length < width) {
    out.add(w.join(' '));
    return out;
  }
  for (let i = 0; i + width <= w.length; i++) out.add(w.slice(i, i + width).join(' '));
  return out;
}

/** The sorted, distinct XXH3 hashes of a text's word shingles: the exact verifier's per-document set. */
export function shingleHashes(text: string | Uint8Array, width = 3): BigUint64Array {
  if (typeof text !== 'string' && !(text instanceof Uint8Array))
    throw new TypeError(`text must be a string or a Uint8Array, got ${show(text)}`);
  return shingleSets([text], checkWidth(width))[0]!;
}

/** Jaccard similarity of two sorted distinct hash lists; two empty lists have similarity 0 (no evidence). */
export function jaccardSorted<T extends number | bigint>(a: ArrayLike<T>, b: ArrayLike<T>): number {
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
export function minhashSketch(hashes: BigUint64Array, size = 128): Uint32Array {
  if (!Number.isInteger(size) || size < 1 || size > 4096)
    throw new RangeError(`size must be an integer from 1 to 4096, got ${show(size)}`);
  const out = new Uint32Array(size).fill(0xffffffff);
  const halves = new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2); // little-endian words
  for (let j = 0; j < hashes.length; j++) {
    // Fold the 64-bit hash to 32 bits once; the per-position mixes give the independent permutations.
    const x = halves[2 * j]! ^ Math.imul(halves[2 * j + 1]!, 0x27d4eb2d);
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

/** Options of createVerifier; bad values throw TypeError or RangeError naming them. */
export interface VerifierOptions {
  /** Words per shingle (default 3). */
  width?: number;
  /** 'exact' keeps each document's sorted shingle hashes; 'sketch' keeps a MinHash sketch (default 'exact'). */
  method?: 'exact' | 'sketch';
  /** Values per sketch for method 'sketch', 1 to 4096 (default 128: 512 bytes per document). */
  sketchSize?: number;
}

/** Shingle-Jaccard similarity of any two documents of a fixed list (createVerifier). */
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
  const hashes = shingleSets(texts, width);
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
