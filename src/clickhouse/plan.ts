// Plans the near-duplicate join on a ClickHouse cluster, on the pigeonhole scheme of findNearDuplicates
// (src/join/join-plan.ts): the fingerprint is split into b > k blocks, so two fingerprints within k agree on at
// least b − k of them, and every fingerprint gets one key row per (b − k)-subset of blocks ("table"): the table id
// and those blocks' bits. Key rows are shuffled to the shard that owns their key; each shard self-joins its own key
// rows, so a pair within k meets on at least one shard. A pair is emitted only by the first table whose blocks it
// agrees on, so it comes out once; exact duplicates agree on every block and come out of table 0.
// More tables mean more key rows (n·T shuffled, stored and hashed); fewer, narrower keys mean more candidate rows
// (about n²/2^w per table of key width w). The cost model below picks b for n, k and the shard count.
// When no block plan is cheap enough (large k), the grid plan compares everything: each fingerprint goes to group
// id mod G and gets G key rows, one per group pair {g, j}; every pair of fingerprints meets on exactly one key.
import { show } from '../errors.js';
import { binomial, planWithBlocks } from '../join/join-plan.js';

/** Fingerprint width the ClickHouse tables hold: 64, or 128 (two UInt64 words, low and high). */
export type ClusterBits = 64 | 128;

/** One bit range of a key: `width` bits of fingerprint word `word` (0: low, 1: high) from bit `shift`. */
export interface KeySegment {
  readonly word: 0 | 1;
  readonly shift: number;
  readonly width: number;
  /** Where the range goes in the packed key (bit offset from the bottom); unused when the key is folded. */
  readonly target: number;
}

/**
 * How the near-duplicate join runs on a cluster: the fingerprint's blocks, the key tables built from them, and how
 * key rows are dealt to shards, with the cost model's estimate.
 */
export interface ClusterJoinPlan {
  /** 'blocks': pigeonhole tables of b − k blocks each; 'grid': every pair of fingerprints meets on one key (large k). */
  readonly kind: 'blocks' | 'grid';
  /** Fingerprint width. */
  readonly bits: ClusterBits;
  /** The largest distance the tables serve (joins and exact lookups). */
  readonly k: number;
  /** The n and shard count the plan was made for. */
  readonly plannedSize: number;
  /** Shards the key rows are dealt to (1 to 1024). */
  readonly shards: number;
  /** Block b occupies bits [start, start + width) of the fingerprint; block 0 holds the most significant bits. */
  readonly blocks: ReadonlyArray<{
    /** First bit of the block. */
    readonly start: number;
    /** Bits in the block. */
    readonly width: number;
  }>;
  /** Key blocks of each table (ascending block ids), tables in lexicographic order; grid: one empty table. */
  readonly tables: ReadonlyArray<readonly number[]>;
  /** Top bits of a key holding its table id (0 with one table). */
  readonly tableBits: number;
  /** Key bits per table: its blocks' widths summed; keys wider than 64 − tableBits are folded by a hash. */
  readonly keyBits: readonly number[];
  /** Grid plan: fingerprints go to group id mod groups. 0 for block plans. */
  readonly groups: number;
  /** Key rows per fingerprint. */
  readonly keysPerFingerprint: number;
  /**
   * Block plans: each table's keys are cut into this many parts by their low bits (a power of two), and part p of
   * table t belongs to shard (t · parts + p) mod shards (keyOwner), so that a shard computes only the keys of the
   * tables it owns a part of. 1 when there are enough tables to spread. Grid plans: 1 (key k belongs to k mod shards).
   */
  readonly parts: number;
  /** The cost model's estimate for this plan on random fingerprints. */
  readonly estimate: ClusterJoinEstimate;
}

