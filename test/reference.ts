// A plain TypeScript reference of the default fingerprint spec (docs/spec.md) in both versions,
// written for clarity, not speed: the WebAssembly kernels are checked against it. XXH3 comes from hash-wasm, an
// independent implementation; spec 2's short-input hash and shingle hash are written out here from docs/spec.md's
// formulas, in BigInt arithmetic.
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

/** simhash-wasm/1 or simhash-wasm/2 (the default). */
export type RefSpec = 1 | 2;

const M64 = (1n << 64n) - 1n;
const u64 = (x: bigint) => x & M64;
const rotl = (x: bigint, r: bigint) => u64((x << r) | (x >> (64n - r)));
/** SplitMix64's finalizer. */
function mix(z: bigint): bigint {
  z = u64((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = u64((z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
}
const key = (len: number, seed: bigint) => u64(BigInt(len) * 0x9e3779b185ebca87n + seed * 0xc2b2ae3d27d4eb4fn);
/** Little-endian unsigned integer of bytes[at..at+n). */
function le(bytes: Uint8Array, at: number, n: number): bigint {
  let x = 0n;
  for (let i = n - 1; i >= 0; i--) x = (x << 8n) | BigInt(bytes[at + i]!);
  return x;
}

/** One 64-bit word of a feature's hash with `seed` (0; 1 gives the high word of 128 bits). */
function featureHashWord(b: Uint8Array, seed: 0n | 1n, spec: RefSpec): bigint {
  const n = b.length;
  if (spec === 1 || n > 16) return xxh3(b, seed === 0n ? seed0 : seed1);
  if (n <= 8) {
    let v = 0n;
    if (n >= 4) v = (le(b, 0, 4) << 32n) | le(b, n - 4, 4);
    else if (n > 0) v = BigInt(b[0]!) | (BigInt(b[n >> 1]!) << 8n) | (BigInt(b[n - 1]!) << 16n);
    return mix(v ^ key(n, seed));
  }
  return mix(u64(le(b, 0, 8) * 0x165667b19e3779f9n) ^ rotl(le(b, n - 8, 8), 31n) ^ key(n, seed));
}

/** The spec's feature hash: seed 0, plus seed 1 as the high word for 128 bits. */
export function referenceFeatureHash(bytes: Uint8Array, bits: Bits, spec: RefSpec = 2): bigint {
  const lo = featureHashWord(bytes, 0n, spec);
  if (bits === 128) return (featureHashWord(bytes, 1n, spec) << 64n) | lo;
  return lo;
}

/** The spec's hash of a shingle of word hashes (each the low word, seed 0, of its word's feature hash). */
export function referenceShingleHash(words: readonly bigint[], bits: Bits, spec: RefSpec = 2): bigint {
  const word = (seed: 0n | 1n) => {
    if (spec === 1) {
      const buf = new Uint8Array(words.length * 8);
      const view = new DataView(buf.buffer);
      words.forEach((h, i) => view.setBigUint64(i * 8, h, true));
      return xxh3(buf, seed === 0n ? seed0 : seed1);
    }
    let x = words[0]!;
    for (let i = 1; i < words.length; i++) x = rotl(x, 21n) ^ words[i]!;
    return mix(x ^ key(8 * words.length, seed));
  };
  const lo = word(0n);
  return bits === 128 ? (word(1n) << 64n) | lo : lo;
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

/** A text's shingles as the word hashes (low word, seed 0) of their words; a short text is one shingle of all. */
export function shingleWords(text: string, width: number, spec: RefSpec = 2): bigint[][] {
  const hashes = wordFeatures(text).map((w) => featureHashWord(w, 0n, spec));
  if (hashes.length === 0) return [];
  if (hashes.length < width) return [hashes];
  const out: bigint[][] = [];
  for (let i = 0; i + width <= hashes.length; i++) out.push(hashes.slice(i, i + width));
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

/** The hashes of a text's features under `mode`, in order (bits 128: both words). */
export function referenceFeatureHashes(
  input: RefInput,
  mode: Mode,
  width: number,
  bits: 64 | 128,
  spec: RefSpec = 2,
): bigint[] {
  if (mode === 'whitespace') return whitespaceFeatures(input).map((f) => referenceFeatureHash(f, bits, spec));
  // Bytes are decoded with the WHATWG decoder: every ill-formed sequence becomes U+FFFD, a separator.
  const text = typeof input === 'string' ? input : decodeUtf8ToString(input);
  switch (mode) {
    case 'words':
      return wordFeatures(text).map((f) => referenceFeatureHash(f, bits, spec));
    case 'shingles':
      return shingleWords(text, width, spec).map((s) => referenceShingleHash(s, bits, spec));
    case 'ngrams':
      return ngramFeatures(text, width).map((f) => referenceFeatureHash(f, bits, spec));
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
  spec: RefSpec = 2,
): { fingerprint: bigint; featureCount: number } {
  const hashes = referenceFeatureHashes(input, mode, width, bits === 128 ? 128 : 64, spec);
  return { fingerprint: referenceReduce(hashes, null, bits), featureCount: hashes.length };
}

export function referenceSimhashFeatures(
  features: ReadonlyArray<string | readonly [string, number]>,
  bits: Bits,
  spec: RefSpec = 2,
): bigint {
  const hashes: bigint[] = [];
  const weights: number[] = [];
  for (const f of features) {
    const [s, w] = typeof f === 'string' ? [f, 1] : f;
    hashes.push(referenceFeatureHash(utf8.encode(s), bits === 128 ? 128 : 64, spec));
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
export function referenceFingerprint(input: RefDocument, options: RefOptions, spec: RefSpec = 2): bigint {
  for (const key of Object.keys(options)) {
    if (!['bits', 'tokenizer', 'width', 'normalize'].includes(key)) throw new Error(`reference: no option ${key}`);
  }
  const { bits, normalize } = options;
  if (input instanceof Map) input = [...input];
  if (Array.isArray(input)) {
    const features = input as ReadonlyArray<string | readonly [string, number]>;
    if (!normalize) return referenceSimhashFeatures(features, bits, spec);
    return referenceSimhashFeatures(
      features.map((f) =>
        typeof f === 'string' ? f.normalize(normalize) : ([f[0].normalize(normalize), f[1]] as const),
      ),
      bits,
      spec,
    );
  }
  let text = input as RefInput;
  if (normalize) text = (typeof text === 'string' ? text : decodeUtf8ToString(text)).normalize(normalize);
  const mode = options.tokenizer ?? 'shingles';
  const width = options.width ?? (mode === 'shingles' ? 3 : mode === 'ngrams' ? 4 : 0);
  return referenceSimhash(text, mode, width, bits, spec).fingerprint;
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
