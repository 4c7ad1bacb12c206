// Corpus dedup: clusters of near-duplicate pairs (clusters), and the whole pipeline from texts (dedup): exact copies
// grouped, fingerprints, the join of the distinct fingerprints (src/join/), verification (verify-candidates.ts),
// clusters.
import type { Plan, SimHashOptions } from '../fingerprint/options.js';
import { checkTextItems, show } from '../errors.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { joinInBand, sizeBand } from './size-band.js';
import { findWithPlan } from '../join/join.js';
import { type VerifyOptions, checkVerifyOptions } from './verify-pairs.js';
import { type PrebuiltSets, fingerprintWithSets, fingerprintsShareShingles, trimmedText } from './shingle-sets.js';
import { textSource } from './pair-checks.js';
import { STORE_WINDOW_BYTES, SetStore } from './set-store.js';
import { hashTexts, normalizedOnce } from './stream-tasks.js';
import {
  type JoinedAndVerified,
  WHOLE_JOIN_PAIRS,
  joinedAndVerified,
  joinsInChunks,
  prebuiltSizeFilter,
} from './verify-candidates.js';
import { MODE_WHITESPACE } from '../fingerprint/modes.shared.js';
import { exactCopies } from './exact-copies.js';
import { checkDocumentSizes } from './document-size.js';
import { type KeepRule, checkKeep, duplicatesOf } from './keep.js';

export type { KeepRule } from './keep.js';
import {
  type Collapsed,
  type PairsMode,
  collapse,
  extendClusters,
  halvesOf,
  resultPairs,
  tooManyPairs,
} from './dedup-groups.js';

export type { PairsMode } from './dedup-groups.js';
import { chunks } from '../runtime/marshal.js';
import { planJoinFor } from '../join/join-estimate.js';
import type { Pairs } from '../results.js';
import type { JoinPlan } from '../join/join-plan.js';
import { checkJoinArgs, comparesAllPairs, joinIfSmallHere, joinOnThisThread } from '../join/find-near-duplicates.js';

export type { VerifyOptions } from './verify-pairs.js';

/**
 * dedup's join of the distinct fingerprints. When the fused pass gave every set's size, only the pairs whose sizes
 * could reach the verifier's threshold come out: the pairs left out would all be rejected, so the verified pairs
 * are the same. A plan that compares all pairs compares only those (size-band.ts); a probe plan drops the others
 * as it meets them.
 */
function distinctPairs(
  groups: Collapsed,
  plan: JoinPlan,
  k: number,
  bits: 64 | 128,
  verify: Required<VerifyOptions> | false,
  prebuilt: PrebuiltSets | null,
): Pairs {
  const fps = groups.distinctFps;
  const n = fps.length / (bits / 64);
  if (verify && prebuilt && comparesAllPairs(plan) && n >= 2) {
    const band = sizeBand(groups, prebuilt.setOf, prebuilt.setSizes, verify.threshold);
    if (band) return joinInBand(groups, band, k, bits);
  }
  if (verify && prebuilt && plan.radii) {
    const sizes = prebuiltSizeFilter(prebuilt.setOf.length, groups, prebuilt, verify.threshold);
    if (sizes) return findWithPlan(fps, plan, sizes);
  }
  return joinOnThisThread(fps, plan, n, k, bits);
}

/**
 * Text size (string lengths or bytes) of dedup()'s verification window when its one pass does not build the sets
 * (the fingerprint's features are not the verifier's shingles). The texts are in memory already, and a window that holds every
 * candidate document builds each set once: with 32 MiB windows (VERIFY_WINDOW_BYTES, the streaming path's), 210 MB
 * of real text with 10 edited copies of each document, shuffled, rebuilt its sets in ~150 windows and verification
 * took 16.4 s of dedup()'s 19.6. WebAssembly memory for a full window: the sets (about 0.65 bytes per byte of
 * English text, up to twice that while they grow) and a 4 MiB chunk of UTF-8 at a time.
 */
export const DEDUP_WINDOW_BYTES = 256 << 20;

