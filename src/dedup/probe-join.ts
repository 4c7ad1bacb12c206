// The Deduplicator's join when a batch is small beside what came before (an incremental run: 5 % new documents):
// the pairs within k between the batch's fingerprints and the earlier ones (assembly/probe-join.ts). The join over
// every fingerprint sorted all of them for each of its tables (455 at k = 12): on 208,163 earlier and 10,956 new
// fingerprints that was 1.4 s of a 2.4 s run. Here 64 bits are cut into b blocks, block q with a radius r_q, the
// r_q + 1 adding up to more than k: two fingerprints within k bits then differ in at most r_q bits of some block q.
// For each block the earlier fingerprints are put in order of its value (a counting sort, two passes) and each new
// one looks up the values within r_q bits of its own: Σ C(w, ≤ r_q) lookups, each followed by the comparisons with
// the fingerprints of that value (n / 2^w of them, w bits per block). The radii are handed out one at a time to the
// block where the next costs least, and b is chosen for the least work in all; one block of no bits compares every
// pair, chosen when that costs less (large k). On 208,163 earlier and 10,956 new fingerprints at k = 12: 5 blocks of
// radius 2 took 0.23 s, radii 2, 2, 2, 1, 1 (which still add up past k) 0.13 s. Probing buckets of the new
// fingerprints with each earlier one, a table per choice of 3 of 15 blocks (455), took 1.8 s: a miss per earlier
// fingerprint and table.
import { binomial } from '../join/join-plan.js';
import type { ProbeIndexKernel } from '../join/join.js';
import type { Heap } from '../runtime/heap.js';
import { Region } from '../runtime/heap.js';
import { sharedPool } from '../runtime/pool.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { wasm } from '../runtime/wasm.js';

interface ProbeKernels {
  probeIndex: ProbeIndexKernel;
  probeQuery(
    fresh: number,
    from: number,
    nNew: number,
    shift: number,
    width: number,
    radius: number,
    offsets: number,
    sorted: number,
    index: number,
    k: number,
    prev: number,
    prevRadius: number,
    nPrev: number,
    out: number,
    cap: number,
    countAt: number,
  ): number;
}

/** Bits per block at most (2^22 + 1 offsets of 4 bytes). */
const MAX_WIDTH = 22;
/**
 * A lookup's cost against a comparison's (cache misses into the offsets and the run, against a sequential read), as
 * measured at k = 12: 4 blocks (2,788 lookups per new fingerprint) took 0.60 s, 5 blocks (460) 0.23 s.
 */
const LOOKUP = 16;
/** Pairs handed to the caller at most per call (more when one new fingerprint has more partners). */
const CHUNK_PAIRS = 1 << 16;

/** A block of the probe: its bits (shift, width) and radius. */
export type ProbeBlock = [shift: number, width: number, radius: number];

/** The blocks that find every pair within k between nOld and nNew 64-bit fingerprints, and their estimated work. */
export function probeBlocks(nOld: number, nNew: number, k: number): { blocks: ProbeBlock[]; cost: number } {
  let best = { cost: nOld * (nNew + 2), blocks: [[0, 0, 0]] as ProbeBlock[] };
  for (let b = Math.ceil(64 / MAX_WIDTH); b <= Math.min(64, k + 1); b++) {
    const widths = Array.from({ length: b }, (_, q) => Math.floor(64 / b) + (q < 64 % b ? 1 : 0));
    // Each block's work at radius r (-1: not probed), per new fingerprint.
    const work = (w: number, r: number): number => {
      let probes = 0;
      for (let c = 0; c <= Math.min(r, w); c++) probes += binomial(w, c);
      return probes * (LOOKUP + nOld / 2 ** w);
    };
    const radii = widths.map(() => -1);
    for (let sum = 0; sum <= k; sum++) {
      let pick = 0;
      let least = Infinity;
      widths.forEach((w, q) => {
        if (radii[q]! >= w) return;
        const more = work(w, radii[q]! + 1) - (radii[q]! < 0 ? 0 : work(w, radii[q]!));
        if (more < least) {
          least = more;
          pick = q;
        }
      });
      radii[pick]!++;
    }
    let cost = 0;
    widths.forEach((w, q) => {
      if (radii[q]! >= 0) cost += 2 * nOld + nNew * work(w, radii[q]!);
    });
    if (cost >= best.cost) continue;
    const blocks: ProbeBlock[] = [];
    for (let q = 0, at = 0; q < b; at += widths[q]!, q++) if (radii[q]! >= 0) blocks.push([at, widths[q]!, radii[q]!]);
    best = { cost, blocks };
  }
  return best;
}