/** What a cluster plan is expected to cost on random fingerprints (rows, bytes, relative CPU). */
export interface ClusterJoinEstimate {
  /** Key rows shuffled to their shards (n · keys per fingerprint). */
  readonly keyRows: number;
  /** Key rows per shard on average (keyRows / shards). */
  readonly keyRowsPerShard: number;
  /** Rows the self-joins produce before verification (random fingerprints), over all shards. */
  readonly joinRows: number;
  /** Join rows per shard on average (joinRows / shards). */
  readonly joinRowsPerShard: number;
  /**
   * Bytes stored before compression (random fingerprints do not compress): the fingerprint table for a join plan
   * (its key rows are never stored), the key table for a lookup plan.
   */
  readonly bytesOnDisk: number;
  /** Cost in relative units (≈ µs of one shard's CPU), for comparing plans. */
  readonly cost: number;
}

/** Most key rows per fingerprint considered: each is shuffled, stored and hashed. */
export const MAX_TABLES = 1024;
const MAX_BLOCKS = 16; // planWithBlocks' limit (MAX_BLOCKS in src/join/join-plan.ts)

// Cost per key row (computed on its fingerprint's shard, sent to its owner, gathered and hashed there) and per join
// row (probed, built, XORed, popcounted, dropped; every key row also meets itself), in µs of CPU: a least-squares
// fit (of relative errors) of the servers' CPU time (user + system, all shards) over four joins on 3 local shards of
// ClickHouse 18.16 (bench/clickhouse.bench.ts data, k = 3; 2026-12-01, the join in rounds): 10^6 with 4, 5 and 6
// blocks (24.8-27.2, 8.3-9.7 and 12.7-13.3 s) and 10^7 with 5 blocks (94.6-107.3 s); the fit is within 19 % of
// each. It underestimates the largest join (15 %): a pass's hash table outgrows the caches.
const KEY_ROW = 0.39;
const JOIN_ROW = 0.38;

/** What a cluster plan is made for. Values out of range throw RangeError; non-numbers TypeError. */
export interface ClusterPlanOptions {
  /** Fingerprints the tables are planned for. */
  readonly size: number;
  /** The largest Hamming distance the join must find (0 to bits). */
  readonly k: number;
  /** Fingerprint width (default 64). */
  readonly bits?: ClusterBits;
  /** Shards of the cluster, 1 to 1024. */
  readonly shards: number;
  /** Forces a plan: a block count b > k, or 'grid'. For tests and the bench. */
  readonly blocks?: number | 'grid';
}

function checkInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${show(value)}`);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${show(value)}`);
  return value;
}

export function checkBits(value: unknown): ClusterBits {
  if (value === 64 || value === 128) return value;
  throw new (typeof value === 'number' ? RangeError : TypeError)(`bits must be 64 or 128, got ${show(value)}`);
}

/** Chooses the cheapest plan (or builds the forced one) for `size` fingerprints on `shards` shards. */
export function planClusterJoin(options: ClusterPlanOptions): ClusterJoinPlan {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`options must be an object, got ${show(options)}`);
  const bits = checkBits(options.bits ?? 64);
  const k = checkInteger(options.k, 'k', 0, bits);
  const n = checkInteger(options.size, 'size', 0, Number.MAX_SAFE_INTEGER);
  const shards = checkInteger(options.shards, 'shards', 1, 1024);
  const forced = options.blocks;
  if (forced === 'grid') return gridPlan(n, k, bits, shards);
  if (forced !== undefined) {
    const max = Math.min(MAX_BLOCKS, bits);
    checkInteger(forced, 'blocks', k + 1, max);
    const plan = blockPlan(n, k, bits, shards, forced);
    if (plan.tables.length > MAX_TABLES)
      throw new RangeError(`${forced} blocks at k = ${k} need ${plan.tables.length} tables, more than ${MAX_TABLES}`);
    return plan;
  }
  let best = gridPlan(n, k, bits, shards);
  for (let b = k + 1; b <= Math.min(MAX_BLOCKS, bits); b++) {
    if (binomial(b, k) > MAX_TABLES) continue;
    const plan = blockPlan(n, k, bits, shards, b);
    if (plan.estimate.cost < best.estimate.cost) best = plan;
  }
  return best;
}

function rowBytes(bits: ClusterBits): number {
  return 8 + bits / 8; // id + fingerprint words
}