/** dedup()'s window, beyond which its sets go to the set store (tests make it small, to take that path on a few texts). */
export const dedupWindow = { bytes: DEDUP_WINDOW_BYTES };

/**
 * The most distinct text (string units or bytes) that dedup()'s one pass fingerprints and keeps the shingle sets
 * of in WebAssembly memory, for the join's size rule and verification without a copy. Above it, or when memory
 * cannot hold the sets, the set store's batches take the corpus. At 256 MiB, 400 MB of text with 5 to 100 edited
 * copies of each document took the store's path: 1.63–1.77 GB of RSS and 2.4–2.6 s of hashing, against 1.12–1.15 GB
 * and 1.4–1.5 s in one pass (the store copies every set out into fresh memory). Memory kept by the module afterwards:
 * the sets' high-water mark, about 0.65 bytes per byte of English text.
 */
export const ONE_PASS_BYTES = 512 << 20;

// ---------------------------------------------------------------------------------------------------------------
// Clusters

/** How pairs make clusters: connected components ('connected') or centres and their neighbours ('centre'). */
export type ClusterMode = 'connected' | 'centre';

/** Options of clusters(). */
export interface ClusterOptions {
  /**
   * 'connected' (default): connected components of the pair graph. Near-duplicate relations chain: if A~B and
   * B~C, A, B and C form one cluster even when A and C are far apart, so a cluster's diameter is unbounded.
   * 'centre': documents are visited in index order; each one not yet in a cluster becomes a centre and takes
   * every unclustered document paired with it. Every member is then within k of its centre (within 2k of each
   * other), nothing chains, but a document may sit in a different cluster from some of its near-duplicates.
   */
  mode?: ClusterMode;
}

/** What clusters() returns: a cluster per document, as a typed array, and the number of clusters. */
export interface Clusters {
  /** For each document, the index of its cluster's representative (the lowest index, or the centre). */
  clusterOf: Uint32Array;
  /** Number of clusters, documents alone included. */
  count: number;
}

function checkPairs(n: unknown, pairs: unknown): { n: number; a: Uint32Array; b: Uint32Array } {
  if (typeof n !== 'number') throw new TypeError(`n must be a number, got ${show(n)}`);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new RangeError(`n must be an integer from 0 to 2^32 - 1, got ${show(n)}`);
  if (pairs === null || typeof pairs !== 'object')
    throw new TypeError(`pairs must be an object with a and b, got ${show(pairs)}`);
  const { a, b } = pairs as Partial<Pairs>;
  if (!(a instanceof Uint32Array)) throw new TypeError(`pairs.a must be a Uint32Array, got ${show(a)}`);
  if (!(b instanceof Uint32Array)) throw new TypeError(`pairs.b must be a Uint32Array, got ${show(b)}`);
  if (a.length !== b.length)
    throw new RangeError(`pairs.a and pairs.b must have the same length, got ${a.length} and ${b.length}`);
  for (let i = 0; i < a.length; i++) {
    if (a[i]! >= n || b[i]! >= n)
      throw new RangeError(`pair ${i} (${a[i]}, ${b[i]}) is out of range for ${n} documents`);
  }
  return { n, a, b };
}

/**
 * Groups n documents by their near-duplicate pairs (the a and b columns of a Pairs result, e.g.
 * findNearDuplicates' or verifyPairs'); see ClusterOptions.mode for the two ways.
 */
export function clusters(n: number, pairs: Pick<Pairs, 'a' | 'b'>, options: ClusterOptions = {}): Clusters {
  const checked = checkPairs(n, pairs);
  if (options === null || typeof options !== 'object')
    throw new TypeError(`options must be an object, got ${show(options)}`);
  for (const key of Object.keys(options))
    if (key !== 'mode') throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  const mode = options.mode ?? 'connected';
  if (mode === 'connected') return connected(checked.n, checked.a, checked.b);
  if (mode === 'centre') return centred(checked.n, checked.a, checked.b);
  throw new RangeError(`mode must be 'connected' or 'centre', got ${show(mode)}`);
}

