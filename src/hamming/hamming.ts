// Batch Hamming search: one query against many fingerprints (distances, within k, count, nearest, histogram),
// many against many (pairs within k, self-join), and FingerprintSet, a set kept resident in WebAssembly memory.
// Arguments are validated here before anything reaches WASM; the kernels are in assembly/hamming.ts.
//
// A BigUint64Array that is not resident is streamed through WASM memory in chunks that fit in L2 (copy a chunk,
// scan it, next), so a one-shot call over 10^7 fingerprints needs a fixed 256-512 KiB, not an 80 MB copy.
// The joins need all of both arrays at once: they copy them into blocks released when the call returns.
import { Region, type Heap } from '../runtime/heap.js';
import { checkAttached, freedError, show } from '../errors.js';
import { align16 } from '../runtime/marshal.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { ScanLayout } from './scan-layout.js';
import type { Neighbors, Pairs } from '../results.js';

/** Fingerprint width for the batch functions: 64 (one u64 each) or 128 (two u64 each, low word first). */
export type HammingBits = 64 | 128;

/** Options of the batch Hamming functions. */
export interface HammingOptions {
  /**
   * Fingerprint width: 64 (default) or 128. At 128 bits each fingerprint is two words of the BigUint64Array, low
   * word first, and `query` a bigint below 2^128.
   */
  bits?: HammingBits;
}

/** The kernels of assembly/hamming.ts this file calls (test/hamming/kernels.test.ts calls them directly). */
export interface HammingKernels {
  hammingDistances64(fps: number, n: number, q: bigint, out: number): void;
  hammingDistances128(fps: number, n: number, lo: bigint, hi: bigint, out: number): void;
  hammingCount64(fps: number, n: number, q: bigint, k: number): number;
  hammingCount128(fps: number, n: number, lo: bigint, hi: bigint, k: number): number;
  hammingCollect64(
    fps: number,
    n: number,
    q: bigint,
    k: number,
    base: number,
    outIndex: number,
    outDistance: number,
    cap: number,
  ): number;
  hammingCollect128(
    fps: number,
    n: number,
    lo: bigint,
    hi: bigint,
    k: number,
    base: number,
    outIndex: number,
    outDistance: number,
    cap: number,
  ): number;
  hammingHistogram64(fps: number, n: number, q: bigint, hist: number): void;
  hammingHistogram128(fps: number, n: number, lo: bigint, hi: bigint, hist: number): void;
  hammingJoin(
    a: number,
    na: number,
    b: number,
    nb: number,
    k: number,
    wide: number,
    isSelf: number,
    state: number,
    outA: number,
    outB: number,
    outD: number,
    cap: number,
    firsts: number,
  ): number;
  hammingJoinStepPairs(): number;
  hammingJoinTile(): number;
  hammingSetBlocked(blocked: number): number;
}

const M64 = (1n << 64n) - 1n;
/** Fingerprints per streamed chunk: 256 KiB of 64-bit (512 KiB of 128-bit) stays in L2 between copy and scan. */
const STREAM_CHUNK = 32768;
/** Fingerprints per kernel call on a resident set: bounds the per-call output block (1 MiB of distances). */
const RESIDENT_CHUNK = 1 << 20;
/**
 * Fingerprints per distances call on a resident set: the 64 KiB of distances are still in L2 when they are
 * copied out (the 1 MiB of RESIDENT_CHUNK is not, after 8 MiB of fingerprints have streamed past).
 */
const DISTANCES_CHUNK = 1 << 16;
/** Indices collected per kernel call before they are copied out. */
const COLLECT_CAP = 65536;
/** Pairs per join call before they are copied out (a multiple of the kernel's step). */
const JOIN_CAP = 1 << 17;

// ---------------------------------------------------------------------------------------------------------------
// Validation

const KNOWN_OPTIONS = new Set(['bits']);

function checkOptions(options: unknown): HammingOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  }
  return options as HammingOptions;
}

function checkWidth(bits: unknown): HammingBits {
  if (bits === 64 || bits === 128) return bits;
  if (bits === 32)
    throw new RangeError(`bits must be 64 or 128, got 32 (store 32-bit fingerprints one per u64 and use 64)`);
  const error = typeof bits === 'number' ? RangeError : TypeError;
  throw new error(`bits must be 64 or 128, got ${show(bits)}`);
}

