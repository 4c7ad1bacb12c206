// The fingerprint options, and the frozen plan that plan.ts validates them into and the hot paths trust. The
// presets (presets/) take these types, so this file imports no preset: plan.ts asks the presets' table.
import { show } from '../errors.js';

/** Fingerprint width in bits; 128-bit fingerprints are stored as two u64 words, low word first. */
export type Bits = 32 | 64 | 128;
/** A fingerprint spec: this library's versioned ones, or a reference implementation reproduced bit for bit (see docs/spec.md). */
export type Preset = 'default' | 'simhash-wasm/2' | 'simhash-wasm/1' | 'java' | 'python-simhash';
/**
 * A built-in tokenizer: 'whitespace' (runs of bytes other than ASCII whitespace, the Java reference's split), 'words' (Unicode words,
 * case-folded), 'shingles' (overlapping runs of `width` words), 'ngrams' (`width` code points), 'segmenter'
 * (Intl.Segmenter words, for Chinese, Japanese, Thai…; runs in JavaScript).
 */
export type TokenizerName = 'whitespace' | 'words' | 'shingles' | 'ngrams' | 'segmenter';
/** A feature: a string (weight 1 per occurrence) or a [feature, weight] pair. */
export type Feature = string | readonly [string, number];
/** A custom tokenizer: the features of one text. It runs on the calling thread, never in a pool worker. */
export type TokenizerFunction = (text: string) => Iterable<Feature>;
/** A Unicode normalization form (String.prototype.normalize). */
export type Normalization = 'NFC' | 'NFD' | 'NFKC' | 'NFKD';

/**
 * How documents become fingerprints; every field is optional. Unknown names and unsupported values throw TypeError
 * or RangeError naming the value.
 */
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

/** Options validated, with their defaults filled in (frozen): a hasher's `options`. */
export interface Plan {
  /** Fingerprint width. */
  readonly bits: Bits;
  /** The spec the fingerprints follow. */
  readonly preset: Preset;
  /** The tokenizer in use: the preset's default unless one was given. */
  readonly tokenizer: TokenizerName | TokenizerFunction;
  /** Words per shingle or code points per n-gram; 0 for tokenizers without a width. */
  readonly width: number;
  /** Unicode normalization applied before tokenizing, or false for none. */
  readonly normalize: Normalization | false;
  /** Locale of the 'segmenter' tokenizer; undefined for the runtime's (and for other tokenizers). */
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
