// Kernels of FingerprintIndex (src/fingerprint-index/fingerprint-index.ts): permuted tables built by counting sort on a prefix
// directory, probes that walk directory buckets and verify with popcount, a pair radix sort and a sorted merge
// for bulk inserts, and a checksum for the binary format. All state lives in blocks the TypeScript side
// allocates; the kernels only read and write through raw pointers.
//
// The index header and table descriptors are laid out in src/fingerprint-index/layout.shared.ts (imported below).
// Bit i of a fingerprint is bit i of (low | high << 64).
import {
  H_WORDS, H_TABLES, H_DIR_BITS, H_TAIL_BITS, H_SORTED, H_SLOTS, H_MASTER, H_DEAD, H_DESCRIPTORS, H_ANY_DEAD,
  MAX_RADIUS, DESCRIPTOR_BYTES, D_SEGMENT_COUNT, D_SEGMENTS, D_MASK_LOW, D_MASK_HIGH, D_TAIL_PREFIX_MASK, D_DIRECTORY, D_IDS, D_TAILS,
} from '../src/fingerprint-index/layout.shared';

const FLIPS = memory.data(MAX_RADIUS * 4 + 16, 16); // positions of the bits flipped in a probe
const HIST = memory.data(256 * 4 * 4, 16); // radix sort histograms, 4 digits

// @ts-ignore: decorator
@inline function hdr(h: usize, field: i32): u32 {
  return load<u32>(h + (<usize>field << 2));
}

// @ts-ignore: decorator
@inline function permutedKey(desc: usize, lo: u64, hi: u64): u64 {
  let n = load<u32>(desc, D_SEGMENT_COUNT);
  let key: u64 = 0;
  for (let i: u32 = 0; i < n; i++) {
    let seg = load<u32>(desc + (<usize>i << 2), D_SEGMENTS);
    let start = <u64>(seg >> 8);
    let len = <u64>(seg & 255);
    let word = start < 64 ? lo : hi;
    let bits = (word >> (start & 63)) & (len == 64 ? <u64>-1 : (<u64>1 << len) - 1);
    key = len == 64 ? bits : (key << len) | bits;
  }
  return key;
}

/**
 * Builds table `t` over the sorted part of the index: a counting sort of slots by the top d bits of the
 * permuted key (the directory, 2^d + 1 offsets) with the next `tail bits` bits kept beside each id.
 * Above 10 directory bits the scatter runs in two passes (first by the top 8 bits into `tmp`, 12 bytes per
 * entry), so each pass writes to few enough places at once to stay in cache.
 */