function checkArray(fps: unknown, bits: HammingBits, name: string): BigUint64Array {
  if (!(fps instanceof BigUint64Array))
    throw new TypeError(`${name} must be a BigUint64Array or a FingerprintSet, got ${show(fps)}`);
  checkAttached(fps, name);
  if (bits === 128 && fps.length % 2 !== 0) {
    throw new RangeError(`${name} holds 128-bit fingerprints (two words each) but has an odd length, ${fps.length}`);
  }
  if (fps.length / (bits / 64) > 0xffffffff)
    throw new RangeError(`${name} has more than 2^32 - 1 fingerprints (${fps.length / (bits / 64)})`);
  return fps;
}

function checkQuery(query: unknown, bits: HammingBits): bigint {
  if (typeof query !== 'bigint') throw new TypeError(`query must be a bigint, got ${show(query)}`);
  if (query < 0n || query >> BigInt(bits) !== 0n) {
    throw new RangeError(`query must be a ${bits}-bit unsigned fingerprint, got ${show(query)}`);
  }
  return query;
}

function checkK(k: unknown, bits: HammingBits): number {
  if (typeof k !== 'number') throw new TypeError(`k must be a number, got ${show(k)}`);
  if (!Number.isInteger(k) || k < 0 || k > bits)
    throw new RangeError(`k must be an integer from 0 to ${bits}, got ${show(k)}`);
  return k;
}

function checkCount(n: unknown): number {
  if (typeof n !== 'number') throw new TypeError(`n must be a number, got ${show(n)}`);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${show(n)}`);
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// Sources: fingerprints resident in WASM memory, or a BigUint64Array streamed through it

interface Source {
  readonly bits: HammingBits;
  readonly count: number;
  /** Byte address of a resident set, or -1 when `array` is streamed. */
  readonly ptr: number;
  readonly array: BigUint64Array | null;
}

/** Resolves `fps` (an array or a live set) and the width: a set carries its own, options may only repeat it. */
function source(fps: unknown, options: unknown, name = 'fps'): Source {
  const opts = checkOptions(options);
  if (fps instanceof FingerprintSet) {
    const set = fps.live();
    if (opts.bits !== undefined && checkWidth(opts.bits) !== set.bits) {
      throw new RangeError(`bits ${show(opts.bits)} does not match the FingerprintSet's ${set.bits}`);
    }
    return { bits: set.bits, count: set.count, ptr: set.address, array: null };
  }
  const bits = checkWidth(opts.bits ?? 64);
  const array = checkArray(fps, bits, name);
  return { bits, count: array.length / (bits / 64), ptr: -1, array };
}

interface HammingRegions {
  stream: Region; // the current chunk of a streamed array
  out: Region; // kernel outputs: distances, indices, histogram, pairs
  layout: ScanLayout; // the scans' memory layout, chosen per kind of scan
}
const regionsByHeap = new WeakMap<Heap, HammingRegions>();

function runtime(): { rt: Runtime; k: HammingKernels; regions: HammingRegions } {
  const rt = wasm();
  let regions = regionsByHeap.get(rt.heap);
  if (!regions) {
    const k = rt.kernels as unknown as HammingKernels;
    regions = {
      stream: new Region(rt.heap),
      out: new Region(rt.heap),
      layout: new ScanLayout((blocked) => k.hammingSetBlocked(blocked ? 1 : 0)),
    };
    regionsByHeap.set(rt.heap, regions);
  }
  return { rt, k: rt.kernels as unknown as HammingKernels, regions };
}

/**
 * Calls `scan(ptr, first, count)` on consecutive chunks of the source, in index order, until it returns false:
 * a resident set in place, a streamed array copied chunk by chunk into one reusable block.
 */
function forEachChunk(
  rt: Runtime,
  regions: HammingRegions,
  src: Source,
  // biome-ignore lint/suspicious/noConfusingVoidType: a scan returns nothing to go on, or false to stop
  scan: (ptr: number, first: number, count: number) => boolean | void,
  residentChunk = RESIDENT_CHUNK,
): void {
  const words = src.bits / 64;
  if (src.ptr >= 0) {
    for (let first = 0; first < src.count; first += residentChunk) {
      if (scan(src.ptr + first * words * 8, first, Math.min(residentChunk, src.count - first)) === false) return;
    }
    return;
  }
  const array = src.array!;
  const chunk = Math.min(STREAM_CHUNK, src.count);
  const ptr = regions.stream.reserve(chunk * words * 8);
  for (let first = 0; first < src.count; first += chunk) {
    const count = Math.min(chunk, src.count - first);
    // Re-read the view each time: `scan` may have grown memory.
    rt.heap.u64.set(array.subarray(first * words, (first + count) * words), ptr >>> 3);
    if (scan(ptr, first, count) === false) return;
  }
}

