// Exact copies, found before the join so that dedup's work grows with the number of distinct texts: a text whose
// length and sampled code units no other text shares has no copy; the others get a 128-bit content hash in
// WebAssembly (XXH3-64, seeds 0 and 1, over its UTF-8 bytes; assembly/exact-copies.ts), groups of equal hashes
// through a hash table there, each membership confirmed here by comparing the texts.
import { align16, chunks, encodeTexts, regions } from '../runtime/marshal.js';
import { wasm } from '../runtime/wasm.js';

interface ExactKernels {
  contentHashes(text: number, offsets: number, count: number, out: number): void;
  firstOfEqual(keys: number, n: number, words: number, table: number, slots: number, first: number): void;
}

/** Text bytes (about: string lengths) hashed per call. */
const HASH_WINDOW_BYTES = 16 << 20;

/** Two u64 per text: its content hash (XXH3-64 of its UTF-8 bytes with seed 0, then seed 1). */
export function contentHashes(texts: readonly (string | Uint8Array)[]): BigUint64Array {
  const rt = wasm();
  const kernels = rt.kernels as unknown as ExactKernels;
  const out = new BigUint64Array(texts.length * 2);
  for (const [first, last] of chunks(
    texts.map((t) => t.length),
    HASH_WINDOW_BYTES,
  )) {
    const r = regions(rt);
    const { ptr, offsets } = encodeTexts(rt.heap, r.text, texts.slice(first, last));
    const count = last - first;
    const work = r.work.reserve(align16((count + 1) * 4) + count * 16);
    const hashes = work + align16((count + 1) * 4);
    rt.heap.u32.set(offsets, work >>> 2);
    kernels.contentHashes(ptr, work, count, hashes);
    out.set(rt.heap.u64.subarray(hashes >>> 3, (hashes >>> 3) + count * 2), first * 2);
  }
  return out;
}

/**
 * For each of the keys (`words` u64 each: 1 or 2), the index of the first key equal to it; O(n) through a hash
 * table in WebAssembly.
 */
export function firstOfEqual(keys: BigUint64Array, words: 1 | 2): Uint32Array {
  const n = keys.length / words;
  const first = new Uint32Array(n);
  if (n === 0) return first;
  const rt = wasm();
  let slots = 1024;
  while (slots < 2 * n) slots *= 2;
  const keyBytes = align16(keys.byteLength);
  const tableBytes = slots * 4;
  const work = regions(rt).work.reserve(keyBytes + tableBytes + n * 4);
  const table = work + keyBytes;
  const out = table + tableBytes;
  rt.heap.u64.set(keys, work >>> 3);
  (rt.kernels as unknown as ExactKernels).firstOfEqual(work, n, words, table, slots, out);
  first.set(rt.heap.u32.subarray(out >>> 2, (out >>> 2) + n));
  return first;
}

const decoder = new TextDecoder();

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Whether two texts are the same document: two strings equal; two byte arrays equal; a string and bytes when the
 * bytes decode to the string (so a lone surrogate, which UTF-8 cannot hold, never equals U+FFFD).
 */
export function sameText(x: string | Uint8Array, y: string | Uint8Array): boolean {
  if (x === y) return true;
  if (typeof x === 'string' && typeof y === 'string') return false;
  if (typeof x !== 'string' && typeof y !== 'string') return sameBytes(x, y);
  const s = (typeof x === 'string' ? x : y) as string;
  const b = (typeof x === 'string' ? y : x) as Uint8Array;
  return b.length >= s.length && b.length <= 3 * s.length && decoder.decode(b) === s;
}

/**
 * For each text, the index of the first text that is the same document (itself if none before it). Texts are first
 * keyed cheaply (length and sampled code units); a text equal to the first text of its key is its copy, with no
 * hash at all (the duplicate-heavy case: 10^6 empty strings, a mirrored page). Only texts that share a key but
 * differ from its first text are content-hashed, and equal content hashes are confirmed with sameText; texts with
 * one hash that are not the same (a string with a lone surrogate and the bytes of its U+FFFD, or a 128-bit
 * collision) are told apart by comparing with each such first text.
 */
export function exactCopies(texts: readonly (string | Uint8Array)[]): Uint32Array {
  const n = texts.length;
  const firstOfKey = cheapKeyFirsts(texts);
  if (firstOfKey === null) return copiesAmong(texts);
  const first = new Uint32Array(n);
  // Texts equal to their key's first text are its copies; any earlier copy would share the key and come first.
  const rest: number[] = [];
  for (let i = 0; i < n; i++) {
    const f = firstOfKey[i]!;
    first[i] = i;
    if (f === i) continue;
    if (sameText(texts[i]!, texts[f]!)) first[i] = f;
    else rest.push(i); // not a copy of f, nor of anything equal to f: may be a copy of another such text
  }
  if (rest.length === 0) return first;
  const within = copiesAmong(rest.map((i) => texts[i]!));
  rest.forEach((i, q) => {
    first[i] = rest[within[q]!]!;
  });
  return first;
}

/**
 * For each text, the first text with the same cheap key (length and 16 sampled code units or bytes): only texts
 * sharing a key can be copies. Real text rarely repeats a key by chance (edited copies change their length),
 * which saves encoding and hashing every byte once more (about 0.3 s on 210 MB). Null when strings and bytes are
 * mixed: a string and its bytes are the same document, but their keys differ.
 */
function cheapKeyFirsts(texts: readonly (string | Uint8Array)[]): Uint32Array | null {
  const n = texts.length;
  const strings = typeof texts[0] === 'string';
  const keys = new BigUint64Array(n);
  const halves = new Uint32Array(keys.buffer);
  for (let i = 0; i < n; i++) {
    const t = texts[i]!;
    if ((typeof t === 'string') !== strings) return null;
    const len = t.length;
    let h = len;
    if (len > 0) {
      for (let s = 0; s < 16; s++) {
        const at = Math.floor((s * (len - 1)) / 15);
        h = Math.imul(h ^ (typeof t === 'string' ? t.charCodeAt(at) : t[at]!), 0x9e3779b1);
      }
    }
    halves[2 * i] = h;
    halves[2 * i + 1] = len;
  }
  return firstOfEqual(keys, 1);
}

/** exactCopies by content hash alone: every text is encoded and hashed. */
function copiesAmong(texts: readonly (string | Uint8Array)[]): Uint32Array {
  const first = firstOfEqual(contentHashes(texts), 2);
  const others = new Map<number, number[]>(); // by first text of a hash: the other first texts with that hash
  for (let i = 0; i < first.length; i++) {
    const f = first[i]!;
    if (f === i || sameText(texts[i]!, texts[f]!)) continue;
    let list = others.get(f);
    if (!list) others.set(f, (list = []));
    const same = list.find((j) => sameText(texts[i]!, texts[j]!));
    if (same === undefined) {
      list.push(i);
      first[i] = i;
    } else first[i] = same;
  }
  return first;
}
