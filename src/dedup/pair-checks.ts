// The verifier's engine: candidate pairs taken in order, each tested by shingle Jaccard in WebAssembly unless it can
// no longer change the clusters. Under connected clusters a pair whose documents are already connected is skipped;
// under centre clusters a pair whose first document is another's member, or whose second is taken. Pairs ordered by
// (a, b) form clusters early (the first of a group meets every other member first), so a group of m near-duplicates
// costs about m tests, not m²/2, and the clusters are those of testing every pair. Sets come from a SetSource a
// window of documents at a time: built from texts in memory (dedup), or read from the set store (set-store.ts) that
// the hashing pass filled (dedupStream, and dedup beyond one window), so no text is read or tokenized again.
import { wasm, type Runtime } from '../runtime/wasm.js';
import { align16 } from '../runtime/marshal.js';
import {
  type BuiltSets,
  type PrebuiltSets,
  VERIFY_WINDOW_BYTES,
  buildSets,
  histogramsFor,
  trimmedText,
  verifyKernels,
  verifyRegions,
} from './shingle-sets.js';
import { forestJoin, forestRoot, newForest } from './forest.js';

/** testShingleSets' flags: a pair of two documents without words; a pair that could change nothing (not tested). */
const BOTH_EMPTY = 2;
const SKIPPED = 3;
/** PairChecks' centreOf: a document in no centre's cluster yet; in a window's copy, a member of another centre. */
const UNASSIGNED = 0xffffffff;
const MEMBER = 0xfffffffe;

export interface Threshold {
  threshold: number;
}

/**
 * What verification has decided so far, and so which pairs it may skip: nothing (every pair tested: pairs 'all'),
 * connected clusters (a union-find forest over documents), or centre clusters (each document's centre). `checks`
 * counts the pairs whose sets were compared.
 */
export class PairChecks {
  checks = 0;
  private constructor(
    readonly forest: Uint32Array | null,
    readonly centreOf: Uint32Array | null,
  ) {}

  /** Every pair is tested and kept by its own result. */
  static all(): PairChecks {
    return new PairChecks(null, null);
  }
  /** Connected clusters over n documents: kept pairs form a spanning forest, in pair order. */
  static connected(n: number): PairChecks {
    return new PairChecks(newForest(n), null);
  }
  /** Connected clusters on a forest kept by the caller (the Deduplicator's, over every document it has seen). */
  static onForest(forest: Uint32Array): PairChecks {
    return new PairChecks(forest, null);
  }
  /** Centre clusters over n documents: pairs must come ordered by a; kept pairs are (centre, member). */
  static centre(n: number): PairChecks {
    return new PairChecks(null, new Uint32Array(n).fill(UNASSIGNED));
  }

  get skips(): boolean {
    return this.forest !== null || this.centreOf !== null;
  }

  /** Whether the pair (i, j) could still change the clusters. */
  open(i: number, j: number): boolean {
    if (this.forest) return forestRoot(this.forest, i) !== forestRoot(this.forest, j);
    if (this.centreOf) {
      const c = this.centreOf[i]!;
      return (c === UNASSIGNED || c === i) && this.centreOf[j] === UNASSIGNED;
    }
    return true;
  }

  /** A pair found similar, in pair order: whether it is kept (it joins two trees, or a centre takes j). */
  accept(i: number, j: number): boolean {
    if (this.forest) return forestJoin(this.forest, i, j);
    if (this.centreOf) {
      if (!this.open(i, j)) return false;
      this.centreOf[i] = i;
      this.centreOf[j] = i;
    }
    return true;
  }
}

/** Where a window's shingle sets come from. */
export interface SetSource {
  /** What document d adds to a window (bytes of text or of set). */
  cost(d: number): number;
  /** The sets of `docs` in WebAssembly memory, set q for docs[q]; may first reorder `docs` (in place) for locality. */
  load(rt: Runtime, docs: number[]): BuiltSets;
  /** Two documents without words: whether their trimmed texts are equal. */
  sameWordless(i: number, j: number): boolean;
  /** Whether two documents are known to be one text (then similar without a test); optional. */
  identical?(i: number, j: number): boolean;
  /** Document d's shingle-set size, where every document's is known before verification; optional. */
  setSize?(d: number): number;
}