/** The scan layouts of the loaded module (tests and benchmarks force one; see scan-layout.ts). */
export function scanLayout(): ScanLayout {
  return runtime().regions.layout;
}

/**
 * Runs one whole scan of `src` in the memory layout kept for its kind (scan-layout.ts): one kind per kernel, width
 * and source, since a resident set is scanned from DRAM and a copied chunk from L2.
 */
function inLayout<T>(regions: HammingRegions, kernel: string, src: Source, scan: () => T): T {
  return regions.layout.run(`${kernel}${src.bits}${src.ptr >= 0 ? '' : ' copied'}`, src.count, scan);
}

function split(query: bigint): [lo: bigint, hi: bigint] {
  return [query & M64, query >> 64n];
}

// ---------------------------------------------------------------------------------------------------------------
// Growable results

class IndexBuffer {
  index = new Uint32Array(256);
  distance = new Uint8Array(256);
  length = 0;

  /** Appends `count` entries from WASM memory. */
  append(heap: Heap, indexPtr: number, distancePtr: number, count: number): void {
    this.ensure(this.length + count);
    this.index.set(heap.u32.subarray(indexPtr >>> 2, (indexPtr >>> 2) + count), this.length);
    this.distance.set(heap.u8.subarray(distancePtr, distancePtr + count), this.length);
    this.length += count;
  }

