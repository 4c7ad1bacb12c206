// The dedup pipeline's second stage: SimHash pairs within a generous k are candidates, kept only when the two
// texts' word-shingle Jaccard reaches a threshold (measured in README "Quality": precision 1.000 and recall
// 0.93–0.98 at k = 12, 64 bits, threshold 0.6). The shingle sets are built in WebAssembly by the fingerprint
// kernel's own word tokenizer and XXH3 shingle hashes (assembly/verify-pairs.ts), only for documents in a
// candidate pair, a window of documents per call. Documents without words (shingle set empty) pair only with
// documents whose trimmed text is identical, so "©", "%s" and "???" do not all fall into one cluster.
import type { NearDuplicatePairs } from './join.js';
import { show } from '../errors.js';
import { Region, type Heap } from '../runtime/heap.js';
import { align16, chunks, encodeTexts, regions } from '../runtime/marshal.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import type { Plan } from '../fingerprint/options.js';
import { MODE_SHINGLES, SPEC_V2 } from '../fingerprint/modes.shared.js';
import { forestJoin, forestRoot } from './forest.js';

interface VerifyKernels {
  buildShingleSets(
    text: number,
    offsets: number,
    from: number,
    count: number,
    width: number,
    scratch: number,
    sets: number,
    capacity: number,
    starts: number,
    bits: number,
    out: number,
    counts: number,
  ): number;
  testShingleSets(
    sets: number,
    starts: number,
    a: number,
    b: number,
    nPairs: number,
    threshold: number,
    flags: number,
    forest: number,
    setOf: number,
    hist: number,
    nSets: number,
  ): void;
  histogramBytes(starts: number, nSets: number): number;
}

function verifyKernels(rt: Runtime): VerifyKernels {
  return rt.kernels as unknown as VerifyKernels;
}

/** testShingleSets' flags: a pair of two documents without words; a pair already connected (not tested). */
const BOTH_EMPTY = 2;
const CONNECTED = 3;
/** A window forest entry not yet written (local ids are below 2^32 - 1). */
const UNSET = 0xffffffff;

/**
 * Text size (string lengths or bytes) of the documents sent to WebAssembly per window. A pair is tested only when
 * both its documents are in one window, so a document in pairs of several windows is tokenized once per window:
 * the candidates of a corpus up to this size take one window (measured: 8 MiB windows tokenized the bench's 25 MB
 * corpus about 10 times over). Memory: the sets, about 1.3 bytes per byte of English text, and the UTF-8 (1 to 3
 * bytes per string unit) of a PASS_CHUNK_BYTES chunk at a time.
 */
export const VERIFY_WINDOW_BYTES = 32 << 20;

/** Text (string units or bytes) encoded at a time by one pass over a window: a few MiB stay in cache. */
export const PASS_CHUNK_BYTES = 4 << 20;

export interface VerifyOptions {
  /** Smallest shingle Jaccard similarity of a kept pair, 0 < threshold ≤ 1 (default 0.6). */
  threshold?: number;
  /** Words per shingle (default 3). */
  width?: number;
}

export const DEFAULT_THRESHOLD = 0.6;

export function checkVerifyOptions(v: unknown): Required<VerifyOptions> {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new TypeError(`verify must be false or an object, got ${show(v)}`);
  const { threshold = DEFAULT_THRESHOLD, width = 3, ...rest } = v as VerifyOptions;
  for (const key of Object.keys(rest)) throw new TypeError(`unknown verify option ${JSON.stringify(key)}`);
  if (typeof threshold !== 'number') throw new TypeError(`verify.threshold must be a number, got ${show(threshold)}`);
  if (!(threshold > 0 && threshold <= 1))
    throw new RangeError(`verify.threshold must be in (0, 1], got ${show(threshold)}`);
  if (typeof width !== 'number') throw new TypeError(`verify.width must be a number, got ${show(width)}`);
  if (!Number.isInteger(width) || width < 1 || width > 64)
    throw new RangeError(`verify.width must be an integer from 1 to 64, got ${show(width)}`);
  return { threshold, width };
}

const decoder = new TextDecoder();

export function textOf(t: string | Uint8Array): string {
  return typeof t === 'string' ? t : decoder.decode(t);
}

