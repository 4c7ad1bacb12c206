// Options are validated once, here, into a frozen plan the hot paths trust. Every error names the bad value.
// What a preset allows is asked of its definition (presets/): this file knows no preset by name.
import { show } from '../errors.js';
import { MAX_WIDTH, MODE_NGRAMS, MODE_SHINGLES, MODE_WHITESPACE, MODE_WORDS } from './modes.shared.js';
import { type Plan, type SimHashOptions, checkBits } from './options.js';
import { PRESETS } from './presets/presets.js';

/** Tokenizers implemented in WebAssembly, by mode number (modes.shared.ts, shared with assembly/tokenize.ts). */
const WASM_MODES = {
  whitespace: MODE_WHITESPACE,
  words: MODE_WORDS,
  shingles: MODE_SHINGLES,
  ngrams: MODE_NGRAMS,
} as const;

const DEFAULTS = { bits: 64, preset: 'default', shingleWidth: 3, ngramWidth: 4 } as const;

const KNOWN = new Set(['bits', 'preset', 'tokenizer', 'width', 'normalize', 'locale']);
const TOKENIZERS = new Set(['whitespace', 'words', 'shingles', 'ngrams', 'segmenter']);
const NORMALIZATIONS = new Set(['NFC', 'NFD', 'NFKC', 'NFKD']);

export function resolveOptions(options: SimHashOptions | undefined): Plan {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`unknown option ${JSON.stringify(key)}`);
  }
  const bits = checkBits(options.bits ?? DEFAULTS.bits);
  const preset = options.preset ?? DEFAULTS.preset;
  if (typeof preset !== 'string' || !Object.hasOwn(PRESETS, preset)) {
    const names = Object.keys(PRESETS).map((name) => `'${name}'`);
    throw new RangeError(`preset must be ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, got ${show(preset)}`);
  }
  const rules = PRESETS[preset];
  rules.checkOptions(options);
  const tokenizer = options.tokenizer ?? rules.defaultTokenizer;
  if (typeof tokenizer !== 'function' && !TOKENIZERS.has(tokenizer as string)) {
    throw new RangeError(
      `tokenizer must be one of ${[...TOKENIZERS].join(', ')} or a function, got ${show(tokenizer)}`,
    );
  }
  rules.checkTokenizer(tokenizer);
  let width = 0;
  if (tokenizer === 'shingles' || tokenizer === 'ngrams') {
    width = options.width ?? (tokenizer === 'shingles' ? DEFAULTS.shingleWidth : DEFAULTS.ngramWidth);
    if (typeof width !== 'number') throw new TypeError(`width must be a number, got ${show(width)}`);
    if (!Number.isInteger(width) || width < 1 || width > MAX_WIDTH) {
      throw new RangeError(`width must be an integer from 1 to ${MAX_WIDTH}, got ${show(width)}`);
    }
  } else if (options.width !== undefined) {
    throw new TypeError(`width applies to the 'shingles' and 'ngrams' tokenizers, not ${show(tokenizer)}`);
  }
  const normalize = options.normalize ?? false;
  if (normalize !== false && !NORMALIZATIONS.has(normalize)) {
    throw new RangeError(`normalize must be false or one of NFC, NFD, NFKC, NFKD, got ${show(normalize)}`);
  }
  const locale = options.locale;
  if (locale !== undefined) {
    if (typeof locale !== 'string') throw new TypeError(`locale must be a string, got ${show(locale)}`);
    if (tokenizer !== 'segmenter') throw new TypeError(`locale applies to the 'segmenter' tokenizer only`);
    // Intl throws a bare "Incorrect locale information provided" at the first text; say which value, and now.
    try {
      Intl.getCanonicalLocales(locale);
    } catch {
      throw new RangeError(`locale must be a BCP 47 language tag such as 'ja' or 'zh-Hant', got ${show(locale)}`);
    }
  }
  if (
    (tokenizer === 'segmenter' && typeof Intl === 'undefined') ||
    (tokenizer === 'segmenter' && !('Segmenter' in Intl))
  ) {
    throw new RangeError(`the 'segmenter' tokenizer needs Intl.Segmenter, which this runtime lacks`);
  }
  const mode =
    typeof tokenizer === 'function' || tokenizer === 'segmenter'
      ? -1
      : WASM_MODES[tokenizer as keyof typeof WASM_MODES];
  return Object.freeze({ bits, preset, tokenizer, width, normalize, locale, mode, spec: rules.spec });
}