  ensure(capacity: number): void {
    if (capacity <= this.index.length) return;
    const size = Math.max(capacity, this.index.length * 2);
    const index = new Uint32Array(size);
    index.set(this.index.subarray(0, this.length));
    const distance = new Uint8Array(size);
    distance.set(this.distance.subarray(0, this.length));
    this.index = index;
    this.distance = distance;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// One query against many

function distancesInto(src: Source, query: bigint, out: Uint8Array): void {
  const { rt, k, regions } = runtime();
  const [lo, hi] = split(query);
  const outPtr = regions.out.reserve(Math.min(src.count, src.ptr >= 0 ? DISTANCES_CHUNK : STREAM_CHUNK) + 16);
  inLayout(regions, 'distances', src, () =>
    forEachChunk(
      rt,
      regions,
      src,
      (ptr, first, count) => {
        if (src.bits === 64) k.hammingDistances64(ptr, count, lo, outPtr);
        else k.hammingDistances128(ptr, count, lo, hi, outPtr);
        out.set(rt.heap.u8.subarray(outPtr, outPtr + count), first);
      },
      DISTANCES_CHUNK,
    ),
  );
}

function countWithin(src: Source, query: bigint, maxDistance: number): number {
  const { rt, k, regions } = runtime();
  const [lo, hi] = split(query);
  let total = 0;
  inLayout(regions, 'count', src, () =>
    forEachChunk(rt, regions, src, (ptr, _first, count) => {
      total +=
        src.bits === 64
          ? k.hammingCount64(ptr, count, lo, maxDistance)
          : k.hammingCount128(ptr, count, lo, hi, maxDistance);
    }),
  );
  return total;
}

/**
 * Feeds every (index, distance) within `bound()` to `take`, in index order, up to `cap` at a time. `bound` is
 * read before each kernel call, so `take` may tighten it (nearest does); it still sees entries the kernel found
 * under the previous bound and filters them itself.
 */
function collect(
  src: Source,
  query: bigint,
  bound: () => number,
  take: (heap: Heap, indexPtr: number, distancePtr: number, count: number) => void,
  cap = COLLECT_CAP,
): void {
  const { rt, k, regions } = runtime();
  const [lo, hi] = split(query);
  const indexPtr = regions.out.reserve(cap * 5 + 16);
  const distancePtr = indexPtr + cap * 4;
  const stride = src.bits / 8;
  inLayout(regions, 'collect', src, () =>
    forEachChunk(rt, regions, src, (ptr, first, count) => {
      let start = 0;
      while (start < count) {
        const limit = bound();
        if (limit < 0) return false;
        const n =
          src.bits === 64
            ? k.hammingCollect64(
                ptr + start * stride,
                count - start,
                lo,
                limit,
                first + start,
                indexPtr,
                distancePtr,
                cap,
              )
            : k.hammingCollect128(
                ptr + start * stride,
                count - start,
                lo,
                hi,
                limit,
                first + start,
                indexPtr,
                distancePtr,
                cap,
              );
        if (n > 0) take(rt.heap, indexPtr, distancePtr, n);
        if (n < cap) return;
        // The buffer filled up: resume after the last index written.
        start = rt.heap.u32[(indexPtr >>> 2) + n - 1]! - first + 1;
      }
    }),
  );
}

function within(src: Source, query: bigint, maxDistance: number): Uint32Array {
  const found = new IndexBuffer();
  collect(
    src,
    query,
    () => maxDistance,
    (heap, indexPtr, distancePtr, n) => found.append(heap, indexPtr, distancePtr, n),
  );
  return found.index.slice(0, found.length);
}

function histogram(src: Source, query: bigint): Uint32Array {
  const { rt, k, regions } = runtime();
  const [lo, hi] = split(query);
  const entries = src.bits + 1;
  // The histogram lives past the kernel's widest table so a chunk never writes beyond it.
  const histPtr = regions.out.reserve(129 * 4);
  rt.heap.u32.fill(0, histPtr >>> 2, (histPtr >>> 2) + 129);
  forEachChunk(rt, regions, src, (ptr, _first, count) => {
    if (src.bits === 64) k.hammingHistogram64(ptr, count, lo, histPtr);
    else k.hammingHistogram128(ptr, count, lo, hi, histPtr);
  });
  return rt.heap.u32.slice(histPtr >>> 2, (histPtr >>> 2) + entries);
}

/** Keeps the `n` best of `buf` (ascending distance, then index; buf is in index order), in index order. */
function keepBest(buf: IndexBuffer, n: number, bits: number): number {
  const atDistance = new Uint32Array(bits + 1);
  for (let i = 0; i < buf.length; i++) atDistance[buf.distance[i]!]!++;
  // t: the distance of the n-th best; all below it stay, and the first `room` at exactly t (smallest indices).
  let t = 0;
  let below = 0;
  while (below + atDistance[t]! < n) below += atDistance[t++]!;
  let room = n - below;
  let kept = 0;
  for (let i = 0; i < buf.length; i++) {
    const d = buf.distance[i]!;
    if (d < t || (d === t && room-- > 0)) {
      buf.index[kept] = buf.index[i]!;
      buf.distance[kept] = d;
      kept++;
    }
  }
  buf.length = kept;
  return t;
}

function nearestOf(src: Source, query: bigint, n: number): Neighbors {
  const want = Math.min(n, src.count);
  if (want === 0) return { id: new Uint32Array(0), distance: new Uint8Array(0) };
  const best = new IndexBuffer();
  // Collect everything within `limit`; when the buffer holds twice what is wanted, cut it to the best `want`
  // and accept from then on only distances strictly below the worst kept (a later equal one has a larger index).
  const threshold = Math.max(2 * want, 4096);
  let limit: number = src.bits;
  collect(
    src,
    query,
    () => limit,
    (heap, indexPtr, distancePtr, count) => {
      const u32 = heap.u32;
      const u8 = heap.u8;
      best.ensure(best.length + count);
      for (let i = 0; i < count; i++) {
        const d = u8[distancePtr + i]!;
        if (d > limit) continue;
        best.index[best.length] = u32[(indexPtr >>> 2) + i]!;
        best.distance[best.length] = d;
        best.length++;
      }
      if (best.length >= threshold) limit = keepBest(best, want, src.bits) - 1;
    },
    Math.min(COLLECT_CAP, threshold),
  );
  if (best.length > want) keepBest(best, want, src.bits);
  // Stable counting sort by distance: the buffer is in index order, so ties stay ordered by index.
  const starts = new Uint32Array(src.bits + 2);
  for (let i = 0; i < best.length; i++) starts[best.distance[i]! + 1]!++;
  for (let d = 1; d < starts.length; d++) starts[d]! += starts[d - 1]!;
  const id = new Uint32Array(best.length);
  const distance = new Uint8Array(best.length);
  for (let i = 0; i < best.length; i++) {
    const d = best.distance[i]!;
    const at = starts[d]!++;
    id[at] = best.index[i]!;
    distance[at] = d;
  }
  return { id, distance };
}

// ---------------------------------------------------------------------------------------------------------------
// Many against many

/**
 * Stable sort of pairs by `a` (b already ascends within each a): one counting pass when the largest a is below
 * `onePassBelow` (a count per value: 712k pairs of 22,710 fingerprints in 9.8 ms against 12.4 for 16-bit LSD
 * radix), else LSD radix on 16-bit digits. Exported for the tests, which lower `onePassBelow` to reach both.
 */
export function sortByA(a: Uint32Array, b: Uint32Array, d: Uint8Array, onePassBelow = 1 << 24): Pairs {
  const n = a.length;
  let max = 0;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    if (x > max) max = x;
    if (i > 0 && x < a[i - 1]!) sorted = false;
  }
  if (sorted) return { a, b, distance: d };
  const onePass = max < onePassBelow; // one pass over all of a, or 16-bit digits
  let srcA: Uint32Array = a;
  let srcB: Uint32Array = b;
  let srcD: Uint8Array = d;
  let dstA: Uint32Array = new Uint32Array(n);
  let dstB: Uint32Array = new Uint32Array(n);
  let dstD: Uint8Array = new Uint8Array(n);
  const counts = new Uint32Array(onePass ? max + 2 : 65537);
  const mask = onePass ? 0xffffffff : 0xffff;
  for (let shift = 0; shift === 0 || (!onePass && shift < 32 && max >>> shift !== 0); shift += 16) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[((srcA[i]! >>> shift) & mask) + 1]!++;
    for (let v = 1; v < counts.length; v++) counts[v]! += counts[v - 1]!;
    for (let i = 0; i < n; i++) {
      const at = counts[(srcA[i]! >>> shift) & mask]!++;
      dstA[at] = srcA[i]!;
      dstB[at] = srcB[i]!;
      dstD[at] = srcD[i]!;
    }
    const [ta, tb, td] = [srcA, srcB, srcD];
    srcA = dstA;
    srcB = dstB;
    srcD = dstD;
    dstA = ta;
    dstB = tb;
    dstD = td;
  }
  return { a: srcA, b: srcB, distance: srcD };
}

