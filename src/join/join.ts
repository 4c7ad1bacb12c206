// The all-pairs join driver: copies fingerprints into WebAssembly memory, permutes, sorts and walks the planned
// tables (assembly/join.ts), then sorts the pairs by (a, b) and unpacks them with their distances. With threads,
// pool workers walk shares of the tables (JOIN_TASK) and their pair keys are merged here (mergePairKeys).
import { Region, type Heap } from '../runtime/heap.js';
import { align16 } from '../runtime/marshal.js';
import { offerTasks } from '../runtime/pool-worker.js';
import type { WithSpare } from '../runtime/spare-buffers.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { S_TARGET_SHIFT, S_WIDTH, SEGMENT_BYTES } from './join-layout.shared.js';
import type { Pairs } from '../results.js';
import { type JoinPlan, MAX_DIGIT_BUCKETED, pairSortPasses, tableLayout, tableRule } from './join-plan.js';
import { flipCount, probeFlips, probeMasks } from './join-probe.js';

/**
 * The most pairs a join returns, and the most candidate pairs of distinct texts dedup checks. Each pair costs 33 to
 * 49 bytes of WebAssembly memory at the peak (measured on n identical fingerprints at k = 0): its 8-byte key, up to
 * 8 more of room in the key buffer, which doubles as the walk fills it, up to 16 of the smaller buffers it left free
 * below, and 17 for the sort's copy and the unpacked a, b and distance. The buffer stops growing at this many pairs,
 * so at most 41 bytes each: 2^26 pairs need at most 2.75 GB, leaving room for the fingerprints and tables. With 2^27
 * (up to 5.5 GB), 16,000 identical fingerprints passed the up-front count and failed after a 15 s walk.
 */
export const MAX_JOIN_PAIRS = 2 ** 26;

/**
 * assembly/probe-join.ts's probeIndex: the n fingerprints at `fps` put in order of the `width` bits from `shift`
 * (offsets of each value's run, the fingerprints in that order, their positions). The probe join here and the
 * incremental probe (src/dedup/probe-join.ts) both call it.
 */
export type ProbeIndexKernel = (
  fps: number,
  n: number,
  shift: number,
  width: number,
  offsets: number,
  sorted: number,
  index: number,
) => void;

interface JoinKernels {
  joinHistogram64(
    fps: number,
    n: number,
    segs: number,
    nsegs: number,
    lowShift: number,
    digitBits: number,
    passes: number,
    hist: number,
  ): void;
  joinHistogram128(
    fps: number,
    n: number,
    segs: number,
    nsegs: number,
    lowShift: number,
    digitBits: number,
    passes: number,
    hist: number,
  ): void;
  joinScatter64(
    fps: number,
    srcIdx: number,
    n: number,
    segs: number,
    nsegs: number,
    keys: number,
    idx: number,
    lowShift: number,
    digitBits: number,
    hist: number,
    permuted: boolean,
  ): void;
  joinScatter128(
    fps: number,
    n: number,
    segs: number,
    nsegs: number,
    keys: number,
    los: number,
    idx: number,
    lowShift: number,
    digitBits: number,
    hist: number,
  ): void;
  radixHistogram(keys: number, n: number, lowShift: number, digitBits: number, passes: number, hist: number): void;
  radixSort(
    keysA: number,
    losA: number,
    idxA: number,
    keysB: number,
    losB: number,
    idxB: number,
    n: number,
    lowShift: number,
    digitBits: number,
    fromPass: number,
    passes: number,
    inB: number,
    hist: number,
  ): number;
  joinWalk64(
    keys: number,
    idx: number,
    n: number,
    topMask: bigint,
    k: number,
    masks: number,
    keyMask: bigint,
    earlier: number,
    pairShift: number,
    out: number,
    cap: number,
    state: number,
    roots: number,
    ends: number,
    sizes: number,
    ratio: number,
  ): number;
  joinWalk128(
    keys: number,
    los: number,
    idx: number,
    n: number,
    topMask: bigint,
    k: number,
    masks: number,
    keyMaskHi: bigint,
    keyMaskLo: bigint,
    earlier: number,
    pairShift: number,
    out: number,
    cap: number,
    state: number,
    roots: number,
    ends: number,
    sizes: number,
    ratio: number,
  ): number;
  probeIndex: ProbeIndexKernel;
  joinProbe64(
    sorted: number,
    index: number,
    n: number,
    offsets: number,
    shift: number,
    width: number,
    flips: number,
    nFlips: number,
    k: number,
    prev: number,
    prevRadius: number,
    nPrev: number,
    pairShift: number,
    out: number,
    cap: number,
    state: number,
    roots: number,
    sizes: number,
    ratio: number,
  ): number;
  joinUnpack(
    keys: number,
    count: number,
    pairShift: number,
    fps: number,
    words: number,
    outA: number,
    outB: number,
    outD: number,
  ): void;
}