function connected(n: number, a: Uint32Array, b: Uint32Array): Clusters {
  // Union-find whose root is always the lowest index: the smaller root adopts the larger one.
  const parent = new Uint32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (x: number): number => {
    while (parent[x] !== x) {
      const up = parent[parent[x]!]!;
      parent[x] = up; // path halving
      x = up;
    }
    return x;
  };
  for (let i = 0; i < a.length; i++) {
    const ra = find(a[i]!);
    const rb = find(b[i]!);
    if (ra < rb) parent[rb] = ra;
    else if (rb < ra) parent[ra] = rb;
  }
  let count = 0;
  // Ascending order: a parent's index is below its child's, so parent[parent[i]] is already final.
  for (let i = 0; i < n; i++) {
    if (parent[i] === i) count++;
    else parent[i] = parent[parent[i]!]!;
  }
  return { clusterOf: parent, count };
}

function centred(n: number, a: Uint32Array, b: Uint32Array): Clusters {
  // Neighbours above each document (compressed rows): a document's lower neighbours were all visited before it.
  const start = new Uint32Array(n + 1);
  for (let i = 0; i < a.length; i++) start[Math.min(a[i]!, b[i]!) + 1]!++;
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, n);
  const above = new Uint32Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const lo = Math.min(a[i]!, b[i]!);
    above[fill[lo]!++] = Math.max(a[i]!, b[i]!);
  }
  const NONE = 0xffffffff;
  const clusterOf = new Uint32Array(n).fill(NONE);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (clusterOf[i] !== NONE) continue;
    clusterOf[i] = i;
    count++;
    for (let e = start[i]!; e < start[i + 1]!; e++) {
      const j = above[e]!;
      if (clusterOf[j] === NONE) clusterOf[j] = i;
    }
  }
  // A self-pair (a === b) must not leave a document unassigned: it is handled above since clusterOf[i] = i first.
  return { clusterOf, count };
}

// ---------------------------------------------------------------------------------------------------------------
// The pipeline

export interface DedupOptions extends SimHashOptions {
  /**
   * Largest Hamming distance of candidate pairs. Default: 12 at 64 bits and 21 at 128 bits when pairs are
   * verified (the default), 3 and 6 when they are not (docs/quality.md, "Picking k").
   */
  k?: number;
  /** Fingerprint width for dedup: 64 (default) or 128. */
  bits?: 64 | 128;
  /** Cluster mode (default 'connected'). */
  mode?: ClusterMode;
  /**
   * Verification of candidate pairs by word-shingle Jaccard on the texts (default `{ threshold: 0.6, width: 3 }`);
   * `false` keeps every pair within k (plain SimHash).
   */
  verify?: VerifyOptions | false;
  /**
   * Which pairs the result lists. 'explain' (default): pairs that explain the clusters, at most one per document
   * in connected mode: each exact copy (and each wordless text equal to another once trimmed) with the first
   * document of its group, plus the verified pairs between distinct texts; in connected mode only those that join
   * two clusters (a spanning forest, in candidate order: pairs inside a cluster are then not verified at all).
   * 'all': every verified pair of documents, as findNearDuplicates + verifyPairs would give, at most `maxPairs`.
   */
  pairs?: PairsMode;
  /** The most pairs `pairs: 'all'` returns (default 10^7); more is a RangeError, raised before they are built. */
  maxPairs?: number;
  /**
   * Which member of each cluster the deduplicated corpus keeps (DedupResult.duplicateOf): 'first' (default, in
   * input order), 'longest' or 'shortest' text (string length, or bytes of a Uint8Array text); ties go to the first.
   */
  keep?: KeepRule;
  /**
   * The Jaccard threshold of verification, as the command line's --threshold: the same as `verify: { threshold }`
   * (giving both with different values is a RangeError, and so is a threshold with `verify: false`).
   */
  threshold?: number;
}