/** A live block of fingerprints in WASM memory: a resident set's, or a copy released by `done`. */
function place(heap: Heap, src: Source): { ptr: number; done: () => void } {
  if (src.ptr >= 0) return { ptr: src.ptr, done: () => {} };
  const ptr = heap.alloc(src.array!.byteLength);
  heap.u64.set(src.array!, ptr >>> 3);
  return { ptr, done: () => heap.release(ptr) };
}

/**
 * The first query of each of the kernel's tiles of `tile` candidates in a band (see selfPairsInBand): the lowest i
 * with ends[i] above the tile's first candidate. ends is non-decreasing, so one pointer walks it.
 */
function tileFirsts(ends: Uint32Array, tile: number): Uint32Array {
  const firsts = new Uint32Array(Math.ceil(ends.length / tile));
  let i = 0;
  for (let t = 0; t < firsts.length; t++) {
    while (i < ends.length && ends[i]! <= t * tile) i++;
    firsts[t] = i;
  }
  return firsts;
}

/**
 * The join's kernel calls: each chunk of pairs it writes (positions u32 at outA and outB, distances u8 at outD, in
 * WebAssembly memory, valid until the next call) goes to `chunk`. With `ends` only the queries of each tile's band
 * run; a tile takes whole query groups, so a few pairs beyond the band come too.
 */
