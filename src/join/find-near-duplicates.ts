// findNearDuplicates: every pair of fingerprints within Hamming distance k. The join runs in WebAssembly
// (assembly/join.ts) on sorted permuted tables planned by join-plan.ts (costed on a sample by join-estimate.ts), or
// as a tiled brute-force self-join when the plan compares all pairs; threads: N splits the tables between N pool
// workers (runtime/pool.ts) while this thread stays free. Nothing here knows about texts: dedup (src/dedup/) joins
// the distinct fingerprints of a corpus through joinOnThisThread and findNearDuplicates.
import type { Pairs } from '../results.js';
import { show } from '../errors.js';
import { selfPairsWithinDistance } from '../hamming/hamming.js';
import { checkThreads, sharedPool } from '../runtime/pool.js';
import { type WithSpare, keepSpare, spareBuffer } from '../runtime/spare-buffers.js';
import { wasm } from '../runtime/wasm.js';
import { firstOfEqual } from '../dedup/exact-copies.js';
import type { JoinPlan } from './join-plan.js';
import { joinSurelyExceeds, planJoinFor } from './join-estimate.js';
import {
  JOIN_TASK,
  MAX_JOIN_PAIRS,
  type JoinTask,
  findWithPlan,
  findWithinBudget,
  mergePairKeys,
  tableShares,
} from './join.js';

export type { JoinPlan } from './join-plan.js';

/** Options of findNearDuplicates: the distance, the width, and how many threads walk the join. */
export interface FindNearDuplicatesOptions {
  /** Largest Hamming distance reported (pairs with distance ≤ k). */
  k: number;
  /** Fingerprint width: 64 (one word each, default) or 128 (two words each, low word first). */
  bits?: 64 | 128;
  /**
   * Threads that walk the join's tables (default 1: this thread, synchronously). N > 1 (up to MAX_THREADS) splits
   * them between N pool workers (Node worker threads, Web Workers in browsers); the call then returns a Promise,
   * this thread only plans, copies and merges (a page stays responsive), and the pairs are identical to one
   * thread's.
   */
  threads?: number;
}

/** What findNearDuplicates returns for a `threads` type: a Promise for N > 1, either when only `number` is known. */
export type NearDuplicatesResult<T extends number> = number extends T
  ? Pairs | Promise<Pairs>
  : T extends 1
    ? Pairs
    : Promise<Pairs>;

const KNOWN = new Set(['k', 'bits', 'threads']);

export interface CheckedJoinOptions {
  k: number;
  bits: 64 | 128;
  threads: number;
  n: number;
}

export function checkJoinArgs(fps: unknown, options: unknown): CheckedJoinOptions {
  if (!(fps instanceof BigUint64Array)) throw new TypeError(`fingerprints must be a BigUint64Array, got ${show(fps)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`options must be an object with k, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  }
  const o = options as Partial<FindNearDuplicatesOptions>;
  const bits = o.bits ?? 64;
  if (bits !== 64 && bits !== 128) {
    throw new (typeof bits === 'number' ? RangeError : TypeError)(`bits must be 64 or 128, got ${show(bits)}`);
  }
  const k = o.k;
  if (typeof k !== 'number') throw new TypeError(`k must be a number, got ${show(k)}`);
  if (!Number.isInteger(k) || k < 0 || k > bits)
    throw new RangeError(`k must be an integer from 0 to ${bits}, got ${show(k)}`);
  const threads = checkThreads(o.threads) ?? 1;
  const words = bits / 64;
  if (fps.length % words !== 0)
    throw new RangeError(`128-bit fingerprints need two words each, got ${fps.length} words`);
  const n = fps.length / words;
  if (n > 0xffffffff) throw new RangeError(`at most 2^32 - 1 fingerprints, got ${n}`);
  return { k, bits, threads, n };
}

/**
 * Every pair of fingerprints within Hamming distance k (≤ k), each once with a < b, exact duplicates included,
 * ordered by (a, b), as typed-array columns (Pairs: a, b, distance; see rows()). With `threads` above 1 the
 * result comes as a Promise.
 */
