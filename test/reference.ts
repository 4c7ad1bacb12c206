// A plain TypeScript reference of the default fingerprint spec (README, "Fingerprint spec"), written for
// clarity, not speed: the WebAssembly kernels are checked against it. The feature hash comes from hash-wasm,
// an independent XXH3 implementation.
import { createXXHash3, type IHasher } from 'hash-wasm';
import { decodeUtf8ToString } from './utf8.js';

export type Bits = 32 | 64 | 128;
export type Mode = 'whitespace' | 'words' | 'shingles' | 'ngrams';

let seed0: IHasher;
let seed1: IHasher;

export async function loadReference(): Promise<void> {
  seed0 = await createXXHash3(0, 0);
  seed1 = await createXXHash3(1, 0);
}

function xxh3(bytes: Uint8Array, hasher: IHasher): bigint {
  hasher.init();
  hasher.update(bytes);
  return BigInt('0x' + hasher.digest('hex'));
}

/** The spec's feature hash: XXH3-64 seed 0, plus seed 1 as the high word for 128 bits. */
export function referenceFeatureHash(bytes: Uint8Array, bits: Bits): bigint {
  const lo = xxh3(bytes, seed0);
  if (bits === 128) return (xxh3(bytes, seed1) << 64n) | lo;
  return lo;
}

const utf8 = new TextEncoder();
const SPLIT = new Set([0x20, 0x09, 0x0a, 0x0c, 0x0d]);

/** Text is a string or its UTF-8 bytes (kept as given: whitespace tokens of invalid UTF-8 are its raw bytes). */
export type RefInput = string | Uint8Array;

export function whitespaceFeatures(input: RefInput): Uint8Array[] {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input;
  const out: Uint8Array[] = [];
  let start = -1;
  for (let i = 0; i <= bytes.length; i++) {
    const sep = i === bytes.length || SPLIT.has(bytes[i]!);
    if (sep && start >= 0) {
      out.push(bytes.slice(start, i));
      start = -1;
    } else if (!sep && start < 0) start = i;
  }
  return out;
}

const WORD = /^[\p{L}\p{N}\p{M}]$/u;
const STANDALONE =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]$/u;

/** Simple case folding as the spec defines it: lowercase(uppercase(c)) over single-code-point mappings. */
export function foldChar(c: string): string {
  const up = [...c.toUpperCase()];
  const u = up.length === 1 ? up[0]! : c;
  return [...u.toLowerCase()][0]!;
}

/** Code points of the text as encodeInto sees it: lone surrogates become U+FFFD. */
function codePoints(text: string): string[] {
  return [...text.toWellFormed()];
}

export function wordList(text: string, splitStandalone: boolean): string[][] {
  const words: string[][] = [];
  let current: string[] | null = null;
  for (const c of codePoints(text)) {
    const isWord = WORD.test(c);
    if (!isWord) {
      current = null;
      continue;
    }
    if (splitStandalone && STANDALONE.test(c)) {
      current = null;
      words.push([foldChar(c)]);
      continue;
    }
    if (!current) {
      current = [];
      words.push(current);
    }
    current.push(foldChar(c));
  }
  return words;
}

export function wordFeatures(text: string): Uint8Array[] {
  return wordList(text, true).map((w) => utf8.encode(w.join('')));
}

export function shingleFeatures(text: string, width: number): Uint8Array[] {
  const hashes = wordFeatures(text).map((w) => xxh3(w, seed0));
  const pack = (hs: bigint[]) => {
    const buf = new Uint8Array(hs.length * 8);
    const view = new DataView(buf.buffer);
    hs.forEach((h, i) => view.setBigUint64(i * 8, h, true));
    return buf;
  };
  if (hashes.length === 0) return [];
  if (hashes.length < width) return [pack(hashes)];
  const out: Uint8Array[] = [];
  for (let i = 0; i + width <= hashes.length; i++) out.push(pack(hashes.slice(i, i + width)));
  return out;
}

export function ngramFeatures(text: string, width: number): Uint8Array[] {
  const normalized = [
    ...wordList(text, false)
      .map((w) => w.join(''))
      .join(' '),
  ];
  if (normalized.length === 0) return [];
  if (normalized.length < width) return [utf8.encode(normalized.join(''))];
  const out: Uint8Array[] = [];
  for (let i = 0; i + width <= normalized.length; i++) out.push(utf8.encode(normalized.slice(i, i + width).join('')));
  return out;
}

export function referenceFeatures(input: RefInput, mode: Mode, width: number): Uint8Array[] {
  if (mode === 'whitespace') return whitespaceFeatures(input);
  // Bytes are decoded with the WHATWG decoder: every ill-formed sequence becomes U+FFFD, a separator.
  const text = typeof input === 'string' ? input : decodeUtf8ToString(input);
  switch (mode) {
    case 'words':
      return wordFeatures(text);
    case 'shingles':
      return shingleFeatures(text, width);
    case 'ngrams':
      return ngramFeatures(text, width);
  }
}