/** Per-heap reusable memory: it grows to the largest join seen and is reused by later calls. */
interface JoinRegions {
  fps: Region; // the input fingerprints
  tables: Region; // sorted tables, histograms, layouts; later the pair sort and the unpacked pairs
  pairs: Region; // pair keys as the walk emits them
  chunk: Region; // one chunk's pairs unpacked (ChunkWalk)
}
const regionsByHeap = new WeakMap<Heap, JoinRegions[]>();
/** The heap's regions for walk `slot`: walks interleaved on one thread (ChunkWalk) each keep their own tables. */
function joinRegions(heap: Heap, slot = 0): JoinRegions {
  let all = regionsByHeap.get(heap);
  if (!all) {
    all = [];
    regionsByHeap.set(heap, all);
  }
  let r = all[slot];
  if (!r) {
    r = { fps: new Region(heap), tables: new Region(heap), pairs: new Region(heap), chunk: new Region(heap) };
    all[slot] = r;
  }
  return r;
}

/**
 * Runs the planned join in this thread; with `sizes`, without the pairs whose shingle-set sizes rule out the
 * threshold (dedup()'s join under verification).
 */
export function findWithPlan(fps: BigUint64Array, plan: JoinPlan, sizes: SizeFilter | null = null): Pairs {
  const rt = wasm();
  const n = fps.length / (plan.bits / 64);
  if (n < 2) return emptyPairs();
  const { ptr, count, fpsPtr } = walkTables(
    rt,
    fps,
    plan,
    plan.tables.map((_, t) => t),
    null,
    null,
    0,
    sizes,
  );
  return sortAndUnpack(rt, plan.bits, n, ptr, count, fpsPtr);
}

/** Thrown inside walkTables when the pairs pass the budget; caught by its callers. */
const OVER_BUDGET = Symbol('over budget');

/**
 * The pair keys of `tables`, or null when there are more than `budget` of them (the walk stops there): a join that
 * is kept whole only when it is small (dedup's connected clusters), else walked in chunks.
 */
function walkWithinBudget(
  rt: Runtime,
  fps: BigUint64Array,
  plan: JoinPlan,
  tables: readonly number[],
  budget: number | null,
): { ptr: number; count: number; fpsPtr: number } | null {
  try {
    return walkTables(rt, fps, plan, tables, null, budget);
  } catch (error) {
    if (error === OVER_BUDGET) return null;
    throw error;
  }
}

/** findWithPlan, or null when the pairs number more than `budget`. */
export function findWithinBudget(fps: BigUint64Array, plan: JoinPlan, budget: number): Pairs | null {
  const rt = wasm();
  const n = fps.length / (plan.bits / 64);
  if (n < 2) return emptyPairs();
  const walked = walkWithinBudget(
    rt,
    fps,
    plan,
    plan.tables.map((_, t) => t),
    budget,
  );
  return walked && walked.count <= budget
    ? sortAndUnpack(rt, plan.bits, n, walked.ptr, walked.count, walked.fpsPtr)
    : null;
}

/** walkTables' chunked mode: pairs go to `consume` a chunk at a time, and pairs inside one group are skipped. */
interface ChunkedWalk {
  /** Pairs per chunk. */
  chunk: number;
  /** Takes `count` pair keys at `ptr` (WebAssembly memory), emitted over `pairShift`, of the fingerprints at fpsPtr. */
  consume(ptr: number, count: number, pairShift: number, fpsPtr: number): void;
  /** Each fingerprint's group now (NO_GROUP: never skipped); asked for before the walk and after each chunk. */
  roots(): Uint32Array;
  /** Pairs that no verification at this threshold could keep, by their shingle-set sizes: not emitted. */
  sizes: SizeFilter | null;
}

/**
 * The verifier's size rule for the walk: J(A, B) <= |A| / |B| when |A| <= |B|, so a pair of fingerprints whose
 * documents' set sizes are all further apart than `threshold` allows cannot pass verification. On edited copies of
 * real text (bench/near-dup-jsonl.ts) 56 % of the pairs that verification had to test were such pairs: they cost
 * the walk nothing more, where each had cost its expansion, window bookkeeping and a kernel test.
 */
export interface SizeFilter {
  /** The smallest and the largest shingle-set size of each fingerprint's documents (2 u32 per fingerprint). */
  range: Uint32Array;
  threshold: number;
}

/** A fingerprint that walkInChunks must never skip. */
export const NO_GROUP = 0xffffffff;

/** Pairs per chunk of walkInChunks: 4 MiB of pair keys, and about as much again unpacked and expanded to documents. */
export const JOIN_CHUNK_PAIRS = 1 << 19;

