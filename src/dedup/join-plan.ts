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
}

/** Most blocks considered: the canonical-table lookup has 2^b entries. */
const MAX_BLOCKS = 16;
/** Most tables considered (each costs a permute and a sort of the whole input). */
const MAX_TABLES = 4096;
const MAX_DIGIT = 8; // 256 buckets per pass: measured faster than 11-16 bits at 10^7 (cache and TLB misses)
// 64-bit tables are sorted a bucket at a time in cache (src/dedup/join.ts), where 1024 buckets per pass measured
// faster: at 10^7, k = 3 chose 20 sort bits in 2 passes instead of 24 in 3 (0.78-0.96 of the CPU time), k = 6 nine
// blocks instead of eight (0.78-0.87).
const MAX_DIGIT_BUCKETED = 10;

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
const COMPARE = 0.3;

function binomial(n: number, r: number): number {
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

/** Chooses the cheapest plan for n fingerprints of `bits` bits and distance ≤ k. */
export function planJoin(n: number, k: number, bits: 64 | 128): JoinPlan {
  // Comparing everything: one table with an empty key, nothing sorted.
  const bruteBlocks = splitBlocks(bits, bits / 64);
  let best: JoinPlan = {
    bits,
    k,
    blocks: bruteBlocks,
    tables: [[]],
    sortBits: 0,
    digitBits: 1,
    passes: 0,
    cost: tableCost(n, 0, 0),
  };
  for (let b = Math.max(k + 1, bits / 64); b <= Math.min(MAX_BLOCKS, bits); b++) {
    const count = binomial(b, k);
    if (count > MAX_TABLES) continue;
    const blocks = splitBlocks(bits, b);
    const keySize = b - k;
    // The narrowest key is the last keySize blocks (the narrower ones); every table's key is at least that wide.
    let minKeyBits = 0;
    for (let i = b - keySize; i < b; i++) minKeyBits += blocks[i]!.width;
    const maxSort = Math.min(minKeyBits, 64);
    for (let sortBits = 1; sortBits <= maxSort; sortBits++) {
      const { passes, digitBits } = passesFor(sortBits, maxDigitFor(bits));
      const cost = count * tableCost(n, sortBits, passes);
      if (cost < best.cost) {
        best = { bits, k, blocks, tables: combinations(b, keySize), sortBits, digitBits, passes, cost };
      }
    }
  }
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

/** For each agree mask over the blocks, the first table whose key blocks it contains (0xffff: none). */
export function canonicalTables(plan: JoinPlan): Uint16Array {
  const b = plan.blocks.length;
  const canon = new Uint16Array(1 << b).fill(0xffff);
  plan.tables.forEach((key, t) => {
    const m = key.reduce((acc, id) => acc | (1 << id), 0);
    if (canon[m]! > t) canon[m] = t;
  });
  // All keys have the same size, so the first table contained in a mask is the least over its submasks:
  // in increasing order, each mask takes the least of itself and its one-bit-smaller submasks.
  for (let m = 1; m < 1 << b; m++) {
    let least = canon[m]!;
    for (let rest = m; rest !== 0; rest &= rest - 1) {
      const c = canon[m & ~(rest & -rest)]!;
      if (c < least) least = c;
    }
    canon[m] = least;
  }
  return canon;
}

/** A plan with exactly b blocks (b > k, or 0 for comparing all) and the given sort bits: for tests and benches. */
export function planWithBlocks(k: number, bits: 64 | 128, b: number, sortBits?: number, maxDigit?: number): JoinPlan {
  if (b === 0)
    return {
      bits,
      k,
      blocks: splitBlocks(bits, bits / 64),
      tables: [[]],
      sortBits: 0,
      digitBits: 1,
      passes: 0,
      cost: 0,
    };
  if (b <= k || b > Math.min(MAX_BLOCKS, bits))
    throw new RangeError(`b must be from k + 1 to ${Math.min(MAX_BLOCKS, bits)}, got ${b}`);
  const blocks = splitBlocks(bits, b);
  let minKeyBits = 0;
  for (let i = k; i < b; i++) minKeyBits += blocks[i]!.width;
  const sb = Math.min(sortBits ?? 64, minKeyBits, 64);
  const { passes, digitBits } = passesFor(sb, maxDigit ?? maxDigitFor(bits));
  return { bits, k, blocks, tables: combinations(b, b - k), sortBits: sb, digitBits, passes, cost: 0 };
}
