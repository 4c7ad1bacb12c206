// Tokenizer mode numbers of the WebAssembly text kernel, shared by both sides: this file is written in the
// subset of TypeScript that AssemblyScript also compiles, and assembly/tokenize.ts imports it. The module
// re-exports these values (assembly/simhash.ts) and test/runtime/layout.test.ts checks them against this file.
export const MODE_WHITESPACE = 0;
export const MODE_WORDS = 1;
export const MODE_SHINGLES = 2;
export const MODE_NGRAMS = 3;
/** The largest shingle or n-gram width. */
export const MAX_WIDTH = 64;
/** Hash versions of the default spec's kernels (assembly/feature-hash.ts): simhash-wasm/1 and simhash-wasm/2. */
export const SPEC_V1 = 1;
export const SPEC_V2 = 2;
