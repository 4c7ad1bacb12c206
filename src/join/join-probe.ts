// The multi-index probe plan of the all-pairs join (assembly/join-probe.ts): 64 bits cut into b blocks (block 0 at
// the top, as splitBlocks cuts them), block q probed within radius r_q, the r_q + 1 adding up to k + 1. Its cost is
// counted exactly from each block's histogram of values, not sampled: a value v with c[v] fingerprints compares
// them with the c[w] of every w within r_q bits (w ≥ v), so Σ_v c[v] Σ_w c[w] candidates, and it looks up as many
// values per fingerprint as there are flips of at most r_q bits. Real text fingerprints cluster; tables of block
// keys (join-plan.ts) then meet their near pairs in long runs, where these lookups stay short: 81,287 fingerprints
// of 400 MB of edited copies at k = 12, 4.57 M pairs, took 1.9 s by the best walk plan and 0.5 s with 5 blocks;
// 336,060 of 2 GB, 44.3 M pairs, 28 s by comparing all and 5-6 s with 4 blocks.
import { popcount32 } from '../fingerprint/bits.js';
import { type JoinPlan, binomial, splitBlocks } from './join-plan.js';

/**
 * Costs in join-estimate.ts's units (≈ ns on this machine): a candidate compared (a value's run, read in order),
 * a flip looked up (two offsets, often a cache miss), and each fingerprint placed by a block's counting sort.
 * Measured at k = 12 on the fingerprints above: 169 M candidates and 24.6 M lookups in 0.48 s; 2.89 G and 102 M
 * in 5.9-6.5 s.
 */
const CANDIDATE = 2;
const LOOKUP = 8;
const PLACE = 4;
/** Widest block: its offsets are 2^width + 1 u32 (256 KiB at 16 bits, which fit in cache). */
const MAX_WIDTH = 16;
/** Most blocks: narrower ones (6 bits and less) hold n / 64 fingerprints per value and more. */
const MAX_BLOCKS = 10;
/**
 * Most (non-empty values × flips) counted for one block and radius: past it the level is not costed (not chosen).
 * A few ms of counting; a plan that needs more is one of few wide blocks, whose lookups cost more than they save.
 */
const MAX_COUNTED = 3e6;
/**
 * The largest run of one block value a probe plan may meet. A walk skips the run of a group already clustered whole
 * (its roots), where the probe compares each pair of it: 10^5 near-duplicates of one text would be 5 × 10^9
 * comparisons per block. Costed by the histogram, such a run makes the plan dear; this keeps a run of a few
 * thousand among many short ones from tipping the choice either.
 */
const MAX_RUN = 4096;

/** The blocks' bits as u64 masks, in block order. */
export function probeMasks(plan: JoinPlan): BigUint64Array {
  return BigUint64Array.from(plan.blocks, ({ start, width }) => ((1n << BigInt(width)) - 1n) << BigInt(start));
}

/** Every mask of `width` bits with at most `radius` bits set, fewest bits first. */
export function probeFlips(width: number, radius: number): Uint32Array {
  const out = new Uint32Array(flipCount(width, radius));
  let at = 0;
  for (let c = 0; c <= Math.min(radius, width); c++) {
    // Gosper's hack: the next larger number with as many bits set (widths up to MAX_WIDTH, so plain numbers).
    let flip = 2 ** c - 1;
    while (flip < 2 ** width) {
      out[at++] = flip;
      if (flip === 0) break;
      const low = flip & -flip;
      const ripple = flip + low;
      flip = (((ripple ^ flip) >>> 2) / low) | ripple;
    }
  }
  return out;
}

export function flipCount(width: number, radius: number): number {
  let count = 0;
  for (let c = 0; c <= Math.min(radius, width); c++) count += binomial(width, c);
  return count;
}

/** Each value's count of one block (width ≤ MAX_WIDTH bits from `start`) over the 64-bit fingerprints. */
function histogram(halves: Uint32Array, n: number, start: number, width: number): Uint32Array {
  const counts = new Uint32Array(2 ** width);
  const h = start >>> 5;
  const off = start & 31;
  const spills = off + width > 32;
  const mask = 2 ** width - 1;
  for (let i = 0; i < n; i++) {
    let v = halves[i * 2 + h]! >>> off;
    if (spills) v |= halves[i * 2 + h + 1]! << (32 - off);
    counts[(v & mask) >>> 0]!++;
  }
  return counts;
}

/**
 * A block's candidates level by level, counted when first asked for: level c is the pairs compared for flips of
 * exactly c bits; Infinity once a level would count more than MAX_COUNTED, or a run passes MAX_RUN. (The levels
 * come from pairsByDistance, which costs the same whatever the level; MAX_COUNTED still decides which levels are
 * costed, so the plans chosen are those of counting value by value.)
 */
function blockCandidates(counts: Uint32Array, width: number): (c: number) => number {
  let values = 0;
  let largest = 0;
  let same = 0;
  for (let v = 0; v < counts.length; v++) {
    const m = counts[v]!;
    if (m === 0) continue;
    values++;
    largest = Math.max(largest, m);
    same += (m * (m - 1)) / 2;
  }
  const levels: number[] = [largest > MAX_RUN ? Infinity : same];
  let byDistance: Float64Array | null = null;
  return (c) => {
    while (levels.length <= c) {
      const level = levels.length;
      if (levels[level - 1] === Infinity || values * binomial(width, level) > MAX_COUNTED) {
        levels.push(Infinity);
        continue;
      }
      byDistance ??= pairsByDistance(counts, width);
      levels.push(byDistance[level]!);
    }
    return levels[c]!;
  };
}