/** Where a dedup run spent its time, in milliseconds. */
export interface DedupTimings {
  /** Tokenizing and hashing: exact copies, then fingerprints. */
  hash: number;
  /** Finding the candidate pairs within k. */
  join: number;
  /** Comparing the candidates' shingle sets (0 without verification). */
  verify: number;
  /** Forming the clusters and choosing what each keeps. */
  cluster: number;
  /** The whole call. */
  total: number;
}

/**
 * What dedup() (and dedupStream) returns. Per-document results are typed arrays in input order; `pairs` is
 * typed-array columns (see rows()).
 */
export interface DedupResult {
  /** Each document's fingerprint: one word per document at 64 bits, two (low word first) at 128. */
  fingerprints: BigUint64Array;
  /** Features per document (0: no features, fingerprint 0). */
  featureCounts: Float64Array;
  /** For each document, the index of its cluster's representative (the lowest index; a document alone is its own). */
  clusterOf: Uint32Array;
  /**
   * Near-duplicate pairs (a < b, ordered by (a, b)) with their Hamming distances, as typed-array columns (see
   * rows()): see DedupOptions.pairs.
   */
  pairs: Pairs;
  /**
   * Candidate pairs of distinct texts within k handed to verification (exact copies are grouped without a check),
   * less those whose shingle-set sizes alone rule out the threshold where the sizes are known before verification
   * (dedupStream, and dedup() when its hashing pass keeps the sets). Connected clusters explained: the join also
   * skips pairs inside a cluster already formed when it reaches them. How many pairs each path leaves out differs,
   * so dedup() and dedupStream may count different candidates for the same pairs and clusters.
   */
  candidates: number;
  /**
   * Candidate pairs whose shingle sets were compared (0 without verification). With pairs 'explain', a pair that
   * can no longer change the clusters is not compared: a group of m near-duplicates costs about m comparisons.
   */
  checks: number;
  /** Number of clusters, documents alone included: the size of the deduplicated corpus. */
  clusterCount: number;
  /**
   * For each document, the index of the document kept in its place (options.keep), or -1 for a document kept: the
   * deduplicated corpus is the documents with -1, in their order.
   */
  duplicateOf: Int32Array;
  /** The k and verification used (defaults filled in). */
  k: number;
  /** The verification used, its defaults filled in, or false when pairs were not verified. */
  verify: Required<VerifyOptions> | false;
  /** Where the time went. */
  timings: DedupTimings;
}

/** The default k of dedup for a width and whether pairs are verified. */
export function defaultDedupK(bits: 64 | 128, verified: boolean): number {
  if (bits !== 64 && bits !== 128)
    throw new (typeof bits === 'number' ? RangeError : TypeError)(`bits must be 64 or 128, got ${show(bits)}`);
  if (typeof verified !== 'boolean') throw new TypeError(`verified must be a boolean, got ${show(verified)}`);
  if (verified) return bits === 128 ? 21 : 12;
  return bits === 128 ? 6 : 3;
}

export const DEFAULT_MAX_PAIRS = 1e7;

/** dedup's pairs and maxPairs options, checked. */
export function checkPairOptions(pairs: unknown, maxPairs: unknown): { pairs: PairsMode; maxPairs: number } {
  if (pairs !== 'explain' && pairs !== 'all')
    throw new (typeof pairs === 'string' ? RangeError : TypeError)(
      `pairs must be 'explain' or 'all', got ${show(pairs)}`,
    );
  if (typeof maxPairs !== 'number') throw new TypeError(`maxPairs must be a number, got ${show(maxPairs)}`);
  if (!Number.isInteger(maxPairs) || maxPairs < 0 || maxPairs > 0xffffffff)
    throw new RangeError(`maxPairs must be an integer from 0 to 2^32 - 1, got ${show(maxPairs)}`);
  return { pairs, maxPairs };
}

/** dedup()'s options (dedupStream's too) with their defaults, checked before any hashing so a bad one fails fast. */
export interface CheckedDedupOptions {
  k: number;
  bits: 64 | 128;
  mode: ClusterMode;
  verify: Required<VerifyOptions> | false;
  pairs: PairsMode;
  maxPairs: number;
  keep: KeepRule;
  /** The fingerprint options (bits may be absent: `bits` above is the width). */
  hashOptions: SimHashOptions;
}

