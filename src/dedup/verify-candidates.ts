// The candidate pairs that dedup() and dedupStream keep: verified by shingle Jaccard through pair-checks.ts with the
// skipping rule of the cluster mode (every pair when all pairs are asked for), or, without verification, every pair
// (a spanning forest of them for connected clusters explained). Connected clusters explained (the default) take
// the join's pairs a chunk at a time as the join walks (joinAndVerify), so no more than a chunk of candidate pairs
// is ever held and pairs inside a cluster already formed are not even emitted. One machinery for both paths: only
// where the sets come from differs.
import type { Pairs } from '../results.js';
import { ChunkWalk, JOIN_CHUNK_PAIRS, NO_GROUP, type SizeFilter, emptyPairs, tableShares } from '../join/join.js';
import type { JoinPlan } from '../join/join-plan.js';
import {
  type Collapsed,
  type PairsMode,
  type Rows,
  sortedByKey,
  candidatePairs,
  fingerprintKeys,
  indices,
  mapped,
  sortPairs,
  spanningPairs,
} from './dedup-groups.js';
import { forestJoin, forestRoot } from './forest.js';
import { PairChecks, type SetSource, pairFlags } from './pair-checks.js';
import { type PrebuiltSets, verifyRegions } from './shingle-sets.js';
import { wasm } from '../runtime/wasm.js';
import { keepFlagged } from './verify-pairs.js';

export interface CandidateChecks {
  verify: { threshold: number; width: number } | false;
  mode: 'connected' | 'centre';
  pairsMode: PairsMode;
  /** Where the sets come from (any value when verify is false). */
  source: SetSource | null;
  windowBytes: number;
  prebuilt?: PrebuiltSets | null;
}

/**
 * The kept pairs of `candidates` (ordered by (a, b): clusters then form early) over n documents, and how many pairs
 * were tested. Connected clusters explained: a pair whose documents are already connected is not tested; centre
 * clusters explained: a pair that cannot make a centre take a document is not tested. The clusters are those of
 * testing every pair.
 */
export function verifiedCandidates(
  n: number,
  candidates: Pairs,
  o: CandidateChecks,
): { verified: Pairs; checks: number } {
  if (!o.verify || !o.source) {
    const explained = o.mode === 'connected' && o.pairsMode === 'explain';
    return { verified: explained ? spanningPairs(n, candidates) : candidates, checks: 0 };
  }
  const checks =
    o.pairsMode === 'all' ? PairChecks.all() : o.mode === 'connected' ? PairChecks.connected(n) : PairChecks.centre(n);
  const flags = pairFlags(n, o.source, candidates.a, candidates.b, o.verify, checks, o.windowBytes, o.prebuilt ?? null);
  return { verified: keepFlagged(candidates, flags), checks: checks.checks };
}

/**
 * Connected clusters explained, from the join of the distinct fingerprints (`plan` over groups.distinctFps): pairs
 * of distinct texts with one fingerprint first (verified before the first chunk is, while the walks put down their
 * first chunks), then the join's pairs a chunk at a time, each chunk expanded to
 * documents and verified at once (a pair already connected is skipped), the walk told each fingerprint's cluster
 * as it goes, so that pairs inside one cluster are not emitted at all: a group of m near-duplicates costs about m
 * checks and O(m) per run of the join once it is one cluster, and memory holds a few chunks, not every candidate
 * pair. The tables are walked as walkShares' walks, whose chunks are verified in turn (verifiedBefore). Returns the
 * kept pairs (a spanning forest of the clusters over n documents), the candidate pairs handed to verification and
 * the checks made.
 */
export function joinAndVerify(
  n: number,
  groups: Collapsed,
  plan: JoinPlan,
  o: Omit<CandidateChecks, 'mode' | 'pairsMode'>,
): JoinedAndVerified {
  const v = new ChunkVerifier(n, groups, o);
  const shares = walkShares(plan);
  const walks = shares.map(
    (tables, w) => new ChunkWalk(groups.distinctFps, plan, tables, () => v.roots(), walkChunk.pairs, v.sizeFilter, w),
  );
  // The walks take turns on this thread as they run side by side on workers (join-beside.ts): each chunk is
  // walked with the clusters of the positions before verifiedBefore, so both paths walk the same pairs in
  // the same order, and give the same pairs, checks and candidates.
  const ended = walks.map(() => false);
  const held: Pairs[] = [];
  let verified = 0;
  for (let p = 0; ended.includes(false); p++) {
    const w = p % walks.length;
    while (verified < verifiedBefore(p, walks.length)) {
      v.take(held.shift()!);
      verified++;
    }
    if (ended[w]) {
      held.push(emptyPairs());
      continue;
    }
    const step = walks[w]!.next();
    ended[w] = step.last;
    held.push(step.pairs);
  }
  for (const pairs of held) v.take(pairs);
  return v.result();
}