const regionsByHeap = new WeakMap<Heap, Region>();

/** The pool task that probes some of the blocks (a share of probeJoinByBlock's work) and returns their pairs. */
const PROBE_TASK = 'probe-blocks';

interface ProbeTask {
  old: BigUint64Array;
  fresh: BigUint64Array;
  k: number;
  blocks: ProbeBlock[];
  which: number[];
}

/** Pairs of an earlier fingerprint a[p] and a new one b[p] (positions in their arrays). */
export interface ProbePairs {
  a: Uint32Array;
  b: Uint32Array;
}

offerTasks({
  [PROBE_TASK]: (task: ProbeTask) => {
    // Each block's pairs in turn, and how many each has: the caller takes them in block order.
    const counts = new Uint32Array(task.which.length);
    const pairs = collect((consume) => {
      task.which.forEach((q, i) => {
        counts[i] = probeSome(task.old, task.fresh, task.k, task.blocks, [q], consume);
      });
    });
    return {
      result: { ...pairs, counts },
      transfer: [pairs.a.buffer as ArrayBuffer, pairs.b.buffer as ArrayBuffer, counts.buffer as ArrayBuffer],
    };
  },
});

/** The pairs a probe hands over in chunks, in one pair of arrays. */
function collect(run: (consume: (a: Uint32Array, b: Uint32Array) => void) => void): ProbePairs {
  const as: Uint32Array[] = [];
  const bs: Uint32Array[] = [];
  let total = 0;
  run((a, b) => {
    as.push(a);
    bs.push(b);
    total += a.length;
  });
  const a = new Uint32Array(total);
  const b = new Uint32Array(total);
  for (let c = 0, at = 0; c < as.length; at += as[c]!.length, c++) {
    a.set(as[c]!, at);
    b.set(bs[c]!, at);
  }
  return { a, b };
}

/**
 * probeJoinByBlock's lists, its blocks shared among `threads` pool workers (Node; one thread: here). After a stream has been fingerprinted the workers are idle, and the probe was
 * the largest part of an incremental run left on the calling thread.
 */
export async function probeJoinThreads(
  old: BigUint64Array,
  fresh: BigUint64Array,
  k: number,
  threads: number,
): Promise<ProbePairs[]> {
  if (old.length === 0 || fresh.length === 0) return [];
  const { blocks } = probeBlocks(old.length, fresh.length, k);
  const shares = Math.min(threads, blocks.length);
  if (shares < 2) return probeJoinByBlock(old, fresh, k);
  // Blocks to shares by their estimated work, the largest first, each to the share with the least so far.
  const work = blocks.map(([, width, radius]) => {
    let probes = 0;
    for (let c = 0; c <= Math.min(radius, width); c++) probes += binomial(width, c);
    return probes * (LOOKUP + old.length / 2 ** width);
  });
  const which: number[][] = Array.from({ length: shares }, () => []);
  const load = new Array<number>(shares).fill(0);
  for (const q of blocks.map((_, q) => q).sort((x, y) => work[y]! - work[x]!)) {
    const s = load.indexOf(Math.min(...load));
    which[s]!.push(q);
    load[s]! += work[q]!;
  }
  const pool = sharedPool();
  const replies = await Promise.all(
    which.map((mine) => {
      const task: ProbeTask = { old: old.slice(), fresh: fresh.slice(), k, blocks, which: mine };
      return pool.run<ProbePairs & { counts: Uint32Array }>(PROBE_TASK, task, shares, [
        task.old.buffer as ArrayBuffer,
        task.fresh.buffer as ArrayBuffer,
      ]);
    }),
  );
  // In block order, as probeJoinByBlock gives them: the order decides which earlier cluster a new document is said
  // to duplicate, and the result must not depend on the threads.
  const byBlock: ProbePairs[] = [];
  replies.forEach((reply, s) => {
    let at = 0;
    which[s]!.forEach((q, i) => {
      const count = reply.counts[i]!;
      byBlock[q] = { a: reply.a.subarray(at, at + count), b: reply.b.subarray(at, at + count) };
      at += count;
    });
  });
  return byBlock;
}

