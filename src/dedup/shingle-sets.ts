// Word-shingle sets in WebAssembly memory, the verifier's data: each document's sorted distinct shingle hashes,
// built by the fingerprint kernel's own word tokenizer and spec-2 shingle values (assembly/verify-pairs.ts), a
// window of documents per call, or in the same pass as the fingerprints when those are the same shingles (dedup's
// one reading of a text). Sets built here are tested by pair-checks.ts, and copied out for the set store
// (set-store.ts) when a corpus is larger than a window.
import { KeptRegion, Region, type Heap } from '../runtime/heap.js';
import { align16, chunks, encodeTexts, regions } from '../runtime/marshal.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import type { Normalization, Plan } from '../fingerprint/options.js';
import { MODE_SHINGLES, SPEC_V2 } from '../fingerprint/modes.shared.js';

/**
 * Text size (string lengths or bytes) of the documents sent to WebAssembly per window. A pair is tested only when
 * both its documents are in one window, so a document in pairs of several windows is tokenized once per window:
 * the candidates of a corpus up to this size take one window (measured: 8 MiB windows tokenized the bench's 25 MB
 * corpus about 10 times over). Memory: the sets, about 0.65 bytes per byte of English text, and the UTF-8 (1 to 3
 * bytes per string unit) of a PASS_CHUNK_BYTES chunk at a time.
 */
export const VERIFY_WINDOW_BYTES = 32 << 20;

/** Text (string units or bytes) encoded at a time by one pass over a window: a few MiB stay in cache. */
export const PASS_CHUNK_BYTES = 4 << 20;

const decoder = new TextDecoder();

export function textOf(t: string | Uint8Array): string {
  return typeof t === 'string' ? t : decoder.decode(t);
}

/**
 * A text trimmed, as documents without words are compared (exactly, being without shingles), normalized to `form`
 * first (unless false): under normalize, the fingerprint reads '…' as '...' (NFKC), and so must that comparison.
 */
export function trimmedText(t: string | Uint8Array, form: Normalization | false): string {
  const text = textOf(t);
  return (form === false ? text : text.normalize(form)).trim();
}

/**
 * The texts as verification reads them: as the fingerprint read them, so under the plan's Unicode normalization
 * (an NFC and an NFD copy of one text have one fingerprint under normalize 'NFC', and must pass as the same text).
 */
export function verificationTexts(
  texts: readonly (string | Uint8Array)[],
  plan: Pick<Plan, 'normalize'>,
): readonly (string | Uint8Array)[] {
  const form = plan.normalize;
  return form === false ? texts : texts.map((t) => textOf(t).normalize(form));
}

export interface VerifyKernels {
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
    hashBytes: number,
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
    centre: number,
  ): void;
  selectWindow(
    a: number,
    b: number,
    from: number,
    n: number,
    forest: number,
    local: number,
    cost: number,
    budget: number,
    members: number,
    pa: number,
    pb: number,
    taken: number,
    counts: number,
  ): number;
  histogramBytes(starts: number, nSets: number): number;
}

export function verifyKernels(rt: Runtime): VerifyKernels {
  return rt.kernels as unknown as VerifyKernels;
}

/** Per-heap memory of the verifier: one window's shingle sets, and its pairs with their flags (reused). */
interface VerifyRegions {
  sets: Region;
  pairs: Region;
  forest: Region;
  /** Connected-clusters verification's pairs, documents and forest copy while it chooses windows (forestWindows). */
  select: Region;
  /** Its documents' places in the window and costs, kept for the verification that wrote them. */
  selectDocs: KeptRegion;
  /** The fingerprint pairs of a join chunk, and the document pairs they stand for (verify-candidates.ts). */
  batch: Region;
  /** The fingerprints' documents and their set sizes for those chunks, kept for the batch that wrote them. */
  batchDocs: KeptRegion;
  /** The kernel's per-set histograms of one call (its upper bound on common shingles). */
  histograms: Region;
  /** Who built the sets now in `sets`: a PrebuiltSets' token, or null (a window's sets). */
  setsOwner: object | null;
}
const regionsByHeap = new WeakMap<Heap, VerifyRegions>();
export function verifyRegions(heap: Heap): VerifyRegions {
  let r = regionsByHeap.get(heap);
  if (!r) {
    r = {
      sets: new Region(heap),
      pairs: new Region(heap),
      forest: new Region(heap),
      select: new Region(heap),
      selectDocs: new KeptRegion(heap),
      batch: new Region(heap),
      batchDocs: new KeptRegion(heap),
      histograms: new Region(heap),
      setsOwner: null,
    };
    regionsByHeap.set(heap, r);
  }
  return r;
}

/**
 * Bytes of a hash in the verifier's sets: each shingle hash's top 32 bits (assembly/verify-pairs.ts,
 * buildShingleSets). Half the bytes of the 64-bit hashes to sort, keep, spill, read back and merge; two different
 * shingles of a pair of sets of sizes m and n share a value with odds of about m·n / 2^32 (one pair in 500 of
 * documents of 3,000 shingles), and such a match adds one common shingle to that pair (its Jaccard moves by less
 * than 0.001). On 2 GB of edited copies: 18.2 s against 21.1 s for the CLI run (medians of 5 in turn), the same
 * output. The sets are Uint32Array views and u32 heap indices throughout: this names their element's bytes where
 * sizes and file positions are counted in bytes; it is not a setting.
 */
export const SET_HASH_BYTES = 4;