/** The candidate pairs whose texts' shingle Jaccard is ≥ threshold (or that are identical wordless texts). */
export function verifyPairs(
  texts: readonly (string | Uint8Array)[],
  candidates: NearDuplicatePairs,
  verifyOptions: VerifyOptions = {},
): NearDuplicatePairs {
  const options = checkVerifyOptions(verifyOptions);
  checkPairs(texts, candidates);
  return keepFlagged(candidates, jaccardFlags(texts, candidates.a, candidates.b, options));
}

/** Per-heap memory of the verifier: one window's shingle sets, and its pairs with their flags (reused). */
interface VerifyRegions {
  sets: Region;
  pairs: Region;
  forest: Region;
  /** The kernel's per-set histograms of one call (its upper bound on common shingles). */
  histograms: Region;
  /** Who built the sets now in `sets`: a PrebuiltSets' token, or null (a window's sets). */
  setsOwner: object | null;
}
const regionsByHeap = new WeakMap<Heap, VerifyRegions>();
function verifyRegions(heap: Heap): VerifyRegions {
  let r = regionsByHeap.get(heap);
  if (!r) {
    r = {
      sets: new Region(heap),
      pairs: new Region(heap),
      forest: new Region(heap),
      histograms: new Region(heap),
      setsOwner: null,
    };
    regionsByHeap.set(heap, r);
  }
  return r;
}

/**
 * For each pair (a[p], b[p]) of documents of `texts`, 1 when its shingle Jaccard is ≥ threshold (or both texts
 * are wordless and identical once trimmed), else 0. Pairs are taken in order; their documents go to WebAssembly
 * a window of about `windowBytes` at a time, one call per window, so memory stays bounded whatever the corpus.
 * With `forest` (a union-find over the texts, updated), a pair is kept only when it also joins two trees, in pair
 * order (the spanningPairs rule), and a pair already connected is not tested.
 */
export function jaccardFlags(
  texts: readonly (string | Uint8Array)[],
  a: Uint32Array,
  b: Uint32Array,
  options: Required<VerifyOptions>,
  windowBytes = VERIFY_WINDOW_BYTES,
  forest: Uint32Array | null = null,
  prebuilt: PrebuiltSets | null = null,
): Uint8Array {
  const flags = new Uint8Array(a.length);
  if (prebuilt && covers(prebuilt.setOf, a) && covers(prebuilt.setOf, b)) {
    testPrebuilt(wasm(), texts, prebuilt.setOf, prebuilt.built(), a, b, options, flags, forest);
    return flags;
  }
  // testWindow's scratch: for each root of the forest, the first of its documents met in the window, or -1.
  const rootFirst = forest ? new Int32Array(forest.length).fill(-1) : null;
  // Each document's index in the window, or -1 (reset after each window: O(window), not O(corpus)).
  const local = new Int32Array(texts.length).fill(-1);
  const members: number[] = [];
  const pending: number[] = [];
  let bytes = 0;
  const rt = wasm();
  const flush = (): void => {
    if (pending.length === 0) return;
    const built = buildSets(
      rt,
      members.map((d) => texts[d]!),
      options.width,
    );
    testWindow(rt, texts, local, built, pending, a, b, options, flags, forest, rootFirst);
    for (const d of members) local[d] = -1;
    members.length = 0;
    pending.length = 0;
    bytes = 0;
  };
  const add = (d: number): void => {
    if (local[d] !== -1) return;
    local[d] = members.length;
    members.push(d);
    bytes += texts[d]!.length;
  };
  for (let p = 0; p < a.length; p++) {
    const i = a[p]!;
    const j = b[p]!;
    // Exact copies (the same string, or the same bytes object) need no shingles: Jaccard 1, or wordless and equal.
    // (With a forest pairs are decided in order, so they wait for their window like the others.)
    if (!forest && texts[i] === texts[j]) {
      flags[p] = 1;
      continue;
    }
    const more = (local[i] !== -1 ? 0 : texts[i]!.length) + (local[j] !== -1 ? 0 : texts[j]!.length);
    if (pending.length > 0 && bytes + more > windowBytes) flush();
    add(i);
    add(j);
    pending.push(p);
  }
  flush();
  return flags;
}

function covers(setOf: Int32Array, docs: Uint32Array): boolean {
  for (let p = 0; p < docs.length; p++) if (setOf[docs[p]!]! < 0) return false;
  return true;
}

/** Where one window's sets lie: document d's at u64 index starts[d]..starts[d+1] from `sets` (byte pointers). */
interface BuiltSets {
  sets: number;
  starts: number;
  /** How many sets: starts holds count + 1 offsets. */
  count: number;
}

