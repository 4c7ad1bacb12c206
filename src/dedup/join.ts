// The all-pairs join driver: copies fingerprints into WebAssembly memory, permutes, sorts and walks the planned
// tables (assembly/join.ts), then sorts the pairs by (a, b) and unpacks them with their distances. With threads,
// pool workers walk shares of the tables (JOIN_TASK) and their pair keys are merged here (mergePairKeys).
import { Region, type Heap } from '../runtime/heap.js';
import { align16 } from '../runtime/marshal.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { wasm, type Runtime } from '../runtime/wasm.js';
import { SEGMENT_BYTES } from './join-layout.shared.js';
import { type JoinPlan, canonicalTables, pairSortPasses, tableLayout } from './join-plan.js';

/** Near-duplicate pairs, ordered by (a, b): a < b, distance = Hamming distance of fingerprints a and b. */
export interface NearDuplicatePairs {
  a: Uint32Array;
  b: Uint32Array;
  distance: Uint8Array;
}

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
    n: number,
    segs: number,
    nsegs: number,
    keys: number,
    idx: number,
    lowShift: number,
    digitBits: number,
    hist: number,
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
    b: number,
    canon: number,
    table: number,
    pairShift: number,
    out: number,
    cap: number,
    state: number,
  ): number;
  joinWalk128(
    keys: number,
    los: number,
    idx: number,
    n: number,
    topMask: bigint,
    k: number,
    masks: number,
    b: number,
    canon: number,
    table: number,
    pairShift: number,
    out: number,
    cap: number,
    state: number,
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
}
const regionsByHeap = new WeakMap<Heap, JoinRegions>();
function joinRegions(heap: Heap): JoinRegions {
  let r = regionsByHeap.get(heap);
  if (!r) {
    r = { fps: new Region(heap), tables: new Region(heap), pairs: new Region(heap) };
    regionsByHeap.set(heap, r);
  }
  return r;
}

/** Runs the planned join in this thread. */
export function findWithPlan(fps: BigUint64Array, plan: JoinPlan): NearDuplicatePairs {
  const rt = wasm();
  const n = fps.length / (plan.bits / 64);
  if (n < 2) return emptyPairs();
  const { ptr, count, fpsPtr } = walkTables(
    rt,
    fps,
    plan,
    plan.tables.map((_, t) => t),
  );
  return sortAndUnpack(rt, plan, n, ptr, count, fpsPtr);
}

/**
 * Permutes, sorts and walks the given tables; returns the pair keys (in the pairs region) and their count.
 * The fingerprints are copied into WebAssembly memory first.
 */