/** verify's options with the top-level `threshold` folded in (the same option under the command line's name). */
function withThreshold(verify: VerifyOptions, threshold: unknown): VerifyOptions {
  if (threshold === undefined) return verify;
  if (verify === null || typeof verify !== 'object') return verify; // checkVerifyOptions says what is wrong
  if (verify.threshold !== undefined && verify.threshold !== threshold)
    throw new RangeError(
      `threshold ${show(threshold)} and verify.threshold ${show(verify.threshold)} disagree: give one of them`,
    );
  return { ...verify, threshold: threshold as number };
}

export function checkDedupOptions(options: DedupOptions): CheckedDedupOptions {
  const {
    k: kOption,
    mode = 'connected',
    verify: verifyOption = {},
    pairs: pairsOption = 'explain',
    maxPairs: maxPairsOption = DEFAULT_MAX_PAIRS,
    keep: keepOption = 'first',
    threshold,
    ...hashOptions
  } = options;
  const keep = checkKeep(keepOption);
  const verify = verifyOption === false ? false : checkVerifyOptions(withThreshold(verifyOption, threshold));
  if (verifyOption === false && threshold !== undefined)
    throw new RangeError(`threshold checks pairs: it cannot go with verify: false, got threshold ${show(threshold)}`);
  const k = kOption ?? defaultDedupK(hashOptions.bits === 128 ? 128 : 64, verify !== false);
  const { bits } = checkJoinArgs(new BigUint64Array(0), { k, bits: hashOptions.bits ?? 64 });
  if (mode !== 'connected' && mode !== 'centre')
    throw new RangeError(`mode must be 'connected' or 'centre', got ${show(mode)}`);
  const { pairs, maxPairs } = checkPairOptions(pairsOption, maxPairsOption);
  return { k, bits, mode, verify, pairs, maxPairs, keep, hashOptions };
}

/**
 * dedup()'s result (dedupStream's too) from the kept pairs of the representatives: their clusters extended to every
 * document of their groups, the listed pairs, the counts and the timings (`hashed` and `joined` are the times at
 * which hashing and the join with its verification ended, after `start`).
 */
export function dedupResult(
  groups: Collapsed,
  r: JoinedAndVerified,
  o: Pick<CheckedDedupOptions, 'k' | 'verify' | 'mode' | 'pairs' | 'maxPairs' | 'keep'> & {
    fingerprints: BigUint64Array;
    featureCounts: Float64Array;
    /** A document's text length, for keep 'longest' and 'shortest'. */
    lengthOf: (i: number) => number;
    times: { start: number; hashed: number; joined: number };
  },
): DedupResult {
  const { clusterOf, count } = clusters(groups.rep.length, r.verified, { mode: o.mode });
  const clusterCount = extendClusters(groups, clusterOf, count);
  const pairs = resultPairs(groups, r.verified, o.pairs, o.maxPairs);
  const { start, hashed, joined } = o.times;
  const end = performance.now();
  return {
    fingerprints: o.fingerprints,
    featureCounts: o.featureCounts,
    clusterOf,
    pairs,
    duplicateOf: duplicatesOf(clusterOf, o.keep, o.lengthOf),
    candidates: r.candidates,
    checks: r.checks,
    clusterCount,
    k: o.k,
    verify: o.verify,
    timings: {
      hash: hashed - start,
      join: joined - hashed - r.verifyMs,
      verify: r.verifyMs,
      cluster: end - joined,
      total: end - start,
    },
  };
}

/**
 * Texts → exact copies grouped (content hash) → fingerprints of the distinct texts (simhashMany) → identical
 * fingerprints grouped → pairs within k of the distinct fingerprints → verified pairs of distinct texts → clusters,
 * expanded back to every document.
 */