function joinChunks(
  queries: Source,
  candidates: Source | null,
  maxDistance: number,
  ends: Uint32Array | undefined,
  chunk: (outA: number, outB: number, outD: number, n: number) => void,
): void {
  const { rt, k, regions } = runtime();
  const heap = rt.heap;
  const isSelf = candidates === null;
  const other = candidates ?? queries;
  const firsts = ends ? tileFirsts(ends, k.hammingJoinTile()) : null;
  const a = place(heap, queries);
  let b: { ptr: number; done: () => void } | undefined;
  try {
    b = isSelf ? a : place(heap, other);
    const cap = Math.max(JOIN_CAP, 2 * k.hammingJoinStepPairs());
    const statePtr = regions.out.reserve(cap * 9 + 16 + (firsts ? firsts.byteLength + 16 : 0));
    const outA = statePtr + 16;
    const outB = outA + cap * 4;
    const outD = outB + cap * 4;
    const firstsPtr = firsts ? align16(outD + cap) : 0;
    if (firsts) heap.u32.set(firsts, firstsPtr >>> 2);
    heap.u32[statePtr >>> 2] = 0;
    heap.u32[(statePtr >>> 2) + 1] = 0;
    const wide = queries.bits === 128 ? 1 : 0;
    while (heap.u32[statePtr >>> 2]! < other.count) {
      const n = k.hammingJoin(
        a.ptr,
        queries.count,
        b.ptr,
        other.count,
        maxDistance,
        wide,
        isSelf ? 1 : 0,
        statePtr,
        outA,
        outB,
        outD,
        cap,
        firstsPtr,
      );
      chunk(outA, outB, outD, n);
    }
  } finally {
    if (b !== undefined && b !== a) b.done();
    a.done();
  }
}

function join(queries: Source, candidates: Source | null, maxDistance: number, ends?: Uint32Array): Pairs {
  const heap = wasm().heap;
  let pairsA = new Uint32Array(1 << 14);
  let pairsB = new Uint32Array(1 << 14);
  let pairsD = new Uint8Array(1 << 14);
  let length = 0;
  joinChunks(queries, candidates, maxDistance, ends, (outA, outB, outD, n) => {
    if (length + n > pairsA.length) {
      const size = Math.max(length + n, pairsA.length * 2);
      if (size > 0xffffffff) throw new RangeError(`more than 2^32 - 1 pairs within k = ${maxDistance}`);
      const grownA = new Uint32Array(size);
      grownA.set(pairsA.subarray(0, length));
      const grownB = new Uint32Array(size);
      grownB.set(pairsB.subarray(0, length));
      const grownD = new Uint8Array(size);
      grownD.set(pairsD.subarray(0, length));
      [pairsA, pairsB, pairsD] = [grownA, grownB, grownD];
    }
    pairsA.set(heap.u32.subarray(outA >>> 2, (outA >>> 2) + n), length);
    pairsB.set(heap.u32.subarray(outB >>> 2, (outB >>> 2) + n), length);
    pairsD.set(heap.u8.subarray(outD, outD + n), length);
    length += n;
  });
  if (ends) {
    // The pairs beyond the band are dropped here. The caller orders the pairs itself (it renumbers them first).
    length = keepInBand(pairsA, pairsB, pairsD, length, ends);
    return { a: pairsA.subarray(0, length), b: pairsB.subarray(0, length), distance: pairsD.subarray(0, length) };
  }
  // Sorted into fresh arrays from the buffers as they are; already in order (one query group), only trimmed.
  const grown = {
    a: pairsA.subarray(0, length),
    b: pairsB.subarray(0, length),
    distance: pairsD.subarray(0, length),
  };
  const pairs = sortByA(grown.a, grown.b, grown.distance);
  return pairs.a === grown.a ? { a: grown.a.slice(), b: grown.b.slice(), distance: grown.distance.slice() } : pairs;
}

/** Compacts the first `length` pairs to those with b < ends[a]; returns how many are left. */
function keepInBand(a: Uint32Array, b: Uint32Array, d: Uint8Array, length: number, ends: Uint32Array): number {
  let kept = 0;
  for (let p = 0; p < length; p++) {
    if (b[p]! >= ends[a[p]!]!) continue;
    a[kept] = a[p]!;
    b[kept] = b[p]!;
    d[kept++] = d[p]!;
  }
  return kept;
}

/**
 * @internal Every pair (i, j) with i < j < ends[i] of fingerprints within distance k, in no particular order: the
 * self-join restricted to a band. `ends` (one per fingerprint, non-decreasing, each at most their number) is
 * trusted: dedup builds it from shingle-set sizes (fingerprints sorted by size; a pair whose sizes differ too much
 * cannot reach the Jaccard threshold), and the kernel skips the queries below each tile's band.
 */
export function selfPairsInBand(fps: BigUint64Array, k: number, bits: HammingBits, ends: Uint32Array): Pairs {
  const src = source(fps, { bits });
  if (ends.length !== src.count) throw new RangeError(`ends has ${ends.length} entries for ${src.count} fingerprints`);
  return join(src, null, checkK(k, src.bits), ends);
}

