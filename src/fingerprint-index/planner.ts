// Plans the table layout of a FingerprintIndex from its size N and distance k with a cost model.
//
// A layout splits the f fingerprint bits into m blocks and keeps one table per choice of s blocks (the table's
// leading blocks). Two fingerprints within k differ in at most k bits, so some s blocks together differ in at
// most R = s·⌊k/m⌋ + max(0, s − m + k mod m) bits (the s blocks holding the fewest differing bits); a query
// probes every table at every directory key within R of its own. s = m − k gives R = 0: the permuted tables of
// Manku et al. (2007); s = 1 is multi-index hashing (Norouzi et al.); anything between is allowed.
// Each table is a directory over the top d leading bits (2^d + 1 offsets into the table) and, per entry, a u32
// slot and the next 16 or 32 bits of the permuted key (the "tail", a filter that spares most fingerprint loads).
// The linear layout keeps no tables and scans everything: the cheapest for small N or very large k.
import { MAX_RADIUS } from './layout.shared.js';
import { show } from '../errors.js';

/** Fingerprint width a FingerprintIndex holds: 64, or 128 (two u64 words per fingerprint, low word first). */
export type IndexBits = 64 | 128;

/**
 * A forced layout: 'linear', or blocks m and leading blocks s per table (and optionally d and tail bits). Invalid
 * values throw TypeError or RangeError naming them; so does a layout of more than 64 tables or too many probes.
 */
export type IndexLayout =
  | 'linear'
  | {
      /** Blocks m the fingerprint is split into: 1 to the fingerprint width. */
      readonly blocks: number;
      /** Leading blocks s per table, 1 to m; there is one table per choice of s blocks (at most 64). */
      readonly leading: number;
      /** Directory bits d, 0 to min(24, the bits of s blocks); default: the planner's choice. */
      readonly directoryBits?: number;
      /** Width of each entry's filter of the key bits after the directory; default: the planner's choice. */
      readonly tailBits?: 16 | 32;
    };

/** One table of a plan: which blocks lead its permuted key, and where that key's bits lie. */
export interface TablePlan {
  /** Indices of the table's leading blocks. */
  readonly leadingBlocks: readonly number[];
  /** Bits in the leading blocks together (the key bits a probe compares before the tail filter). */
  readonly leadingBits: number;
  /** Segments (start bit, length) of the first d + tail bits of the permuted key, each inside one 64-bit word. */
  readonly segments: ReadonlyArray<readonly [start: number, length: number]>;
  /** The leading blocks as a mask over the fingerprint: low and high 64-bit words, 16 hex digits each. */
  readonly mask: readonly [string, string];
  /** Mask over the tail of the leading bits beyond the directory. */
  readonly tailPrefixMask: number;
}

/**
 * A FingerprintIndex's table layout and the cost model's estimates for it (on random fingerprints): see
 * FingerprintIndex.explain().
 */
export interface IndexPlan {
  /** 'tables': permuted tables probed per query; 'linear': no tables, every query scans all fingerprints. */
  readonly layout: 'tables' | 'linear';
  /** Fingerprint width. */
  readonly bits: IndexBits;
  /** The largest query distance the tables answer exactly (k). */
  readonly maxDistance: number;
  /** The N the plan was made for. */
  readonly plannedSize: number;
  /** Whether the layout was given (the `layout` option) rather than chosen by the planner. */
  readonly forced: boolean;
  /** Blocks as (start bit, length). */
  readonly blocks: ReadonlyArray<readonly [start: number, length: number]>;
  /** Leading blocks per table (s). */
  readonly leading: number;
  /** One entry per table (one per choice of `leading` blocks of `blocks`); empty for the linear layout. */
  readonly tables: readonly TablePlan[];
  /** Leading key bits d each table's directory indexes (2^d + 1 offsets); 0 for the linear layout. */
  readonly directoryBits: number;
  /** Width of each entry's filter of the key bits after the directory, which spares most fingerprint loads. */
  readonly tailBits: 16 | 32;
  /** Probe radius at maxDistance. */
  readonly probeRadius: number;
  /** Directory buckets one query at maxDistance probes, over all tables (0 for the linear layout). */
  readonly probesPerQuery: number;
  /** Expected entries in one probed bucket: N / 2^directoryBits (N for the linear layout). */
  readonly expectedCandidatesPerProbe: number;
  /** Expected entries one query walks over all its probes (N for the linear layout). */
  readonly expectedCandidatesPerQuery: number;
  /** Expected fingerprint loads (tail filter passes) per query on random data. */
  readonly expectedVerificationsPerQuery: number;
  /** The cost model's estimate of one query's time, in nanoseconds (calibrated on the project's bench machine). */
  readonly estimatedQueryNs: number;
  /** Estimated memory per fingerprint in bytes: fingerprint, key, tombstone bit, every table's entries and directories. */
  readonly bytesPerFingerprint: number;
}

