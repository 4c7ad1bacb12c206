// Plans the all-pairs join of assembly/join.ts: how many blocks to split the fingerprint into (pigeonhole:
// b > k blocks, so a pair within k agrees on some b - k of them), the tables (one per (b - k)-subset, its key
// blocks permuted to the top), how many top bits to radix-sort on and in how many passes, and the lookup that
// makes each pair come out of exactly one table. The choice minimises a cost model measured on this machine
// (bench/dedup.bench.ts): permuting and sorting cost per fingerprint and pass, comparing cost per candidate pair.
import { S_SOURCE_SHIFT, S_TARGET_SHIFT, S_WIDTH, SEGMENT_BYTES } from './join-layout.shared.js';

export interface JoinPlan {
  readonly bits: 64 | 128;
  readonly k: number;
  /** Block b occupies bits [start, start + width) of the fingerprint; block 0 holds the most significant bits. */
  readonly blocks: ReadonlyArray<{ start: number; width: number }>;
  /** Key blocks of each table (ascending block ids); tables are in lexicographic order. Empty key: compare all. */
  readonly tables: ReadonlyArray<readonly number[]>;
  /** Top bits of the permuted fingerprint sorted on (≤ the key bits of every table, ≤ 64). */
  readonly sortBits: number;
  readonly digitBits: number;
  readonly passes: number;
  /** Estimated cost, arbitrary units (for tests and the bench). */
  readonly cost: number;
  /**
   * A probe plan (join-probe.ts, 64 bits only): block q is probed within radii[q] bits, the radii + 1 adding up
   * to k + 1, and tables[q] is [q]. Absent: tables of block keys, walked.
   */
  readonly radii?: readonly number[];
}

/**
 * Most blocks considered (a table's rule is a bit mask over them; more blocks would mean too many tables). At 128
 * bits up to 32, since b > k: with 16 the default k = 21 had no plan but comparing all pairs (2 GB of edited
 * copies, 336,060 fingerprints: 76 s of join, against 36 s with 23 blocks in 253 tables).
 */
function maxBlocks(bits: 64 | 128): number {
  return bits === 128 ? 32 : 16;
}
/** Most tables considered (each costs a permute and a sort of the whole input). */
const MAX_TABLES = 4096;
const MAX_DIGIT = 8; // 256 buckets per pass: measured faster than 11-16 bits at 10^7 (cache and TLB misses)
// 64-bit tables are sorted a bucket at a time in cache (src/dedup/join.ts), where 1024 buckets per pass measured
// faster: at 10^7, k = 3 chose 20 sort bits in 2 passes instead of 24 in 3 (0.78-0.96 of the CPU time), k = 6 nine
// blocks instead of eight (0.78-0.87).
export const MAX_DIGIT_BUCKETED = 10;

function maxDigitFor(bits: 64 | 128): number {
  return bits === 64 ? MAX_DIGIT_BUCKETED : MAX_DIGIT;
}

// Cost model, relative units (≈ ns per operation; CPU time measured on this machine at 10^7, rounded): the
// histogram pass (read and permute every fingerprint), each radix scatter, walking runs, and one candidate pair
// (xor, popcount, compare). Only the ratios matter: they decide between fewer tables with longer runs and more
// tables with more sort passes.
const PERMUTE = 2.5;
const PASS = 2.5;
const WALK = 0.6;
export const COMPARE = 0.3;

/** C(n, r); 0 when r is out of 0..n. */
export function binomial(n: number, r: number): number {
  if (r < 0 || r > n) return 0;
  let c = 1;
  for (let i = 1; i <= r; i++) c = (c * (n - r + i)) / i;
  return Math.round(c);
}

function combinations(n: number, r: number): number[][] {
  const out: number[][] = [];
  const pick: number[] = [];
  const rec = (from: number): void => {
    if (pick.length === r) {
      out.push([...pick]);
      return;
    }
    for (let i = from; i <= n - (r - pick.length); i++) {
      pick.push(i);
      rec(i + 1);
      pick.pop();
    }
  };
  rec(0);
  return out;
}