/** Sets built as for buildSets, and where the fingerprints of the same pass lie (with `bits`; else 0). */
interface BuiltPass extends BuiltSets {
  out: number;
  counts: number;
}

/**
 * Builds the shingle sets of `docs` in WebAssembly memory (assembly/verify-pairs.ts, buildShingleSets), and with
 * `bits` their fingerprints in the same pass. The set memory starts at about twice the text (plus scratch for the
 * longest document) and grows (keeping what is built) when a document might not fit, so it never holds the worst
 * case of one shingle per byte for every document at once. `owner` marks who built the sets (PrebuiltSets).
 */
function buildPass(
  rt: Runtime,
  docs: readonly (string | Uint8Array)[],
  width: number,
  bits: 64 | 128 | 0,
  owner: object | null,
  chunkBytes = PASS_CHUNK_BYTES,
): BuiltPass {
  const { heap } = rt;
  const r = regions(rt);
  const kernels = verifyKernels(rt);
  const count = docs.length;
  let size = 0; // string units or bytes: what the first set memory is sized by
  for (const d of docs) size += d.length;
  const offsetBytes = align16((count + 1) * 4);
  const outBytes = bits === 0 ? 0 : align16((count * bits) / 8);
  const work = r.work.reserve(2 * offsetBytes + outBytes + (bits === 0 ? 0 : count * 8));
  const starts = work + offsetBytes;
  const out = bits === 0 ? 0 : starts + offsetBytes;
  const counts = bits === 0 ? 0 : out + outBytes;
  heap.u32[starts >>> 2] = 0;
  const owned = verifyRegions(heap);
  owned.setsOwner = owner; // whatever was there before is overwritten now
  const region = owned.sets;
  let capacity = Math.ceil(size / 4) + count + 2;
  let sets = region.reserve(capacity * 8);
  const stride = bits / 8;
  // The texts are encoded a chunk at a time into the same text memory: the sets are all that has to stay, and the
  // UTF-8 is read while it is still in cache (one encoding of a whole 256 MiB window also touched that much fresh
  // memory, a page fault per 4 KiB).
  for (const [first, last] of chunks(
    docs.map((d) => d.length),
    chunkBytes,
  )) {
    const { ptr: text, offsets, longest } = encodeTexts(heap, r.text, docs.slice(first, last));
    const scratchBytes = align16(2 * longest + 64);
    const scratch = r.scratch.reserve(scratchBytes + align16(offsets.byteLength));
    const local = scratch + scratchBytes; // the chunk's offsets
    heap.u32.set(offsets, local >>> 2);
    let done = 0;
    for (;;) {
      done = kernels.buildShingleSets(
        text,
        local,
        done,
        last - first,
        width,
        scratch,
        sets,
        capacity,
        starts + first * 4,
        bits,
        bits === 0 ? 0 : out + first * stride,
        bits === 0 ? 0 : counts + first * 8,
      );
      if (done === last - first) break;
      // A document is started with room for twice its bytes + 1 (its shingles, then the sort's scratch).
      const used = heap.u32[(starts >>> 2) + first + done]!;
      capacity = Math.max(2 * capacity, used + 2 * longest + 2);
      sets = region.reserve(capacity * 8, used * 8);
    }
  }
  return { sets, starts, count, out, counts };
}

/** The shingle sets of `docs` (one window), built in WebAssembly memory. */
function buildSets(
  rt: Runtime,
  docs: readonly (string | Uint8Array)[],
  width: number,
  chunkBytes = PASS_CHUNK_BYTES,
): BuiltSets {
  return buildPass(rt, docs, width, 0, null, chunkBytes);
}

/**
 * Tests every pair on sets built for all their documents (dedup's one pass): the pairs, `setOf` and a copy of the
 * forest go to WebAssembly as they are, and only the pairs the kernel flags come back through JavaScript, where
 * kept pairs are joined in `forest` in pair order (the spanningPairs rule; the kernel's copy is scratch). On the
 * bench's 25 MB, 588k candidates, 469k of them already connected: remapping each pair and building a window forest
 * in JavaScript (testWindow) took about 45 of the stage's 70-90 ms.
 */
