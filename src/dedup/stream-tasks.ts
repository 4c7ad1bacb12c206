// The streaming deduper's batch task: fingerprint a batch of texts with each text's copy keys and shingle sets
// (simhashStream alone uses fingerprint.ts's pool task). Each runs here (threads: 1) or in a pool worker (runtime/pool.ts), with the same code, so
// results do not depend on the thread count. Batches cross to workers packed (runtime/pool-texts.ts).
import type { SimHashOptions } from '../fingerprint/options.js';
import { type SimHasher, createSimHasher } from '../fingerprint/fingerprint.js';
import { offerTasks } from '../runtime/pool-worker.js';
import { type PackedTexts, unpackTexts } from '../runtime/pool-texts.js';
import type { WithSpare } from '../runtime/spare-buffers.js';
import { contentHashes } from './exact-copies.js';
import {
  type CopiedSets,
  type SetsReuse,
  copiedSets,
  fingerprintsShareShingles,
  trimmedText,
  verificationTexts,
} from './shingle-sets.js';

/** The pool task that fingerprints a batch together with its copy keys. */
export const HASH_TASK = 'stream-hash';

export interface HashTask {
  texts: PackedTexts;
  options: SimHashOptions;
  /** Also the keys dedupStream groups documents by (HashResult.copyKeys). */
  copyKeys?: boolean;
  /** Also each text's shingle set of this many words per shingle (HashResult.sets); 0 or absent for none. */
  setsWidth?: number;
  /** Buffers handed back: the sets go into reuse.spare if large enough (copiedSets). */
  setsReuse?: SetsReuse;
}

/** A batch's fingerprints, as typed-array columns by document in the batch, with what else was asked for. */
export interface HashResult {
  /** One u64 per document, two for 128 bits (low word first), as simhashMany gives. */
  fingerprints: BigUint64Array;
  /** Each document's feature count; 0 for a document without features (its fingerprint is 0). */
  featureCounts: Float64Array;
  /**
   * When asked for: four u64 per document, its content hash (exact-copies.ts), then for a featureless document, or
   * one without words when sets are asked for too, the content hash of its trimmed text (0 otherwise).
   */
  copyKeys?: BigUint64Array;
  /** When asked for: the verifier's shingle sets, in the same pass as the fingerprints where they are the same. */
  sets?: CopiedSets;
}

/**
 * The texts as both the fingerprint and verification read them under `options` (`hasher` built from them): under
 * normalize, normalized once and then read with normalize off, so that the sets and the fingerprints can come from
 * one pass as without normalize (normalization is idempotent: the same fingerprints); as given otherwise.
 */
export function normalizedOnce(
  texts: readonly (string | Uint8Array)[],
  options: SimHashOptions,
  hasher: SimHasher,
): { read: readonly (string | Uint8Array)[]; readOptions: SimHashOptions; reader: SimHasher } {
  if (hasher.options.normalize === false) return { read: texts, readOptions: options, reader: hasher };
  const readOptions = { ...options, normalize: false as const };
  return { read: verificationTexts(texts, hasher.options), readOptions, reader: createSimHasher(readOptions) };
}

/** Fingerprints of a batch, with its copy keys and its shingle sets when asked for: the text is read once for all. */
export function hashTexts(
  texts: ReadonlyArray<string | Uint8Array>,
  options: SimHashOptions,
  copyKeys = false,
  setsWidth = 0,
  setsReuse: SetsReuse | null = null,
): HashResult {
  const hasher = createSimHasher(options);
  let result: HashResult;
  if (setsWidth > 0) {
    const { read, reader } = normalizedOnce(texts, options, hasher);
    const fused = fingerprintsShareShingles(reader.options, { width: setsWidth });
    const built = copiedSets(read, setsWidth, fused ? reader.options : null, setsReuse);
    const { fingerprints, featureCounts } =
      fused && built.fingerprints && built.featureCounts
        ? { fingerprints: built.fingerprints, featureCounts: built.featureCounts }
        : reader.hashManyDetailed(read);
    result = { fingerprints, featureCounts, sets: built.sets };
  } else result = hasher.hashManyDetailed(texts);
  if (!copyKeys) return result;
  const { featureCounts, sets } = result;
  const keys = new BigUint64Array(texts.length * 4);
  const content = contentHashes(texts);
  const featureless: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    keys[i * 4] = content[i * 2]!;
    keys[i * 4 + 1] = content[i * 2 + 1]!;
    if (featureCounts[i] === 0 || (sets && sets.starts[i] === sets.starts[i + 1])) featureless.push(i);
  }
  const trimmed = contentHashes(featureless.map((i) => trimmedText(texts[i]!, hasher.options.normalize)));
  featureless.forEach((i, q) => {
    keys[i * 4 + 2] = trimmed[q * 2]!;
    keys[i * 4 + 3] = trimmed[q * 2 + 1]!;
  });
  return { ...result, copyKeys: keys };
}

offerTasks({
  [HASH_TASK]: (task: HashTask) => {
    const r = hashTexts(unpackTexts(task.texts), task.options, task.copyKeys, task.setsWidth, task.setsReuse ?? null);
    const spare = task.texts.bytes.buffer as ArrayBuffer;
    const transfer = [r.fingerprints.buffer as ArrayBuffer, r.featureCounts.buffer as ArrayBuffer, spare];
    if (r.copyKeys) transfer.push(r.copyKeys.buffer as ArrayBuffer);
    if (r.sets) transfer.push(r.sets.starts.buffer as ArrayBuffer, r.sets.data.buffer as ArrayBuffer);
    const result: WithSpare<HashResult> = { value: r, spare };
    return { result, transfer };
  },
});
