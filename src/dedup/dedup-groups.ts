// Groups of documents that dedup treats as one (exact copies, identical fingerprints, wordless texts equal once
// trimmed) as compressed rows, and the pairs they stand for. Everything here is linear in the number of documents
// plus the pairs produced: a group of g documents costs O(g), never O(g²), unless every pair is asked for.
import type { Pairs } from '../results.js';
import { firstOfEqual } from './exact-copies.js';
import { MAX_JOIN_PAIRS } from '../join/join.js';
import { keepFlagged } from './verify-pairs.js';
import { forestJoin, newForest } from './forest.js';
import { recycleBuffer, spareBuffer } from '../runtime/spare-buffers.js';

/** Members of each group in rows: group q holds members[start[q]..start[q + 1]), ascending. */
export interface Rows {
  start: Uint32Array;
  members: Uint32Array;
}

/** Rows of the groups given by `groupOf` (each element's group number, 0..groups-1), members in index order. */
export function rowsOf(groupOf: Uint32Array, groups: number): Rows {
  const start = new Uint32Array(groups + 1);
  for (let i = 0; i < groupOf.length; i++) start[groupOf[i]! + 1]!++;
  for (let q = 0; q < groups; q++) start[q + 1]! += start[q]!;
  const fill = start.slice(0, groups);
  const members = new Uint32Array(groupOf.length);
  for (let i = 0; i < groupOf.length; i++) members[fill[groupOf[i]!]!++] = i;
  return { start, members };
}

/** Pairs of documents within the groups: Σ g(g − 1)/2 (a number, exact up to 2^53). */
export function pairsWithin(rows: Rows): number {
  let total = 0;
  for (let q = 0; q + 1 < rows.start.length; q++) {
    const g = rows.start[q + 1]! - rows.start[q]!;
    total += (g * (g - 1)) / 2;
  }
  return total;
}

/** Pairs of documents across the given pairs of groups: Σ |G(a)|·|G(b)|. */
export function pairsAcross(rows: Rows, ga: Uint32Array, gb: Uint32Array): number {
  let total = 0;
  for (let p = 0; p < ga.length; p++) total += size(rows, ga[p]!) * size(rows, gb[p]!);
  return total;
}

function size(rows: Rows, q: number): number {
  return rows.start[q + 1]! - rows.start[q]!;
}

/**
 * Every pair of documents of `rows` that the group pairs (ga, gb, distance) and the groups themselves stand for:
 * all pairs inside a group (with `within` as their distance) and all pairs across each group pair, `total` of them
 * (counted by the caller with pairsWithin + pairsAcross, before this allocates). Unsorted; a < b in each pair.
 * With `to` (ascending, so a < b still holds), each member m is written as to[m].
 */
export function expandPairs(
  rows: Rows,
  ga: Uint32Array,
  gb: Uint32Array,
  distance: Uint8Array,
  total: number,
  within = 0,
  to: Uint32Array | null = null,
): Pairs {
  const out: Pairs = {
    a: new Uint32Array(total),
    b: new Uint32Array(total),
    distance: new Uint8Array(total),
  };
  const { start } = rows;
  const members = to ? mapped(rows.members, to) : rows.members;
  let q = 0;
  for (let g = 0; g + 1 < start.length; g++) {
    const end = start[g + 1]!;
    for (let x = start[g]!; x + 1 < end; x++) {
      for (let y = x + 1; y < end; y++) {
        out.a[q] = members[x]!;
        out.b[q] = members[y]!;
        out.distance[q++] = within;
      }
    }
  }
  writeAcross(start, members, ga, gb, distance, out, q);
  return out;
}