export function findNearDuplicates(fps: BigUint64Array, options: FindNearDuplicatesOptions & { threads?: 1 }): Pairs;
export function findNearDuplicates<T extends number>(
  fps: BigUint64Array,
  options: FindNearDuplicatesOptions & { threads: T },
): NearDuplicatesResult<T>;
export function findNearDuplicates(fps: BigUint64Array, options: FindNearDuplicatesOptions): Pairs | Promise<Pairs>;
export function findNearDuplicates(fps: BigUint64Array, options: FindNearDuplicatesOptions): Pairs | Promise<Pairs> {
  const { k, bits, threads, n } = checkJoinArgs(fps, options);
  checkIdenticalPairs(fps, bits);
  const plan = planJoinFor(fps, n, k, bits);
  // A worker costs tens of milliseconds to start and a copy of the input: small joins stay on this thread.
  if (threads > 1 && plan.tables.length > 1 && plan.cost > MIN_THREADED_COST) return findInThreads(fps, plan, threads);
  const pairs = joinOnThisThread(fps, plan, n, k, bits);
  return threads > 1 ? Promise.resolve(pairs) : pairs;
}

/** Whether the plan compares every pair (one table without blocks). */
export function comparesAllPairs(plan: JoinPlan): boolean {
  return plan.tables.length === 1 && plan.tables[0]!.length === 0;
}

export function joinOnThisThread(fps: BigUint64Array, plan: JoinPlan, n: number, k: number, bits: 64 | 128): Pairs {
  // Comparing all pairs: the tiled self-join of hamming.ts, the same pairs in the same order, faster than a walk.
  return comparesAllPairs(plan) && n >= 2 ? selfPairsWithinDistance(fps, k, { bits }) : findWithPlan(fps, plan);
}

/**
 * Counts the pairs of identical fingerprints (every pair within any k includes them) before the join allocates,
 * and fails with their number when they alone cannot fit.
 */
function checkIdenticalPairs(fps: BigUint64Array, bits: 64 | 128): void {
  const words = bits === 128 ? 2 : 1;
  const n = fps.length / words;
  // Fewer than MAX_JOIN_PAIRS pairs in all: nothing to count.
  if (n * (n - 1) <= 2 * MAX_JOIN_PAIRS) return;
  // Identical fingerprints share their top bits, so the pairs within those buckets bound them from above. On all
  // but heavily skewed data that bound already fits (10^7 random: ~3·10^6), and the exact count below, a hash
  // table over every fingerprint (0.6-1.1 s at 10^7, a third of the join itself), is not needed.
  if (pairsSharingTopBits(fps, words) <= MAX_JOIN_PAIRS) return;
  const first = firstOfEqual(fps, words);
  const size = new Uint32Array(n);
  let identical = 0;
  for (let i = 0; i < n; i++) identical += size[first[i]!]!++;
  if (identical > MAX_JOIN_PAIRS) {
    throw new RangeError(
      `findNearDuplicates would return at least ${identical} pairs (of identical fingerprints alone), more than ` +
        `the ${MAX_JOIN_PAIRS} that fit in memory; dedup() groups identical texts and fingerprints instead`,
    );
  }
}

/**
 * How many pairs of fingerprints agree on the top b bits of their (low) word. b is the fewest bits (8 to 24) at
 * which n random fingerprints would share at most half of MAX_JOIN_PAIRS. Each count is a cache miss, so they are
 * bytes (10^7: 2^20 buckets in 1 MiB, 74-77 ms, against 135-140 ms for 4-byte counts in the same runs); a bucket
 * past 255 keeps the rest of its count in a map, which only skewed data needs.
 */
export function pairsSharingTopBits(fps: BigUint64Array, words: 1 | 2): number {
  const halves = new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
  const n = fps.length / words;
  const b = Math.max(8, Math.min(24, Math.ceil(Math.log2((n * n) / 2 / (MAX_JOIN_PAIRS / 2)))));
  const buckets = new Uint8Array(2 ** b);
  const shift = 32 - b;
  let beyond: Map<number, number> | undefined;
  let pairs = 0;
  // halves[2 * words * i + 1] is the upper half of fingerprint i's first word (little-endian).
  for (let i = 1; i < halves.length; i += 2 * words) {
    const j = halves[i]! >>> shift;
    const c = buckets[j]!;
    if (c < 255) {
      pairs += c;
      buckets[j] = c + 1;
    } else {
      beyond ??= new Map();
      const extra = beyond.get(j) ?? 0;
      pairs += 255 + extra;
      beyond.set(j, extra + 1);
    }
  }
  return pairs;
}