export interface PlanOptions {
  readonly bits: IndexBits;
  readonly maxDistance: number;
  readonly size: number;
  readonly layout?: IndexLayout | undefined;
  /** Memory target in bytes per fingerprint; plans above it are penalised steeply. */
  readonly bytesPerFingerprint?: number | undefined;
}

export const MAX_TABLES = 64;
export const MAX_DIRECTORY_BITS = 24;
const MAX_PROBES = 1 << 20;

/** Default memory target: the 40 bytes per 64-bit fingerprint of the project goals, 48 at 128 bits. */
export function defaultBytesPerFingerprint(bits: IndexBits): number {
  return bits === 64 ? 40 : 48;
}

/** Probe radius of a layout with m blocks and s leading blocks per table at distance k. */
export function probeRadius(m: number, s: number, k: number): number {
  const q = Math.floor(k / m);
  const r = k % m;
  return s * q + Math.max(0, s - m + r);
}

const binomials: number[][] = [];
export function binomial(n: number, r: number): number {
  if (r < 0 || r > n) return 0;
  let row = binomials[n];
  if (!row) {
    row = [];
    binomials[n] = row;
  }
  let v = row[r];
  if (v === undefined) {
    v = 1;
    for (let i = 1; i <= r; i++) v = (v * (n - r + i)) / i;
    v = Math.round(v);
    row[r] = v;
  }
  return v;
}

/** P(Binomial(n, 1/2) ≤ x). */
const cdfs = new Map<number, number>();
function binomialCdf(n: number, x: number): number {
  if (x < 0) return 0;
  if (x >= n) return 1;
  const id = n * 256 + x;
  let v = cdfs.get(id);
  if (v === undefined) {
    v = 0;
    for (let i = 0; i <= x; i++) v += binomial(n, i);
    v /= 2 ** n;
    cdfs.set(id, v);
  }
  return v;
}

function blockRanges(bits: number, m: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const base = Math.floor(bits / m);
  const extra = bits % m;
  let start = 0;
  for (let i = 0; i < m; i++) {
    const len = base + (i < extra ? 1 : 0);
    out.push([start, len]);
    start += len;
  }
  return out;
}

function combinations(m: number, s: number): number[][] {
  const out: number[][] = [];
  const pick: number[] = [];
  const rec = (from: number): void => {
    if (pick.length === s) {
      out.push([...pick]);
      return;
    }
    for (let i = from; i <= m - (s - pick.length); i++) {
      pick.push(i);
      rec(i + 1);
      pick.pop();
    }
  };
  rec(0);
  return out;
}

function tablePlan(
  blocks: ReadonlyArray<readonly [number, number]>,
  leading: number[],
  d: number,
  tailBits: number,
): TablePlan {
  const order = [...leading, ...blocks.map((_, i) => i).filter((i) => !leading.includes(i))];
  const segments: Array<[number, number]> = [];
  let want = d + tailBits;
  for (const b of order) {
    if (want === 0) break;
    let [start, len] = blocks[b]!;
    while (len > 0 && want > 0) {
      const inWord = Math.min(len, 64 - (start % 64), want);
      segments.push([start, inWord]);
      start += inWord;
      len -= inWord;
      want -= inWord;
    }
  }
  let lo = 0n;
  let hi = 0n;
  let leadingBits = 0;
  for (const b of leading) {
    const [start, len] = blocks[b]!;
    leadingBits += len;
    const m = ((1n << BigInt(len)) - 1n) << BigInt(start);
    lo |= m & 0xffffffffffffffffn;
    hi |= m >> 64n;
  }
  const inTail = Math.max(0, Math.min(tailBits, leadingBits - d));
  const tailPrefixMask = inTail === 0 ? 0 : ((2 ** inTail - 1) * 2 ** (tailBits - inTail)) >>> 0;
  const hex = (x: bigint): string => x.toString(16).padStart(16, '0');
  return { leadingBlocks: leading, leadingBits, segments, mask: [hex(lo), hex(hi)], tailPrefixMask };
}

interface Costed {
  m: number;
  s: number;
  d: number;
  tail: 16 | 32;
  radius: number;
  tables: number;
  probes: number;
  perProbe: number;
  candidates: number;
  verifications: number;
  ns: number;
  bytes: number;
}

/**
 * Cost of a random load from a structure of `bytes` (cache, then memory), in the same units as SCAN_NS.
 * Calibrated on this project's bench machine: a bucket probe costs ~150 linear-scan steps once the tables
 * leave the caches, a fingerprint verification ~100.
 */
