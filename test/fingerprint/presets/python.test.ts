// preset 'python-simhash': every shared vector of the Python package `simhash` (1e0ng, 2.x), MD5 in WebAssembly
// against node:crypto, and random documents in many scripts against a plain TypeScript implementation.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import {
  simhash,
  simhashDetailed,
  simhashMany,
  createSimHasher,
  toHex,
  type Bits,
  type Feature,
} from '../../../src/index.js';
import { wasm } from '../../../src/runtime/wasm.js';
import { md5Wasm, pythonContent, pythonTextFeatures } from '../../../src/fingerprint/presets/python.js';
import { readOriginalVectors } from '../../original-vectors.js';

const PRESET = { preset: 'python-simhash' } as const;

const textVectors = readOriginalVectors<{ bits: Bits; text: string; fingerprint: string }>('python-simhash.jsonl');
const featureVectors = readOriginalVectors<{ bits: Bits; features: Feature[]; fingerprint: string }>(
  'python-simhash-features.jsonl',
);

// ---- the plain TypeScript implementation (a transcription of Simhash._tokenize and build_by_features) ----------

const WORD_CHAR = /^[\p{L}\p{N}_]$/u; // Python 3 str \w: isalnum() (categories L*, N*) or '_'

function refContent(text: string): string {
  let content = '';
  for (const ch of text.toLowerCase()) {
    const c = ch.codePointAt(0)!;
    if (WORD_CHAR.test(ch) || (c >= 0x4e00 && c <= 0x9fcc)) content += ch;
  }
  return content;
}

function refTokenize(text: string): string[] {
  const points = Array.from(refContent(text));
  const windows: string[] = [];
  for (let i = 0; i < Math.max(points.length - 4 + 1, 1); i++) windows.push(points.slice(i, i + 4).join(''));
  return windows;
}

/** The last bits/8 bytes of MD5, as bits (index 0 = least significant). */
function refHashBits(feature: string, bits: number): number[] {
  const digest = createHash('md5').update(Buffer.from(feature, 'utf8')).digest();
  const out: number[] = [];
  for (let i = 0; i < bits; i++) out.push((digest[15 - (i >> 3)]! >> (i & 7)) & 1);
  return out;
}

type PyFeature = string | [string, number];

/** build_by_features: batches of 200 summed exactly, large or non-integer weights added at once. Throws like Python. */
function refBuild(features: Iterable<PyFeature>, bits: number): bigint {
  const totals = new Array<number>(bits).fill(0);
  let batch = new Array<number>(bits).fill(0);
  let batchLength = 0;
  let count = 0;
  let w = 1;
  for (const f of features) {
    let name: string;
    let skipBatch = false;
    if (typeof f === 'string') {
      name = f;
      if (!Number.isInteger(w)) throw new TypeError("can't multiply sequence by non-int");
    } else {
      [name, w] = f;
      skipBatch = w > 50 || !Number.isInteger(w);
    }
    count += w;
    const h = refHashBits(name, bits);
    if (skipBatch) {
      for (let i = 0; i < bits; i++) totals[i]! += h[i]! * w;
    } else {
      // bytes * w: w copies of the hash (none when w <= 0)
      for (let i = 0; i < bits; i++) batch[i]! += h[i]! * Math.max(w, 0);
      if (++batchLength >= 200) {
        for (let i = 0; i < bits; i++) totals[i]! += batch[i]!;
        batch = new Array<number>(bits).fill(0);
        batchLength = 0;
      }
    }
  }
  if (batchLength > 0) for (let i = 0; i < bits; i++) totals[i]! += batch[i]!;
  let value = 0n;
  for (let i = 0; i < bits; i++) if (totals[i]! > count / 2) value |= 1n << BigInt(i);
  return value;
}

function refText(text: string, bits: number): bigint {
  const counts = new Map<string, number>();
  for (const f of refTokenize(text)) counts.set(f, (counts.get(f) ?? 0) + 1);
  return refBuild([...counts], bits);
}

// ---- fixed vectors --------------------------------------------------------------------------------------------