export function indexBuildTable(h: usize, t: u32, tmp: usize): void {
  let words = hdr(h, H_WORDS);
  let d = hdr(h, H_DIR_BITS);
  let tailBits = <u64>hdr(h, H_TAIL_BITS);
  let n = hdr(h, H_SORTED);
  let master = <usize>hdr(h, H_MASTER);
  let desc = <usize>hdr(h, H_DESCRIPTORS) + <usize>t * DESCRIPTOR_BYTES;
  let dir = <usize>load<u32>(desc, D_DIRECTORY);
  let ids = <usize>load<u32>(desc, D_IDS);
  let tails = <usize>load<u32>(desc, D_TAILS);
  let buckets = <usize>1 << d;
  memory.fill(dir, 0, (buckets + 1) << 2);
  let tailMask = (<u64>1 << tailBits) - 1;
  let stride = <usize>words << 3;
  let twoPass = d > 10;
  let topShift = <u64>(twoPass ? d - 8 : 0) + tailBits;
  memory.fill(HIST, 0, 256 * 4);
  // Count into dir[b + 2], so that after the prefix sum dir[b + 1] is where bucket b starts.
  for (let i: u32 = 0; i < n; i++) {
    let p = master + <usize>i * stride;
    let key = permutedKey(desc, load<u64>(p), words == 2 ? load<u64>(p, 8) : 0);
    let b = <usize>(key >> tailBits);
    if (b + 2 <= buckets) {
      let c = dir + ((b + 2) << 2);
      store<u32>(c, load<u32>(c) + 1);
    }
    if (twoPass) {
      let c = HIST + (<usize>(key >> topShift) << 2);
      store<u32>(c, load<u32>(c) + 1);
    }
  }
  let sum: u32 = 0;
  for (let b: usize = 2; b <= buckets; b++) {
    sum += load<u32>(dir + (b << 2));
    store<u32>(dir + (b << 2), sum);
  }
  store<u32>(dir + 4, 0);
  let wide = tailBits == 32;
  if (!twoPass) {
    // Scatter: dir[b + 1] is bucket b's cursor; afterwards it is bucket b's end, i.e. bucket b + 1's start.
    for (let i: u32 = 0; i < n; i++) {
      let p = master + <usize>i * stride;
      let key = permutedKey(desc, load<u64>(p), words == 2 ? load<u64>(p, 8) : 0);
      let c = dir + (((<usize>(key >> tailBits)) + 1) << 2);
      let pos = <usize>load<u32>(c);
      store<u32>(c, <u32>pos + 1);
      store<u32>(ids + (pos << 2), i);
      if (wide) store<u32>(tails + (pos << 2), <u32>(key & tailMask));
      else store<u16>(tails + (pos << 1), <u16>(key & tailMask));
    }
    return;
  }
  let tmpIds = tmp + (<usize>n << 3);
  sum = 0;
  for (let b: usize = 0; b < 256; b++) {
    let c = load<u32>(HIST + (b << 2));
    store<u32>(HIST + (b << 2), sum);
    sum += c;
  }
  for (let i: u32 = 0; i < n; i++) {
    let p = master + <usize>i * stride;
    let key = permutedKey(desc, load<u64>(p), words == 2 ? load<u64>(p, 8) : 0);
    let c = HIST + (<usize>(key >> topShift) << 2);
    let pos = <usize>load<u32>(c);
    store<u32>(c, <u32>pos + 1);
    store<u64>(tmp + (pos << 3), key);
    store<u32>(tmpIds + (pos << 2), i);
  }
  for (let j: u32 = 0; j < n; j++) {
    let key = load<u64>(tmp + (<usize>j << 3));
    let c = dir + (((<usize>(key >> tailBits)) + 1) << 2);
    let pos = <usize>load<u32>(c);
    store<u32>(c, <u32>pos + 1);
    store<u32>(ids + (pos << 2), load<u32>(tmpIds + (<usize>j << 2)));
    if (wide) store<u32>(tails + (pos << 2), <u32>(key & tailMask));
    else store<u16>(tails + (pos << 1), <u16>(key & tailMask));
  }
}

// @ts-ignore: decorator
@inline function isDead(dead: usize, slot: u32): bool {
  return ((load<u32>(dead + ((<usize>slot >> 5) << 2)) >> (slot & 31)) & 1) != 0;
}

// @ts-ignore: decorator
@inline function distanceAt(master: usize, words: u32, slot: u32, qlo: u64, qhi: u64): i32 {
  let p = master + (<usize>slot << (words == 2 ? 4 : 3));
  let x = <i32>popcnt<u64>(load<u64>(p) ^ qlo);
  if (words == 2) x += <i32>popcnt<u64>(load<u64>(p, 8) ^ qhi);
  return x;
}

let outPtr: usize = 0;
let outUsed: i32 = 0;
let outCap: i32 = 0;

// @ts-ignore: decorator
@inline function emit(slot: u32, dist: i32): bool {
  if (outUsed >= outCap) return false;
  let p = outPtr + (<usize>outUsed << 3);
  store<u32>(p, slot);
  store<u32>(p, <u32>dist, 4);
  outUsed++;
  return true;
}

/** Linear scan of slots [from, to): every live slot within k. False when the output is full. */
function scanRange(h: usize, from: u32, to: u32, qlo: u64, qhi: u64, k: i32): bool {
  let words = hdr(h, H_WORDS);
  let master = <usize>hdr(h, H_MASTER);
  let dead = <usize>hdr(h, H_DEAD);
  let anyDead = hdr(h, H_ANY_DEAD) != 0;
  if (words == 1) {
    for (let s = from; s < to; s++) {
      let x = <i32>popcnt<u64>(load<u64>(master + (<usize>s << 3)) ^ qlo);
      if (x <= k && !(anyDead && isDead(dead, s))) {
        if (!emit(s, x)) return false;
      }
    }
  } else {
    for (let s = from; s < to; s++) {
      let p = master + (<usize>s << 4);
      let x = <i32>(popcnt<u64>(load<u64>(p) ^ qlo) + popcnt<u64>(load<u64>(p, 8) ^ qhi));
      if (x <= k && !(anyDead && isDead(dead, s))) {
        if (!emit(s, x)) return false;
      }
    }
  }
  return true;
}