function writeAcross(
  start: Uint32Array,
  members: Uint32Array,
  ga: Uint32Array,
  gb: Uint32Array,
  distance: Uint8Array,
  out: Pairs,
  from: number,
): void {
  const { a, b, distance: d } = out;
  let q = from;
  for (let p = 0; p < ga.length; p++) {
    const s1 = start[ga[p]!]!;
    const e1 = start[ga[p]! + 1]!;
    const s2 = start[gb[p]!]!;
    const e2 = start[gb[p]! + 1]!;
    if (e1 - s1 === 1 && e2 - s2 === 1) {
      // Two groups of one, as nearly all are: the general loops below cost twice as much per pair.
      const u = members[s1]!;
      const v = members[s2]!;
      a[q] = Math.min(u, v);
      b[q] = Math.max(u, v);
      d[q++] = distance[p]!;
      continue;
    }
    for (let x = s1; x < e1; x++) {
      for (let y = s2; y < e2; y++) {
        const u = members[x]!;
        const v = members[y]!;
        a[q] = Math.min(u, v);
        b[q] = Math.max(u, v);
        d[q++] = distance[p]!;
      }
    }
  }
}

/**
 * The pairs ordered by (a, b), for n documents, in place: a stable counting sort by b into a spare buffer, then one
 * by a back (LSD), O(n + p). Sorting each run of one a by b instead (typed-array sorts of packed keys into fresh
 * arrays) took 13-25 ms for the 5·10^5 candidates of the bench's 25 MB in the order the size band gives them.
 */
export function sortPairs(n: number, pairs: Pairs): Pairs {
  const { a, b } = pairs;
  // Often already in order (each copy after its representative, one group or groups in order): one look, no copy.
  let sorted = true;
  for (let p = 1; p < a.length && sorted; p++) sorted = a[p - 1]! < a[p]! || (a[p - 1] === a[p] && b[p - 1]! < b[p]!);
  if (sorted) return pairs;
  const length = a.length;
  const spare = spareBuffer(9 * length);
  const byB: Pairs = {
    a: new Uint32Array(spare, 0, length),
    b: new Uint32Array(spare, 4 * length, length),
    distance: new Uint8Array(spare, 8 * length, length),
  };
  stableBy(n, pairs, pairs.b, byB);
  stableBy(n, byB, byB.a, pairs);
  recycleBuffer(spare);
  return pairs;
}

/** Writes the pairs to `out` in a stable order of `key` (one of their columns, each value below n): a counting sort. */
function stableBy(n: number, pairs: Pairs, key: Uint32Array, out: Pairs): void {
  const { a, b, distance } = pairs;
  const { a: outA, b: outB, distance: outD } = out;
  const at = new Uint32Array(n + 1);
  for (let p = 0; p < key.length; p++) at[key[p]! + 1]!++;
  for (let i = 0; i < n; i++) at[i + 1]! += at[i]!;
  for (let p = 0; p < key.length; p++) {
    const q = at[key[p]!]!++;
    outA[q] = a[p]!;
    outB[q] = b[p]!;
    outD[q] = distance[p]!;
  }
}

export { MAX_JOIN_PAIRS } from '../join/join.js';

/** How dedup sees a corpus once exact copies and identical fingerprints are grouped. */
export interface Collapsed {
  /** Each document's group representative: the first exact copy, or the first wordless text equal once trimmed. */
  rep: Uint32Array;
  /** Each document's group number; groups in the order of their representatives. */
  groupOfDoc: Uint32Array;
  docGroups: Rows;
  /** Pairs inside the groups (each verified by what grouped it). */
  within: number;
  /** The representatives that go to the join (those with features, or all when wordless ones need checking). */
  joined: Uint32Array;
  /** Groups of `joined` (by position) with identical fingerprints, and each group's fingerprint. */
  fpGroups: Rows;
  distinctFps: BigUint64Array;
}

/**
 * Groups the documents: `copyOf[i]` is the first exact copy of document i; `trimKey(i)`, when given, is the
 * trimmed text (or a key of it) of a featureless document, which then pairs only with equal keys and stays out of
 * the join. Copies take their representative's fingerprint and feature count (written into the arrays).
 */