/** Splits `bits` into `b` blocks as evenly as possible (wider blocks first), block 0 at the top. */
export function splitBlocks(bits: number, b: number): Array<{ start: number; width: number }> {
  const blocks: Array<{ start: number; width: number }> = [];
  let top = bits;
  for (let i = 0; i < b; i++) {
    const width = Math.floor(bits / b) + (i < bits % b ? 1 : 0);
    top -= width;
    blocks.push({ start: top, width });
  }
  return blocks;
}

function passesFor(sortBits: number, maxDigit: number): { passes: number; digitBits: number } {
  if (sortBits === 0) return { passes: 0, digitBits: 1 };
  const passes = Math.ceil(sortBits / maxDigit);
  return { passes, digitBits: Math.ceil(sortBits / passes) };
}

function tableCost(n: number, sortBits: number, passes: number): number {
  return n * (PERMUTE + passes * PASS + WALK) + ((n * n) / 2) * COMPARE * 2 ** -sortBits;
}

/** The part of a plan's model cost that does not depend on the data: permuting, sorting and walking every table. */
export function tableCostFixed(n: number, plan: JoinPlan): number {
  return plan.tables.length * n * (PERMUTE + plan.passes * PASS + WALK);
}

/** The plan that compares every pair: one table with an empty key, nothing sorted. */
export function bruteForcePlan(n: number, k: number, bits: 64 | 128): JoinPlan {
  return {
    bits,
    k,
    blocks: splitBlocks(bits, bits / 64),
    tables: [[]],
    sortBits: 0,
    digitBits: 1,
    passes: 0,
    cost: tableCost(n, 0, 0),
  };
}

/** The most sort bits a plan with these blocks can use: the narrowest key's width (at most 64). */
export function maxSortBits(plan: Pick<JoinPlan, 'blocks' | 'k'>): number {
  const b = plan.blocks.length;
  let minKeyBits = 0;
  // The narrowest key is the last b - k blocks (the narrower ones); every table's key is at least that wide.
  for (let i = plan.k; i < b; i++) minKeyBits += plan.blocks[i]!.width;
  return Math.min(minKeyBits, 64);
}

/** The plan with other sort bits (1 ≤ sortBits ≤ maxSortBits), its passes and model cost for n fingerprints. */
export function withSortBits(plan: JoinPlan, sortBits: number, n: number): JoinPlan {
  const { passes, digitBits } = passesFor(sortBits, maxDigitFor(plan.bits));
  return { ...plan, sortBits, digitBits, passes, cost: plan.tables.length * tableCost(n, sortBits, passes) };
}

/**
 * For each block count b (from k + 1, at most maxBlocks and MAX_TABLES tables), the plan with the sort
 * bits the model finds cheapest for n uniformly random fingerprints.
 */
export function plansByBlocks(n: number, k: number, bits: 64 | 128): JoinPlan[] {
  const plans: JoinPlan[] = [];
  for (let b = Math.max(k + 1, bits / 64); b <= maxBlocks(bits); b++) {
    if (binomial(b, k) > MAX_TABLES) continue;
    const blocks = splitBlocks(bits, b);
    const shape: JoinPlan = {
      bits,
      k,
      blocks,
      tables: combinations(b, b - k),
      sortBits: 0,
      digitBits: 1,
      passes: 0,
      cost: Infinity,
    };
    let best = shape;
    for (let sortBits = 1; sortBits <= maxSortBits(shape); sortBits++) {
      const plan = withSortBits(shape, sortBits, n);
      if (plan.cost < best.cost) best = plan;
    }
    plans.push(best);
  }
  return plans;
}

/** Chooses the cheapest plan for n uniformly random fingerprints of `bits` bits and distance ≤ k. */
export function planJoin(n: number, k: number, bits: 64 | 128): JoinPlan {
  let best = bruteForcePlan(n, k, bits);
  for (const plan of plansByBlocks(n, k, bits)) if (plan.cost < best.cost) best = plan;
  return best;
}