function missNs(bytes: number): number {
  return bytes > 8e6 ? 70 : bytes > 1e6 ? 40 : bytes > 2.5e5 ? 15 : 5;
}

const SCAN_NS = { 64: 0.4, 128: 0.7 } as const;
const ENTRY_NS = 0.8;

function baseBytes(bits: IndexBits): number {
  return bits / 8 + 4 + 1 / 8; // fingerprint, key, dead bit
}

function costLinear(bits: IndexBits, n: number): { ns: number; bytes: number } {
  return { ns: n * SCAN_NS[bits], bytes: baseBytes(bits) };
}

function costTables(
  bits: IndexBits,
  k: number,
  n: number,
  m: number,
  s: number,
  d: number,
  tail: 16 | 32,
  minLeading: number,
): Costed | undefined {
  const tables = binomial(m, s);
  const radius = probeRadius(m, s, k);
  const r = Math.min(radius, d);
  let probes = 0;
  for (let i = 0; i <= r; i++) probes += binomial(d, i);
  if (probes * tables > MAX_PROBES) return undefined;
  const perProbe = n / 2 ** d;
  const inTail = Math.max(0, Math.min(tail, minLeading - d));
  // Expected tail-filter passes per table: a random entry in a bucket i flips away passes when its tail prefix
  // is within R − i and its whole tail within k − i.
  let passes = 0;
  for (let i = 0; i <= r; i++) {
    let p = 0;
    for (let j = 0; j <= Math.min(inTail, radius - i); j++) {
      p += (binomial(inTail, j) / 2 ** inTail) * binomialCdf(tail - inTail, k - i - j);
    }
    passes += binomial(d, i) * perProbe * p;
  }
  const bytes = baseBytes(bits) + tables * (4 + tail / 8) + (tables * 4 * (2 ** d + 1)) / Math.max(n, 1);
  const dirBytes = tables * 4 * 2 ** d;
  const tailBytes = tables * n * (tail / 8);
  const idBytes = tables * n * 4;
  const masterBytes = n * (bits / 8);
  const probeNs = missNs(dirBytes) + Math.min(1, perProbe) * missNs(tailBytes);
  const verifyNs = missNs(idBytes) + missNs(masterBytes);
  const ns = tables * (probes * probeNs + probes * perProbe * ENTRY_NS + passes * verifyNs) + 50;
  return {
    m,
    s,
    d,
    tail,
    radius,
    tables,
    probes: probes * tables,
    perProbe,
    candidates: probes * perProbe * tables,
    verifications: passes * tables,
    ns,
    bytes,
  };
}

function penalised(ns: number, bytes: number, budget: number): number {
  return bytes <= budget ? ns : ns * (bytes / budget) ** 8;
}

function checkLayout(layout: unknown, bits: IndexBits): IndexLayout | undefined {
  if (layout === undefined || layout === 'linear') return layout;
  if (layout === null || typeof layout !== 'object' || Array.isArray(layout)) {
    throw new TypeError(`layout must be 'linear' or { blocks, leading }, got ${show(layout)}`);
  }
  const l = layout as Record<string, unknown>;
  for (const key of Object.keys(l)) {
    if (!['blocks', 'leading', 'directoryBits', 'tailBits'].includes(key))
      throw new TypeError(`unknown layout option ${JSON.stringify(key)}`);
  }
  const { blocks, leading, directoryBits, tailBits } = l;
  if (typeof blocks !== 'number' || !Number.isInteger(blocks) || blocks < 1 || blocks > bits) {
    throw new RangeError(`layout.blocks must be an integer from 1 to ${bits}, got ${show(blocks)}`);
  }
  if (typeof leading !== 'number' || !Number.isInteger(leading) || leading < 1 || leading > blocks) {
    throw new RangeError(`layout.leading must be an integer from 1 to blocks (${blocks}), got ${show(leading)}`);
  }
  if (binomial(blocks, leading) > MAX_TABLES) {
    throw new RangeError(
      `layout { blocks: ${blocks}, leading: ${leading} } needs ${binomial(blocks, leading)} tables; at most ${MAX_TABLES} are allowed`,
    );
  }
  const minLeading = leading * Math.floor(bits / blocks);
  if (directoryBits !== undefined) {
    if (
      typeof directoryBits !== 'number' ||
      !Number.isInteger(directoryBits) ||
      directoryBits < 0 ||
      directoryBits > Math.min(MAX_DIRECTORY_BITS, minLeading)
    ) {
      throw new RangeError(
        `layout.directoryBits must be an integer from 0 to ${Math.min(MAX_DIRECTORY_BITS, minLeading)} (the leading bits per table), got ${show(directoryBits)}`,
      );
    }
  }
  if (tailBits !== undefined && tailBits !== 16 && tailBits !== 32) {
    throw new RangeError(`layout.tailBits must be 16 or 32, got ${show(tailBits)}`);
  }
  return layout as IndexLayout;
}