/**
 * How many walks share the join's tables (fewer only when the plan has fewer tables). The tables' chunks come
 * unevenly: the first tables emit nearly every pair (a pair belongs to the first table whose key it agrees on),
 * the last ones walk as long for few, so one walk beside the verifier left each waiting on the other (2 GB of
 * edited copies: the walk 14 s and verification 14 s took 20 s side by side); two walks share the tail.
 */
export const WALKS = 2;

/** The tables of each walk: tableShares' split, whole groups of tables that scatter together. */
export function walkShares(plan: JoinPlan): number[][] {
  return tableShares(plan, Math.max(1, Math.min(WALKS, plan.tables.length)));
}

/**
 * The order of the walks' chunks: position p belongs to walk p % walks (a walk that has ended leaves its positions
 * empty), and is walked with the clusters after positions 0 … verifiedBefore(p) - 1 are verified: each walk goes on
 * while its own last walkLag chunks, and the other walks', are verified.
 */
export function verifiedBefore(p: number, walks: number): number {
  return Math.max(0, p - walks * walkLag(walks));
}

/**
 * Chunks of its own by which a walk may run ahead of verification. One walk (a plan of one table: compare all)
 * stays one chunk ahead: one group of 10^4 near-duplicates took 125 ms at one, 178 ms at four, for the pairs
 * inside the cluster forming that the walk emits before it is told of it. Two walks go three ahead: the stretches
 * where verification is the slower side and those where the walks are then even out (2 GB of edited copies on two
 * threads: 29.8-29.9 s at one chunk, 28.0-28.2 at three, 28.1 at six, with 0.5 % more candidates and 1.28-1.30
 * against 1.25 GB of peak memory); what more they emit is bounded by the lag, not by a group's size.
 */
export function walkLag(walks: number): number {
  return walks > 1 ? 3 : 1;
}

/** Pairs per chunk of joinAndVerify's walk (tests make it small, so that a small corpus walks in many chunks). */
export const walkChunk = { pairs: JOIN_CHUNK_PAIRS };

/**
 * The fingerprints' indices by their keys (fingerprintKeys), ties in index order: the order of the set store's file
 * (set-store.ts), so that a window of pairs inside groups, taken in this order, reads its sets in few runs (in group
 * order, on 2 GB of edited copies, the first windows took 37 k reads of 5 KB). The groups are disjoint: their order
 * changes no pair's verdict.
 */
function byFingerprint(fps: BigUint64Array, count: number): Uint32Array {
  return sortedByKey(indices(0, count), fingerprintKeys(fps, count === 0 ? 1 : fps.length / count));
}

/**
 * joinAndVerify's side of the walk: takes the join's chunks of fingerprint pairs in walk order, verifies them, and
 * says each fingerprint's cluster so far (roots()) for the walk to skip pairs inside one. The walk may run on this
 * thread or on a worker beside it (join-beside.ts), told the clusters as late either way (verifiedBefore).
 */
export class ChunkVerifier {
  /** The rule the walk applies to set sizes (or null: no sizes known before verification). */
  readonly sizeFilter: SizeFilter | null;
  private readonly checks: PairChecks;
  private readonly forest: Uint32Array;
  private readonly kept: { a: Uint32Array; b: Uint32Array; distance: Uint8Array; count: number };
  private readonly rows: Rows;
  private readonly members: Uint32Array;
  private readonly batch: DocumentPairBatch;
  private readonly clusterOfFp: Uint32Array;
  private candidates = 0;
  private verifyMs = 0;
  /** The fingerprints, for the order of verifyWithin's pairs; and whether it has run. */
  private readonly distinctFps: BigUint64Array;
  private withinDone = false;

  constructor(
    n: number,
    groups: Collapsed,
    private readonly o: Omit<CandidateChecks, 'mode' | 'pairsMode'>,
  ) {
    this.checks = PairChecks.connected(n);
    this.forest = this.checks.forest!;
    this.kept = { a: new Uint32Array(n), b: new Uint32Array(n), distance: new Uint8Array(n), count: 0 };
    this.rows = groups.fpGroups;
    this.members = mapped(this.rows.members, groups.joined);
    const sizes = o.verify && o.source ? documentSetSizes(n, o.source, o.prebuilt ?? null) : null;
    const threshold = o.verify ? o.verify.threshold : 0;
    this.sizeFilter = sizes ? { range: sizeRanges(this.rows, this.members, sizes), threshold } : null;
    this.batch = new DocumentPairBatch(this.forest, (pairs) => this.verify(n, pairs), sizes, threshold);
    this.clusterOfFp = new Uint32Array(this.rows.start.length - 1);
    this.distinctFps = groups.distinctFps;
  }