function testPrebuilt(
  rt: Runtime,
  texts: readonly (string | Uint8Array)[],
  setOf: Int32Array,
  built: BuiltSets,
  a: Uint32Array,
  b: Uint32Array,
  options: Required<VerifyOptions>,
  flags: Uint8Array,
  forest: Uint32Array | null,
): void {
  const { heap } = rt;
  const { sets, starts } = built;
  const n = a.length;
  const hist = histogramsFor(rt, built);
  const pairBytes = align16(n * 4);
  const docBytes = align16(setOf.length * 4);
  const qa = verifyRegions(heap).pairs.reserve(2 * pairBytes + align16(n) + docBytes + (forest ? docBytes : 0));
  const qb = qa + pairBytes;
  const out = qb + pairBytes;
  const map = out + align16(n);
  const forestCopy = forest ? map + docBytes : 0;
  const u32 = heap.u32; // after the reserve, which may grow memory
  u32.set(a, qa >>> 2);
  u32.set(b, qb >>> 2);
  u32.set(new Uint32Array(setOf.buffer, setOf.byteOffset, setOf.length), map >>> 2);
  if (forest) u32.set(forest, forestCopy >>> 2);
  verifyKernels(rt).testShingleSets(
    sets,
    starts,
    qa,
    qb,
    n,
    options.threshold,
    out,
    forestCopy,
    map,
    hist,
    built.count,
  );
  const result = heap.u8.subarray(out, out + n);
  for (let p = 0; p < n; p++) {
    if (result[p] !== 0) flags[p] = finalFlag(result[p]!, texts, a[p]!, b[p]!, forest);
  }
}

/**
 * A pair's flag from the kernel's: a pair already connected is 0; two wordless texts are kept when equal once
 * trimmed; and with `forest`, a kept pair stays kept only when it joins two trees, in pair order as spanningPairs
 * (the kernel skipped only pairs connected by pairs kept here too).
 */
function finalFlag(
  flag: number,
  texts: readonly (string | Uint8Array)[],
  i: number,
  j: number,
  forest: Uint32Array | null,
): number {
  if (flag === CONNECTED) return 0;
  if (flag === BOTH_EMPTY) flag = textOf(texts[i]!).trim() === textOf(texts[j]!).trim() ? 1 : 0;
  return flag === 1 && forest && !forestJoin(forest, i, j) ? 0 : flag;
}

/**
 * The kernel's scratch for the sets' histograms (assembly/verify-pairs.ts: an upper bound on a pair's common
 * shingles that rejects most pairs without a merge), or 0 where it has none (the scalar build, only small sets).
 * About 256 bytes per set of 32 shingles or more: at most what those sets take themselves.
 */
function histogramsFor(rt: Runtime, { starts, count }: BuiltSets): number {
  const bytes = verifyKernels(rt).histogramBytes(starts, count);
  return bytes === 0 ? 0 : verifyRegions(rt.heap).histograms.reserve(bytes);
}

/** Tests the `pending` pairs on built sets; `local[d]` is document d's set in them. */
function testWindow(
  rt: Runtime,
  texts: readonly (string | Uint8Array)[],
  local: Int32Array,
  built: BuiltSets,
  pending: readonly number[],
  a: Uint32Array,
  b: Uint32Array,
  options: Required<VerifyOptions>,
  flags: Uint8Array,
  forest: Uint32Array | null,
  rootFirst: Int32Array | null,
): void {
  const { heap } = rt;
  const { sets, starts } = built;
  const n = pending.length;
  const hist = histogramsFor(rt, built);
  const pairBytes = align16(n * 4);
  const qa = verifyRegions(heap).pairs.reserve(2 * pairBytes + align16(n));
  const qb = qa + pairBytes;
  const out = qb + pairBytes;
  const u32 = heap.u32;
  for (let q = 0; q < n; q++) {
    const p = pending[q]!;
    u32[(qa >>> 2) + q] = local[a[p]!]!;
    u32[(qb >>> 2) + q] = local[b[p]!]!;
  }
  // The window's forest over its sets: documents connected by earlier windows start in one tree (the first of
  // them met as its root). Only the sets of pending pairs get an entry; the kernel reads no other.
  let localForest = 0;
  if (forest && rootFirst) {
    let top = 0;
    for (const p of pending) top = Math.max(top, local[a[p]!]!, local[b[p]!]!);
    localForest = verifyRegions(heap).forest.reserve((top + 1) * 4);
    // Typed arrays, not a Map and a Set: 1.4·10^6 entries on the bench's 25 MB took ~50 ms that way.
    const entries = heap.u32; // after the reserve, which may grow memory
    const base = localForest >>> 2;
    entries.fill(UNSET, base, base + top + 1);
    const roots: number[] = [];
    const enter = (d: number): void => {
      const l = local[d]!;
      if (entries[base + l] !== UNSET) return;
      const r = forestRoot(forest, d);
      if (rootFirst[r] === -1) {
        rootFirst[r] = l;
        roots.push(r);
      }
      entries[base + l] = rootFirst[r]!;
    };
    for (const p of pending) {
      enter(a[p]!);
      enter(b[p]!);
    }
    for (const r of roots) rootFirst[r] = -1; // O(window) again, not O(corpus)
  }
  verifyKernels(rt).testShingleSets(sets, starts, qa, qb, n, options.threshold, out, localForest, 0, hist, built.count);
  const result = heap.u8;
  for (let q = 0; q < n; q++) {
    const p = pending[q]!;
    flags[p] = finalFlag(result[out + q]!, texts, a[p]!, b[p]!, forest);
  }
}

