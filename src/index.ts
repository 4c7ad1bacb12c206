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
export { segmenterWords } from './tokenize.js';
export type { Bits, Preset, TokenizerName, TokenizerFunction, Feature, Normalization, SimHashOptions, Plan } from './options.js';
export { SPEC_ID } from './spec.js';