/** Sets built from texts in memory, a window at a time. */
export function textSource(texts: readonly (string | Uint8Array)[], width: number): SetSource {
  return {
    cost: (d) => texts[d]!.length,
    load: (rt, docs) =>
      buildSets(
        rt,
        docs.map((d) => texts[d]!),
        width,
      ),
    sameWordless: (i, j) => trimmedText(texts[i]!, false) === trimmedText(texts[j]!, false),
    identical: (i, j) => texts[i] === texts[j],
  };
}

/**
 * For each pair (a[p], b[p]) of documents of `n`, 1 when its shingle Jaccard is ≥ threshold (or both are wordless and
 * equal once trimmed) and `checks` keeps it, else 0. Pairs are taken in order; their documents' sets come from
 * `source` a window of about `windowBytes` (by source.cost) at a time, one kernel call per window, so memory stays
 * bounded whatever the corpus. A pair `checks` says can change nothing is not tested, nor are its sets loaded.
 * With `prebuilt` sets covering every pair (dedup's one pass), all pairs go to one kernel call; under connected
 * clusters the windows are chosen in WebAssembly too (forestWindows).
 */
export function pairFlags(
  n: number,
  source: SetSource,
  a: Uint32Array,
  b: Uint32Array,
  options: Threshold,
  checks: PairChecks,
  windowBytes = VERIFY_WINDOW_BYTES,
  prebuilt: PrebuiltSets | null = null,
): Uint8Array {
  const flags = new Uint8Array(a.length);
  if (prebuilt && covers(prebuilt.setOf, a) && covers(prebuilt.setOf, b)) {
    testPrebuilt(wasm(), source, prebuilt.setOf, prebuilt.built(), a, b, options, flags, checks);
    return flags;
  }
  if (checks.forest) {
    forestWindows(n, source, a, b, options, checks, windowBytes, flags);
    return flags;
  }
  // Each document's index in the window, or -1 (reset after each window: O(window), not O(corpus)).
  const local = new Int32Array(n).fill(-1);
  const members: number[] = [];
  const pending: number[] = [];
  let bytes = 0;
  const rt = wasm();
  const flush = (): void => {
    if (pending.length === 0) return;
    const built = source.load(rt, members);
    members.forEach((d, q) => {
      local[d] = q;
    });
    testWindow(rt, source, members, local, built, pending, a, b, options, flags, checks);
    for (const d of members) local[d] = -1;
    members.length = 0;
    pending.length = 0;
    bytes = 0;
  };
  const add = (d: number): void => {
    if (local[d] !== -1) return;
    local[d] = members.length;
    members.push(d);
    bytes += source.cost(d);
  };
  for (let p = 0; p < a.length; p++) {
    const i = a[p]!;
    const j = b[p]!;
    if (checks.skips) {
      // Decided by what earlier windows kept: no test, and its sets need not be loaded. (What this window keeps
      // is applied by the kernel, in order.)
      if (!checks.open(i, j)) continue;
    } else if (source.identical?.(i, j)) {
      // Exact copies (the same string, or the same bytes object) need no shingles: Jaccard 1, or wordless and equal.
      flags[p] = 1;
      continue;
    }
    const more = (local[i] !== -1 ? 0 : source.cost(i)) + (local[j] !== -1 || i === j ? 0 : source.cost(j));
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

/**
 * A pair's flag from the kernel's: a skipped pair is 0 (not a check); two wordless texts are kept when equal once
 * trimmed; a kept pair stays kept only when `checks` accepts it, in pair order (the kernel skipped only pairs that
 * the pairs kept here decide too).
 */
function finalFlag(flag: number, source: SetSource, i: number, j: number, checks: PairChecks): number {
  if (flag === SKIPPED) return 0;
  // Two wordless texts are decided here, after the kernel: one that a pair before it in its window has connected
  // is passed over, as the kernel passes over the pairs it has connected itself.
  if (flag === BOTH_EMPTY && !checks.open(i, j)) return 0;
  checks.checks++;
  if (flag === BOTH_EMPTY) flag = source.sameWordless(i, j) ? 1 : 0;
  return flag === 1 && !checks.accept(i, j) ? 0 : flag;
}

/**
 * Tests every pair on sets built for all their documents (dedup's one pass): the pairs, `setOf` and a copy of the
 * forest (or of the centres) go to WebAssembly as they are, and only the pairs the kernel flags come back through
 * JavaScript, where kept pairs are applied to `checks` in pair order (the kernel's copy is scratch). On the bench's
 * 25 MB, 588k candidates, 469k of them already connected: remapping each pair and building a window forest in
 * JavaScript (testWindow) took about 45 of the stage's 70-90 ms.
 */
function testPrebuilt(
  rt: Runtime,
  source: SetSource,
  setOf: Int32Array,
  built: BuiltSets,
  a: Uint32Array,
  b: Uint32Array,
  options: Threshold,
  flags: Uint8Array,
  checks: PairChecks,
): void {
  const { heap } = rt;
  const { sets, starts } = built;
  const n = a.length;
  const hist = histogramsFor(rt, built);
  const pairBytes = align16(n * 4);
  const docBytes = align16(setOf.length * 4);
  const state = checks.forest ?? checks.centreOf;
  const qa = verifyRegions(heap).pairs.reserve(2 * pairBytes + align16(n) + docBytes + (state ? docBytes : 0));
  const qb = qa + pairBytes;
  const out = qb + pairBytes;
  const map = out + align16(n);
  const stateCopy = state ? map + docBytes : 0;
  const u32 = heap.u32; // after the reserve, which may grow memory
  u32.set(a, qa >>> 2);
  u32.set(b, qb >>> 2);
  u32.set(new Uint32Array(setOf.buffer, setOf.byteOffset, setOf.length), map >>> 2);
  // A centre's entry is its own index and a member's any other: document indices serve as they are.
  if (state) u32.set(state, stateCopy >>> 2);
  verifyKernels(rt).testShingleSets(
    sets,
    starts,
    qa,
    qb,
    n,
    options.threshold,
    out,
    checks.forest ? stateCopy : 0,
    map,
    hist,
    built.count,
    checks.centreOf ? stateCopy : 0,
  );
  const result = heap.u8.subarray(out, out + n);
  for (let p = 0; p < n; p++) flags[p] = finalFlag(result[p]!, source, a[p]!, b[p]!, checks);
}

/**
 * Tests the `pending` pairs on a window's built sets (centre clusters, or every pair): set q is members[q]'s, and
 * local[d] is d's set.
 */
function testWindow(
  rt: Runtime,
  source: SetSource,
  members: readonly number[],
  local: Int32Array,
  built: BuiltSets,
  pending: readonly number[],
  a: Uint32Array,
  b: Uint32Array,
  options: Threshold,
  flags: Uint8Array,
  checks: PairChecks,
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
  const centre = checks.centreOf ? windowCentres(rt, checks.centreOf, members) : 0;
  verifyKernels(rt).testShingleSets(sets, starts, qa, qb, n, options.threshold, out, 0, 0, hist, built.count, centre);
  const result = heap.u8;
  for (let q = 0; q < n; q++) {
    const p = pending[q]!;
    flags[p] = finalFlag(result[out + q]!, source, a[p]!, b[p]!, checks);
  }
}

/** The window's centres over its sets: a centre's entry is its own set, a member's MEMBER, others UNASSIGNED. */
function windowCentres(rt: Runtime, centreOf: Uint32Array, members: readonly number[]): number {
  const at = verifyRegions(rt.heap).forest.reserve(members.length * 4);
  const entries = rt.heap.u32; // after the reserve, which may grow memory
  const base = at >>> 2;
  members.forEach((d, l) => {
    const c = centreOf[d]!;
    entries[base + l] = c === UNASSIGNED ? UNASSIGNED : c === d ? l : MEMBER;
  });
  return at;
}

/**
 * pairFlags under connected clusters: each window is chosen by the kernel (selectWindow: pairs already connected
 * passed over, documents gathered within `windowBytes`), its sets loaded, and its pairs tested (testShingleSets on
 * document indices, through the window's map from documents to sets, and a copy of the forest that it joins as it
 * keeps pairs). Only the pairs found similar (or two wordless texts, for finalFlag) come back through JavaScript,
 * applied to `checks` in pair order. On 2 GB of edited copies the JavaScript loop it replaced took 6 s of the
 * calling thread for 47 M pairs.
 */
function forestWindows(
  n: number,
  source: SetSource,
  a: Uint32Array,
  b: Uint32Array,
  options: Threshold,
  checks: PairChecks,
  windowBytes: number,
  flags: Uint8Array,
): void {
  const rt = wasm();
  const kernels = verifyKernels(rt);
  const forest = checks.forest!;
  const m = a.length;
  const regions = verifyRegions(rt.heap);
  // Each document's place in the window (-1 between windows) and cost stay in memory from one call to the next,
  // unless another verification has used the region since: O(documents) once, not per call.
  // Claimed only when the call ends well: one that fails half-way (a set that cannot be read) may leave documents
  // marked in the window, and the next call then starts afresh.
  const kept = regions.selectDocs.parts([4 * n, 8 * n], [checks, source, n]);
  const [localAt, costAt] = kept.at as [number, number];
  if (!kept.kept) {
    const { buffer } = rt.heap.u32;
    new Int32Array(buffer, localAt, n).fill(-1);
    const cost = new Float64Array(buffer, costAt, n);
    for (let d = 0; d < n; d++) cost[d] = source.cost(d);
  }
  const [aAt, bAt, paAt, pbAt, takenAt, outAt, membersAt, forestAt, countsAt] = regions.select.reserveParts([
    ...[4 * m, 4 * m, 4 * m, 4 * m, 4 * m, m],
    ...[4 * Math.min(n, 2 * m), 4 * n, 8],
  ]) as [number, number, number, number, number, number, number, number, number];
  rt.heap.u32.set(a, aAt >>> 2);
  rt.heap.u32.set(b, bAt >>> 2);
  // The kernel's copy of the forest joins what it keeps, as checks.accept does here after it. Only pairs decided
  // here (two wordless texts) join trees it does not: trees of wordless texts alone, whose pairs come back to
  // finalFlag undecided whatever the copy says, so the copy is taken once per call.
  rt.heap.u32.set(forest, forestAt >>> 2);
  for (let p = 0; p < m; ) {
    const next = kernels.selectWindow(
      aAt,
      bAt,
      p,
      m,
      forestAt,
      localAt,
      costAt,
      windowBytes,
      membersAt,
      paAt,
      pbAt,
      takenAt,
      countsAt,
    );
    const [memberCount, pairCount] = rt.heap.u32.subarray(countsAt >>> 2, (countsAt >>> 2) + 2) as unknown as [
      number,
      number,
    ];
    p = next;
    if (pairCount === 0) break;
    const members = Array.from(rt.heap.u32.subarray(membersAt >>> 2, (membersAt >>> 2) + memberCount));
    const built = source.load(rt, members);
    const hist = histogramsFor(rt, built);
    let local = new Int32Array(rt.heap.u32.buffer, localAt, n); // after the loads, which may grow memory
    members.forEach((d, q) => {
      local[d] = q;
    });
    kernels.testShingleSets(
      built.sets,
      built.starts,
      paAt,
      pbAt,
      pairCount,
      options.threshold,
      outAt,
      forestAt,
      localAt,
      hist,
      built.count,
      0,
    );
    const { u8, u32 } = rt.heap;
    for (let q = 0; q < pairCount; q++) {
      const flag = u8[outAt + q]!;
      if (flag === SKIPPED) continue;
      if (flag === 0) {
        checks.checks++;
        continue;
      }
      const at = u32[(takenAt >>> 2) + q]!;
      flags[at] = finalFlag(flag, source, a[at]!, b[at]!, checks);
    }
    local = new Int32Array(u32.buffer, localAt, n);
    for (const d of members) local[d] = -1;
  }
  kept.claim();
}