/** Validates a layout option (throws TypeError/RangeError naming the bad value). */
export function validateLayout(layout: unknown, bits: IndexBits): IndexLayout | undefined {
  return checkLayout(layout, bits);
}

const planCache = new Map<string, IndexPlan>();

/**
 * Chooses the layout for N fingerprints at distance k (or completes a forced one). N is rounded to a power of
 * √2 so that an index which grows re-plans only when its size changes materially (plans are cached).
 */
export function planIndex(options: PlanOptions): IndexPlan {
  const n = Math.max(1, Math.round(Math.SQRT2 ** Math.round(2 * Math.log2(Math.max(1, options.size)))));
  const id = JSON.stringify([
    options.bits,
    options.maxDistance,
    n,
    options.layout ?? null,
    options.bytesPerFingerprint ?? null,
  ]);
  let plan = planCache.get(id);
  if (!plan) {
    if (planCache.size > 1000) planCache.clear();
    plan = choosePlan(options, n);
    planCache.set(id, plan);
  }
  return plan;
}

function choosePlan(options: PlanOptions, n: number): IndexPlan {
  const { bits, maxDistance: k } = options;
  const budget = options.bytesPerFingerprint ?? defaultBytesPerFingerprint(bits);
  const layout = options.layout;
  const linear = costLinear(bits, n);
  let best: Costed | undefined;
  let bestScore = layout === undefined ? penalised(linear.ns, linear.bytes, budget) : Infinity;
  const consider = (m: number, s: number, dForced: number | undefined, tailForced: 16 | 32 | undefined): void => {
    if (binomial(m, s) > MAX_TABLES) return;
    const radius = probeRadius(m, s, k);
    if (radius > MAX_RADIUS) return;
    const minLeading = s * Math.floor(bits / m);
    const dMax = Math.min(MAX_DIRECTORY_BITS, minLeading, Math.max(0, Math.ceil(Math.log2(n)) + 1));
    // Directories much smaller than N only lengthen the walks: try the top dozen sizes.
    const dMin = Math.max(0, dMax - 12);
    const ds = dForced !== undefined ? [dForced] : Array.from({ length: dMax - dMin + 1 }, (_, i) => dMin + i);
    for (const d of ds) {
      for (const tail of tailForced !== undefined ? [tailForced] : ([16, 32] as const)) {
        const c = costTables(bits, k, n, m, s, d, tail, minLeading);
        if (!c) continue;
        const score = penalised(c.ns, c.bytes, budget);
        if (score < bestScore) {
          bestScore = score;
          best = c;
        }
      }
    }
  };
  if (layout === undefined) {
    for (let m = 1; m <= Math.min(bits, 32); m++) {
      for (let s = 1; s <= m; s++) consider(m, s, undefined, undefined);
    }
  } else if (layout !== 'linear') {
    consider(layout.blocks, layout.leading, layout.directoryBits, layout.tailBits);
    if (!best) {
      throw new RangeError(
        `layout { blocks: ${layout.blocks}, leading: ${layout.leading} } needs too many probes at maxDistance ${k}`,
      );
    }
  }
  const forced = layout !== undefined;
  if (!best) {
    return Object.freeze({
      layout: 'linear',
      bits,
      maxDistance: k,
      plannedSize: n,
      forced,
      blocks: [],
      leading: 0,
      tables: [],
      directoryBits: 0,
      tailBits: 16,
      probeRadius: 0,
      probesPerQuery: 0,
      expectedCandidatesPerProbe: n,
      expectedCandidatesPerQuery: n,
      expectedVerificationsPerQuery: n,
      estimatedQueryNs: linear.ns,
      bytesPerFingerprint: linear.bytes,
    });
  }
  const c: Costed = best;
  const blocks = blockRanges(bits, c.m);
  const tables = combinations(c.m, c.s).map((leading) => tablePlan(blocks, leading, c.d, c.tail));
  return Object.freeze({
    layout: 'tables',
    bits,
    maxDistance: k,
    plannedSize: n,
    forced,
    blocks,
    leading: c.s,
    tables,
    directoryBits: c.d,
    tailBits: c.tail,
    probeRadius: c.radius,
    probesPerQuery: c.probes,
    expectedCandidatesPerProbe: c.perProbe,
    expectedCandidatesPerQuery: c.candidates,
    expectedVerificationsPerQuery: c.verifications,
    estimatedQueryNs: c.ns,
    bytesPerFingerprint: c.bytes,
  });
}