/**
 * The plan's pairs within k, walked on this thread and handed to `consume` in chunks of at most `chunk` pairs
 * (fingerprint indices a < b, with distances), in walk order, never all at once: memory holds the tables and one
 * chunk whatever the number of pairs. Before the walk starts and after each chunk, `groups()` gives each
 * fingerprint's group as the caller knows it now (dedup: its cluster so far; NO_GROUP for one never to skip), and a
 * pair of two fingerprints of one group is not emitted; a run of the walk whose members all share a group is
 * skipped whole. Returns the number of pairs handed over.
 */
export function walkInChunks(
  fps: BigUint64Array,
  plan: JoinPlan,
  consume: (pairs: Pairs) => void,
  groups: () => Uint32Array,
  chunk = JOIN_CHUNK_PAIRS,
  sizes: SizeFilter | null = null,
): number {
  const walk = new ChunkWalk(
    fps,
    plan,
    plan.tables.map((_, t) => t),
    groups,
    chunk,
    sizes,
  );
  for (;;) {
    const step = walk.next();
    if (step.pairs.a.length > 0) consume(step.pairs);
    if (step.last) return walk.total;
  }
}

/**
 * A walk of some of the plan's tables (walkInChunks' walk) taken one chunk at a time: each `next()` walks on until
 * a chunk of at most `chunk` pairs is full, or the tables end (`last`: that chunk, which may be empty, ends the
 * walk). `groups()` is asked at the start of each step, so it gives the groups as they stand when the caller asks
 * for the chunk. Walks in different `slot`s keep their tables apart, so one thread may interleave them.
 */
export class ChunkWalk {
  /** Pairs handed out so far. */
  total = 0;
  private readonly steps: Generator<void, WalkedKeys, void> | null;
  /** The chunk the walk has just put down, still packed in WebAssembly memory. */
  private taken: { ptr: number; count: number; pairShift: number; fpsPtr: number } | null = null;
  private ended = false;
  private readonly n: number;
  private readonly rt: Runtime;

  constructor(
    fps: BigUint64Array,
    private readonly plan: JoinPlan,
    tables: readonly number[],
    groups: () => Uint32Array,
    chunk = JOIN_CHUNK_PAIRS,
    sizes: SizeFilter | null = null,
    slot = 0,
  ) {
    this.rt = wasm();
    this.n = fps.length / (plan.bits / 64);
    if (sizes && sizes.range.length !== 2 * this.n)
      throw new RangeError(
        `ChunkWalk: sizes.range must hold 2 entries per fingerprint (${2 * this.n}), got ${sizes.range.length}`,
      );
    const consume = (ptr: number, count: number, pairShift: number, fpsPtr: number): void => {
      this.taken = { ptr, count, pairShift, fpsPtr };
    };
    this.steps =
      this.n < 2 || tables.length === 0
        ? null
        : walkTableSteps(this.rt, fps, plan, tables, { chunk, consume, roots: groups, sizes }, null, slot);
  }

  /** The walk's next chunk of pairs (fingerprint indices a < b, with distances), in walk order. */
  next(): { pairs: Pairs; last: boolean } {
    return this.step(true);
  }

  /**
   * next(), its pairs views of WebAssembly memory that the following call writes over: for a caller that copies
   * them on at once (a walk on a worker into shared memory), without a chunk of garbage per chunk.
   */
  nextViews(): { pairs: Pairs; last: boolean } {
    return this.step(false);
  }

  private step(copy: boolean): { pairs: Pairs; last: boolean } {
    if (this.ended) throw new Error('internal: ChunkWalk.next after its last chunk');
    const step = this.steps?.next();
    if (!step || step.done) {
      this.ended = true;
      const last = step?.value;
      return {
        pairs: last ? this.unpack(last.ptr, last.count, pairShiftFor(this.n), last.fpsPtr, copy) : emptyPairs(),
        last: true,
      };
    }
    const { ptr, count, pairShift, fpsPtr } = this.taken!;
    this.taken = null;
    return { pairs: this.unpack(ptr, count, pairShift, fpsPtr, copy), last: false };
  }

  private unpack(ptr: number, count: number, pairShift: number, fpsPtr: number, copy: boolean): Pairs {
    if (count === 0) return emptyPairs();
    const { heap } = this.rt;
    const half = align16(count * 4);
    const at = joinRegions(heap).chunk.reserve(2 * half + align16(count));
    (this.rt.kernels as unknown as JoinKernels).joinUnpack(
      ptr,
      count,
      pairShift,
      fpsPtr,
      this.plan.bits / 64,
      at,
      at + half,
      at + 2 * half,
    );
    this.total += count;
    const a = heap.u32.subarray(at >>> 2, (at >>> 2) + count);
    const b = heap.u32.subarray((at + half) >>> 2, ((at + half) >>> 2) + count);
    const distance = heap.u8.subarray(at + 2 * half, at + 2 * half + count);
    return copy ? { a: a.slice(), b: b.slice(), distance: distance.slice() } : { a, b, distance };
  }
}