// Reports a verified candidate found in table t only if t is the first table whose leading blocks are within
// the probe radius: each neighbour is found in that table, so it is reported exactly once.
// @ts-ignore: decorator
@inline function firstTable(descs: usize, t: u32, xlo: u64, xhi: u64, radius: i32): bool {
  let own = descs + <usize>t * DESCRIPTOR_BYTES;
  if (<i32>(popcnt<u64>(xlo & load<u64>(own, D_MASK_LOW)) + popcnt<u64>(xhi & load<u64>(own, D_MASK_HIGH))) > radius) return false;
  for (let u: u32 = 0; u < t; u++) {
    let o = descs + <usize>u * DESCRIPTOR_BYTES;
    if (<i32>(popcnt<u64>(xlo & load<u64>(o, D_MASK_LOW)) + popcnt<u64>(xhi & load<u64>(o, D_MASK_HIGH))) <= radius) return false;
  }
  return true;
}

// @ts-ignore: decorator
@inline const BATCH: i32 = 256;
/** (start, end, flipped | table << 8, query tail) of the buckets gathered for one batch, over every table. */
const RANGES = memory.data(BATCH * 16, 16);
// @ts-ignore: decorator
@inline const SURVIVOR_BATCH: i32 = 256;
/** (table, index in the table, then slot, distance) of the tail-filter survivors awaiting verification. */
const SURVIVORS = memory.data(SURVIVOR_BATCH * 12, 16);
let survivorCount: i32 = 0;
/** Receives the loads that only touch a cache line early (kept, so no optimiser drops them). */
let touched: u32 = 0;

/**
 * Verifies the pending survivors in three passes, each over independent loads, so their cache misses overlap
 * instead of queueing one survivor behind the other: their slots (the tables' id arrays), their distances
 * (the master array), then the tests and the output for those within k. False when the output is full.
 */
function verifySurvivors(h: usize, descs: usize, qlo: u64, qhi: u64, k: i32, radius: i32): bool {
  let n = survivorCount;
  survivorCount = 0;
  let words = hdr(h, H_WORDS);
  let master = <usize>hdr(h, H_MASTER);
  let shift = <usize>(words == 2 ? 4 : 3);
  let end = SURVIVORS + <usize>n * 12;
  for (let e = SURVIVORS; e < end; e += 12) {
    let ids = <usize>load<u32>(descs + <usize>load<u32>(e) * DESCRIPTOR_BYTES, D_IDS);
    store<u32>(e, load<u32>(ids + (<usize>load<u32>(e, 4) << 2)), 4);
  }
  for (let e = SURVIVORS; e < end; e += 12) store<u32>(e, <u32>distanceAt(master, words, load<u32>(e, 4), qlo, qhi), 8);
  let anyDead = hdr(h, H_ANY_DEAD) != 0;
  let dead = <usize>hdr(h, H_DEAD);
  for (let e = SURVIVORS; e < end; e += 12) {
    let dist = <i32>load<u32>(e, 8);
    if (dist > k) continue;
    let slot = load<u32>(e, 4);
    let p = master + (<usize>slot << shift);
    let xlo = load<u64>(p) ^ qlo;
    let xhi = words == 2 ? load<u64>(p, 8) ^ qhi : 0;
    if (!firstTable(descs, load<u32>(e), xlo, xhi, radius)) continue;
    if (anyDead && isDead(dead, slot)) continue;
    if (!emit(slot, dist)) return false;
  }
  return true;
}

// Queues one tail-filter survivor (index j of table t), verifying the queue when it is full. False when the
// output is full.
// @ts-ignore: decorator
@inline function survivor(h: usize, descs: usize, t: u32, j: u32, qlo: u64, qhi: u64, k: i32, radius: i32): bool {
  let e = SURVIVORS + <usize>survivorCount * 12;
  store<u32>(e, t);
  store<u32>(e, j, 4);
  return ++survivorCount < SURVIVOR_BATCH || verifySurvivors(h, descs, qlo, qhi, k, radius);
}