/**
 * Shingle sets built in the fingerprint pass (fingerprintWithSets) and left in WebAssembly memory for the
 * verification of the same call: `setOf[d]` is document d's set, -1 for a document without one.
 */
export interface PrebuiltSets {
  setOf: Int32Array;
  /** Each set's size (distinct shingles), by set: document d's is setSizes[setOf[d]]. */
  setSizes: Uint32Array;
  /** Where the sets lie now (the starts are copied back in: their scratch region may have been reused). */
  built: () => BuiltSets;
}

/**
 * Whether the fingerprint's features are the verifier's shingles, hashed alike (spec 2, which the verifier uses
 * whatever the preset), so one pass can build both (dedup).
 */
export function fingerprintsShareShingles(plan: Plan, verify: Required<VerifyOptions>): boolean {
  return (
    plan.spec === SPEC_V2 &&
    plan.mode === MODE_SHINGLES &&
    plan.width === verify.width &&
    plan.normalize === false &&
    (plan.bits === 64 || plan.bits === 128)
  );
}

/**
 * Fingerprints `docs` of `texts` (their total size at most the caller's window: DEDUP_WINDOW_BYTES) and builds their shingle sets in
 * the same pass (assembly/verify-pairs.ts, buildShingleSets with fingerprints): the fingerprints and feature counts are those
 * of simhashMany with `plan` (fingerprintsShareShingles(plan, …) must hold), the sets those of buildShingleSets.
 * The sets stay in WebAssembly memory until the next verification (`built` throws after that).
 */
export function fingerprintWithSets(
  texts: readonly (string | Uint8Array)[],
  docs: readonly number[],
  plan: Plan,
  chunkBytes = PASS_CHUNK_BYTES,
): { fingerprints: BigUint64Array; featureCounts: Float64Array; prebuilt: PrebuiltSets } {
  const rt = wasm();
  const { heap } = rt;
  const count = docs.length;
  const token = {};
  const bits = plan.bits === 128 ? 128 : 64;
  const words = bits / 64;
  const { sets, starts, out, counts } = buildPass(
    rt,
    docs.map((d) => texts[d]!),
    plan.width,
    bits,
    token,
    chunkBytes,
  );
  const fingerprints = heap.u64.slice(out >>> 3, (out >>> 3) + count * words);
  const featureCounts = heap.f64.slice(counts >>> 3, (counts >>> 3) + count);
  const savedStarts = heap.u32.slice(starts >>> 2, (starts >>> 2) + count + 1);
  const setOf = new Int32Array(texts.length).fill(-1);
  docs.forEach((d, i) => {
    setOf[d] = i;
  });
  const built = (): BuiltSets => {
    // Any later verification reuses the set memory: these sets are then gone.
    if (verifyRegions(rt.heap).setsOwner !== token)
      throw new Error('these shingle sets were overwritten by a later verification');
    const at = regions(rt).work.reserve(savedStarts.byteLength);
    rt.heap.u32.set(savedStarts, at >>> 2);
    return { sets, starts: at, count };
  };
  const setSizes = new Uint32Array(count);
  for (let i = 0; i < count; i++) setSizes[i] = savedStarts[i + 1]! - savedStarts[i]!;
  return { fingerprints, featureCounts, prebuilt: { setOf, setSizes, built } };
}