export function dedup(texts: readonly (string | Uint8Array)[], options: DedupOptions = {}): DedupResult {
  if (!Array.isArray(texts)) throw new TypeError(`texts must be an array, got ${show(texts)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const checked = checkDedupOptions(options);
  const { k, bits, mode, verify, pairs: pairsMode, maxPairs, hashOptions } = checked;
  checkTextItems(texts);
  checkDocumentSizes(texts, verify);
  const hasher = createSimHasher({ ...hashOptions, bits });
  const n = texts.length;
  const words = bits === 128 ? 2 : 1;
  const t0 = performance.now();

  // Under normalize, verification reads each text as its fingerprint does, normalized: the texts are normalized
  // once here, and the rest runs on them as without normalize, the one pass included. Normalizing in each reading
  // instead (fingerprint, sets, the set store's wordless texts) took 3 passes of 0.5 s over 400 MB, and hashing
  // without the one pass took 4.2-6.0 s against 1.3 s. Without verification the fingerprint alone reads them:
  // normalized a batch at a time.
  const normalizeFirst = verify !== false && hasher.options.normalize !== false;
  const { read, readOptions, reader } = normalizeFirst
    ? normalizedOnce(texts, { ...hashOptions, bits }, hasher)
    : { read: texts, readOptions: hashOptions, reader: hasher };
  // Normalizing may lengthen a text many times over (NFKD makes 18 characters of U+FDFA): checked again, by name.
  if (normalizeFirst)
    checkDocumentSizes(read, verify, (i) => `texts[${i}] once normalized (${hasher.options.normalize})`);

  // Exact copies: only the first of each group is fingerprinted, joined and verified.
  const copyOf = exactCopies(read);
  const distinct: number[] = [];
  for (let i = 0; i < n; i++) if (copyOf[i] === i) distinct.push(i);
  let bytes = 0;
  for (const i of distinct) bytes += read[i]!.length;
  // Up to ONE_PASS_BYTES of distinct text, when the fingerprint's features are the verifier's shingles, one pass
  // fingerprints the texts and builds their shingle sets, which stay in WebAssembly memory. Larger, or when memory
  // cannot hold them: the hashing pass keeps every set in a set store (set-store.ts), and verification reads them a
  // window at a time. Either way no text is tokenized again.
  const fused = verify && bytes <= ONE_PASS_BYTES && fingerprintsShareShingles(reader.options, verify);
  const oneWindow = fused ? fusedOrNull(read, distinct, reader.options) : null;
  // An exact copy has its first copy's set (the same text). Without one, the join's size rule found a document of
  // unknown size and was off for the whole call: 100 MB with 5 edited copies of each document and a few exact
  // copies gave 166,889 candidates where the set store's path gave 99,632.
  if (oneWindow) {
    const { setOf } = oneWindow.prebuilt;
    for (let i = 0; i < n; i++) if (copyOf[i] !== i) setOf[i] = setOf[copyOf[i]!]!;
  }
  // Without the one pass, the set store: when the pass could not get its memory, or past dedupWindow.bytes (256 MiB,
  // so past ONE_PASS_BYTES too). Up to that without it (features other than the verifier's shingles), the
  // verification windows build their sets from the texts.
  const inStore = oneWindow === null && (fused || dedupWindow.bytes < bytes);
  const source = verify ? textSource(read, verify.width) : null;
  const store = source && inStore ? new SetStore(Infinity, null, source.sameWordless) : null;
  const hashed =
    oneWindow ??
    (store && verify ? hashIntoStore(read, distinct, readOptions, bits, verify, store) : null) ??
    reader.hashManyDetailed(distinct.map((i) => read[i]!));
  const fingerprints = new BigUint64Array(n * words);
  const featureCounts = new Float64Array(n);
  const half = 2 * words; // fingerprints move as 32-bit halves: no BigInt per element
  const to32 = halvesOf(fingerprints);
  const from32 = halvesOf(hashed.fingerprints);
  distinct.forEach((i, q) => {
    featureCounts[i] = hashed.featureCounts[q]!;
    for (let h = 0; h < half; h++) to32[i * half + h] = from32[q * half + h]!;
  });
  // (Without verification the texts are as given: normalized here, the few without features.)
  const form = normalizeFirst ? false : hasher.options.normalize;
  const trim = featurelessByTrimmedText(reader.options, verify) ? (i: number) => trimmedText(read[i]!, form) : null;
  const groups = collapse(fingerprints, featureCounts, copyOf, words, trim);
  if (pairsMode === 'all' && groups.within > maxPairs) throw tooManyPairs(groups.within, maxPairs);
  const t1 = performance.now();
  const fingerprintCount = groups.distinctFps.length / words;
  const plan = planJoinFor(groups.distinctFps, fingerprintCount, k, bits);
  const stage = { verify, mode, pairsMode, windowBytes: store ? STORE_WINDOW_BYTES : dedupWindow.bytes };
  const prebuilt = oneWindow?.prebuilt ?? null;
  const found = joinsInChunks(stage, fingerprintCount)
    ? joinIfSmallHere(groups.distinctFps, plan, WHOLE_JOIN_PAIRS)
    : distinctPairs(groups, plan, k, bits, verify, prebuilt);
  const joined = joinedAndVerified(n, groups, plan, found, { ...stage, source: store ?? source, prebuilt });
  return dedupResult(groups, joined, {
    ...checked,
    fingerprints,
    featureCounts,
    lengthOf: (i) => texts[i]!.length,
    times: { start: t0, hashed: t1, joined: performance.now() },
  });
}

/**
 * The one pass's fingerprints and sets, or null when WebAssembly memory cannot hold the sets (about 0.65 bytes per
 * byte of English, up to 4 per string unit of text whose every character is a word): the set store's batches then
 * take the corpus 16 MiB at a time, as beyond one window.
 */
function fusedOrNull(
  texts: readonly (string | Uint8Array)[],
  distinct: readonly number[],
  plan: Plan,
): ReturnType<typeof fingerprintWithSets> | null {
  try {
    return fingerprintWithSets(texts, distinct, plan);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** Text (string units or bytes) hashed per batch when dedup() keeps the shingle sets of a corpus beyond one window. */
const STORE_BATCH_BYTES = 16 << 20;

/**
 * Fingerprints of the `distinct` texts with their shingle sets kept in `store` (dedupStream's batch task, here): a
 * text is tokenized once, or twice when the fingerprint's features are not the verifier's shingles.
 */
function hashIntoStore(
  texts: readonly (string | Uint8Array)[],
  distinct: readonly number[],
  hashOptions: SimHashOptions,
  bits: 64 | 128,
  verify: Required<VerifyOptions>,
  store: SetStore,
): { fingerprints: BigUint64Array; featureCounts: Float64Array } {
  const words = bits / 64;
  const fingerprints = new BigUint64Array(distinct.length * words);
  const featureCounts = new Float64Array(distinct.length);
  for (const [first, last] of chunks(
    distinct.map((i) => texts[i]!.length),
    STORE_BATCH_BYTES,
  )) {
    const docs = distinct.slice(first, last);
    const r = hashTexts(
      docs.map((i) => texts[i]!),
      { ...hashOptions, bits },
      false,
      verify.width,
    );
    fingerprints.set(r.fingerprints, first * words);
    featureCounts.set(r.featureCounts, first);
    store.append(docs, r.sets!);
  }
  return { fingerprints, featureCounts };
}

/**
 * Whether documents without features pair only with those whose trimmed text is identical, so they can be grouped
 * by that text and stay out of the join: without verification (dropFeaturelessPairs' rule), and under verification
 * when no features means no words (the built-in word tokenizers of the default spec's presets, on the text as given).
 */
export function featurelessByTrimmedText(plan: Plan, verify: Required<VerifyOptions> | false): boolean {
  if (verify === false) return true;
  return plan.spec !== 0 && plan.normalize === false && plan.mode !== -1 && plan.mode !== MODE_WHITESPACE;
}