/**
 * Walks one directory bucket [s, e) of table t, `flipped` directory bits away from the query: entries whose
 * tail is within k − flipped of the query's (and whose leading bits in the tail within radius − flipped) are
 * queued for verification against the full fingerprint. False when the output is full.
 */
function walkBucket(h: usize, descs: usize, t: u32, s: u32, e: u32, qtail: u32, qlo: u64, qhi: u64, k: i32, radius: i32, flipped: i32): bool {
  let desc = descs + <usize>t * DESCRIPTOR_BYTES;
  let tails = <usize>load<u32>(desc, D_TAILS);
  let prefixMask = load<u32>(desc, D_TAIL_PREFIX_MASK);
  let prefixBudget = <u32>(radius - flipped);
  let budget = <u32>(k - flipped);
  if (hdr(h, H_TAIL_BITS) == 32) {
    for (let j = s; j < e; j++) {
      let x = load<u32>(tails + (<usize>j << 2)) ^ qtail;
      if (popcnt<u32>(x) <= budget && popcnt<u32>(x & prefixMask) <= prefixBudget) {
        if (!survivor(h, descs, t, j, qlo, qhi, k, radius)) return false;
      }
    }
  } else {
    for (let j = s; j < e; j++) {
      let x = <u32>load<u16>(tails + (<usize>j << 1)) ^ qtail;
      if (popcnt<u32>(x) <= budget && popcnt<u32>(x & prefixMask) <= prefixBudget) {
        if (!survivor(h, descs, t, j, qlo, qhi, k, radius)) return false;
      }
    }
  }
  return true;
}

/**
 * Probes every table for one query: all directory buckets within `radius` of the query's. Bucket offsets are
 * gathered over all tables (up to BATCH) before any is walked, the first tail line of each is touched before
 * the walks, and survivors are verified in batches, so the misses of the tables overlap instead of queueing
 * (10^7 fingerprints, k = 3, four tables: kernel p50 6.0-7.0 µs before, one table after the other).
 */
function probeTables(h: usize, qlo: u64, qhi: u64, k: i32, radius: i32): bool {
  let tables = hdr(h, H_TABLES);
  let d = <i32>hdr(h, H_DIR_BITS);
  let tailBits = <u64>hdr(h, H_TAIL_BITS);
  let descs = <usize>hdr(h, H_DESCRIPTORS);
  let tailMask = (<u64>1 << tailBits) - 1;
  let r = radius < d ? radius : d;
  let gathered = 0;
  survivorCount = 0;
  for (let t: u32 = 0; t < tables; t++) {
    let desc = descs + <usize>t * DESCRIPTOR_BYTES;
    let dir = <usize>load<u32>(desc, D_DIRECTORY);
    let key = permutedKey(desc, qlo, qhi);
    let qdir = <u32>(key >> tailBits);
    let qtail = <u32>(key & tailMask);
    for (let flips = 0; flips <= r; flips++) {
      // Enumerate every set of `flips` bit positions among the d directory bits (combinations in order).
      for (let i = 0; i < flips; i++) store<i32>(FLIPS + (<usize>i << 2), i);
      for (;;) {
        let mask: u32 = 0;
        for (let i = 0; i < flips; i++) mask |= <u32>1 << <u32>load<i32>(FLIPS + (<usize>i << 2));
        let b = <usize>(qdir ^ mask);
        let s = load<u32>(dir + (b << 2));
        let e = load<u32>(dir + (b << 2), 4);
        if (s < e) {
          let g = RANGES + (<usize>gathered << 4);
          store<u32>(g, s);
          store<u32>(g, e, 4);
          store<u32>(g, <u32>flips | (t << 8), 8);
          store<u32>(g, qtail, 12);
          if (++gathered == BATCH) {
            if (!walkGathered(h, descs, gathered, qlo, qhi, k, radius)) return false;
            gathered = 0;
          }
        }
        // Next combination: advance the last position that can still move right.
        let i = flips - 1;
        while (i >= 0 && load<i32>(FLIPS + (<usize>i << 2)) == d - flips + i) i--;
        if (i < 0) break;
        let v = load<i32>(FLIPS + (<usize>i << 2)) + 1;
        for (let j = i; j < flips; j++) store<i32>(FLIPS + (<usize>j << 2), v + j - i);
      }
    }
  }
  return walkGathered(h, descs, gathered, qlo, qhi, k, radius) && verifySurvivors(h, descs, qlo, qhi, k, radius);
}

