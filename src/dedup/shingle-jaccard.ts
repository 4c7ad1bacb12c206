// Verification of SimHash candidate pairs by the similarity SimHash only estimates: the Jaccard similarity of the
// documents' word-shingle sets, computed exactly (sorted shingle hashes) or estimated from a fixed-size MinHash
// sketch kept beside each fingerprint. The evaluation's ground truth uses the same shingles (see src/eval/).
import { checkAttached, show } from '../errors.js';
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

/** The sorted, distinct 64-bit hashes of a text's word shingles (dedup's verifier keeps the top 32 bits of each). */
export function shingleHashes(text: string | Uint8Array, width = 3): BigUint64Array {
  if (typeof text !== 'string' && !(text instanceof Uint8Array))
    throw new TypeError(`text must be a string or a Uint8Array, got ${show(text)}`);
  return shingleSets([text], checkWidth(width))[0]!;
}

/**
 * The kind of item ('number' or 'bigint', null when empty) of a list of sorted distinct hashes: an array or a typed
 * array, of one kind, ascending with no repeats. Anything else gave a similarity silently (a string is an
 * array-like of characters), so it throws, naming `name` and the offending item.
 */
function checkSortedList(list: unknown, name: string): 'number' | 'bigint' | null {
  const typed = ArrayBuffer.isView(list) && !(list instanceof DataView);
  if (!Array.isArray(list) && !typed) {
    throw new TypeError(
      `${name} must be an array or typed array of sorted distinct numbers or bigints, got ${show(list)}`,
    );
  }
  if (typed) checkAttached(list, name);
  const items = list as ArrayLike<unknown>;
  if (items.length === 0) return null;
  const kind = typeof items[0];
  if (kind !== 'number' && kind !== 'bigint')
    throw new TypeError(`${name}[0] must be a number or a bigint, got ${show(items[0])}`);
  for (let i = 1; i < items.length; i++) {
    const x = items[i];
    if (typeof x !== kind) throw new TypeError(`${name}[${i}] must be a ${kind}, as ${name}[0] is, got ${show(x)}`);
    if (!((x as number) > (items[i - 1] as number))) {
      throw new RangeError(
        `${name}[${i}] ${show(x)} is not above ${name}[${i - 1}] ${show(items[i - 1])}: ${name} must be sorted ` +
          'ascending, with no repeats',
      );
    }
  }
  return kind;
}

/** Jaccard similarity of two sorted distinct hash lists; two empty lists have similarity 0 (no evidence). */
export function jaccardSorted<T extends number | bigint>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const kindA = checkSortedList(a, 'a');
  const kindB = checkSortedList(b, 'b');
  if (kindA !== null && kindB !== null && kindA !== kindB)
    throw new TypeError(`a holds ${kindA}s and b holds ${kindB}s, which never compare equal: give both one kind`);
  return jaccardOfSorted(a, b);
}

/** jaccardSorted of lists known to be sorted, distinct and of one kind (the library's own sets). */
function jaccardOfSorted<T extends number | bigint>(a: ArrayLike<T>, b: ArrayLike<T>): number {
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

function checkSketchSize(size: unknown, name: string): number {
  if (typeof size !== 'number') throw new TypeError(`${name} must be a number, got ${show(size)}`);
  if (!Number.isInteger(size) || size < 1 || size > 4096)
    throw new RangeError(`${name} must be an integer from 1 to 4096, got ${show(size)}`);
  return size;
}

/** A MinHash sketch of `size` 32-bit values from a document's shingle hashes; an empty document gives all 0xffffffff. */
export function minhashSketch(hashes: BigUint64Array, size = 128): Uint32Array {
  // Its words are read as 32-bit halves: any other array-like (a string, numbers) read as empty or as garbage.
  if (!(hashes instanceof BigUint64Array)) throw new TypeError(`hashes must be a BigUint64Array, got ${show(hashes)}`);
  checkAttached(hashes, 'hashes');
  checkSketchSize(size, 'size');
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

function checkSketch(sketch: unknown, name: string): void {
  if (!(sketch instanceof Uint32Array))
    throw new TypeError(`${name} must be a Uint32Array (a minhashSketch), got ${show(sketch)}`);
  checkAttached(sketch, name);
}

/** The Jaccard estimate of two sketches of the same size: the fraction of positions where they agree. */
export function sketchJaccard(a: Uint32Array, b: Uint32Array): number {
  checkSketch(a, 'a');
  checkSketch(b, 'b');
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
  /**
   * Values per sketch, 1 to 4096 (default 128: 512 bytes per document), for method 'sketch' only: with 'exact' it
   * is a RangeError.
   */
  sketchSize?: number;
}

/** Shingle-Jaccard similarity of any two documents of a fixed list (createVerifier). */
export interface Verifier {
  /** Shingle Jaccard of documents i and j (exact, or the sketch's estimate). */
  similarity(i: number, j: number): number;
  /** The number of documents. */
  readonly size: number;
}

const VERIFIER_OPTIONS = new Set(['width', 'method', 'sketchSize']);

/** Precomputes the per-document verification data for `texts`; `similarity(i, j)` then compares two of them. */
export function createVerifier(texts: readonly string[], options: VerifierOptions = {}): Verifier {
  if (!Array.isArray(texts)) throw new TypeError(`texts must be an array of strings, got ${show(texts)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`options must be an object, got ${show(options)}`);
  for (const key of Object.keys(options))
    if (!VERIFIER_OPTIONS.has(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  const width = checkWidth(options.width ?? 3);
  const method = options.method ?? 'exact';
  if (method !== 'exact' && method !== 'sketch')
    throw new (typeof method === 'string' ? RangeError : TypeError)(
      `method must be 'exact' or 'sketch', got ${show(method)}`,
    );
  // A size given to the exact method would be dropped unread, as if the sketch it asks for were in use.
  if (method === 'exact' && options.sketchSize !== undefined)
    throw new RangeError(
      `sketchSize ${show(options.sketchSize)} is for method 'sketch' only, but method is 'exact': drop one of them`,
    );
  const sketchSize = checkSketchSize(options.sketchSize ?? 128, 'sketchSize');
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
      return jaccardOfSorted(hashes[i]!, hashes[j]!);
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
