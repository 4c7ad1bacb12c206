// The streaming deduper's batch tasks: fingerprint a batch of texts (fingerprint.ts's pool task), and check a batch
// of candidate pairs. Each runs here (threads: 1) or in a pool worker (runtime/pool.ts), with the same code, so
// results do not depend on the thread count. Batches cross to workers packed (runtime/pool-texts.ts).
import type { SimHashOptions } from '../fingerprint/options.js';
import { createSimHasher } from '../fingerprint/fingerprint.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { type PackedTexts, unpackTexts } from '../runtime/pool-texts.js';
import type { NearDuplicatePairs } from './join.js';
import { dropFeaturelessPairs, verifyPairs, type VerifyOptions } from './verify-pairs.js';

export interface HashResult {
  fingerprints: BigUint64Array;
  featureCounts: Float64Array;
}

export function hashTexts(texts: ReadonlyArray<string | Uint8Array>, options: SimHashOptions): HashResult {
  const { fingerprints, featureCounts } = createSimHasher(options).hashManyDetailed(texts);
  return { fingerprints, featureCounts };
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
  check: (task: CheckTask) => {
    const keep = checkPairs(unpackTexts(task.texts), task);
    return { result: keep, transfer: [keep.buffer as ArrayBuffer] };
  },
});