function walkGathered(h: usize, descs: usize, n: i32, qlo: u64, qhi: u64, k: i32, radius: i32): bool {
  let tailShift = <usize>(hdr(h, H_TAIL_BITS) == 32 ? 2 : 1);
  let end = RANGES + (<usize>n << 4);
  let touch: u32 = 0;
  for (let g = RANGES; g < end; g += 16) {
    let tails = <usize>load<u32>(descs + <usize>(load<u32>(g, 8) >> 8) * DESCRIPTOR_BYTES, D_TAILS);
    touch += load<u8>(tails + (<usize>load<u32>(g) << tailShift));
  }
  touched += touch;
  for (let g = RANGES; g < end; g += 16) {
    let tf = load<u32>(g, 8);
    if (!walkBucket(h, descs, tf >> 8, load<u32>(g), load<u32>(g, 4), load<u32>(g, 12), qlo, qhi, k, radius, <i32>(tf & 255))) return false;
  }
  return true;
}

/**
 * Answers `nq` queries (words per fingerprint each) with distance ≤ k: (slot u32, distance u32) pairs into
 * `out` (capacity `cap` pairs) and a count per query into `counts`. Returns how many queries completed; fewer
 * than nq means the output filled up during the next one (its partial results are dropped).
 */
export function indexQuery(h: usize, queries: usize, nq: i32, k: i32, radius: i32, out: usize, cap: i32, counts: usize): i32 {
  let words = hdr(h, H_WORDS);
  let sorted = hdr(h, H_SORTED);
  let slots = hdr(h, H_SLOTS);
  let linear = hdr(h, H_TABLES) == 0;
  outPtr = out;
  outCap = cap;
  outUsed = 0;
  for (let q = 0; q < nq; q++) {
    let start = outUsed;
    let p = queries + (<usize>q << (words == 2 ? 4 : 3));
    let qlo = load<u64>(p);
    let qhi = words == 2 ? load<u64>(p, 8) : 0;
    let ok = linear ? scanRange(h, 0, sorted, qlo, qhi, k) : probeTables(h, qlo, qhi, k, radius);
    if (ok) ok = scanRange(h, sorted, slots, qlo, qhi, k);
    if (!ok) return q;
    store<u32>(counts + (<usize>q << 2), <u32>(outUsed - start));
  }
  return nq;
}

/**
 * Sorts (key, value) u32 pairs by key, stable (LSD radix, 8-bit digits, passes over constant digits skipped).
 * `tk`/`tv` are scratch of n entries. Returns 1 when the result is in the scratch arrays, 0 when in place.
 */
export function indexSortPairs(keys: usize, vals: usize, n: u32, tk: usize, tv: usize): i32 {
  let sorted = true;
  for (let i: u32 = 1; i < n; i++) {
    if (load<u32>(keys + (<usize>i << 2)) < load<u32>(keys + (<usize>(i - 1) << 2))) { sorted = false; break; }
  }
  if (sorted) return 0;
  memory.fill(HIST, 0, 256 * 4 * 4);
  for (let i: u32 = 0; i < n; i++) {
    let key = load<u32>(keys + (<usize>i << 2));
    for (let dgt: u32 = 0; dgt < 4; dgt++) {
      let c = HIST + (<usize>dgt << 10) + (<usize>((key >> (dgt << 3)) & 255) << 2);
      store<u32>(c, load<u32>(c) + 1);
    }
  }
  let sk = keys, sv = vals, dk = tk, dv = tv;
  let swapped: i32 = 0;
  for (let dgt: u32 = 0; dgt < 4; dgt++) {
    let hist = HIST + (<usize>dgt << 10);
    let skip = false;
    let sum: u32 = 0;
    for (let b: usize = 0; b < 256; b++) {
      let c = load<u32>(hist + (b << 2));
      if (c == n) skip = true;
      store<u32>(hist + (b << 2), sum);
      sum += c;
    }
    if (skip) continue;
    let shift = dgt << 3;
    for (let i: u32 = 0; i < n; i++) {
      let key = load<u32>(sk + (<usize>i << 2));
      let c = hist + (<usize>((key >> shift) & 255) << 2);
      let pos = <usize>load<u32>(c);
      store<u32>(c, <u32>pos + 1);
      store<u32>(dk + (pos << 2), key);
      store<u32>(dv + (pos << 2), load<u32>(sv + (<usize>i << 2)));
    }
    let a = sk; sk = dk; dk = a;
    let b2 = sv; sv = dv; dv = b2;
    swapped ^= 1;
  }
  return swapped;
}