/**
 * For each c from 1 to width, the pairs of fingerprints whose block values (of `width` bits, counts[v] fingerprints
 * with value v) differ in exactly c bits. The autocorrelation A(x) = Σ_v counts[v] · counts[v ^ x] is the inverse
 * Walsh–Hadamard transform of the transform squared, so all levels take 2 · width · 2^width additions; level c sums
 * A over the x of c bits, which meets each pair from both ends. Counting value by value instead (each value's flips
 * of c bits), probePlan took 82-86 ms at 81,287 fingerprints (400 MB of edited copies) and 125 ms at 336,060 (2 GB);
 * with this, 37 and 66 ms. Exact while the transform's sums stay below 2^53 (2^width · n² for n fingerprints: n up
 * to 3 · 10^5 at 16 bits); beyond, off by a relative 10^-10 or so, far below what a cost notices.
 */
export function pairsByDistance(counts: Uint32Array, width: number): Float64Array {
  const size = 2 ** width;
  const t = Float64Array.from(counts);
  walshHadamard(t);
  for (let x = 0; x < size; x++) t[x]! *= t[x]!;
  walshHadamard(t);
  const out = new Float64Array(width + 1);
  for (let x = 1; x < size; x++) out[popcount32(x)]! += t[x]!;
  // The inverse transform's 1 / 2^width, and each pair met from both ends.
  for (let c = 1; c <= width; c++) out[c] = Math.round(out[c]! / (2 * size));
  return out;
}

/** The unnormalised Walsh–Hadamard transform, in place (t.length a power of two). */
function walshHadamard(t: Float64Array): void {
  for (let h = 1; h < t.length; h *= 2) {
    for (let i = 0; i < t.length; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const x = t[j]!;
        const y = t[j + h]!;
        t[j] = x + y;
        t[j + h] = x - y;
      }
    }
  }
}

/**
 * The cheapest probe plan for these 64-bit fingerprints (cost in join-estimate.ts's units, without the pairs it
 * emits, which every plan pays), or null when none can be costed.
 */
export function probePlan(fps: BigUint64Array, n: number, k: number): JoinPlan | null {
  const halves = new Uint32Array(fps.buffer, fps.byteOffset, n * 2);
  let best: JoinPlan | null = null;
  for (let b = Math.ceil(64 / MAX_WIDTH); b <= Math.min(MAX_BLOCKS, k + 1); b++) {
    const blocks = splitBlocks(64, b);
    // Radii are handed out one at a time (k + 1 in all, the first making a block probed at radius 0) to the block
    // whose next level adds the least work.
    const cand = blocks.map(({ start, width }) => blockCandidates(histogram(halves, n, start, width), width));
    const radii = blocks.map(() => -1);
    const levelCost = (q: number, c: number): number =>
      (c === 0 ? n * PLACE + 2 ** blocks[q]!.width : 0) +
      n * binomial(blocks[q]!.width, c) * LOOKUP +
      cand[q]!(c) * CANDIDATE;
    let cost = 0;
    for (let given = 0; given <= k && cost < Infinity; given++) {
      let pick = -1;
      let least = Infinity;
      radii.forEach((r, q) => {
        if (r + 1 > blocks[q]!.width) return;
        const more = levelCost(q, r + 1);
        if (more < least) {
          least = more;
          pick = q;
        }
      });
      if (pick < 0) cost = Infinity;
      else {
        radii[pick]!++;
        cost += least;
      }
    }
    if (cost === Infinity || (best && cost >= best.cost)) continue;
    // Blocks left at radius -1 are not probed: the others' radii already add up past k.
    const probed = radii.map((r, q) => (r >= 0 ? q : -1)).filter((q) => q >= 0);
    best = {
      bits: 64,
      k,
      blocks: probed.map((q) => blocks[q]!),
      tables: probed.map((_, t) => [t]),
      sortBits: 0,
      digitBits: 1,
      passes: 0,
      cost,
      radii: probed.map((q) => radii[q]!),
    };
  }
  return best;
}

/** A probe plan with `radii.length` blocks of these radii (their r + 1 adding up past k): for tests and benches. */
export function planWithRadii(k: number, radii: readonly number[]): JoinPlan {
  const blocks = splitBlocks(64, radii.length);
  let reach = 0;
  radii.forEach((r, q) => {
    if (!Number.isInteger(r) || r < 0 || r > blocks[q]!.width || blocks[q]!.width > MAX_WIDTH)
      throw new RangeError(`radius ${r} does not fit block ${q} of ${blocks[q]!.width} bits`);
    reach += r + 1;
  });
  if (reach <= k)
    throw new RangeError(`radii ${radii.join(', ')} find pairs within ${reach - 1} bits only, not k = ${k}`);
  return {
    bits: 64,
    k,
    blocks,
    tables: blocks.map((_, q) => [q]),
    sortBits: 0,
    digitBits: 1,
    passes: 0,
    cost: 0,
    radii: [...radii],
  };
}