  /**
   * Verifies the pairs of distinct texts with one fingerprint, once, before the join's first chunk (take calls it).
   * The walks' first chunks are walked with the clusters from before it, on both paths, so a caller may start the
   * walks first and verify these meanwhile (join-beside.ts: 1.8 s of the 2 GB run).
   */
  verifyWithin(): void {
    if (this.withinDone) return;
    this.withinDone = true;
    this.batch.within(this.rows, this.members, byFingerprint(this.distinctFps, this.rows.start.length - 1));
    this.batch.flush();
  }

  /** A chunk of the join's pairs of fingerprints, in walk order. */
  take(pairs: Pairs): void {
    this.verifyWithin();
    this.batch.across(this.rows, this.members, pairs);
    this.batch.flush();
  }

  /** Each fingerprint's cluster: its documents' one cluster, or NO_GROUP while they are in several. */
  roots(): Uint32Array {
    const { start } = this.rows;
    const { forest, members, clusterOfFp } = this;
    for (let q = 0; q < clusterOfFp.length; q++) {
      const s = start[q]!;
      const e = start[q + 1]!;
      const r = forestRoot(forest, members[s]!);
      let one = true;
      for (let x = s + 1; x < e && one; x++) one = forestRoot(forest, members[x]!) === r;
      clusterOfFp[q] = one ? r : NO_GROUP;
    }
    return clusterOfFp;
  }

  result(): JoinedAndVerified {
    const { kept } = this;
    const verified = {
      a: kept.a.slice(0, kept.count),
      b: kept.b.slice(0, kept.count),
      distance: kept.distance.slice(0, kept.count),
    };
    return { verified, checks: this.checks.checks, candidates: this.candidates, verifyMs: this.verifyMs };
  }

  private verify(n: number, pairs: Pairs): void {
    const t0 = performance.now();
    const { o, kept, forest } = this;
    this.candidates += pairs.a.length;
    const flags =
      o.verify && o.source
        ? pairFlags(n, o.source, pairs.a, pairs.b, o.verify, this.checks, o.windowBytes, o.prebuilt)
        : null;
    for (let p = 0; p < pairs.a.length; p++) {
      // Without verification every pair is similar: it is kept when it joins two trees.
      if (flags ? flags[p] === 0 : !forestJoin(forest, pairs.a[p]!, pairs.b[p]!)) continue;
      kept.a[kept.count] = pairs.a[p]!;
      kept.b[kept.count] = pairs.b[p]!;
      kept.distance[kept.count++] = pairs.distance[p]!;
    }
    this.verifyMs += performance.now() - t0;
  }
}

/**
 * Each document's shingle-set size, where the source knows them all before verification (the set store of the
 * streaming pass, or dedup's one pass); else null.
 */
function documentSetSizes(n: number, source: SetSource, prebuilt: PrebuiltSets | null): Uint32Array | null {
  if (prebuilt) return prebuiltSetSizes(n, prebuilt);
  if (!source.setSize) return null;
  const sizes = new Uint32Array(n);
  for (let d = 0; d < n; d++) sizes[d] = source.setSize(d);
  return sizes;
}

/** Each of the n documents' set size from dedup's one pass, or null when a document has no set. */
function prebuiltSetSizes(n: number, prebuilt: PrebuiltSets): Uint32Array | null {
  const sizes = new Uint32Array(n);
  for (let d = 0; d < n; d++) {
    const set = prebuilt.setOf[d]!;
    if (set < 0) return null;
    sizes[d] = prebuilt.setSizes[set]!;
  }
  return sizes;
}

/**
 * The walks' size rule for a join of the distinct fingerprints from dedup's one pass (the sizes of its n
 * documents' sets), or null when a document has no set.
 */
export function prebuiltSizeFilter(
  n: number,
  groups: Collapsed,
  prebuilt: PrebuiltSets,
  threshold: number,
): SizeFilter | null {
  const sizes = prebuiltSetSizes(n, prebuilt);
  if (!sizes) return null;
  return { range: sizeRanges(groups.fpGroups, mapped(groups.fpGroups.members, groups.joined), sizes), threshold };
}