/** First i with keys[i] == keys[i - 1] in a sorted array, or -1. */
export function indexFirstRepeat(keys: usize, n: u32): i32 {
  for (let i: u32 = 1; i < n; i++) {
    if (load<u32>(keys + (<usize>i << 2)) == load<u32>(keys + (<usize>(i - 1) << 2))) return <i32>i;
  }
  return -1;
}

/**
 * Index into `b` (sorted, nb keys) of the first key also live in the index's sorted part, or -1: the sorted
 * part's keys are ascending, so one merge walk answers it.
 */
export function indexFirstCommon(h: usize, keys: usize, b: usize, nb: u32): i32 {
  let n = hdr(h, H_SORTED);
  let dead = <usize>hdr(h, H_DEAD);
  let anyDead = hdr(h, H_ANY_DEAD) != 0;
  let i: u32 = 0, j: u32 = 0;
  while (i < n && j < nb) {
    let x = load<u32>(keys + (<usize>i << 2));
    let y = load<u32>(b + (<usize>j << 2));
    if (x < y) i++;
    else if (y < x) j++;
    else {
      if (!(anyDead && isDead(dead, i))) return <i32>j;
      i++;
    }
  }
  return -1;
}

/**
 * Merges, in key order, three sources into `outMaster`/`outKeys`: the live sorted part of the index (keys
 * ascending), `nb` sorted (key, slot) pairs of the index's insert buffer, and `nc` sorted (key, slot) pairs of
 * a batch whose fingerprints are at `cMaster` (slot = position in the batch; `cs` 0 means the identity). Dead
 * index slots are dropped. Nothing of the index is written, so a caller can still abandon the result.
 * Returns the number written.
 */
export function indexMerge(
  h: usize, keys: usize, bk: usize, bs: usize, nb: u32, ck: usize, cs: usize, nc: u32, cMaster: usize,
  outMaster: usize, outKeys: usize,
): u32 {
  let words = hdr(h, H_WORDS);
  let n = hdr(h, H_SORTED);
  let master = <usize>hdr(h, H_MASTER);
  let dead = <usize>hdr(h, H_DEAD);
  let anyDead = hdr(h, H_ANY_DEAD) != 0;
  let stride = <usize>words << 3;
  let i: u32 = 0, j: u32 = 0, l: u32 = 0, o: u32 = 0;
  for (;;) {
    while (i < n && anyDead && isDead(dead, i)) i++;
    while (j < nb && anyDead && isDead(dead, load<u32>(bs + (<usize>j << 2)))) j++;
    // The smallest key of the three heads; 0xffffffff + 1 stands for an exhausted source.
    let ka: u64 = i < n ? <u64>load<u32>(keys + (<usize>i << 2)) : 0x100000000;
    let kb: u64 = j < nb ? <u64>load<u32>(bk + (<usize>j << 2)) : 0x100000000;
    let kc: u64 = l < nc ? <u64>load<u32>(ck + (<usize>l << 2)) : 0x100000000;
    let src: usize = 0;
    let key: u64 = 0;
    if (ka <= kb && ka <= kc) {
      if (ka == 0x100000000) break;
      key = ka;
      src = master + <usize>i * stride;
      i++;
    } else if (kb <= kc) {
      key = kb;
      src = master + <usize>load<u32>(bs + (<usize>j << 2)) * stride;
      j++;
    } else {
      key = kc;
      let slot = cs == 0 ? l : load<u32>(cs + (<usize>l << 2));
      src = cMaster + <usize>slot * stride;
      l++;
    }
    let dst = outMaster + <usize>o * stride;
    store<u64>(dst, load<u64>(src));
    if (words == 2) store<u64>(dst, load<u64>(src, 8), 8);
    store<u32>(outKeys + (<usize>o << 2), <u32>key);
    o++;
  }
  return o;
}