/** Planned cost (join-plan.ts units, ≈ ns) below which threads > 1 runs on one thread. */
export const MIN_THREADED_COST = 20e6;

/**
 * The tables split into `threads` contiguous shares, each walked by a pool worker at the same time; this thread
 * plans, copies and merges, so it stays free meanwhile (a page stays responsive, a server answers). A pair is
 * emitted only by its first matching table, whoever walks it, so the merged pairs are one thread's.
 */
export async function findInThreads(fps: BigUint64Array, plan: JoinPlan, threads: number): Promise<Pairs> {
  return (await joinInThreads(fps, plan, threads, null))!;
}

/** findInThreads, or null when the pairs number more than `budget` (a worker past it stops). */
async function joinInThreads(
  fps: BigUint64Array,
  plan: JoinPlan,
  threads: number,
  budget: number | null,
): Promise<Pairs | null> {
  const shares = Math.min(threads, plan.tables.length);
  const share = tableShares(plan, shares);
  const pool = sharedPool();
  const jobs: Promise<BigUint64Array | null>[] = [];
  for (let s = 0; s < shares; s++) {
    // Each worker gets its own copy, transferred: in a recycled buffer, the copy costs a few ms per 10^7.
    const copy = new BigUint64Array(spareBuffer(fps.byteLength), 0, fps.length);
    copy.set(fps);
    const task: JoinTask = { fps: copy, plan, tables: share[s]!, ...(budget === null ? {} : { budget }) };
    const job = pool
      .run<WithSpare<BigUint64Array | null>>(JOIN_TASK, task, shares, [copy.buffer as ArrayBuffer])
      .then(keepSpare);
    job.catch(() => undefined); // awaited below; this only keeps an early failure from counting as unhandled
    jobs.push(job);
  }
  const parts = await Promise.all(jobs);
  let total = 0;
  for (const part of parts) total = part === null ? Infinity : total + part.length;
  if (budget !== null && total > budget) return null;
  return mergePairKeys(wasm(), fps, plan, parts as BigUint64Array[]);
}

/**
 * dedup's join of its distinct fingerprints under connected clusters explained: the whole join, sorted, when it
 * has at most `budget` pairs (with `threads`, as findNearDuplicates would run it), else null, and the caller walks
 * it in chunks instead (joinAndVerify). A plan that compares all pairs always gives null: its pairs are not counted
 * before they are made, and its one run is what the chunked walk skips once it is one cluster; so does a probe plan,
 * chosen where the join is large and clustered, whose chunked walk also leaves out the pairs that set sizes rule out
 * (100 MB of edited copies, 5 of each document: 166,889 candidates whole, 99,632 walked); and so does a join that
 * the planner's sample says is far over the budget (joinSurelyExceeds), without trying it. The same fingerprints
 * give the same answer on any number of threads.
 */
export async function joinIfSmall(
  fps: BigUint64Array,
  plan: JoinPlan,
  threads: number,
  budget: number,
): Promise<Pairs | null> {
  if (walkedInChunks(plan) || surelyOver(fps, plan, budget)) return null;
  if (threads > 1 && plan.tables.length > 1 && plan.cost > MIN_THREADED_COST)
    return joinInThreads(fps, plan, threads, budget);
  return findWithinBudget(fps, plan, budget);
}

/** joinIfSmall on this thread (dedup()). */
export function joinIfSmallHere(fps: BigUint64Array, plan: JoinPlan, budget: number): Pairs | null {
  return walkedInChunks(plan) || surelyOver(fps, plan, budget) ? null : findWithinBudget(fps, plan, budget);
}

/** Plans that joinIfSmall leaves to the chunked walk whatever their size: comparing all pairs, and probes. */
function walkedInChunks(plan: JoinPlan): boolean {
  return comparesAllPairs(plan) || plan.radii !== undefined;
}

function surelyOver(fps: BigUint64Array, plan: JoinPlan, budget: number): boolean {
  return joinSurelyExceeds(fps, fps.length / (plan.bits / 64), plan.k, plan.bits, budget);
}
