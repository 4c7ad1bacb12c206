// The streaming deduper's batch tasks: fingerprint a batch of texts, and check a batch of candidate pairs. Each runs
// here (threads: 1) or in a pool worker (runtime/pool.ts), with the same code, so results do not depend on the
// thread count. Batches cross to workers packed: the byte texts back to back in one transferable buffer.
import type { SimHashOptions } from '../fingerprint/options.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { offerTasks } from '../runtime/pool-worker.js';
import type { NearDuplicatePairs } from './join.js';
import { contentHashes } from './exact-copies.js';
import { dropFeaturelessPairs, textOf, verifyPairs, type VerifyOptions } from './verify-pairs.js';

/** Texts packed for postMessage: strings stay strings (null marks a byte text), bytes lie in one buffer. */
export interface PackedTexts {
  strings: Array<string | null> | null;
  bytes: Uint8Array;
  /** Start of each byte text in `bytes`, plus the end of the last one. */
  offsets: Uint32Array;
}

export function packTexts(texts: ReadonlyArray<string | Uint8Array>): PackedTexts {
  let total = 0;
  let count = 0;
  for (const t of texts)
    if (typeof t !== 'string') {
      total += t.length;
      count++;
    }
  const bytes = new Uint8Array(total);
  const offsets = new Uint32Array(count + 1);
  const strings: Array<string | null> | null = count === texts.length ? null : new Array(texts.length);
  let at = 0;
  let k = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    if (typeof t === 'string') {
      strings![i] = t;
      continue;
    }
    if (strings) strings[i] = null;
    bytes.set(t, at);
    at += t.length;
    offsets[++k] = at;
  }
  return { strings, bytes, offsets };
}

export function unpackTexts(packed: PackedTexts): Array<string | Uint8Array> {
  const { strings, bytes, offsets } = packed;
  const views = (i: number) => bytes.subarray(offsets[i], offsets[i + 1]);
  if (!strings) return Array.from({ length: offsets.length - 1 }, (_, i) => views(i));
  let k = 0;
  return strings.map((s) => (s === null ? views(k++) : s));
}

export function transferOf(packed: PackedTexts): ArrayBuffer[] {
  return [packed.bytes.buffer as ArrayBuffer];
}

export interface HashTask {
  texts: PackedTexts;
  options: SimHashOptions;
  /** Also the keys dedupStream groups documents by (HashResult.copyKeys). */
  copyKeys?: boolean;
}

export interface HashResult {
  fingerprints: BigUint64Array;
  featureCounts: Float64Array;
  /**
   * When asked for: four u64 per document, its content hash (exact-copies.ts), then for a featureless document the
   * content hash of its trimmed text (0 otherwise).
   */
  copyKeys?: BigUint64Array;
}

export function hashTexts(
  texts: ReadonlyArray<string | Uint8Array>,
  options: SimHashOptions,
  copyKeys = false,
): HashResult {
  const { fingerprints, featureCounts } = createSimHasher(options).hashManyDetailed(texts);
  if (!copyKeys) return { fingerprints, featureCounts };
  const keys = new BigUint64Array(texts.length * 4);
  const content = contentHashes(texts);
  const featureless: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    keys[i * 4] = content[i * 2]!;
    keys[i * 4 + 1] = content[i * 2 + 1]!;
    if (featureCounts[i] === 0) featureless.push(i);
  }
  const trimmed = contentHashes(featureless.map((i) => textOf(texts[i]!).trim()));
  featureless.forEach((i, q) => {
    keys[i * 4 + 2] = trimmed[q * 2]!;
    keys[i * 4 + 3] = trimmed[q * 2 + 1]!;
  });
  return { fingerprints, featureCounts, copyKeys: keys };
}

export interface CheckTask {
  texts: PackedTexts;
  pairs: NearDuplicatePairs;
  /** Verification options, or false: then only pairs of featureless documents are checked (their texts). */
  verify: Required<VerifyOptions> | false;
  featureCounts: Float64Array;
}

/** For each pair of the batch, 1 when it is kept: verifyPairs, or dropFeaturelessPairs without verification. */
export function checkPairs(texts: ReadonlyArray<string | Uint8Array>, task: Omit<CheckTask, 'texts'>): Uint8Array {
  const kept = task.verify
    ? verifyPairs(texts, task.pairs, task.verify)
    : dropFeaturelessPairs(texts, task.pairs, task.featureCounts);
  // The kept pairs are a subsequence of the batch's pairs, in order.
  const { a, b } = task.pairs;
  const keep = new Uint8Array(a.length);
  let q = 0;
  for (let p = 0; p < a.length && q < kept.a.length; p++) {
    if (kept.a[q] === a[p] && kept.b[q] === b[p]) {
      keep[p] = 1;
      q++;
    }
  }
  return keep;
}

/** The URL workers import to run these tasks: this module, or the bundle it was built into. */
export const TASKS_URL = import.meta.url;

offerTasks({
  hash: (task: HashTask) => {
    const r = hashTexts(unpackTexts(task.texts), task.options, task.copyKeys);
    const transfer = [r.fingerprints.buffer as ArrayBuffer, r.featureCounts.buffer as ArrayBuffer];
    if (r.copyKeys) transfer.push(r.copyKeys.buffer as ArrayBuffer);
    return { result: r, transfer };
  },
  check: (task: CheckTask) => {
    const keep = checkPairs(unpackTexts(task.texts), task);
    return { result: keep, transfer: [keep.buffer as ArrayBuffer] };
  },
});