describe("preset 'python-simhash': the package's own outputs", () => {
  it('reproduces every text vector, one by one and in one batch', () => {
    expect(textVectors.length).toBeGreaterThan(250);
    for (const v of textVectors) {
      expect(toHex(simhash(v.text, { ...PRESET, bits: v.bits }), v.bits), JSON.stringify(v.text.slice(0, 60))).toBe(
        v.fingerprint,
      );
    }
    for (const bits of [64, 128] as const) {
      const subset = textVectors.filter((v) => v.bits === bits);
      const batch = simhashMany(
        subset.map((v) => v.text),
        { ...PRESET, bits },
      );
      const words = bits / 64;
      subset.forEach((v, i) => {
        const fp = words === 2 ? (batch[2 * i + 1]! << 64n) | batch[2 * i]! : batch[i]!;
        expect(toHex(fp, bits)).toBe(v.fingerprint);
      });
    }
  });

  it('reproduces every feature-list vector, as lists and (when weighted) as maps', () => {
    expect(featureVectors.length).toBe(12);
    for (const v of featureVectors) {
      expect(toHex(simhash(v.features, { ...PRESET, bits: v.bits }), v.bits)).toBe(v.fingerprint);
      if (v.features.every((f) => Array.isArray(f))) {
        const map = new Map(v.features as [string, number][]);
        if (map.size === v.features.length)
          expect(toHex(simhash(map, { ...PRESET, bits: v.bits }), v.bits)).toBe(v.fingerprint);
      }
    }
  });

  it('the plain reference agrees with every vector (so it can judge the random runs)', () => {
    for (const v of textVectors) expect(toHex(refText(v.text, v.bits), v.bits)).toBe(v.fingerprint);
    for (const v of featureVectors)
      expect(toHex(refBuild(v.features as PyFeature[], v.bits), v.bits)).toBe(v.fingerprint);
  });

  it('hashes the empty text as the one feature "" (MD5 of nothing) and counts windows', () => {
    const empty = createHash('md5').update('').digest('hex');
    expect(toHex(simhash('', { ...PRESET, bits: 128 }), 128)).toBe(empty);
    expect(toHex(simhash(' \t.,!', { ...PRESET, bits: 64 }), 64)).toBe(empty.slice(16));
    expect(toHex(simhash('', { ...PRESET, bits: 32 }), 32)).toBe(empty.slice(24));
    // 3, 4 and 5 code points: one feature (the whole content), one window, two windows (emoji are not \w).
    for (const [text, n] of [
      ['abc', 1],
      ['abcd', 1],
      ['abcde', 2],
      ['a b c d e f', 3],
      ['𠀀😀x𠀀y', 1],
      ['𠀀𝔸x𠀀y', 2],
    ] as const) {
      expect(simhashDetailed(text, PRESET).featureCount, text).toBe(n);
      expect(simhash(text, PRESET)).toBe(refText(text, 64));
    }
    expect(toHex(simhash('ABC', { ...PRESET, bits: 128 }), 128)).toBe(createHash('md5').update('abc').digest('hex'));
  });
});

// ---- MD5 ------------------------------------------------------------------------------------------------------

describe('MD5 in WebAssembly', () => {
  it('equals node:crypto on every length 0..200 and around the padding boundaries', () => {
    let seed = 12345;
    const byte = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 24;
    };
    const lengths = [...Array(201).keys(), 247, 248, 255, 256, 257, 1000, 4096, 65536 + 55];
    const inputs = lengths.flatMap((n) => [0, 1].map(() => Uint8Array.from({ length: n }, byte)));
    const digests = md5Wasm(wasm(), inputs);
    inputs.forEach((input, i) => {
      expect(Buffer.from(digests[i]!).toString('hex'), `length ${input.length}`).toBe(
        createHash('md5').update(input).digest('hex'),
      );
    });
    // RFC 1321 test suite
    const suite = ['', 'a', 'abc', 'message digest', 'abcdefghijklmnopqrstuvwxyz', '1234567890'.repeat(8)];
    const rfc = md5Wasm(
      wasm(),
      suite.map((s) => new TextEncoder().encode(s)),
    );
    expect(Buffer.from(rfc[3]!).toString('hex')).toBe('f96b697d7cb7938d525a2f31aaf161d0');
    expect(Buffer.from(rfc[5]!).toString('hex')).toBe('57edf4a22be3c955ac49da2e2107b67a');
  });
});