/** The cost model's figures for a plan of `keyRows` shuffled key rows and `joinRows` join rows in all. */
function estimateOf(
  n: number,
  bits: ClusterBits,
  shards: number,
  keyRows: number,
  joinRows: number,
): ClusterJoinEstimate {
  return {
    keyRows,
    keyRowsPerShard: keyRows / shards,
    joinRows,
    joinRowsPerShard: joinRows / shards,
    bytesOnDisk: n * rowBytes(bits),
    cost: (KEY_ROW * keyRows + JOIN_ROW * joinRows) / shards,
  };
}

function blockPlan(n: number, k: number, bits: ClusterBits, shards: number, b: number): ClusterJoinPlan {
  const base = planWithBlocks(k, bits, b);
  const tables = base.tables;
  const keyBits = tables.map((key) => key.reduce((sum, id) => sum + base.blocks[id]!.width, 0));
  const T = tables.length;
  const keyRows = n * T;
  // Per table: every key row meets itself, and about n²/2^w other rows share its key (both orders).
  const joinRows = keyBits.reduce((sum, w) => sum + n + (n * n) / 2 ** w, 0);
  return {
    kind: 'blocks',
    bits,
    k,
    plannedSize: n,
    shards,
    blocks: base.blocks,
    tables,
    tableBits: T > 1 ? Math.ceil(Math.log2(T)) : 0,
    keyBits,
    groups: 0,
    keysPerFingerprint: T,
    parts: keyParts(T, shards),
    estimate: estimateOf(n, bits, shards, keyRows, joinRows),
  };
}

function gridPlan(n: number, k: number, bits: ClusterBits, shards: number): ClusterJoinPlan {
  // G groups make G(G + 1)/2 group pairs, spread over the shards; G = shards keeps key rows at n · shards.
  const groups = shards;
  const keyRows = n * groups;
  // A key {g, j} gathers groups g and j: (2n/G)² join rows off the diagonal, (n/G)² on it.
  const perGroup = n / groups;
  const joinRows = ((groups * (groups - 1)) / 2) * (2 * perGroup) ** 2 + groups * perGroup ** 2;
  return {
    kind: 'grid',
    bits,
    k,
    plannedSize: n,
    shards,
    blocks: [],
    tables: [[]],
    tableBits: 0,
    keyBits: [0],
    groups,
    keysPerFingerprint: groups,
    parts: 1,
    estimate: estimateOf(n, bits, shards, keyRows, joinRows),
  };
}

/**
 * The keys of the lookup tables, or null when lookups should scan: k + 1 blocks, one block per key (the fewest key
 * rows that keep every fingerprint within k findable), while a probe of k + 1 keys reads fewer rows than a scan.
 */
export function planClusterLookup(options: Omit<ClusterPlanOptions, 'blocks'>): ClusterJoinPlan | null {
  const bits = checkBits(options.bits ?? 64);
  const k = checkInteger(options.k, 'k', 0, bits);
  if (k + 1 > Math.min(MAX_BLOCKS, bits)) return null;
  const plan = planClusterJoin({ ...options, blocks: k + 1 });
  const narrowest = Math.min(...plan.keyBits);
  // Rows a lookup verifies on random data, against a scan of every fingerprint.
  if ((k + 1) * 2 ** -narrowest >= 0.1) return null;
  const stored = plan.estimate.keyRows * (8 + rowBytes(bits));
  return { ...plan, estimate: { ...plan.estimate, bytesOnDisk: stored } };
}

/** Most key rows one shard may own, as a multiple of the average (more parts per table when tables are too few). */
const OWNER_SPREAD = 1.1;

/**
 * The fewest parts per table (a power of two) that give every shard a part and spread the T · parts parts over
 * the shards within OWNER_SPREAD.
 */
export function keyParts(tables: number, shards: number): number {
  let parts = 1;
  const slots = () => tables * parts;
  while (slots() < shards || Math.ceil(slots() / shards) > OWNER_SPREAD * (slots() / shards)) parts *= 2;
  return parts;
}