export function walkTables(
  rt: Runtime,
  fps: BigUint64Array,
  plan: JoinPlan,
  tables: readonly number[],
): { ptr: number; count: number; fpsPtr: number } {
  const { heap } = rt;
  const kernels = rt.kernels as unknown as JoinKernels;
  const r = joinRegions(heap);
  const words = plan.bits / 64;
  const n = fps.length / words;
  const fpsPtr = r.fps.reserve(fps.byteLength + 16);
  heap.u64.set(fps, fpsPtr >>> 3);

  const b = plan.blocks.length;
  const canon = canonicalTables(plan);
  const layouts = tables.map((t) => tableLayout(plan, t));
  let maxSegBytes = 0;
  for (const l of layouts) maxSegBytes = Math.max(maxSegBytes, l.segments.byteLength);
  const histBytes = align16(Math.max(1, plan.passes) * (1 << plan.digitBits) * 4);
  const keyBytes = align16(n * 8);
  const idxBytes = align16(n * 4);
  const sizes = {
    keysA: keyBytes,
    keysB: keyBytes,
    losA: words === 2 ? keyBytes : 0,
    losB: words === 2 ? keyBytes : 0,
    idxA: idxBytes,
    idxB: idxBytes,
    hist: histBytes,
    segs: align16(maxSegBytes),
    masks: b * 8 * words,
    canon: align16(canon.byteLength),
    state: 16,
  };
  let at = r.tables.reserve(Object.values(sizes).reduce((s, x) => s + x, 0));
  const p = {} as Record<keyof typeof sizes, number>;
  for (const [name, size] of Object.entries(sizes) as Array<[keyof typeof sizes, number]>) {
    p[name] = size > 0 ? at : 0;
    at += size;
  }
  heap.u16.set(canon, p.canon >>> 1);

  const pairShift = Math.max(1, Math.ceil(Math.log2(n)));
  const lowShift = 64 - plan.sortBits;
  const topMask = plan.sortBits === 0 ? 0n : ((1n << BigInt(plan.sortBits)) - 1n) << BigInt(lowShift);
  let cap = Math.max(1024, n >>> 4);
  let out = r.pairs.reserve(cap * 8);
  let count = 0;
  tables.forEach((table, i) => {
    const layout = layouts[i]!;
    heap.u32.set(layout.segments, p.segs >>> 2);
    heap.u64.set(layout.masks, p.masks >>> 3);
    const nsegs = layout.segments.byteLength / SEGMENT_BYTES;
    // The first pass scatters straight from the fingerprints into B; a plan that sorts nothing (compare all)
    // still takes one 1-bit pass to lay the table out.
    const passes = Math.max(1, plan.passes);
    const shift = Math.min(lowShift, 63);
    if (words === 1) {
      kernels.joinHistogram64(fpsPtr, n, p.segs, nsegs, shift, plan.digitBits, passes, p.hist);
      kernels.joinScatter64(fpsPtr, n, p.segs, nsegs, p.keysB, p.idxB, shift, plan.digitBits, p.hist);
    } else {
      kernels.joinHistogram128(fpsPtr, n, p.segs, nsegs, shift, plan.digitBits, passes, p.hist);
      kernels.joinScatter128(fpsPtr, n, p.segs, nsegs, p.keysB, p.losB, p.idxB, shift, plan.digitBits, p.hist);
    }
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
    heap.u32.fill(0, p.state >>> 2, (p.state >>> 2) + 4);
    for (;;) {
      const written =
        words === 1
          ? kernels.joinWalk64(
              keys,
              idx,
              n,
              topMask,
              plan.k,
              p.masks,
              b,
              p.canon,
              table,
              pairShift,
              out + count * 8,
              cap - count,
              p.state,
            )
          : kernels.joinWalk128(
              keys,
              los,
              idx,
              n,
              topMask,
              plan.k,
              p.masks,
              b,
              p.canon,
              table,
              pairShift,
              out + count * 8,
              cap - count,
              p.state,
            );
      count += written;
      if (heap.u32[(p.state >>> 2) + 2] === 1) break;
      cap *= 2;
      out = r.pairs.reserve(cap * 8, count * 8);
    }
  });
  return { ptr: out, count, fpsPtr };
}

/** Sorts pair keys by (a, b) and splits them into the result arrays with distances. */
export function sortAndUnpack(
  rt: Runtime,
  plan: JoinPlan,
  n: number,
  ptr: number,
  count: number,
  fpsPtr: number,
): NearDuplicatePairs {
  const { heap } = rt;
  const kernels = rt.kernels as unknown as JoinKernels;
  const r = joinRegions(heap);
  const pairShift = Math.max(1, Math.ceil(Math.log2(n)));
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
  kernels.joinUnpack(inB ? tmp : ptr, count, pairShift, fpsPtr, plan.bits / 64, outA, outB, outD);
  return {
    a: heap.u32.slice(outA >>> 2, (outA >>> 2) + count),
    b: heap.u32.slice(outB >>> 2, (outB >>> 2) + count),
    distance: heap.u8.slice(outD, outD + count),
  };
}

/** Combines pair keys computed elsewhere (workers): they are copied in, sorted and unpacked here. */
export function mergePairKeys(
  rt: Runtime,
  fps: BigUint64Array,
  plan: JoinPlan,
  n: number,
  parts: BigUint64Array[],
): NearDuplicatePairs {
  const { heap } = rt;
  const r = joinRegions(heap);
  let count = 0;
  for (const part of parts) count += part.length;
  const ptr = r.pairs.reserve(count * 8 + 16);
  let at = ptr >>> 3;
  for (const part of parts) {
    heap.u64.set(part, at);
    at += part.length;
  }
  const fpsPtr = r.fps.reserve(fps.byteLength + 16);
  heap.u64.set(fps, fpsPtr >>> 3);
  return sortAndUnpack(rt, plan, n, ptr, count, fpsPtr);
}

/** The pool task that walks some of a plan's tables and returns their pair keys. */
export const JOIN_TASK = 'join-tables';

export interface JoinTask {
  fps: BigUint64Array;
  plan: JoinPlan;
  tables: number[];
}

offerTasks({
  [JOIN_TASK]: (task: JoinTask) => {
    const rt = wasm();
    const { ptr, count } = walkTables(rt, task.fps, task.plan, task.tables);
    const keys = rt.heap.u64.slice(ptr >>> 3, (ptr >>> 3) + count);
    return { result: keys, transfer: [keys.buffer as ArrayBuffer] };
  },
});

function emptyPairs(): NearDuplicatePairs {
  return { a: new Uint32Array(0), b: new Uint32Array(0), distance: new Uint8Array(0) };
}