/** The smallest and the largest set size among each fingerprint's documents (SizeFilter.range). */
function sizeRanges(rows: Rows, members: Uint32Array, sizes: Uint32Array): Uint32Array {
  const fpCount = rows.start.length - 1;
  const range = new Uint32Array(2 * fpCount);
  for (let q = 0; q < fpCount; q++) {
    let lo = 0xffffffff;
    let hi = 0;
    for (let x = rows.start[q]!; x < rows.start[q + 1]!; x++) {
      const size = sizes[members[x]!]!;
      lo = Math.min(lo, size);
      hi = Math.max(hi, size);
    }
    range[2 * q] = lo;
    range[2 * q + 1] = hi;
  }
  return range;
}

/**
 * Whether two documents with sets of sizes x and y may reach Jaccard `threshold`: J <= min / max. The verifier rejects
 * exactly when min < threshold * max (up to its own 1e-9), and the slack keeps this on the safe side of it (the
 * kernel's walk applies the same rule, assembly/join.ts sizesMayPass).
 */
export function sizesMayPass(x: number, y: number, threshold: number): boolean {
  return !(Math.min(x, y) < threshold * Math.max(x, y) - 1e-6);
}

/** Document pairs that joinAndVerify verifies at a time: 2^20 take 9 MiB. */
const DOCUMENT_PAIR_BATCH = 1 << 20;

/** acrossPairs' state: a fingerprint pair not started yet. */
const NOT_STARTED = 0xffffffff;

interface DocumentPairKernels {
  acrossPairs(
    start: number,
    members: number,
    fa: number,
    fb: number,
    fd: number,
    n: number,
    forest: number,
    sizes: number,
    threshold: number,
    outA: number,
    outB: number,
    outD: number,
    count: number,
    capacity: number,
    state: number,
  ): number;
}

/**
 * The document pairs that pairs of fingerprints (and each fingerprint's own distinct texts) stand for, handed to
 * `take` a bounded batch at a time, in order, without the pairs already connected when they are reached: a
 * fingerprint shared by g distinct texts stands for g²/2 pairs and a pair of such fingerprints for g², nearly all
 * connected once a few are verified (a group of 10^5 near-duplicates once expanded a chunk of 2^19 fingerprint
 * pairs into 44 M document pairs). Skipping them here is what the verifier's connected rule would do with them
 * later, so the kept pairs are the same; a group pair whose two sides are each one tree, and the same one, is
 * skipped in O(|A| + |B|). (Exported for its test against the plain expansion.)
 */
export class DocumentPairBatch {
  private readonly a: Uint32Array;
  private readonly b: Uint32Array;
  private readonly distance: Uint8Array;
  private count = 0;

  constructor(
    private readonly forest: Uint32Array,
    private readonly take: (pairs: Pairs) => void,
    /**
     * Each document's set size, or null: pairs that sizesMayPass rules out are never handed to `take` (the walk
     * rules out those of two one-document fingerprints, the same rule on the same sizes).
     */
    private readonly sizes: Uint32Array | null = null,
    private readonly threshold = 0,
    capacity = DOCUMENT_PAIR_BATCH,
  ) {
    this.a = new Uint32Array(capacity);
    this.b = new Uint32Array(capacity);
    this.distance = new Uint8Array(capacity);
  }

  /** All pairs inside each group of `rows` (members given as documents), at distance 0. */
  within(rows: Rows, members: Uint32Array, order: Uint32Array): void {
    const { start } = rows;
    for (const g of order) {
      const s = start[g]!;
      const e = start[g + 1]!;
      if (e - s < 2 || this.oneTree(members, s, e) !== -1) continue;
      for (let x = s; x + 1 < e; x++) for (let y = x + 1; y < e; y++) this.push(members[x]!, members[y]!, 0);
    }
  }