/** Sizes of the radix sort of pair keys that use `totalBits` low bits. */
export function pairSortPasses(totalBits: number): { passes: number; digitBits: number } {
  return passesFor(totalBits, MAX_DIGIT);
}

export interface TableLayout {
  /** [srcShift, width, dstShift, 0] per bit-range move. */
  segments: Uint32Array;
  /** Per block, its bits in permuted coordinates: one u64 (64-bit) or lo, hi (128-bit). */
  masks: BigUint64Array;
}

const M64 = (1n << 64n) - 1n;

/** The permutation of one table: key blocks first (from the top), then the others, adjacent moves merged. */
export function tableLayout(plan: JoinPlan, table: number): TableLayout {
  const key = plan.tables[table]!;
  const order = [...key, ...plan.blocks.map((_, i) => i).filter((i) => !key.includes(i))];
  const segs: Array<[number, number, number]> = [];
  const dst = new Array<number>(plan.blocks.length);
  let top = plan.bits;
  for (const id of order) {
    const { start, width } = plan.blocks[id]!;
    top -= width;
    dst[id] = top;
    const last = segs[segs.length - 1];
    if (last && start + width === last[0] && top + width === last[2] && last[1] + width <= 64) {
      last[0] = start;
      last[1] += width;
      last[2] = top;
    } else segs.push([start, width, top]);
  }
  const segments = new Uint32Array((segs.length * SEGMENT_BYTES) / 4);
  segs.forEach(([s, w, d], i) => {
    const at = (i * SEGMENT_BYTES) / 4;
    segments[at + S_SOURCE_SHIFT / 4] = s;
    segments[at + S_WIDTH / 4] = w;
    segments[at + S_TARGET_SHIFT / 4] = d;
  });
  const words = plan.bits / 64;
  const masks = new BigUint64Array(plan.blocks.length * words);
  plan.blocks.forEach(({ width }, id) => {
    const m = ((1n << BigInt(width)) - 1n) << BigInt(dst[id]!);
    masks[id * words] = m & M64;
    if (words === 2) masks[id * 2 + 1] = m >> 64n;
  });
  return { segments, masks };
}

/**
 * The rule by which a table emits a pair only when it is the first table whose key the pair agrees on. Tables are
 * the (b - k)-subsets of blocks in lexicographic order (combinations), so that first table is the pair's first
 * b - k agreeing blocks: the pair must agree on the key (its top `keyWidth` permuted bits) and on none of the
 * `earlier` blocks (a bit per block id: those below the last key block that are not in the key).
 */
export function tableRule(plan: JoinPlan, table: number): { keyWidth: number; earlier: number } {
  const key = plan.tables[table]!;
  let keyWidth = 0;
  let earlier = 0;
  for (const id of key) keyWidth += plan.blocks[id]!.width;
  const last = key.length > 0 ? key[key.length - 1]! : -1;
  for (let id = 0; id < last; id++) if (!key.includes(id)) earlier |= 1 << id;
  return { keyWidth, earlier };
}

/** A plan with exactly b blocks (b > k, or 0 for comparing all) and the given sort bits: for tests and benches. */
export function planWithBlocks(k: number, bits: 64 | 128, b: number, sortBits?: number, maxDigit?: number): JoinPlan {
  if (b === 0) return { ...bruteForcePlan(0, k, bits), cost: 0 };
  if (b <= k || b > maxBlocks(bits)) throw new RangeError(`b must be from k + 1 to ${maxBlocks(bits)}, got ${b}`);
  const blocks = splitBlocks(bits, b);
  const sb = Math.min(sortBits ?? 64, maxSortBits({ blocks, k }));
  const { passes, digitBits } = passesFor(sb, maxDigit ?? maxDigitFor(bits));
  return { bits, k, blocks, tables: combinations(b, b - k), sortBits: sb, digitBits, passes, cost: 0 };
}