/**
 * Permutes, sorts and walks the given tables; returns the pair keys (in the pairs region) and their count.
 * The fingerprints are copied into WebAssembly memory first.
 *
 * 64-bit plans that sort: the tables whose keys start with the same block are walked together. The fingerprints
 * are scattered once by the top bits of that block (`groupBits`, at most one radix digit), and each bucket, a few
 * hundred KiB at 10^7, is then sorted by one more digit and walked for every table of the group while it stays in
 * cache: a run never crosses a bucket, since the sorted bits begin with the block. That digit is the table's own:
 * the key bits below the group's, up to log2 of the bucket's size and MAX_DIGIT_BUCKETED, so a table whose key is
 * wider than the plan's sortBits gets shorter runs (438,455 fingerprints at k = 12, keys of 12 to 15 bits, sorted
 * on 12 in two passes before: 18-20 s, now 9.5-11.5). Otherwise (128 bits, or compare all) every table is
 * permuted and sorted whole on the plan's sortBits.
 */
function walkTables(...args: Parameters<typeof walkTableSteps>): WalkedKeys {
  const steps = walkTableSteps(...args);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Pair keys in WebAssembly memory: `count` at `ptr`, over the fingerprints copied to `fpsPtr`. */
interface WalkedKeys {
  ptr: number;
  count: number;
  fpsPtr: number;
}

/**
 * walkTables as steps: a chunked walk pauses after each chunk it hands to `consume` (ChunkWalk interleaves walks
 * on one thread that way), in the regions of `slot`.
 */
function* walkTableSteps(
  rt: Runtime,
  fps: BigUint64Array,
  plan: JoinPlan,
  tables: readonly number[],
  chunked: ChunkedWalk | null = null,
  budget: number | null = null,
  slot = 0,
  wholeSizes: SizeFilter | null = null,
): Generator<void, WalkedKeys, void> {
  const { heap } = rt;
  const sizeFilter = chunked?.sizes ?? wholeSizes;
  const kernels = rt.kernels as unknown as JoinKernels;
  const r = joinRegions(heap, slot);
  const words = plan.bits / 64;
  const n = fps.length / words;
  const fpsPtr = r.fps.reserve(fps.byteLength + 16);
  heap.u64.set(fps, fpsPtr >>> 3);

  const b = plan.blocks.length;
  const grouped = words === 1 && plan.sortBits > 0;
  const layouts = tables.map((t) => tableLayout(plan, t));
  const rules = new Map(tables.map((t) => [t, tableRule(plan, t)]));
  let maxSegBytes = SEGMENT_BYTES;
  for (const l of layouts) maxSegBytes = Math.max(maxSegBytes, l.segments.byteLength);
  const histBytes = align16(Math.max(Math.max(1, plan.passes) << plan.digitBits, 1 << MAX_DIGIT_BUCKETED) * 4);
  const keyBytes = align16(n * 8);
  const idxBytes = align16(n * 4);
  const sizes = {
    keysA: keyBytes,
    keysB: keyBytes,
    losA: words === 2 ? keyBytes : 0,
    losB: words === 2 ? keyBytes : 0,
    idxA: idxBytes,
    idxB: idxBytes,
    groupKeys: grouped ? keyBytes : 0,
    groupIdx: grouped ? idxBytes : 0,
    hist: histBytes,
    segs: align16(maxSegBytes),
    masks: b * 8 * words,
    state: 16,
    roots: chunked ? idxBytes : 0,
    // The walk's scratch while roots are in use (u32 per table entry): segment ends, the scan blocks' ends, first
    // members and radii, and the bits in which a block's members differ (u64 per word; assembly/join.ts scanBlocks).
    ends: chunked ? 4 * idxBytes + words * keyBytes : 0,
    sizes: sizeFilter ? align16(n * 8) : 0,
    // A probe plan's offsets of each block value, flips and radii (keysB and idxB hold a block's order).
    offsets: plan.radii ? align16((2 ** Math.max(...plan.blocks.map((x) => x.width)) + 1) * 4) : 0,
    flips: plan.radii ? align16(Math.max(...probeFlipLists(plan).map((f) => f.byteLength))) : 0,
    radii: plan.radii ? align16(plan.radii.length * 4) : 0,
  };
  let at = r.tables.reserve(Object.values(sizes).reduce((s, x) => s + x, 0));
  const p = {} as Record<keyof typeof sizes, number>;
  for (const [name, size] of Object.entries(sizes) as Array<[keyof typeof sizes, number]>) {
    p[name] = size > 0 ? at : 0;
    at += size;
  }

  if (sizeFilter) heap.u32.set(sizeFilter.range, p.sizes >>> 2);
  const ratio = sizeFilter?.threshold ?? 0;
  const pairShift = pairShiftFor(n);
  const lowShift = 64 - plan.sortBits;
  const topMask = plan.sortBits === 0 ? 0n : ((1n << BigInt(plan.sortBits)) - 1n) << BigInt(lowShift);
  // The first pass scatters straight from the fingerprints; a plan that sorts nothing (compare all) still takes
  // one 1-bit pass to lay the table out.
  const passes = Math.max(1, plan.passes);
  const shift = Math.min(lowShift, 63);
  let cap = chunked ? chunked.chunk : Math.max(1024, n >>> 4);
  let out = r.pairs.reserve(cap * 8);
  let count = 0;
  // Chunked: each fingerprint's group is written before the first walk and again after each chunk is consumed.
  let rootsStale = chunked !== null;

  const useLayout = (i: number): number => {
    const layout = layouts[i]!;
    heap.u32.set(layout.segments, p.segs >>> 2);
    heap.u64.set(layout.masks, p.masks >>> 3);
    return layout.segments.byteLength / SEGMENT_BYTES;
  };
  /** Walks the runs of equal `top` bits of a sorted table (m entries), emitting pairs by the table's rule. */
  const walkRuns = function* (
    table: number,
    keys: number,
    los: number,
    idx: number,
    m: number,
    top: bigint,
    key: bigint,
  ): Generator<void, void, void> {
    const { keyWidth, earlier } = rules.get(table)!;
    yield* pump(() =>
      words === 1
        ? kernels.joinWalk64(
            keys,
            idx,
            m,
            top,
            plan.k,
            p.masks,
            key,
            earlier,
            pairShift,
            out + count * 8,
            cap - count,
            p.state,
            p.roots,
            p.ends,
            p.sizes,
            ratio,
          )
        : kernels.joinWalk128(
            keys,
            los,
            idx,
            m,
            top,
            plan.k,
            p.masks,
            key,
            topBits(keyWidth - 64),
            earlier,
            pairShift,
            out + count * 8,
            cap - count,
            p.state,
            p.roots,
            p.ends,
            p.sizes,
            ratio,
          ),
    );
  };
  /**
   * Runs a walk (or a probe) that writes pairs at out + count and stops when the output is full or its table is
   * done (state[2] = 1), until done: chunked, each full output goes to `consume` and the walk pauses; otherwise the
   * output grows, up to the budget and MAX_JOIN_PAIRS.
   */
  const pump = function* (walk: () => number): Generator<void, void, void> {
    heap.u32.fill(0, p.state >>> 2, (p.state >>> 2) + 4);
    for (;;) {
      if (chunked && rootsStale) {
        heap.u32.set(chunked.roots(), p.roots >>> 2);
        rootsStale = false;
      }
      count += walk();
      if (heap.u32[(p.state >>> 2) + 2] === 1) break;
      if (chunked) {
        chunked.consume(out, count, pairShift, fpsPtr);
        count = 0;
        rootsStale = true;
        yield;
        continue;
      }
      // More pairs than the caller's budget: stop (findWithinBudget).
      if (budget !== null && count > budget) throw OVER_BUDGET;
      // More pairs than fit in memory: fail now, not after the walk has filled WebAssembly memory's 4 GiB.
      if (count >= MAX_JOIN_PAIRS) {
        throw new RangeError(
          `the join found more than ${MAX_JOIN_PAIRS} pairs within k = ${plan.k} (more than fit in memory); ` +
            'lower k, or group identical fingerprints first (dedup() does)',
        );
      }
      cap = Math.min(cap * 2, MAX_JOIN_PAIRS + 1, budget === null ? Infinity : budget + 1);
      out = r.pairs.reserve(cap * 8, count * 8);
    }
  };
  /** Sorts the table scattered into B on passes 1 and up, then walks its runs. */
  const sortAndWalk = function* (table: number): Generator<void, void, void> {
    const inB = kernels.radixSort(
      p.keysA,
      p.losA,
      p.idxA,
      p.keysB,
      p.losB,
      p.idxB,
      n,
      shift,
      plan.digitBits,
      1,
      passes,
      1,
      p.hist,
    );
    const keys = inB ? p.keysB : p.keysA;
    const los = inB ? p.losB : p.losA;
    const idx = inB ? p.idxB : p.idxA;
    yield* walkRuns(table, keys, los, idx, n, topMask, topBits(rules.get(table)!.keyWidth));
  };

  if (plan.radii) {
    const flips = probeFlipLists(plan);
    heap.u64.set(probeMasks(plan), p.masks >>> 3);
    heap.u32.set(plan.radii, p.radii >>> 2);
    for (const table of tables) {
      const { start, width } = plan.blocks[table]!;
      heap.u32.set(flips[table]!, p.flips >>> 2);
      kernels.probeIndex(fpsPtr, n, start, width, p.offsets, p.keysB, p.idxB);
      yield* pump(() =>
        kernels.joinProbe64(
          p.keysB,
          p.idxB,
          n,
          p.offsets,
          start,
          width,
          p.flips,
          flips[table]!.length,
          plan.k,
          p.masks,
          p.radii,
          table,
          pairShift,
          out + count * 8,
          cap - count,
          p.state,
          p.roots,
          p.sizes,
          ratio,
        ),
      );
    }
    return { ptr: out, count, fpsPtr };
  }

  if (!grouped) {
    for (const [i, table] of tables.entries()) {
      const nsegs = useLayout(i);
      if (words === 1) {
        // The histogram counts only the sorted bits (lowShift and up), which the leading segments fill: the key
        // blocks come first in every permutation, and a few segments take the kernel's unrolled loops.
        const sorted = leadingSegments(layouts[i]!.segments, shift);
        kernels.joinHistogram64(fpsPtr, n, p.segs, sorted, shift, plan.digitBits, passes, p.hist);
        kernels.joinScatter64(fpsPtr, 0, n, p.segs, nsegs, p.keysB, p.idxB, shift, plan.digitBits, p.hist, true);
      } else {
        kernels.joinHistogram128(fpsPtr, n, p.segs, nsegs, shift, plan.digitBits, passes, p.hist);
        kernels.joinScatter128(fpsPtr, n, p.segs, nsegs, p.keysB, p.losB, p.idxB, shift, plan.digitBits, p.hist);
      }
      yield* sortAndWalk(table);
    }
    return { ptr: out, count, fpsPtr };
  }

  const groups = groupsByFirstBlock(plan, tables);
  const identity = new Uint32Array(SEGMENT_BYTES / 4);
  identity[S_WIDTH / 4] = 64;
  // A bucket is sorted by one scatter, so its entries stay the fingerprints as they are: the scatter computes
  // only the moves that reach its digit, not the whole permutation, and the walk tests runs and rules with masks
  // in the fingerprints' bit order (xor and popcount do not depend on it). 10^7 at k = 3: the in-bucket scatters,
  // applying the whole permutation, took 1.1-1.2 s of 4.3-4.8.
  heap.u64.set(blockMasks(plan), p.masks >>> 3);
  const bucketLayouts = new Map<number, { nsegs: number; masks: Unpermuted }>();
  /** Table i's moves that reach the top `sorted` bits, and its walk masks for runs of those bits. */
  const bucketLayout = (i: number, sorted: number) => {
    const id = i * 65 + sorted;
    let layout = bucketLayouts.get(id);
    if (!layout) {
      const nsegs = leadingSegments(layouts[i]!.segments, 64 - sorted);
      layout = { nsegs, masks: unpermutedMasks(plan, tables[i]!, sorted) };
      bucketLayouts.set(id, layout);
    }
    return layout;
  };
  for (const [first, members] of groups) {
    const block = plan.blocks[first]!;
    const groupBits = Math.min(plan.digitBits, block.width, plan.sortBits);
    const groupShift = block.start + block.width - groupBits;
    heap.u32.set(identity, p.segs >>> 2);
    kernels.joinHistogram64(fpsPtr, n, p.segs, 1, groupShift, groupBits, 1, p.hist);
    kernels.joinScatter64(fpsPtr, 0, n, p.segs, 1, p.groupKeys, p.groupIdx, groupShift, groupBits, p.hist, false);
    // After the scatter, entry d of the histogram is where bucket d ends.
    const ends = heap.u32.slice(p.hist >>> 2, (p.hist >>> 2) + (1 << groupBits));
    let from = 0;
    for (const to of ends) {
      const m = to - from;
      if (m >= 2) {
        const keys = p.groupKeys + from * 8;
        const idx = p.groupIdx + from * 4;
        // Runs of about one fingerprint where the key allows: the digit takes the key bits below the group's,
        // as many as log2 of the bucket's size, at most MAX_DIGIT_BUCKETED.
        const fit = Math.ceil(Math.log2(m));
        for (const i of members) {
          const table = tables[i]!;
          const digit = Math.max(0, Math.min(rules.get(table)!.keyWidth - groupBits, MAX_DIGIT_BUCKETED, fit));
          const { nsegs, masks } = bucketLayout(i, groupBits + digit);
          if (digit === 0) {
            yield* walkRuns(table, keys, 0, idx, m, masks.top, masks.key);
            continue;
          }
          heap.u32.set(layouts[i]!.segments.subarray(0, (nsegs * SEGMENT_BYTES) / 4), p.segs >>> 2);
          const low = 64 - groupBits - digit;
          kernels.joinHistogram64(keys, m, p.segs, nsegs, low, digit, 1, p.hist);
          const sortedKeys = p.keysB + from * 8;
          const sortedIdx = p.idxB + from * 4;
          kernels.joinScatter64(keys, idx, m, p.segs, nsegs, sortedKeys, sortedIdx, low, digit, p.hist, false);
          yield* walkRuns(table, sortedKeys, 0, sortedIdx, m, masks.top, masks.key);
        }
      }
      from = to;
    }
  }
  return { ptr: out, count, fpsPtr };
}

/** Each probed block's flips (probe plans). */
function probeFlipLists(plan: JoinPlan): Uint32Array[] {
  return plan.blocks.map(({ width }, q) => probeFlips(width, plan.radii![q]!));
}

/**
 * The tables split into `shares` for as many threads. walkTables scatters the input once per group of tables
 * that share a first key block, which costs about as much as a table, so a 64-bit plan that sorts is split by
 * whole groups, heaviest first onto the lightest share: 10^7 at k = 3 (groups of 4, 3, 2 and 1 tables) splits
 * 7 : 7 table-costs, where consecutive tables split 7 : 8 and scattered one group twice. A probe plan is split
 * by its tables' probes (probeShares). Other plans, or fewer groups than shares, split into consecutive runs.
 * Every share is non-empty when shares ≤ tables.
 */
export function tableShares(plan: JoinPlan, shares: number): number[][] {
  if (plan.radii) return probeShares(plan, shares);
  const tables = plan.tables.map((_, t) => t);
  const consecutive = () =>
    Array.from({ length: shares }, (_, s) => tables.filter((t) => Math.floor((t * shares) / tables.length) === s));
  if (plan.bits !== 64 || plan.sortBits === 0) return consecutive();
  const groups = groupsByFirstBlock(plan, tables); // positions in `tables`, which are the table numbers here
  if (groups.size < shares) return consecutive();
  return heaviestOntoLightest(
    [...groups.values()].map((group) => ({ tables: group, cost: group.length + 1 })),
    shares,
  );
}

/**
 * A probe plan's tables by their probes per fingerprint (each probes its block's values within its radius), the
 * dearest first onto the cheapest share. In consecutive runs, 2 GB of edited copies (radii 1, 2, 2, 2, 1) split
 * 198 : 105 probes, and the walk of the first three ran alone for the last 8 s of the run (4.7 against 1.1 s of CPU
 * after the hashing).
 */
function probeShares(plan: JoinPlan, shares: number): number[][] {
  return heaviestOntoLightest(
    plan.tables.map((blocks, t) => {
      const q = blocks[0]!;
      return { tables: [t], cost: flipCount(plan.blocks[q]!.width, plan.radii![q]!) };
    }),
    shares,
  );
}

/**
 * Items of tables split into min(shares, items) shares: the heaviest first (ties in the items' order) onto the
 * lightest share so far; each share's tables in ascending order.
 */
function heaviestOntoLightest(items: { tables: number[]; cost: number }[], shares: number): number[][] {
  const out = Array.from({ length: Math.min(shares, items.length) }, () => ({ tables: [] as number[], cost: 0 }));
  for (const item of [...items].sort((x, y) => y.cost - x.cost)) {
    const lightest = out.reduce((a, b) => (b.cost < a.cost ? b : a));
    lightest.tables.push(...item.tables);
    lightest.cost += item.cost;
  }
  return out.map((share) => share.tables.sort((x, y) => x - y));
}

/** The positions in `tables` of the tables whose keys begin with each block (walkTables scatters once per group). */
function groupsByFirstBlock(plan: JoinPlan, tables: readonly number[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  tables.forEach((table, i) => {
    const first = plan.tables[table]![0]!;
    const group = groups.get(first);
    if (group) group.push(i);
    else groups.set(first, [i]);
  });
  return groups;
}

/** A 64-bit table's walk masks in the fingerprints' own bit order (p.masks holds blockMasks'). */
interface Unpermuted {
  /** The bits that the permutation moves to the top `sorted` bits (a run shares them). */
  top: bigint;
  /** The key blocks' bits. */
  key: bigint;
}

const bitRange = (start: number, width: number): bigint => ((1n << BigInt(width)) - 1n) << BigInt(start);

/** Each block's bits in the fingerprints' own bit order (p.masks' layout). */
function blockMasks(plan: JoinPlan): BigUint64Array {
  return BigUint64Array.from(plan.blocks, ({ start, width }) => bitRange(start, width));
}

function unpermutedMasks(plan: JoinPlan, table: number, sorted: number): Unpermuted {
  let top = 0n;
  let key = 0n;
  let left = sorted;
  // The key blocks lead the permutation in table order, each with its bits in order, so the sorted bits are the
  // top bits of the first key blocks.
  for (const id of plan.tables[table]!) {
    const { start, width } = plan.blocks[id]!;
    key |= bitRange(start, width);
    const take = Math.min(width, left);
    if (take > 0) top |= bitRange(start + width - take, take);
    left -= take;
  }
  return { top, key };
}

/** How many of a permutation's leading moves reach bit `shift` or above (the key blocks' moves come first). */
function leadingSegments(segments: Uint32Array, shift: number): number {
  const moves = segments.length / (SEGMENT_BYTES / 4);
  let m = 0;
  while (m < moves) {
    const at = (m * SEGMENT_BYTES) / 4;
    if (segments[at + S_TARGET_SHIFT / 4]! + segments[at + S_WIDTH / 4]! <= shift) break;
    m++;
  }
  return m;
}

/** The top `width` bits of a word (none for width ≤ 0, all for width ≥ 64): a table's key in permuted coordinates. */
function topBits(width: number): bigint {
  if (width <= 0) return 0n;
  const w = Math.min(width, 64);
  return ((1n << BigInt(w)) - 1n) << BigInt(64 - w);
}

/** Where a pair key (a << shift | b, a < b) of a join over n fingerprints puts a: enough bits for any b. */
export function pairShiftFor(n: number): number {
  return Math.max(1, Math.ceil(Math.log2(n)));
}

/** This heap's region for pair keys as a join emits them (dedup's band join writes its keys there too). */
export function pairKeysRegion(heap: Heap): Region {
  return joinRegions(heap).pairs;
}

/** Sorts pair keys by (a, b) and splits them into the result arrays with distances. */
function sortAndUnpack(rt: Runtime, bits: 64 | 128, n: number, ptr: number, count: number, fpsPtr: number): Pairs {
  const { heap } = rt;
  const kernels = rt.kernels as unknown as JoinKernels;
  const r = joinRegions(heap);
  const pairShift = pairShiftFor(n);
  const { passes, digitBits } = pairSortPasses(2 * pairShift);
  const histBytes = align16(passes * (1 << digitBits) * 4);
  const keyBytes = align16(count * 8);
  const tmp = r.tables.reserve(keyBytes + histBytes + 2 * align16(count * 4) + align16(count));
  const hist = tmp + keyBytes;
  const outA = hist + histBytes;
  const outB = outA + align16(count * 4);
  const outD = outB + align16(count * 4);
  kernels.radixHistogram(ptr, count, 0, digitBits, passes, hist);
  const inB = kernels.radixSort(ptr, 0, 0, tmp, 0, 0, count, 0, digitBits, 0, passes, 0, hist);
  kernels.joinUnpack(inB ? tmp : ptr, count, pairShift, fpsPtr, bits / 64, outA, outB, outD);
  return {
    a: heap.u32.slice(outA >>> 2, (outA >>> 2) + count),
    b: heap.u32.slice(outB >>> 2, (outB >>> 2) + count),
    distance: heap.u8.slice(outD, outD + count),
  };
}

/** Combines pair keys computed elsewhere (workers): they are copied in, sorted and unpacked here. */
export function mergePairKeys(rt: Runtime, fps: BigUint64Array, plan: JoinPlan, parts: BigUint64Array[]): Pairs {
  const { heap } = rt;
  let count = 0;
  for (const part of parts) count += part.length;
  // No pairs: nothing to sort, and no distances to take from a copy of the fingerprints.
  if (count === 0) return emptyPairs();
  const ptr = pairKeysRegion(heap).reserve(count * 8 + 16);
  let at = ptr >>> 3;
  for (const part of parts) {
    heap.u64.set(part, at);
    at += part.length;
  }
  return sortPairKeys(rt, fps, plan.bits, ptr, count);
}

/**
 * Sorts the `count` pair keys at `ptr` (in the pairs region; see pairShiftFor) of a join over `fps` by (a, b) and
 * unpacks them, with each pair's distance from the fingerprints (copied in).
 */
export function sortPairKeys(rt: Runtime, fps: BigUint64Array, bits: 64 | 128, ptr: number, count: number): Pairs {
  const fpsPtr = joinRegions(rt.heap).fps.reserve(fps.byteLength + 16);
  rt.heap.u64.set(fps, fpsPtr >>> 3);
  return sortAndUnpack(rt, bits, fps.length / (bits / 64), ptr, count, fpsPtr);
}

/** The pool task that walks some of a plan's tables and returns their pair keys. */
export const JOIN_TASK = 'join-tables';

export interface JoinTask {
  /** A copy of the fingerprints in a buffer of their own, transferred (a structured clone of 80 MB costs ~1 s). */
  fps: BigUint64Array;
  plan: JoinPlan;
  tables: number[];
  /** The most pairs wanted: past it the worker stops and returns null. */
  budget?: number;
}

offerTasks({
  [JOIN_TASK]: (task: JoinTask) => {
    const rt = wasm();
    const walked = walkWithinBudget(rt, task.fps, task.plan, task.tables, task.budget ?? null);
    const spare = task.fps.buffer as ArrayBuffer;
    if (!walked) {
      const over: WithSpare<BigUint64Array | null> = { value: null, spare };
      return { result: over, transfer: [spare] };
    }
    const keys = rt.heap.u64.slice(walked.ptr >>> 3, (walked.ptr >>> 3) + walked.count);
    // The pair keys of its tables, and the fingerprints' buffer for the next copy.
    const result: WithSpare<BigUint64Array> = { value: keys, spare };
    return { result, transfer: [keys.buffer as ArrayBuffer, spare] };
  },
});

export function emptyPairs(): Pairs {
  return { a: new Uint32Array(0), b: new Uint32Array(0), distance: new Uint8Array(0) };
}