/**
 * The sorted distinct shingle hashes of each text (the verifier's per-document sets), built in windows of about
 * `windowBytes`: the exact verifier's data, for createVerifier and the evaluation.
 */
export function shingleSets(
  texts: readonly (string | Uint8Array)[],
  width: number,
  windowBytes = VERIFY_WINDOW_BYTES,
  chunkBytes = PASS_CHUNK_BYTES,
): BigUint64Array[] {
  const rt = wasm();
  const out: BigUint64Array[] = [];
  for (const [first, last] of chunks(
    texts.map((t) => t.length),
    windowBytes,
  )) {
    const { sets, starts } = buildSets(rt, texts.slice(first, last), width, chunkBytes);
    const u32 = rt.heap.u32;
    const u64 = rt.heap.u64;
    for (let d = 0; d < last - first; d++) {
      const s = u32[(starts >>> 2) + d]!;
      const e = u32[(starts >>> 2) + d + 1]!;
      out.push(u64.slice((sets >>> 3) + s, (sets >>> 3) + e));
    }
  }
  return out;
}

/**
 * Without verification: a pair with a featureless document (fingerprint 0 by the spec) is kept only when both
 * are featureless and their trimmed texts are identical.
 */
export function dropFeaturelessPairs(
  texts: readonly (string | Uint8Array)[],
  candidates: NearDuplicatePairs,
  featureCounts: Float64Array,
): NearDuplicatePairs {
  checkPairs(texts, candidates);
  if (!(featureCounts instanceof Float64Array) || featureCounts.length !== texts.length) {
    throw new TypeError(
      `featureCounts must be a Float64Array with one count per text (${texts.length}), got ${show(featureCounts)}`,
    );
  }
  const keep = new Uint8Array(candidates.a.length);
  for (let p = 0; p < candidates.a.length; p++) {
    const i = candidates.a[p]!;
    const j = candidates.b[p]!;
    const ci = featureCounts[i]!;
    const cj = featureCounts[j]!;
    let ok = ci > 0 && cj > 0;
    if (ci === 0 && cj === 0) {
      const ti = texts[i]!;
      const tj = texts[j]!;
      ok = textOf(ti).trim() === textOf(tj).trim();
    }
    if (ok) keep[p] = 1;
  }
  return keepFlagged(candidates, keep);
}

function checkPairs(texts: readonly (string | Uint8Array)[], pairs: NearDuplicatePairs): void {
  if (!Array.isArray(texts)) throw new TypeError(`texts must be an array, got ${show(texts)}`);
  if (
    pairs === null ||
    typeof pairs !== 'object' ||
    !(pairs.a instanceof Uint32Array) ||
    !(pairs.b instanceof Uint32Array) ||
    !(pairs.distance instanceof Uint8Array) ||
    pairs.a.length !== pairs.b.length ||
    pairs.a.length !== pairs.distance.length
  ) {
    throw new TypeError(
      `pairs must be { a: Uint32Array, b: Uint32Array, distance: Uint8Array } of one length, got ${show(pairs)}`,
    );
  }
  for (let p = 0; p < pairs.a.length; p++) {
    if (pairs.a[p]! >= texts.length || pairs.b[p]! >= texts.length) {
      throw new RangeError(
        `pair ${p} (${pairs.a[p]}, ${pairs.b[p]}) names a document beyond the ${texts.length} texts`,
      );
    }
  }
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    if (typeof t !== 'string' && !(t instanceof Uint8Array))
      throw new TypeError(`texts[${i}] must be a string or a Uint8Array, got ${show(t)}`);
  }
}

/** The pairs whose flag is set, in order (the pairs themselves when every flag is). */
export function keepFlagged(pairs: NearDuplicatePairs, flags: Uint8Array): NearDuplicatePairs {
  let kept = 0;
  for (let p = 0; p < flags.length; p++) kept += flags[p]!;
  if (kept === pairs.a.length) return pairs;
  const a = new Uint32Array(kept);
  const b = new Uint32Array(kept);
  const distance = new Uint8Array(kept);
  let q = 0;
  for (let p = 0; p < flags.length; p++) {
    if (!flags[p]) continue;
    a[q] = pairs.a[p]!;
    b[q] = pairs.b[p]!;
    distance[q++] = pairs.distance[p]!;
  }
  return { a, b, distance };
}
