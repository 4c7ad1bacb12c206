// The streaming deduper's batch tasks: fingerprint a batch of texts with each text's copy keys (simhashStream alone
// uses fingerprint.ts's pool task), and check a batch of candidate pairs. Each runs here (threads: 1) or in a pool worker (runtime/pool.ts), with the same code, so
// results do not depend on the thread count. Batches cross to workers packed (runtime/pool-texts.ts).
import type { SimHashOptions } from '../fingerprint/options.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { type PackedTexts, unpackTexts } from '../runtime/pool-texts.js';
import type { WithSpare } from '../runtime/spare-buffers.js';
import type { NearDuplicatePairs } from './join.js';
import { contentHashes } from './exact-copies.js';
import { dropFeaturelessPairs, textOf, verifyPairs, type VerifyOptions } from './verify-pairs.js';

/** The pool task that fingerprints a batch together with its copy keys. */
export const HASH_TASK = 'stream-hash';

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

offerTasks({
  [HASH_TASK]: (task: HashTask) => {
    const r = hashTexts(unpackTexts(task.texts), task.options, task.copyKeys);
    const spare = task.texts.bytes.buffer as ArrayBuffer;
    const transfer = [r.fingerprints.buffer as ArrayBuffer, r.featureCounts.buffer as ArrayBuffer, spare];
    if (r.copyKeys) transfer.push(r.copyKeys.buffer as ArrayBuffer);
    const result: WithSpare<HashResult> = { value: r, spare };
    return { result, transfer };
  },
  check: (task: CheckTask) => {
    const keep = checkPairs(unpackTexts(task.texts), task);
    const spare = task.texts.bytes.buffer as ArrayBuffer;
    const result: WithSpare<Uint8Array> = { value: keep, spare };
    return { result, transfer: [keep.buffer as ArrayBuffer, spare] };
  },
});
