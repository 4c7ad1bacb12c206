// Moves batches across the JS/WASM boundary: strings and bytes into linear memory with one copy each
// (TextEncoder.encodeInto, or set), offsets as u32 arrays, and one kernel call per batch.
import { Region, type Heap } from './heap.js';
import type { Runtime } from './wasm.js';

const encoder = new TextEncoder();

/** Per-runtime reusable regions: memory grows to the largest batch seen, then stays. */
export interface Regions {
  readonly text: Region; // document or feature bytes
  readonly work: Region; // offsets, outputs, weights
  readonly scratch: Region; // tokenizer scratch
}

const regionsByHeap = new WeakMap<Heap, Regions>();

export function regions(rt: Runtime): Regions {
  let r = regionsByHeap.get(rt.heap);
  if (!r) {
    r = { text: new Region(rt.heap), work: new Region(rt.heap), scratch: new Region(rt.heap) };
    regionsByHeap.set(rt.heap, r);
  }
  return r;
}

/** Texts laid out back to back as UTF-8 in the text region: where, each one's byte offset (n + 1), the longest. */
export interface EncodedTexts {
  ptr: number;
  offsets: Uint32Array;
  longest: number;
}

/**
 * Texts already back to back as UTF-8 (a pool worker's packed chunk, pool-texts.ts) into the text region with
 * one copy: document i spans bytes[offsets[i]..offsets[i + 1]), and offsets[0] is 0.
 */
export function copyEncodedTexts(heap: Heap, region: Region, bytes: Uint8Array, offsets: Uint32Array): EncodedTexts {
  const ptr = region.reserve(bytes.length + 16);
  heap.u8.set(bytes, ptr);
  let longest = 0;
  for (let i = 1; i < offsets.length; i++) longest = Math.max(longest, offsets[i]! - offsets[i - 1]!);
  return { ptr, offsets, longest };
}

/**
 * Average string length below which a batch is joined and encoded at once. Node 20, 8,000 ASCII strings, best of
 * 30: join and one encodeInto cost 16 / 71 / 127 / 239 ns per string of 8 / 40 / 100 / 250 characters, one
 * encodeInto per string 96 / 142 / 172 / 118 ns (the join copies every character; a call costs about 100 ns).
 */
const JOIN_BELOW = 96;

/**
 * Writes each text back to back as UTF-8 into the text region. Returns the region pointer, the byte offset of
 * each document (length n + 1) and the longest document's byte length.
 */
export function encodeTexts(heap: Heap, region: Region, texts: ReadonlyArray<string | Uint8Array>): EncodedTexts {
  const offsets = new Uint32Array(texts.length + 1);
  let remaining = 0; // lengths of the texts not yet written: each needs at least that many bytes
  let allStrings = true;
  for (const t of texts) {
    remaining += t.length;
    if (typeof t !== 'string') allStrings = false;
  }
  let cap = remaining + 16;
  let ptr = region.reserve(cap);
  if (allStrings && texts.length > 1 && remaining < JOIN_BELOW * texts.length) {
    // Many short strings: one encodeInto of their concatenation. When every byte written is one character
    // (ASCII), byte offsets are character offsets; otherwise fall through and encode one by one. Longer strings
    // go one by one at once: the per-call cost is small beside theirs, and a failed attempt would cost a copy.
    const joined = (texts as readonly string[]).join('');
    const { read, written } = encoder.encodeInto(joined, heap.u8.subarray(ptr, ptr + cap));
    if (read === joined.length && written === read) {
      let at = 0;
      let longest = 0;
      for (let i = 0; i < texts.length; i++) {
        const len = texts[i]!.length;
        at += len;
        offsets[i + 1] = at;
        if (len > longest) longest = len;
      }
      return { ptr, offsets, longest };
    }
  }
  let at = 0;
  let longest = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    const start = at;
    remaining -= t.length;
    if (typeof t === 'string') {
      let rest = t;
      for (;;) {
        const { read, written } = encoder.encodeInto(rest, heap.u8.subarray(ptr + at, ptr + cap));
        at += written;
        if (read === rest.length) break;
        rest = rest.slice(read);
        // Each UTF-16 unit left becomes at most 3 bytes.
        cap = at + rest.length * 3 + remaining + 16;
        ptr = region.reserve(cap, at);
      }
    } else {
      if (at + t.length > cap) {
        cap = at + t.length + remaining + 16;
        ptr = region.reserve(cap, at);
      }
      heap.u8.set(t, ptr + at);
      at += t.length;
    }
    if (at - start > longest) longest = at - start;
    offsets[i + 1] = at;
  }
  return { ptr, offsets, longest };
}

