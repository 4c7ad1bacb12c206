// The public surface of simhash-wasm.
export { init, simdSupported, loadedBuild, type InitOptions, type Build } from './wasm.js';
export {
  simhash,
  simhashDetailed,
  simhashMany,
  simhashOfHashes,
  createSimHasher,
  featureHash,
  type SimHashInput,
  type SimHashResult,
  type SimHashBatch,
  type SimHasher,
  type HashesOptions,
} from './fingerprint.js';
export { hammingDistance, similarity, toHex, fromHex, toBinary, fromBinary } from './bits.js';
export { hammingDistances, hammingDistancesInto, withinDistance, countWithinDistance, nearest, distanceHistogram, pairsWithinDistance, selfPairsWithinDistance, FingerprintSet, type HammingBits, type HammingOptions, type NearestResult, type HammingPairs } from './hamming.js';
export { segmenterWords } from './tokenize.js';
export type { Bits, Preset, TokenizerName, TokenizerFunction, Feature, Normalization, SimHashOptions, Plan } from './options.js';
export { SPEC_ID } from './spec.js';
export { verifyPairs, dropFeaturelessPairs } from './dedup-verify.js';
export { findNearDuplicates, clusters, dedup, defaultDedupK, type VerifyOptions, type FindNearDuplicatesOptions, type NearDuplicatePairs, type ClusterMode, type ClusterOptions, type Clusters, type PairList, type DedupOptions, type DedupResult, type DedupTimings } from './dedup.js';
export { FingerprintIndex, type FingerprintIndexOptions, type FingerprintId, type Neighbor, type IndexExplanation, type IndexLayout, type IndexPlan, type TablePlan } from './fingerprint-index.js';
export { createVerifier, shingles, shingleHashes, jaccardSorted, minhashSketch, sketchJaccard, type Verifier, type VerifierOptions } from './verify.js';