/**
 * @internal selfPairsInBand's pairs as the kernel writes them, chunk by chunk, for a caller that keeps them in
 * WebAssembly memory (dedup's band join): positions at outA and outB (u32), distances at outD, n of them, valid
 * until `chunk` returns; a few beyond the band (b ≥ ends[a]) come too, for the caller to drop.
 */
export function selfPairChunksInBand(
  fps: BigUint64Array,
  k: number,
  bits: HammingBits,
  ends: Uint32Array,
  chunk: (outA: number, outB: number, outD: number, n: number) => void,
): void {
  const src = source(fps, { bits });
  if (ends.length !== src.count) throw new RangeError(`ends has ${ends.length} entries for ${src.count} fingerprints`);
  joinChunks(src, null, checkK(k, src.bits), ends, chunk);
}

// ---------------------------------------------------------------------------------------------------------------
// The public functions

/** Distance from `query` to every fingerprint, one byte each. */
export function hammingDistances(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  options?: HammingOptions,
): Uint8Array {
  const src = source(fps, options);
  const q = checkQuery(query, src.bits);
  const out = new Uint8Array(src.count);
  distancesInto(src, q, out);
  return out;
}

/** Like hammingDistances, into `out` (length at least the number of fingerprints); returns `out`. */
export function hammingDistancesInto(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  out: Uint8Array,
  options?: HammingOptions,
): Uint8Array {
  const src = source(fps, options);
  const q = checkQuery(query, src.bits);
  if (!(out instanceof Uint8Array)) throw new TypeError(`out must be a Uint8Array, got ${show(out)}`);
  if (out.length < src.count)
    throw new RangeError(`out has length ${out.length} but there are ${src.count} fingerprints`);
  distancesInto(src, q, out);
  return out;
}

/** Indices (ascending) of the fingerprints within distance k of `query` (distance <= k). */
export function withinDistance(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  k: number,
  options?: HammingOptions,
): Uint32Array {
  const src = source(fps, options);
  const q = checkQuery(query, src.bits);
  return within(src, q, checkK(k, src.bits));
}

/** How many fingerprints are within distance k of `query`. */
export function countWithinDistance(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  k: number,
  options?: HammingOptions,
): number {
  const src = source(fps, options);
  const q = checkQuery(query, src.bits);
  return countWithin(src, q, checkK(k, src.bits));
}

/**
 * The `n` fingerprints nearest to `query` (all of them when n exceeds their number), sorted by distance, then
 * by index: when several tie at the n-th distance, the ones with the smallest indices are returned. Returns
 * typed-array columns: `id` the positions in `fps` (Uint32Array), `distance` their distances (see rows()).
 */
export function nearest(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  n: number,
  options?: HammingOptions,
): Neighbors {
  const src = source(fps, options);
  const q = checkQuery(query, src.bits);
  return nearestOf(src, q, checkCount(n));
}

/** counts[d] = number of fingerprints at distance d from `query`, for d = 0..bits. */
export function distanceHistogram(
  query: bigint,
  fps: BigUint64Array | FingerprintSet,
  options?: HammingOptions,
): Uint32Array {
  const src = source(fps, options);
  return histogram(src, checkQuery(query, src.bits));
}

/**
 * Every pair (query a, candidate b) with distance <= k: a indexes `queries`, b `candidates`. Ordered by a, then b.
 * Returns typed-array columns (Pairs; see rows()). All fingerprints are held in WASM memory during the call (sets
 * in place, arrays copied once).
 */
export function pairsWithinDistance(
  queries: BigUint64Array | FingerprintSet,
  candidates: BigUint64Array | FingerprintSet,
  k: number,
  options?: HammingOptions,
): Pairs {
  const a = source(queries, options, 'queries');
  const b = source(candidates, options, 'candidates');
  if (a.bits !== b.bits) throw new RangeError(`queries are ${a.bits}-bit but candidates are ${b.bits}-bit`);
  return join(a, b, checkK(k, a.bits));
}

/**
 * Every pair (a, b), a < b, of fingerprints within distance k of each other, each pair once; identical
 * fingerprints are reported (distance 0). Ordered by a, then b. Returns typed-array columns (Pairs; see rows()).
 * Brute force: n²/2 comparisons.
 */