export function collapse(
  fingerprints: BigUint64Array,
  featureCounts: Float64Array,
  copyOf: Uint32Array,
  words: 1 | 2,
  trimKey: ((i: number) => string) | null,
): Collapsed {
  const n = copyOf.length;
  const rep = copyOf.slice();
  const joinedList: number[] = [];
  const byKey = new Map<string, number>();
  // Fingerprints move as 32-bit halves: reading a BigUint64Array allocates a BigInt per element.
  const half = words * 2;
  const fp32 = halvesOf(fingerprints);
  for (let i = 0; i < n; i++) {
    const r = rep[i]!;
    if (r !== i) {
      featureCounts[i] = featureCounts[r]!;
      for (let h = 0; h < half; h++) fp32[i * half + h] = fp32[r * half + h]!;
      rep[i] = rep[r]!; // r < i: already final
    } else if (trimKey && featureCounts[i] === 0) {
      const key = trimKey(i);
      const first = byKey.get(key);
      if (first === undefined) byKey.set(key, i);
      else rep[i] = first;
    } else joinedList.push(i);
  }
  const groupOfDoc = new Uint32Array(n);
  let groups = 0;
  for (let i = 0; i < n; i++) groupOfDoc[i] = rep[i] === i ? groups++ : groupOfDoc[rep[i]!]!;
  const docGroups = rowsOf(groupOfDoc, groups);
  const joined = Uint32Array.from(joinedList);
  const joinedFps = gatherFingerprints(fingerprints, joined, words);
  const fpFirst = firstOfEqual(joinedFps, words);
  const fpGroupOf = new Uint32Array(joined.length);
  const fpRep: number[] = [];
  for (let q = 0; q < joined.length; q++) {
    if (fpFirst[q] === q) {
      fpGroupOf[q] = fpRep.length;
      fpRep.push(q);
    } else fpGroupOf[q] = fpGroupOf[fpFirst[q]!]!;
  }
  const distinctFps = gatherFingerprints(joinedFps, fpRep, words);
  return {
    rep,
    groupOfDoc,
    docGroups,
    within: pairsWithin(docGroups),
    joined,
    fpGroups: rowsOf(fpGroupOf, fpRep.length),
    distinctFps,
  };
}

/** The fingerprints fps[indices[0]], fps[indices[1]], … (`words` u64 each), moved as 32-bit halves. */
export function gatherFingerprints(fps: BigUint64Array, indices: ArrayLike<number>, words: number): BigUint64Array {
  const half = 2 * words;
  const out = new BigUint64Array(indices.length * words);
  const to32 = halvesOf(out);
  const from32 = halvesOf(fps);
  for (let p = 0; p < indices.length; p++)
    for (let h = 0; h < half; h++) to32[p * half + h] = from32[indices[p]! * half + h]!;
  return out;
}

/** The same memory as 32-bit words, two per u64. */
export function halvesOf(words: BigUint64Array): Uint32Array {
  return new Uint32Array(words.buffer, words.byteOffset, words.length * 2);
}

/**
 * Each fingerprint's top 32 bits (of its first word at 128 bits, `words` u64 per fingerprint): the key that the set
 * store arranges its file by (set-store.ts), and that verification takes pairs inside groups in.
 */
export function fingerprintKeys(fingerprints: BigUint64Array, words: number): Uint32Array {
  const halves = halvesOf(fingerprints);
  const keys = new Uint32Array(fingerprints.length / words);
  for (let q = 0; q < keys.length; q++) keys[q] = halves[q * words * 2 + 1]!; // little-endian: the high half second
  return keys;
}

/** first, first + 1, …, first + n - 1. */
export function indices(first: number, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let q = 0; q < n; q++) out[q] = first + q;
  return out;
}

/** `docs` sorted by key[doc], then by their order in `docs`. */
export function sortedByKey(docs: Uint32Array, key: Uint32Array): Uint32Array {
  const n = docs.length;
  if (n <= 2 ** 21) {
    // Key and place in one exact double (32 + 21 bits): a typed-array sort, with no comparator.
    const order = new Float64Array(n);
    for (let q = 0; q < n; q++) order[q] = key[docs[q]!]! * 2 ** 21 + q;
    order.sort();
    const sorted = new Uint32Array(n);
    for (let q = 0; q < n; q++) sorted[q] = docs[order[q]! % 2 ** 21]!;
    return sorted;
  }
  const order = Array.from({ length: n }, (_, q) => q).sort((x, y) => key[docs[x]!]! - key[docs[y]!]! || x - y);
  return Uint32Array.from(order, (q) => docs[q]!);
}