/** The reducer: counter i += w where bit i of the feature hash is 1, -= w where it is 0; bit set where > 0. */
export function referenceReduce(
  hashes: readonly bigint[],
  weights: readonly number[] | null,
  bits: Bits,
  tiesSetBit = false,
): bigint {
  const width = bits === 128 ? 128 : 64;
  const counters = new Array<number>(width).fill(0);
  hashes.forEach((h, j) => {
    const w = weights ? weights[j]! : 1;
    for (let i = 0; i < width; i++) counters[i]! += (h >> BigInt(i)) & 1n ? w : -w;
  });
  let fp = 0n;
  for (let i = 0; i < (bits === 32 ? 32 : width); i++) {
    if (counters[i]! > 0 || (tiesSetBit && counters[i] === 0)) fp |= 1n << BigInt(i);
  }
  return fp;
}

export function referenceSimhash(
  input: RefInput,
  mode: Mode,
  width: number,
  bits: Bits,
): { fingerprint: bigint; featureCount: number } {
  const features = referenceFeatures(input, mode, width);
  const hashes = features.map((f) => referenceFeatureHash(f, bits === 128 ? 128 : 64));
  return { fingerprint: referenceReduce(hashes, null, bits), featureCount: features.length };
}

export function referenceSimhashFeatures(
  features: ReadonlyArray<string | readonly [string, number]>,
  bits: Bits,
): bigint {
  const hashes: bigint[] = [];
  const weights: number[] = [];
  for (const f of features) {
    const [s, w] = typeof f === 'string' ? [f, 1] : f;
    hashes.push(referenceFeatureHash(utf8.encode(s), bits === 128 ? 128 : 64));
    weights.push(w);
  }
  return referenceReduce(hashes, weights, bits);
}

export interface RefOptions {
  bits: Bits;
  tokenizer?: Mode;
  width?: number;
  normalize?: 'NFC' | 'NFD' | 'NFKC' | 'NFKD';
}
export type RefDocument = RefInput | ReadonlyArray<string | readonly [string, number]> | ReadonlyMap<string, number>;

/** The default spec's fingerprint of any input under the spec's options (defaults: shingles of 3, n-grams of 4). */
export function referenceFingerprint(input: RefDocument, options: RefOptions): bigint {
  for (const key of Object.keys(options)) {
    if (!['bits', 'tokenizer', 'width', 'normalize'].includes(key)) throw new Error(`reference: no option ${key}`);
  }
  const { bits, normalize } = options;
  if (input instanceof Map) input = [...input];
  if (Array.isArray(input)) {
    const features = input as ReadonlyArray<string | readonly [string, number]>;
    if (!normalize) return referenceSimhashFeatures(features, bits);
    return referenceSimhashFeatures(
      features.map((f) =>
        typeof f === 'string' ? f.normalize(normalize) : ([f[0].normalize(normalize), f[1]] as const),
      ),
      bits,
    );
  }
  let text = input as RefInput;
  if (normalize) text = (typeof text === 'string' ? text : decodeUtf8ToString(text)).normalize(normalize);
  const mode = options.tokenizer ?? 'shingles';
  const width = options.width ?? (mode === 'shingles' ? 3 : mode === 'ngrams' ? 4 : 0);
  return referenceSimhash(text, mode, width, bits).fingerprint;
}

/** xorshift32 as floats in [0, 1): the seeded generator of the index tests. */
export function xorshiftRng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** A small seeded PRNG (mulberry32) for reproducible property tests. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'the',
  'Quick',
  'BROWN',
  'fox',
  'a',
  'of',
  'jumps',
  'over',
  'lazy',
  'dog',
  'internationalization',
  '42',
  'x1',
  'café',
  'naïve',
  'Straße',
  'ǅemal',
  'ΣΊΣΥΦΟΣ',
  'ς',
  'Привет',
  'мир',
  'İstanbul',
  'KELVIN',
  'ﬁle',
  '中文',
  '日本語の文章',
  'カタカナ',
  'ภาษาไทย',
  'ພາສາລາວ',
  'ភាសាខ្មែរ',
  'မြန်မာစာ',
  '東京タワーとsimhash',
  '한국어',
  'العربية',
  'हिन्दी',
  'e\u0301',
  '😀',
  '𝒳𝒴',
  '👍🏽',
  '\ud800',
  '\udfff',
  'a\ud83dz',
  '\u0000',
  '\u00a0',
  '\u3000',
  '-',
  '...',
  "don't",
  'e-mail',
  '#tag',
];
const SEPARATORS = [' ', ' ', ' ', '  ', '\t', '\n', '\r\n', '\f', '\v', ', ', '. ', '', '—', '\u2028'];

/** A random document mixing scripts, separators, marks, emoji and lone surrogates. */
export function randomDocument(next: () => number, maxPieces: number): string {
  const n = Math.floor(next() * (maxPieces + 1));
  let s = '';
  for (let i = 0; i < n; i++) {
    s += PIECES[Math.floor(next() * PIECES.length)]!;
    s += SEPARATORS[Math.floor(next() * SEPARATORS.length)]!;
  }
  return s;
}