// ---- random documents against the reference ---------------------------------------------------------------------

const SCRIPT_PIECES = [
  'the',
  'Quick',
  'BROWN',
  'fox_1',
  '42',
  'naïve',
  'café',
  'ÇA',
  'ß',
  'İstanbul',
  'ǅ',
  'ﬁ', // Latin
  'ΟΔΟΣ',
  'Σ',
  'σοφός', // Greek (final sigma)
  'Русский',
  'текст',
  'ЁЖ', // Cyrillic
  '中国人',
  '你好',
  '世界',
  '𠀀',
  '鿌',
  '鿍',
  '日本語のテキスト',
  'カタカナ',
  '한국어', // CJK (U+9FCC / U+9FCD edge)
  'العربية',
  '٣٤',
  'עברית',
  'हिन्दी',
  'ไทย', // RTL, Indic, Thai (combining marks are not \w)
  '😀',
  '👍🏽',
  '👨‍👩‍👧',
  '🇫🇷',
  '𝔸𝟘', // emoji, astral letters and digits
  '²½Ⅻ①',
  'e\u0301',
  '\u200b',
  '\u00a0',
  '\u3000', // numbers, combining, zero-width, spaces
  ' ',
  ' ',
  '\t',
  '\n',
  '.',
  ',',
  '-',
  '!',
  "'",
  '’',
  '\ud800',
  '\udfff', // separators and lone surrogates
];

const multiScriptText = fc.array(fc.constantFrom(...SCRIPT_PIECES), { maxLength: 80 }).map((parts) => parts.join(''));
const anyText = fc.oneof(
  multiScriptText,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

describe("preset 'python-simhash' against the plain reference", () => {
  it('tokenizes like Python (content and windows)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(pythonTextFeatures(text)).toEqual(refTokenize(text));
        expect(pythonContent(text)).toBe(refContent(text));
      }),
      { seed: 8, numRuns: 400 },
    );
  });

  it('fingerprints random multi-script documents at 32, 64 and 128 bits, singly and in batches', () => {
    fc.assert(
      fc.property(
        fc.array(anyText, { minLength: 1, maxLength: 8 }),
        fc.constantFrom<Bits>(32, 64, 128),
        (texts, bits) => {
          const batch = simhashMany(texts, { ...PRESET, bits });
          texts.forEach((text, i) => {
            const expected = refText(text, bits);
            expect(simhash(text, { ...PRESET, bits })).toBe(expected);
            const fp = bits === 128 ? (batch[2 * i + 1]! << 64n) | batch[2 * i]! : batch[i]!;
            expect(fp).toBe(expected);
          });
        },
      ),
      { seed: 88, numRuns: 250 },
    );
  });

  it('fingerprints a long repetitive text (window counts above 50 and 255)', () => {
    const text = 'abab '.repeat(2000) + '中国人 '.repeat(300) + 'Ελληνικά '.repeat(60);
    for (const bits of [32, 64, 128] as const) expect(simhash(text, { ...PRESET, bits })).toBe(refText(text, bits));
  });

  const weight = fc.constantFrom(1, 2, 3, 0, -2, 50, 51, 255, 256, 1000, 0.1, 0.3, 2.5, -1.25, 1e-3);
  const name = fc.oneof(fc.constantFrom('', 'a', 'foo', '中文', 'Ελλην', '😀'), fc.string({ maxLength: 6 }));
  const feature: fc.Arbitrary<PyFeature> = fc.oneof(
    name,
    fc.tuple(name, weight).map(([s, w]) => [s, w] as [string, number]),
  );
  const featureList = fc.oneof(
    fc.array(feature, { maxLength: 30 }),
    fc.array(feature, { minLength: 195, maxLength: 450 }), // crosses the 200-entry batch boundary
    fc.array(
      fc.tuple(name, fc.constantFrom(0.1, 0.3, 0.7, 60, 3)).map(([s, w]) => [s, w] as [string, number]),
      { minLength: 150, maxLength: 420 },
    ),
  );

  it('fingerprints random weighted feature lists (carried weights, batches, floats) or throws as Python does', () => {
    fc.assert(
      fc.property(featureList, fc.constantFrom<Bits>(32, 64, 128), (features, bits) => {
        let expected: bigint | undefined;
        try {
          expected = refBuild(features, bits);
        } catch {
          expect(() => simhash(features, { ...PRESET, bits })).toThrow(TypeError);
          return;
        }
        expect(simhash(features, { ...PRESET, bits })).toBe(expected);
        expect(simhashDetailed(features, { ...PRESET, bits }).featureCount).toBe(features.length);
        const pairs: [string, number][] = [];
        for (const f of features) if (typeof f !== 'string') pairs.push(f);
        const map = new Map(pairs);
        if (map.size === pairs.length) expect(simhash(map, { ...PRESET, bits })).toBe(refBuild(pairs, bits));
      }),
      { seed: 888, numRuns: 300 },
    );
  });
});