/**
 * table[values[i]] for each i: a loop, since TypedArray map with a callback was several times slower (~40 ms for
 * the 7·10^5 candidates of the bench's 25 MB).
 */
export function mapped(values: Uint32Array, table: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = table[values[i]!]!;
  return out;
}

/**
 * The candidate pairs of documents from the join of the distinct fingerprints (`found`, over their indices):
 * distinct texts with one fingerprint, and every pair across two fingerprints within k. Counted before allocating.
 */
export function candidatePairs(c: Collapsed, found: Pairs): Pairs {
  const count = pairsWithin(c.fpGroups) + pairsAcross(c.fpGroups, found.a, found.b);
  if (count > MAX_JOIN_PAIRS) {
    throw new RangeError(
      `dedup would check ${count} candidate pairs of distinct texts, more than the ${MAX_JOIN_PAIRS} ` +
        'that fit in memory; lower k',
    );
  }
  return expandPairs(c.fpGroups, found.a, found.b, found.distance, count, 0, c.joined);
}

/** Clusters of the representatives (computed over `verified`) extended to every document: the group's cluster. */
export function extendClusters(c: Collapsed, clusterOf: Uint32Array, count: number): number {
  let clusterCount = count;
  for (let i = 0; i < clusterOf.length; i++) {
    if (c.rep[i] !== i) {
      clusterOf[i] = clusterOf[c.rep[i]!]!;
      clusterCount--; // a document outside the representatives' graph was counted as a cluster of its own
    }
  }
  return clusterCount;
}

/**
 * Which pairs a result lists: 'explain' (default) the pairs that explain the clusters (each copy with its group's
 * first document, and the verified pairs that joined clusters or tie members to centres); 'all' every verified
 * pair, copies included (a RangeError when more than maxPairs).
 */
export type PairsMode = 'explain' | 'all';

export function tooManyPairs(count: number, maxPairs: number): RangeError {
  return new RangeError(
    `pairs: 'all' would list ${count} pairs, more than maxPairs (${maxPairs}); ` +
      `use pairs: 'explain' (the default) or raise maxPairs`,
  );
}

/**
 * The result's pairs, ordered by (a, b). 'explain': each grouped document with its representative (distance 0:
 * one fingerprint), then the verified pairs of representatives. 'all': every pair they stand for, at most maxPairs.
 */
export function resultPairs(c: Collapsed, verified: Pairs, mode: PairsMode, maxPairs: number): Pairs {
  const n = c.rep.length;
  let pairs: Pairs;
  if (mode === 'all') {
    const ga = mapped(verified.a, c.groupOfDoc);
    const gb = mapped(verified.b, c.groupOfDoc);
    const total = c.within + pairsAcross(c.docGroups, ga, gb);
    if (total > maxPairs) throw tooManyPairs(total, maxPairs);
    pairs = expandPairs(c.docGroups, ga, gb, verified.distance, total);
  } else {
    const grouped = n - (c.docGroups.start.length - 1);
    const total = grouped + verified.a.length;
    pairs = { a: new Uint32Array(total), b: new Uint32Array(total), distance: new Uint8Array(total) };
    let q = 0;
    for (let i = 0; i < n; i++) {
      if (c.rep[i] === i) continue;
      pairs.a[q] = c.rep[i]!;
      pairs.b[q++] = i;
    }
    pairs.a.set(verified.a, q);
    pairs.b.set(verified.b, q);
    pairs.distance.set(verified.distance, q);
  }
  return sortPairs(n, pairs);
}

/**
 * The pairs, in their order, that join two documents not yet connected by the pairs before them: a spanning forest
 * of the connected clusters ('explain' pairs of connected clusters).
 */
export function spanningPairs(n: number, pairs: Pairs): Pairs {
  const parent = newForest(n);
  const keep = new Uint8Array(pairs.a.length);
  for (let p = 0; p < pairs.a.length; p++) keep[p] = forestJoin(parent, pairs.a[p]!, pairs.b[p]!) ? 1 : 0;
  return keepFlagged(pairs, keep);
}
