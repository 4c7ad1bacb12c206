// The fingerprint options, and the frozen plan that plan.ts validates them into and the hot paths trust. The
// presets (presets/) take these types, so this file imports no preset: plan.ts asks the presets' table.
import { show } from '../errors.js';

export type Bits = 32 | 64 | 128;
export type Preset = 'default' | 'simhash-wasm/2' | 'simhash-wasm/1' | 'java' | 'python-simhash';
export type TokenizerName = 'whitespace' | 'words' | 'shingles' | 'ngrams' | 'segmenter';
/** A feature: a string (weight 1 per occurrence) or a [feature, weight] pair. */
export type Feature = string | readonly [string, number];
export type TokenizerFunction = (text: string) => Iterable<Feature>;
export type Normalization = 'NFC' | 'NFD' | 'NFKC' | 'NFKD';

export interface SimHashOptions {
  /** Fingerprint width: 64 (default), 128 or 32. */
  bits?: Bits;
  /**
   * 'default' is this library's versioned spec (SPEC_ID, now 'simhash-wasm/2', which names it for good);
   * 'simhash-wasm/1' is the spec before it, for fingerprints stored under it; 'java' reproduces the Java reference
   * implementation; 'python-simhash' reproduces the Python package `simhash` (1e0ng) 2.x, with its own fixed
   * tokenizer.
   */
  preset?: Preset;
  /** How text becomes features (default 'shingles'); ignored for inputs that are already features. */
  tokenizer?: TokenizerName | TokenizerFunction;
  /** Words per shingle (default 3) or code points per n-gram (default 4); 1 to 64. */
  width?: number;
  /** Unicode normalization applied to text and features before tokenizing (default: none). */
  normalize?: Normalization | false;
  /** Locale for the 'segmenter' tokenizer (Intl.Segmenter); default: the runtime's. */
  locale?: string;
}

export interface Plan {
  readonly bits: Bits;
  readonly preset: Preset;
  readonly tokenizer: TokenizerName | TokenizerFunction;
  readonly width: number;
  readonly normalize: Normalization | false;
  readonly locale: string | undefined;
  /** WASM tokenizer mode, or -1 when the tokenizer runs in JavaScript. */
  readonly mode: number;
  /** The default spec's hash version (SPEC_V1, SPEC_V2) for its presets, 0 for the others. */
  readonly spec: number;
}

export function checkBits(bits: unknown, name = 'bits'): Bits {
  if (bits !== 32 && bits !== 64 && bits !== 128) {
    const error = typeof bits === 'number' ? RangeError : TypeError;
    throw new error(`${name} must be 32, 64 or 128, got ${show(bits)}`);
  }
  return bits;
}