/** The shard that joins key `key` of table `table` (what the join's SQL computes on the server). */
export function keyOwner(plan: ClusterJoinPlan, table: number, key: bigint): number {
  if (plan.kind === 'grid') return Number(key % BigInt(plan.shards));
  return (table * plan.parts + Number(key & BigInt(plan.parts - 1))) % plan.shards;
}

/** Grid plan: the key of the group pair {g, j} (its rank among pairs g ≤ j, so consecutive keys alternate shards). */
export function groupPairKey(g: number, j: number): number {
  const lo = Math.min(g, j);
  const hi = Math.max(g, j);
  return (hi * (hi + 1)) / 2 + lo;
}

/** The bit ranges of table t's key, word by word, packed from the top of its key bits in block order. */
export function keySegments(plan: ClusterJoinPlan, t: number): KeySegment[] {
  const out: Array<{ word: 0 | 1; shift: number; width: number; target: number }> = [];
  let top = plan.keyBits[t]!;
  for (const id of plan.tables[t]!) {
    const { start, width } = plan.blocks[id]!;
    // A block may straddle bit 64 of a 128-bit fingerprint: its high-word part first (it is the more significant).
    const parts: Array<[0 | 1, number, number]> = [];
    if (start + width > 64) parts.push([1, Math.max(start, 64) - 64, start + width - Math.max(start, 64)]);
    if (start < 64) parts.push([0, start, Math.min(start + width, 64) - start]);
    for (const [word, shift, w] of parts) {
      top -= w;
      const last = out[out.length - 1];
      // Adjacent ranges of one word that land adjacently in the key are one range.
      if (last && last.word === word && last.shift === shift + w && last.target === top + w) {
        last.shift = shift;
        last.width += w;
        last.target = top;
      } else out.push({ word, shift, width: w, target: top });
    }
  }
  return out;
}

/** Whether table t's key is folded by a hash (wider than the bits below the table id). */
export function isFolded(plan: ClusterJoinPlan, t: number): boolean {
  return plan.keyBits[t]! > 64 - plan.tableBits;
}

/** Multiplier of the fold (2^64 / golden ratio, odd): keys wider than their room are hashed by multiply-xor. */
export const FOLD_MULTIPLIER = 0x9e3779b97f4a7c15n;

const M64 = (1n << 64n) - 1n;

function extract(words: readonly [bigint, bigint], s: KeySegment): bigint {
  return (words[s.word] >> BigInt(s.shift)) & ((1n << BigInt(s.width)) - 1n);
}

/**
 * The key rows of one fingerprint (lo, hi words; hi is 0 at 64 bits) under a block plan, table by table: what the
 * SQL of sql.ts computes on the server. Lookups send these; the tests check them against the SQL and brute force.
 */
export function fingerprintKeys(plan: ClusterJoinPlan, lo: bigint, hi = 0n): bigint[] {
  if (plan.kind !== 'blocks') throw new RangeError('grid plans have no fingerprint keys (their keys come from ids)');
  const words = [lo, hi] as const;
  const low = 64 - plan.tableBits;
  return plan.tables.map((_, t) => {
    const segs = keySegments(plan, t);
    let key: bigint;
    if (isFolded(plan, t)) {
      let h = 0n;
      for (const s of segs) h = ((h * FOLD_MULTIPLIER) & M64) ^ extract(words, s);
      key = ((h * FOLD_MULTIPLIER) & M64) >> BigInt(plan.tableBits);
    } else {
      key = 0n;
      for (const s of segs) key |= extract(words, s) << BigInt(s.target);
    }
    return plan.tableBits === 0 ? key : (BigInt(t) << BigInt(low)) | key;
  });
}

/** Table t's key blocks as masks over the fingerprint's low and high words. */
export function tableMask(plan: ClusterJoinPlan, t: number): [bigint, bigint] {
  let m = 0n;
  for (const id of plan.tables[t]!) {
    const { start, width } = plan.blocks[id]!;
    m |= ((1n << BigInt(width)) - 1n) << BigInt(start);
  }
  return [m & M64, m >> 64n];
}