/** Writes each string as UTF-16 code units (the Java preset hashes code units). */
export function encodeUtf16(
  heap: Heap,
  region: Region,
  strings: readonly string[],
): { ptr: number; offsets: Uint32Array } {
  let units = 0;
  for (const s of strings) units += s.length;
  const ptr = region.reserve(units * 2 + 16);
  const u16 = heap.u16;
  const offsets = new Uint32Array(strings.length + 1);
  let at = ptr >>> 1;
  const base = at;
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i]!;
    for (let j = 0; j < s.length; j++) u16[at + j] = s.charCodeAt(j);
    at += s.length;
    offsets[i + 1] = at - base;
  }
  return { ptr, offsets };
}

/** Writes strings back to back as UTF-8; ASCII is copied by a plain loop, the rest by encodeInto. */
export function encodeStrings(
  heap: Heap,
  region: Region,
  strings: readonly string[],
): { ptr: number; offsets: Uint32Array } {
  let units = 0;
  for (const s of strings) units += s.length;
  const cap = units * 3 + 16;
  const ptr = region.reserve(cap);
  const u8 = heap.u8;
  const offsets = new Uint32Array(strings.length + 1);
  let at = ptr;
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i]!;
    let j = 0;
    for (; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c >= 0x80) break;
      u8[at + j] = c;
    }
    at += j;
    if (j < s.length) at += encoder.encodeInto(j === 0 ? s : s.slice(j), u8.subarray(at, ptr + cap)).written;
    offsets[i + 1] = at - ptr;
  }
  return { ptr, offsets };
}

/** Rounds a byte count up to the heap's 16-byte alignment. */
export function align16(n: number): number {
  return Math.ceil(n / 16) * 16;
}

/** A document given as features: its strings, and weights when any feature is not weight 1. */
export interface FeatureList {
  strings: readonly string[];
  weights: readonly number[] | null;
}

/**
 * The features of a batch of documents as one list, with document d owning features
 * docOffsets[d]..docOffsets[d+1] (the layout of the feature kernels), and whether any document is weighted.
 */
export function flattenFeatures(docs: readonly FeatureList[]): {
  strings: string[];
  docOffsets: Uint32Array;
  weighted: boolean;
} {
  const docOffsets = new Uint32Array(docs.length + 1);
  let total = 0;
  let weighted = false;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    total += d.strings.length;
    docOffsets[i + 1] = total;
    if (d.weights) weighted = true;
  }
  const strings: string[] = new Array(total);
  let k = 0;
  for (const d of docs) for (const s of d.strings) strings[k++] = s;
  return { strings, docOffsets, weighted };
}

/**
 * Splits positions 0..sizes.length-1 into consecutive runs of at most `limit` bytes (a larger item goes alone).
 * `limit` may be a function of the bytes not yet in a run (`left`, starting from their sum): asked again after
 * each run, it lets runs shrink as the end nears.
 */
export function chunks(
  sizes: ArrayLike<number>,
  limit: number | ((left: number) => number),
): Array<[start: number, end: number]> {
  const limitFor = typeof limit === 'number' ? () => limit : limit;
  let left = 0;
  if (typeof limit !== 'number') for (let i = 0; i < sizes.length; i++) left += sizes[i]!;
  let max = limitFor(left);
  const runs: Array<[number, number]> = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i > start && bytes + sizes[i]! > max) {
      runs.push([start, i]);
      left -= bytes;
      max = limitFor(left);
      start = i;
      bytes = 0;
    }
    bytes += sizes[i]!;
  }
  if (start < sizes.length) runs.push([start, sizes.length]);
  return runs;
}
