// The public surface of simhash-wasm.
export { init, simdSupported, loadedBuild, type InitOptions, type Build } from './runtime/wasm.js';
export {
  simhash,
  simhashDetailed,
  simhashMany,
  simhashManyAsync,
  simhashOfHashes,
  createSimHasher,
  featureHash,
  type SpecPreset,
  type SimHashInput,
  type SimHashResult,
  type SimHashBatch,
  type SimHasher,
  type HashesOptions,
  type ThreadOptions,
} from './fingerprint/fingerprint.js';
export { hammingDistance, similarity, toHex, fromHex, toBinary, fromBinary } from './fingerprint/bits.js';
export {
  hammingDistances,
  hammingDistancesInto,
  withinDistance,
  countWithinDistance,
  nearest,
  distanceHistogram,
  pairsWithinDistance,
  selfPairsWithinDistance,
  FingerprintSet,
  type HammingBits,
  type HammingOptions,
} from './hamming/hamming.js';
export { rows, type Pairs, type Neighbors, type Columns, type Row } from './results.js';
export { segmenterWords } from './fingerprint/tokenize.js';
export type {
  Bits,
  Preset,
  TokenizerName,
  TokenizerFunction,
  Feature,
  Normalization,
  SimHashOptions,
  Plan,
} from './fingerprint/options.js';
export { SPEC_ID, SPEC_IDS, type SpecId } from './fingerprint/spec.js';
export { verifyPairs, dropFeaturelessPairs } from './dedup/verify-pairs.js';
export {
  findNearDuplicates,
  type FindNearDuplicatesOptions,
  type NearDuplicatesResult,
} from './join/find-near-duplicates.js';
export {
  clusters,
  dedup,
  defaultDedupK,
  type VerifyOptions,
  type ClusterMode,
  type ClusterOptions,
  type Clusters,
  type DedupOptions,
  type DedupResult,
  type DedupTimings,
  type PairsMode,
  type KeepRule,
} from './dedup/dedup.js';
export { KEEP_RULES } from './dedup/keep.js';
export { MAX_VERIFIED_DOCUMENT_BYTES } from './dedup/document-size.js';
export { Deduplicator, type DeduplicatorBatch } from './dedup/deduplicator.js';
export type { StaleLock } from './dedup/state-dir.js';
export {
  dedupStream,
  type StreamDocument,
  type DedupStreamOptions,
  type DedupStreamResult,
  type DedupStreamPhase,
  type Locators,
  type Reread,
} from './dedup/stream.js';
export { setPoolWorkerUrl } from './runtime/pool.js';
export {
  simhashStream,
  MAX_DOCUMENT_BYTES,
  MAX_THREADS,
  type StreamOptions,
  type SimHashStreamBatch,
} from './dedup/stream-hash.js';
export {
  FingerprintIndex,
  type FingerprintIndexOptions,
  type DeserializeOptions,
  type FingerprintId,
  type IndexExplanation,
  type IndexLayout,
  type IndexPlan,
  type TablePlan,
} from './fingerprint-index/fingerprint-index.js';
export {
  createVerifier,
  shingles,
  shingleHashes,
  jaccardSorted,
  minhashSketch,
  sketchJaccard,
  type Verifier,
  type VerifierOptions,
} from './dedup/shingle-jaccard.js';
export type { IndexBits } from './fingerprint-index/planner.js';
export type { CopiedSets } from './dedup/shingle-sets.js';
/** @internal The CLI's reader of JSON Lines (its bundle takes library code only through this entry). */
export { readJsonFields, ID_PLAIN } from './runtime/json-field.js';
