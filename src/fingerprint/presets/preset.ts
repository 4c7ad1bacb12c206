// What a preset is: one fingerprint spec end to end. It says which tokenizers it takes, how it reads feature
// lists, and how a batch is marshalled into WebAssembly and fingerprinted by its kernel. A hasher looks its
// preset up once, from the options (presets.ts), so the general path in fingerprint.ts has no preset branches,
// and a new preset is one file here plus its kernels in assembly/presets/.
import type { Plan, SimHashOptions, TokenizerFunction, TokenizerName } from '../options.js';
import type { EncodedTexts } from '../../runtime/marshal.js';
import type { Runtime } from '../../runtime/wasm.js';

/** A document given as features, validated: its strings and, when any weight is not 1, their weights. */
export interface FeatureDoc {
  /** The document's position in the caller's batch. */
  index: number;
  strings: string[];
  weights: number[] | null;
}

/** Where a kernel left its results: one u64 per document (two at 128 bits) at `out`, one f64 count at `counts`. */
export interface KernelOutput {
  out: number;
  counts: number;
}

export interface PresetDefinition<Doc extends FeatureDoc = FeatureDoc> {
  /**
   * The hash version (SPEC_V1, SPEC_V2 of modes.shared.ts) of the presets that run the default spec's kernels;
   * 0 for presets that reproduce another implementation.
   */
  readonly spec: number;
  /** The tokenizer used when the options name none. */
  readonly defaultTokenizer: TokenizerName;
  /** Runs before the general checks: throws for options this preset does not take. */
  checkOptions(options: SimHashOptions): void;
  /** Runs after the general checks: throws when this preset cannot use `tokenizer`. */
  checkTokenizer(tokenizer: TokenizerName | TokenizerFunction): void;
  /** Whether the text kernel reads strings (texts given as bytes are decoded first) rather than UTF-8 bytes. */
  readonly textsAsStrings: boolean;
  /** A feature list, or a tokenizer function's output, validated before anything reaches WebAssembly. */
  collectFeatures(features: Iterable<unknown>, doc: number, normalize: Plan['normalize']): Doc;
  /** A feature → weight map, validated. */
  mapFeatures(map: ReadonlyMap<unknown, unknown>, doc: number, normalize: Plan['normalize']): Doc;
  /** Fingerprints a batch of texts (already normalized if asked) with one WebAssembly call. */
  runTexts(rt: Runtime, texts: ReadonlyArray<string | Uint8Array>, plan: Plan): KernelOutput;
  /**
   * Kernels that read UTF-8 only: fingerprints texts already back to back in the text region, so a pool worker's
   * packed chunk goes in with one copy.
   */
  runEncodedTexts?(rt: Runtime, encoded: EncodedTexts, plan: Plan): KernelOutput;
  /** Fingerprints a batch of documents from collectFeatures / mapFeatures with one WebAssembly call. */
  runFeatures(rt: Runtime, docs: readonly Doc[], plan: Plan): KernelOutput;
}