/** Where one window's sets lie: document d's at u32 index starts[d]..starts[d+1] from `sets` (byte pointers). */
export interface BuiltSets {
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
  hashBytes: 4 | 8 = SET_HASH_BYTES,
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
  // The kernel starts a document only with 8 bytes per byte of it free (its 64-bit hashes; then, narrowed in place,
  // the 4-byte ones and the sort's scratch; 16 bytes with 8-byte hashes): the largest one's room from the start, and
  // the others' sets at a byte per byte of text (two with 8-byte hashes; English takes about 0.65 in 4-byte ones).
  // Grown for that document instead, the room doubled past it, with the old block kept while its sets moved: two
  // 64 MiB documents took 3.44 GiB, then 1.33 (with 8-byte hashes). Capacity in u32.
  let longestDoc = 0;
  for (const d of docs) longestDoc = Math.max(longestDoc, d.length);
  const per = hashBytes / 4; // u32 words per hash
  let capacity = Math.ceil(((size - longestDoc) * per) / 4) + 2 * per * (longestDoc + 1) + per * (count + 2);
  let sets = region.reserve(capacity * 4);
  // Text after each document: when a document does not fit, room for it and for what follows at the same rate.
  const after = new Float64Array(count + 1);
  for (let d = count - 1; d >= 0; d--) after[d] = after[d + 1]! + docs[d]!.length;
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
        hashBytes,
      );
      if (done === last - first) break;
      // A document is started with 2 u32 of room per byte + 1 (4 with 8-byte hashes). Doubling past what is left
      // to build would only raise the peak (the old block lives until the sets move).
      const used = heap.u32[(starts >>> 2) + first + done]! * per;
      const need = used + 2 * per * (longest + 1);
      capacity = Math.max(need, Math.min(2 * capacity, need + Math.ceil((after[first + done + 1]! * per) / 4)));
      sets = region.reserve(capacity * 4, used * 4);
    }
  }
  return { sets, starts, count, out, counts };
}

/** The shingle sets of `docs` (one window), built in WebAssembly memory. */
export function buildSets(
  rt: Runtime,
  docs: readonly (string | Uint8Array)[],
  width: number,
  chunkBytes = PASS_CHUNK_BYTES,
): BuiltSets {
  return buildPass(rt, docs, width, 0, null, chunkBytes);
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
export function fingerprintsShareShingles(plan: Plan, verify: { width: number }): boolean {
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
 * The sorted distinct 64-bit shingle hashes of each text, built in windows of about `windowBytes`: createVerifier's
 * and shingleHashes' data (dedup's verifier keeps their top 32 bits: SET_HASH_BYTES).
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
    const { sets, starts } = buildPass(rt, texts.slice(first, last), width, 0, null, chunkBytes, 8);
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
 * The kernel's scratch for the sets' histograms (assembly/verify-pairs.ts: an upper bound on a pair's common
 * shingles that rejects most pairs without a merge), or 0 where it has none (the scalar build, only small sets).
 * 512 bytes per set of 32 shingles or more (set sizes are only known once the sets are built).
 */
export function histogramsFor(rt: Runtime, { starts, count }: BuiltSets): number {
  const bytes = verifyKernels(rt).histogramBytes(starts, count);
  return bytes === 0 ? 0 : verifyRegions(rt.heap).histograms.reserve(bytes);
}

/** Shingle sets copied out of WebAssembly memory: document d's set is data[starts[d]..starts[d + 1]). */
export interface CopiedSets {
  /** Where each document's set begins in `data`, plus its end: documents + 1 offsets, in hashes. */
  starts: Uint32Array;
  /** Every document's sorted distinct 32-bit shingle hashes (SET_HASH_BYTES), one set after another. */
  data: Uint32Array;
}

/** A buffer handed back for the next batch's sets (null: none yet); see copiedSets. */
export interface SetsReuse {
  spare: ArrayBuffer | null;
}

/**
 * The shingle sets of `texts` (a batch: their sets must fit WebAssembly memory at once), copied out for the set
 * store; with `plan` (fingerprintsShareShingles(plan, …) must hold) also their fingerprints and feature counts,
 * from the same pass. With `reuse` (a caller that hands buffers back), into reuse.spare when it is large enough (a
 * buffer of an earlier batch, whose pages are already mapped: a fresh one costs a page fault per 4 KiB), or else a
 * new buffer with room for a batch a quarter larger, to serve as a later spare; without, a buffer of their size.
 */
export function copiedSets(
  texts: readonly (string | Uint8Array)[],
  width: number,
  plan: Plan | null = null,
  reuse: SetsReuse | null = null,
): { sets: CopiedSets; fingerprints: BigUint64Array | null; featureCounts: Float64Array | null } {
  const rt = wasm();
  const count = texts.length;
  const bits = plan === null ? 0 : plan.bits === 128 ? 128 : 64;
  const { sets, starts, out, counts } = buildPass(rt, texts, width, bits, null);
  const { heap } = rt;
  const copiedStarts = heap.u32.slice(starts >>> 2, (starts >>> 2) + count + 1);
  const hashes = copiedStarts[count]!;
  const spare = reuse?.spare;
  const buffer =
    spare && spare.byteLength >= hashes * 4 ? spare : new ArrayBuffer((reuse ? Math.ceil(hashes * 1.25) : hashes) * 4);
  const data = new Uint32Array(buffer, 0, hashes);
  data.set(heap.u32.subarray(sets >>> 2, (sets >>> 2) + hashes));
  const words = bits / 64;
  return {
    sets: { starts: copiedStarts, data },
    fingerprints: bits === 0 ? null : heap.u64.slice(out >>> 3, (out >>> 3) + count * words),
    featureCounts: bits === 0 ? null : heap.f64.slice(counts >>> 3, (counts >>> 3) + count),
  };
}