  /**
   * The pairs across each pair of groups (ga, gb, distance), expanded in WebAssembly (acrossPairs), which stops
   * whenever the batch is full so that it is handed on and the forest it is told of is the one after that.
   */
  across(rows: Rows, members: Uint32Array, pairs: Pairs): void {
    const n = pairs.a.length;
    if (n === 0) return;
    this.flush();
    const rt = wasm();
    const kernels = rt.kernels as unknown as DocumentPairKernels;
    const capacity = this.a.length;
    const docs = this.forest.length;
    const sizes = this.sizes;
    const regions = verifyRegions(rt.heap);
    // The fingerprints' documents and their sizes stay in place from one chunk to the next (O(documents) once, not
    // per chunk), unless another verifier has used the region since.
    const kept = regions.batchDocs.parts(
      [4 * rows.start.length, 4 * members.length, sizes ? 4 * docs : 0],
      [this, rows.start, members],
    );
    const [startAt, membersAt, sizesAt] = kept.at as [number, number, number];
    if (!kept.kept) {
      const { u32 } = rt.heap;
      u32.set(rows.start, startAt >>> 2);
      u32.set(members, membersAt >>> 2);
      if (sizes) u32.set(sizes, sizesAt >>> 2);
    }
    kept.claim();
    const [faAt, fbAt, fdAt, forestAt, outA, outB, outD, stateAt] = regions.batch.reserveParts([
      ...[4 * n, 4 * n, n, 4 * docs],
      ...[4 * capacity, 4 * capacity, capacity, 12],
    ]) as [number, number, number, number, number, number, number, number];
    {
      const { u32, u8 } = rt.heap;
      u32.set(pairs.a, faAt >>> 2);
      u32.set(pairs.b, fbAt >>> 2);
      u8.set(pairs.distance, fdAt);
      u32.set([0, NOT_STARTED, NOT_STARTED], stateAt >>> 2);
    }
    for (;;) {
      rt.heap.u32.set(this.forest, forestAt >>> 2); // as the pairs handed on so far have left it
      const count = kernels.acrossPairs(
        ...[startAt, membersAt, faAt, fbAt, fdAt, n, forestAt, sizes ? sizesAt : 0, this.threshold],
        ...[outA, outB, outD, 0, capacity, stateAt],
      );
      const { u32, u8 } = rt.heap;
      this.a.set(u32.subarray(outA >>> 2, (outA >>> 2) + count));
      this.b.set(u32.subarray(outB >>> 2, (outB >>> 2) + count));
      this.distance.set(u8.subarray(outD, outD + count));
      this.count = count;
      if (u32[stateAt >>> 2] === n) return;
      this.flush();
    }
  }

  flush(): void {
    if (this.count === 0) return;
    const c = this.count;
    this.count = 0;
    this.take({ a: this.a.subarray(0, c), b: this.b.subarray(0, c), distance: this.distance.subarray(0, c) });
  }

  private push(u: number, v: number, d: number): void {
    if (this.sizes && !sizesMayPass(this.sizes[u]!, this.sizes[v]!, this.threshold)) return;
    this.add(u, v, d);
  }

  /** push without the size rule (for a pair the walk has held to it already). */
  private add(u: number, v: number, d: number): void {
    if (forestRoot(this.forest, u) === forestRoot(this.forest, v)) return;
    const c = this.count;
    this.a[c] = Math.min(u, v);
    this.b[c] = Math.max(u, v);
    this.distance[c] = d;
    if (++this.count === this.a.length) this.flush();
  }

  /** The root of the one tree that members[s..e) are all in, or -1. */
  private oneTree(members: Uint32Array, s: number, e: number): number {
    const r = forestRoot(this.forest, members[s]!);
    for (let x = s + 1; x < e; x++) if (forestRoot(this.forest, members[x]!) !== r) return -1;
    return r;
  }
}

/**
 * The most candidate pairs (of distinct fingerprints) that dedup joins whole under connected clusters explained:
 * up to this many, the join runs first (on threads where asked) and its pairs are verified in (a, b) order; beyond,
 * it is walked in chunks (joinAndVerify). 4 Mi pairs take about 150 MB on the way.
 */
export const WHOLE_JOIN_PAIRS = 1 << 22;

/** Whether dedup may walk the join in chunks with verification (joinAndVerify) rather than joining first. */
export function joinsInChunks(o: Pick<CandidateChecks, 'mode' | 'pairsMode'>, fingerprints: number): boolean {
  return o.mode === 'connected' && o.pairsMode === 'explain' && fingerprints >= 2;
}

export interface JoinedAndVerified {
  verified: Pairs;
  checks: number;
  candidates: number;
  /** Milliseconds in verification (interleaved with the join when the join is walked in chunks). */
  verifyMs: number;
}

/**
 * dedup()'s and dedupStream's stage from grouped documents to kept pairs: with `found` (the join of the distinct
 * fingerprints, done by the caller), its candidate pairs in (a, b) order verified by verifiedCandidates; without
 * (joinsInChunks), the join walked in chunks by joinAndVerify.
 */
export function joinedAndVerified(
  n: number,
  groups: Collapsed,
  plan: JoinPlan,
  found: Pairs | null,
  o: CandidateChecks,
): JoinedAndVerified {
  if (found === null) return joinAndVerify(n, groups, plan, o);
  const candidates = sortPairs(n, candidatePairs(groups, found));
  const t0 = performance.now();
  const { verified, checks } = verifiedCandidates(n, candidates, o);
  return { verified, checks, candidates: candidates.a.length, verifyMs: performance.now() - t0 };
}