// ---- options, inputs, errors, memory -----------------------------------------------------------------------------

describe("preset 'python-simhash': options and inputs", () => {
  it('rejects other tokenizers and width, names the value, and accepts a tokenizer function', () => {
    expect(() => simhash('x', { ...PRESET, tokenizer: 'words' })).toThrow(/python-simhash.*"words"/);
    expect(() => simhash('x', { ...PRESET, tokenizer: 'ngrams' })).toThrow(RangeError);
    expect(() => simhash('x', { ...PRESET, width: 4 })).toThrow(TypeError);
    expect(() => simhash('x', { preset: 'python' as never })).toThrow(/"python"/);
    const split = (t: string) => t.split(' ');
    expect(simhash('a b c', { ...PRESET, tokenizer: split })).toBe(refBuild(['a', 'b', 'c'], 64));
    expect(createSimHasher(PRESET).options).toMatchObject({ preset: 'python-simhash', tokenizer: 'ngrams', width: 4 });
  });

  it('takes UTF-8 bytes and normalizes when asked', () => {
    const text = 'Crème brûlée 中国人 😀';
    expect(simhash(new TextEncoder().encode(text), PRESET)).toBe(simhash(text, PRESET));
    expect(simhash(text.normalize('NFD'), { ...PRESET, normalize: 'NFC' })).toBe(
      simhash(text.normalize('NFC'), PRESET),
    );
  });

  it('rejects bad features before WebAssembly and stays usable', () => {
    expect(() => simhash([['a', 2.5], 'b'], PRESET)).toThrow(/bare string.*2\.5/);
    expect(() => simhash(['ok', 'bad\ud800'], PRESET)).toThrow(RangeError);
    expect(() => simhash(new Map([['a', Number.NaN]]), PRESET)).toThrow(RangeError);
    expect(() => simhash([['a', '1' as unknown as number]], PRESET)).toThrow(TypeError);
    expect(() => simhash([42 as unknown as string], PRESET)).toThrow(TypeError);
    expect(simhash(['aaa', 'bbb'], PRESET)).toBe(refBuild(['aaa', 'bbb'], 64));
    // a carried integer weight is fine: 'b' weighs 3 like ('a', 3)
    expect(simhash([['a', 3], 'b'], PRESET)).toBe(
      simhash(
        [
          ['a', 3],
          ['b', 3],
        ],
        PRESET,
      ),
    );
  });

  it('an empty feature list is 0 with no features', () => {
    expect(simhashDetailed([], PRESET)).toEqual({ fingerprint: 0n, featureCount: 0 });
    expect(simhash(new Map(), { ...PRESET, bits: 128 })).toBe(0n);
  });

  it('does not grow memory over repeated calls', () => {
    const docs = Array.from({ length: 50 }, (_, i) => `document ${i} 中国人 ` + 'lorem ipsum '.repeat(i));
    const feats = docs.map((d) => d.split(' ').map((s, j) => [s, (j % 7) + 0.5] as [string, number]));
    const run = () => {
      simhashMany(docs, PRESET);
      simhashMany(feats, { ...PRESET, bits: 128 });
    };
    run();
    const before = wasm().heap.byteLength;
    for (let i = 0; i < 30; i++) run();
    expect(wasm().heap.byteLength).toBe(before);
  });
});