/**
 * Every pair (i, j) of earlier fingerprint i (of `old`) and new fingerprint j (of `fresh`), 64 bits each, within k
 * bits, once each: one list per block, in block order (what probeJoinThreads gives, on this thread). Handed to a
 * consumer list by list, the same lists give the same clusters whichever thread found them.
 */
export function probeJoinByBlock(old: BigUint64Array, fresh: BigUint64Array, k: number): ProbePairs[] {
  if (old.length === 0 || fresh.length === 0) return [];
  const { blocks } = probeBlocks(old.length, fresh.length, k);
  return blocks.map((_, q) => collect((consume) => probeSome(old, fresh, k, blocks, [q], consume)));
}

/** Probes blocks `which` of `blocks` (the earlier ones of `blocks` decide which block keeps a pair). */
function probeSome(
  old: BigUint64Array,
  fresh: BigUint64Array,
  k: number,
  blocks: ProbeBlock[],
  which: readonly number[],
  consume: (a: Uint32Array, b: Uint32Array) => void,
): number {
  const nOld = old.length;
  const nNew = fresh.length;
  const rt = wasm();
  const kernels = rt.kernels as unknown as ProbeKernels;
  const widest = Math.max(...blocks.map(([, w]) => w));
  const cap = Math.max(CHUNK_PAIRS, nOld + 1);
  let region = regionsByHeap.get(rt.heap);
  if (!region) {
    region = new Region(rt.heap);
    regionsByHeap.set(rt.heap, region);
  }
  const sizes = [
    nOld * 8,
    nNew * 8,
    ((1 << widest) + 1) * 4,
    nOld * 8,
    nOld * 4,
    blocks.length * 8,
    blocks.length * 4,
    cap * 8,
    16,
  ];
  const at = region.reserveParts(sizes);
  const [oldAt, freshAt, offsets, sorted, index, prev, prevRadius, out, countAt] = at as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  rt.heap.u64.set(old, oldAt >>> 3);
  rt.heap.u64.set(fresh, freshAt >>> 3);
  rt.heap.u64.set(
    blocks.map(([shift, width]) => ((1n << BigInt(width)) - 1n) << BigInt(shift)),
    prev >>> 3,
  );
  rt.heap.u32.set(
    blocks.map(([, , radius]) => radius),
    prevRadius >>> 2,
  );
  let total = 0;
  for (const q of which) {
    const [shift, width, radius] = blocks[q]!;
    kernels.probeIndex(oldAt, nOld, shift, width, offsets, sorted, index);
    for (let j = 0; j < nNew; ) {
      j = kernels.probeQuery(
        freshAt,
        j,
        nNew,
        shift,
        width,
        radius,
        offsets,
        sorted,
        index,
        k,
        prev,
        prevRadius,
        q,
        out,
        cap,
        countAt,
      );
      const u32 = rt.heap.u32; // consume may grow memory
      const count = u32[countAt >>> 2]!;
      if (count === 0) continue;
      const pairs = u32.slice(out >>> 2, (out >>> 2) + count * 2);
      const a = new Uint32Array(count);
      const b = new Uint32Array(count);
      for (let p = 0; p < count; p++) {
        a[p] = pairs[p * 2]!;
        b[p] = pairs[p * 2 + 1]!;
      }
      total += count;
      consume(a, b);
    }
  }
  return total;
}