export function selfPairsWithinDistance(
  fps: BigUint64Array | FingerprintSet,
  k: number,
  options?: HammingOptions,
): Pairs {
  const src = source(fps, options);
  return join(src, null, checkK(k, src.bits));
}

// ---------------------------------------------------------------------------------------------------------------
// FingerprintSet

interface Block {
  heap: Heap;
  ptr: number;
}
// A set dropped without free() still returns its block once it is garbage collected.
const unfreed = new FinalizationRegistry<Block>((block) => block.heap.release(block.ptr));

/**
 * Fingerprints copied once into WebAssembly memory, for repeated queries without a copy per call.
 * Call free() when done: the memory goes back to the module's allocator and the next set reuses it.
 */
export class FingerprintSet {
  /** The width of its fingerprints (64 or 128), fixed when it was made. */
  readonly bits: HammingBits;
  private readonly count: number;
  private block: Block | null;

  private constructor(bits: HammingBits, count: number, block: Block) {
    this.bits = bits;
    this.count = count;
    this.block = block;
    unfreed.register(this, block, this);
  }

  /** Copies `fps` (one u64 per 64-bit fingerprint, two per 128-bit one, low word first) into WASM memory. */
  static from(fps: BigUint64Array, options?: HammingOptions): FingerprintSet {
    const bits = checkWidth(checkOptions(options).bits ?? 64);
    if (!(fps instanceof BigUint64Array))
      throw new TypeError(`FingerprintSet.from needs a BigUint64Array, got ${show(fps)}`);
    const array = checkArray(fps, bits, 'fps');
    const heap = wasm().heap;
    const ptr = heap.alloc(array.byteLength);
    heap.u64.set(array, ptr >>> 3);
    return new FingerprintSet(bits, array.length / (bits / 64), { heap, ptr });
  }

  /** Number of fingerprints. */
  get size(): number {
    return this.live().count;
  }

  /** Whether free() has been called. */
  get freed(): boolean {
    return this.block === null;
  }

  /** Releases the WASM memory; the set cannot be used afterwards. Calling it again does nothing. */
  free(): void {
    if (this.block === null) return;
    unfreed.unregister(this);
    this.block.heap.release(this.block.ptr);
    this.block = null;
  }

  /** A copy of the fingerprints as a BigUint64Array. */
  toArray(): BigUint64Array {
    const set = this.live();
    const words = set.count * (this.bits / 64);
    return set.block.heap.u64.slice(set.address >>> 3, (set.address >>> 3) + words);
  }

  /** @internal The set's address and size; throws when it has been freed. */
  live(): { bits: HammingBits; count: number; address: number; block: Block } {
    if (this.block === null) throw freedError(`this FingerprintSet (${this.bits}-bit, ${this.count} fingerprints)`);
    return { bits: this.bits, count: this.count, address: this.block.ptr, block: this.block };
  }

  /** Distance from `query` to every member, one byte each, in member order; see hammingDistances. */
  hammingDistances(query: bigint): Uint8Array {
    return hammingDistances(query, this);
  }
  /** Like hammingDistances, into `out` (at least `size` bytes); returns `out`. */
  hammingDistancesInto(query: bigint, out: Uint8Array): Uint8Array {
    return hammingDistancesInto(query, this, out);
  }
  /** Positions (ascending) of the members within distance k of `query` (distance ≤ k); see withinDistance. */
  withinDistance(query: bigint, k: number): Uint32Array {
    return withinDistance(query, this, k);
  }
  /** How many members are within distance k of `query` (distance ≤ k). */
  countWithinDistance(query: bigint, k: number): number {
    return countWithinDistance(query, this, k);
  }
  /** The n nearest members, as columns of positions and distances; see nearest. */
  nearest(query: bigint, n: number): Neighbors {
    return nearest(query, this, n);
  }
  /** counts[d] = the number of members at distance d from `query`, for d = 0..bits. */
  distanceHistogram(query: bigint): Uint32Array {
    return distanceHistogram(query, this);
  }
  /** Pairs (query a, member b) within k; see pairsWithinDistance. */
  pairsWithinDistance(queries: BigUint64Array | FingerprintSet, k: number): Pairs {
    return pairsWithinDistance(queries, this, k, { bits: this.bits });
  }
  /** Pairs of members within k of each other, as columns; see selfPairsWithinDistance. */
  selfPairsWithinDistance(k: number): Pairs {
    return selfPairsWithinDistance(this, k);
  }
}
