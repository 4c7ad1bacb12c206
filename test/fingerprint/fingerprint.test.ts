import { beforeAll, describe, expect, it } from 'vitest';
import {
  createSimHasher,
  featureHash,
  segmenterWords,
  simhash,
  simhashDetailed,
  simhashMany,
  simhashOfHashes,
  type Bits,
} from '../../src/index.js';
import {
  loadReference,
  randomDocument,
  referenceFeatureHash,
  referenceReduce,
  referenceSimhash,
  referenceSimhashFeatures,
  rng,
  type Mode,
  type RefSpec,
} from '../reference.js';

beforeAll(loadReference);

const WIDTHS: Bits[] = [32, 64, 128];
const MODES: Array<[Mode, number]> = [
  ['whitespace', 0],
  ['words', 0],
  ['shingles', 3],
  ['shingles', 1],
  ['shingles', 5],
  ['ngrams', 4],
  ['ngrams', 1],
  ['ngrams', 7],
];

/** The default spec's versions: the preset that runs each, and the reference's number for it. */
const SPECS = [
  { preset: 'default', ref: 2 },
  { preset: 'simhash-wasm/1', ref: 1 },
] as const satisfies ReadonlyArray<{ preset: string; ref: RefSpec }>;

function options(mode: Mode, width: number, bits: Bits, preset: (typeof SPECS)[number]['preset'] = 'default') {
  const tokenizer = mode === 'shingles' || mode === 'ngrams' ? { tokenizer: mode, width } : { tokenizer: mode };
  return { ...tokenizer, bits, preset };
}

describe.each(SPECS)('feature hash, preset $preset', ({ preset, ref }) => {
  it("is the spec's hash (XXH3-64 from hash-wasm past 16 bytes, or always in spec 1) of the UTF-8 bytes", () => {
    const next = rng(1);
    for (let len = 0; len < 600; len += len < 80 ? 1 : 37) {
      const bytes = new Uint8Array(len).map(() => Math.floor(next() * 256));
      for (const bits of [64, 128] as const)
        expect(featureHash(bytes, bits, preset)).toBe(referenceFeatureHash(bytes, bits, ref));
      expect(featureHash(bytes, 32, preset)).toBe(referenceFeatureHash(bytes, 64, ref) & 0xffffffffn);
    }
    expect(featureHash('café', 64, preset)).toBe(referenceFeatureHash(new TextEncoder().encode('café'), 64, ref));
  });
});

describe('feature hash arguments', () => {
  it("takes only the default spec's presets", () => {
    expect(featureHash('a')).toBe(featureHash('a', 64, 'simhash-wasm/2'));
    expect(() => featureHash('a', 64, 'java' as never)).toThrow(RangeError);
    expect(() => featureHash('a', 64, 'java' as never)).toThrow(/got "java"/);
    expect(() => featureHash('a', 64, 'simhash-wasm/3' as never)).toThrow(RangeError);
  });
});

describe.each(SPECS)('text fingerprints match the plain TypeScript reference, preset $preset', ({ preset, ref }) => {
  for (const bits of WIDTHS) {
    for (const [mode, width] of MODES) {
      it(`${mode}${width ? ' width ' + width : ''} at ${bits} bits on random multilingual documents`, () => {
        const next = rng(bits * 100 + width * 7 + mode.length);
        const hasher = createSimHasher(options(mode, width, bits, preset));
        const docs: string[] = [];
        for (let i = 0; i < 60; i++) docs.push(randomDocument(next, i < 50 ? 30 : 400));
        const batch = hasher.hashManyDetailed(docs);
        const words = bits === 128 ? 2 : 1;
        docs.forEach((doc, i) => {
          const expected = referenceSimhash(doc, mode, width, bits, ref);
          const single = hasher.hashDetailed(doc);
          expect(single.fingerprint, JSON.stringify(doc)).toBe(expected.fingerprint);
          expect(single.featureCount).toBe(expected.featureCount);
          const fromBatch =
            words === 2 ? (batch.fingerprints[2 * i + 1]! << 64n) | batch.fingerprints[2 * i]! : batch.fingerprints[i]!;
          expect(fromBatch).toBe(expected.fingerprint);
          expect(batch.featureCounts[i]).toBe(expected.featureCount);
          // UTF-8 bytes give the same fingerprint as the string.
          expect(hasher.hash(new TextEncoder().encode(doc))).toBe(expected.fingerprint);
        });
      });
    }
  }

  it('handles tokens that cross 64-byte block boundaries and documents of every length 0..200', () => {
    const next = rng(99);
    for (const [mode, width] of MODES) {
      for (let len = 0; len <= 200; len++) {
        let s = '';
        while (s.length < len)
          s += next() < 0.2 ? ' ' : next() < 0.05 ? 'é' : String.fromCharCode(97 + Math.floor(next() * 26));
        s = s.slice(0, len);
        expect(simhash(s, options(mode, width, 64, preset)), `${mode} ${JSON.stringify(s)}`).toBe(
          referenceSimhash(s, mode, width, 64, ref).fingerprint,
        );
      }
    }
  });
});

describe.each(SPECS)('n-grams of ASCII text (64-byte blocks folded at once), preset $preset', ({ preset, ref }) => {
  // The kernel normalizes pure-ASCII blocks a block at a time and takes fixed windows when the whole normalized
  // text is ASCII; these documents reach those paths (long ASCII runs, words across blocks and longer than 16
  // bytes, runs of separators), and some end in a non-ASCII tail, which takes the code-point path after them.
  const SEPS = [' ', '  ', '\t', '\n', ', ', '. ', ' -- ', '(', ')', '/', '\r\n', '!!! '];
  // The Kelvin sign folds to an ASCII 'k': a code-point-path text whose normalized form is still all ASCII.
  const TAILS = ['é', ' Ünïcödé', ' 日本語', ' —', ' \u212A'];
  function asciiDocument(next: () => number, maxBytes: number, tail: boolean): string {
    let s = next() < 0.3 ? SEPS[Math.floor(next() * SEPS.length)]! : '';
    const target = Math.floor(next() * maxBytes);
    while (s.length < target) {
      const len = next() < 0.1 ? 17 + Math.floor(next() * 50) : 1 + Math.floor(next() * 12);
      for (let i = 0; i < len; i++) {
        const r = next();
        s += String.fromCharCode(
          r < 0.1 ? 48 + Math.floor(next() * 10) : (r < 0.3 ? 65 : 97) + Math.floor(next() * 26),
        );
      }
      s += SEPS[Math.floor(next() * SEPS.length)]!;
    }
    return tail ? s + TAILS[Math.floor(next() * TAILS.length)]! + s.slice(0, 100) : s;
  }
  for (const bits of WIDTHS) {
    it(`widths 1-5, 8 and 9 at ${bits} bits, equal to the reference`, () => {
      const next = rng(bits + 500);
      for (let t = 0; t < 36; t++) {
        const doc = asciiDocument(next, t < 6 ? 12 : 600, t % 3 === 2);
        for (const width of [1, 2, 3, 4, 5, 8, 9]) {
          const options = { tokenizer: 'ngrams' as const, width, bits, preset };
          const expected = referenceSimhash(doc, 'ngrams', width, bits, ref);
          const got = simhashDetailed(doc, options);
          expect(got.fingerprint, `width ${width} ${JSON.stringify(doc)}`).toBe(expected.fingerprint);
          expect(got.featureCount).toBe(expected.featureCount);
        }
      }
    });
  }
});

describe('feature lists and weights', () => {
  it.each(SPECS)(
    'a list of features equals the reference, weighted or not, at every width, preset $preset',
    ({ preset, ref }) => {
      const next = rng(7);
      for (const bits of WIDTHS) {
        for (let t = 0; t < 40; t++) {
          const n = Math.floor(next() * 300);
          const feats: Array<string | [string, number]> = [];
          for (let i = 0; i < n; i++) {
            const f = randomDocument(next, 2);
            if (t % 2 === 0) feats.push(f);
            else feats.push([f, t % 4 === 1 ? Math.floor(next() * 10) - 3 : (next() - 0.3) * 1e3]);
          }
          expect(simhash(feats, { bits, preset }), `trial ${t}`).toBe(referenceSimhashFeatures(feats, bits, ref));
        }
      }
    },
  );

  it('a Map of weights equals the same pairs, and counts are weights', () => {
    const map = new Map([
      ['alpha', 2.5],
      ['beta', -1],
      ['gamma', 0.25],
    ]);
    expect(simhash(map)).toBe(simhash([...map]));
    expect(simhash(['a', 'a', 'b'])).toBe(
      simhash([
        ['a', 2],
        ['b', 1],
      ]),
    );
    expect(simhash(['a', 'b'], { bits: 128 })).toBe(
      simhash(
        new Map([
          ['a', 1],
          ['b', 1],
        ]),
        { bits: 128 },
      ),
    );
  });

  it('words tokenizer equals hashing its words as features', () => {
    expect(simhash('Hello, WORLD! Straße', { tokenizer: 'words' })).toBe(simhash(['hello', 'world', 'straße']));
    expect(simhash('中文', { tokenizer: 'words' })).toBe(simhash(['中', '文']));
  });

  it('precomputed hashes reduce exactly like the reference (unit and weighted, 64 and 128 bits)', () => {
    const next = rng(11);
    for (const bits of [64, 128] as const) {
      for (const n of [0, 1, 2, 15, 16, 17, 255, 256, 257, 511, 512, 513, 1000, 5000]) {
        const words = bits === 128 ? 2 : 1;
        const hashes = new BigUint64Array(n * words).map(() =>
          BigInt.asUintN(64, (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32))),
        );
        const asBig = Array.from({ length: n }, (_, i) =>
          words === 2 ? (hashes[2 * i + 1]! << 64n) | hashes[2 * i]! : hashes[i]!,
        );
        expect(simhashOfHashes(hashes, { bits })).toBe(referenceReduce(asBig, null, bits));
        const weights = new Float64Array(n).map(() => (next() - 0.5) * 100);
        expect(simhashOfHashes(hashes, { bits, weights })).toBe(referenceReduce(asBig, Array.from(weights), bits));
      }
    }
  });
});

describe('boundaries', () => {
  it('an empty document has no features and fingerprint 0, distinguishable by featureCount', () => {
    for (const bits of WIDTHS) {
      for (const input of ['', '   \n\t ', [], new Map(), new Uint8Array(0), '!!! ---']) {
        const mode = typeof input === 'string' && input.startsWith('!') ? 'words' : 'shingles';
        const r = simhashDetailed(input as string, { bits, tokenizer: mode });
        expect(r).toEqual({ fingerprint: 0n, featureCount: 0 });
      }
    }
    expect(simhashDetailed('one').featureCount).toBe(1);
  });

  it('one feature: the fingerprint is that feature hash', () => {
    expect(simhash(['solo'])).toBe(featureHash('solo'));
    expect(simhash(['solo'], { bits: 128 })).toBe(featureHash('solo', 128));
    expect(simhash(['solo'], { bits: 32 })).toBe(featureHash('solo', 32));
    expect(simhash('solo', { tokenizer: 'words' })).toBe(featureHash('solo'));
  });

  it('32 bits is the low half of 64 bits', () => {
    const text = 'the low half of the sixty four bit fingerprint';
    expect(simhash(text, { bits: 32 })).toBe(simhash(text) & 0xffffffffn);
  });

  it('lone surrogates and astral characters', () => {
    expect(simhash('a\ud800b', { tokenizer: 'words' })).toBe(simhash(['a', 'b']));
    expect(simhash('😀x', { tokenizer: 'whitespace' })).toBe(simhash(['😀x']));
    expect(simhash('𝒳𝒴 z', { tokenizer: 'words' })).toBe(simhash(['𝒳𝒴', 'z']));
    expect(simhash('\udc00', { tokenizer: 'whitespace' })).toBe(simhash(['\ufffd']));
  });

  it('a document larger than the initial WebAssembly memory (100 MB)', () => {
    const unit = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ';
    const big = unit.repeat(Math.ceil(100e6 / unit.length));
    for (const tokenizer of ['whitespace', 'words', 'shingles'] as const) {
      const r = simhashDetailed(big, { tokenizer });
      // The text repeats one sentence, so it has the features of a few copies, with a large count.
      expect(r.featureCount).toBeGreaterThan(10e6);
      expect(r.fingerprint).toBe(simhash(unit.repeat(3), { tokenizer }));
    }
  });

  it('10^6 short documents in one batch; memory does not grow over repeated batches', () => {
    const docs = Array.from({ length: 1_000_000 }, (_, i) => `doc ${i} says hello ${i % 977}`);
    const hasher = createSimHasher({ tokenizer: 'words' });
    const first = hasher.hashMany(docs);
    expect(first.length).toBe(1_000_000);
    expect(first[123_456]).toBe(hasher.hash(docs[123_456]!));
    const heapAfterFirst = memoryBytes();
    for (let i = 0; i < 3; i++) hasher.hashMany(docs);
    expect(memoryBytes()).toBe(heapAfterFirst);
  });
});

import { wasm } from '../../src/runtime/wasm.js';
function memoryBytes(): number {
  return wasm().heap.byteLength;
}

describe('bad input', () => {
  it('rejects bad options with TypeError/RangeError naming the value', () => {
    expect(() => simhash('x', { bits: 48 as Bits })).toThrow(RangeError);
    expect(() => simhash('x', { bits: 48 as Bits })).toThrow(/48/);
    expect(() => simhash('x', { bits: '64' as unknown as Bits })).toThrow(TypeError);
    expect(() => simhash('x', { preset: 'perl' as 'java' })).toThrow(/"perl"/);
    expect(() => simhash('x', { tokenizer: 'letters' as 'words' })).toThrow(/"letters"/);
    expect(() => simhash('x', { tokenizer: 'shingles', width: 0 })).toThrow(RangeError);
    expect(() => simhash('x', { tokenizer: 'ngrams', width: 2.5 })).toThrow(/2.5/);
    expect(() => simhash('x', { tokenizer: 'words', width: 3 })).toThrow(TypeError);
    expect(() => simhash('x', { bitz: 64 } as never)).toThrow(/bitz/);
    expect(() => simhash('x', { normalize: 'NFX' as 'NFC' })).toThrow(/NFX/);
    expect(() => simhash('x', { preset: 'java', tokenizer: 'words' })).toThrow(RangeError);
  });

  it('rejects bad inputs and weights before anything reaches WebAssembly; the library keeps working', () => {
    expect(() => simhash(42 as unknown as string)).toThrow(TypeError);
    expect(() => simhash(42 as unknown as string)).toThrow(/42/);
    expect(() => simhash([['a', NaN]])).toThrow(RangeError);
    expect(() => simhash([['a', Infinity]])).toThrow(/Infinity/);
    expect(() => simhash([['a', '1' as unknown as number]])).toThrow(TypeError);
    expect(() => simhash([{ a: 1 } as unknown as string])).toThrow(TypeError);
    expect(() => simhash(new Map([[1 as unknown as string, 1]]))).toThrow(TypeError);
    expect(() => simhashMany('abc' as unknown as string[])).toThrow(TypeError);
    expect(() => simhashMany(['ok', null as unknown as string])).toThrow(/document 1/);
    expect(() => simhashOfHashes(new BigUint64Array(3), { bits: 128 })).toThrow(RangeError);
    expect(() => simhashOfHashes(new BigUint64Array(2), { weights: new Float64Array([1, NaN]) })).toThrow(RangeError);
    expect(() => createSimHasher({ tokenizer: () => 5 as never }).hash('x')).toThrow(TypeError);
    expect(simhash('still works', { tokenizer: 'words' })).toBe(simhash(['still', 'works']));
  });
});

describe('one text per call', () => {
  it('gives what a batch of one gives, for strings and bytes, every preset, tokenizer, width and normalization', () => {
    // hash() of one text skips the batch's arrays (fingerprint.ts, hashText); the batch is the path it must equal,
    // and under the default spec's presets both must equal the plain reference (java and python-simhash are held
    // to their own vectors elsewhere).
    const next = rng(2100);
    const docs = [
      '',
      'ﬁle Ｆｕｌｌ Ǆ',
      randomDocument(next, 300),
      randomDocument(next, 3000),
      'x'.repeat(64),
      '\ud800 lone',
    ];
    const plans = [
      ...(['whitespace', 'words', 'shingles', 'ngrams'] as const).flatMap((tokenizer) =>
        WIDTHS.map((bits) => ({ tokenizer, bits })),
      ),
      { tokenizer: 'words' as const, normalize: 'NFKC' as const },
      { preset: 'simhash-wasm/1' as const, bits: 128 as const },
      { preset: 'java' as const },
      { preset: 'python-simhash' as const },
    ];
    for (const options of plans) {
      const hasher = createSimHasher(options);
      for (const doc of docs) {
        for (const input of [doc, new TextEncoder().encode(doc)]) {
          const batch = hasher.hashManyDetailed([input]);
          const one = hasher.hashDetailed(input);
          const what = `${JSON.stringify(options)} ${typeof input} ${JSON.stringify(doc.slice(0, 20))}`;
          const words = options.bits === 128 ? 2 : 1;
          const expected =
            words === 2 ? (batch.fingerprints[1]! << 64n) | batch.fingerprints[0]! : batch.fingerprints[0]!;
          expect(one.fingerprint, what).toBe(expected);
          expect(one.featureCount, what).toBe(batch.featureCounts[0]);
          expect(simhash(input, options), what).toBe(expected);
          if (!('preset' in options) || options.preset === 'simhash-wasm/1') {
            const tokenizer: Mode = ('tokenizer' in options ? options.tokenizer : undefined) ?? 'shingles';
            const width = tokenizer === 'shingles' ? 3 : tokenizer === 'ngrams' ? 4 : 0;
            const text = 'normalize' in options ? doc.normalize(options.normalize) : doc;
            const spec = 'preset' in options ? 1 : 2;
            const ref = referenceSimhash(text, tokenizer, width, options.bits ?? 64, spec);
            expect(one, what).toEqual(ref);
          }
        }
      }
    }
  });

  it('names the input in errors and keeps working; no options stay the defaults between calls', () => {
    const bytes = new Uint8Array(8);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    expect(() => simhash(bytes)).toThrow(TypeError);
    expect(() => simhash(bytes)).toThrow(/^input is a view of a detached ArrayBuffer/);
    expect(() => createSimHasher({ tokenizer: 'words' }).hash(bytes)).toThrow(/^input /);
    const text = 'the same text three times';
    const before = simhash(text);
    expect(simhash(text, { bits: 128, tokenizer: 'words' })).not.toBe(before);
    expect(simhash(text)).toBe(before);
    expect(simhashDetailed(text)).toEqual(createSimHasher().hashDetailed(text));
    expect(simhash(text)).toBe(simhashMany([text])[0]);
  });
});

describe('JavaScript tokenizers', () => {
  it('a tokenizer function supplies features (strings or weighted pairs)', () => {
    const byComma = (t: string) => t.split(',');
    expect(simhash('a,b,c', { tokenizer: byComma })).toBe(simhash(['a', 'b', 'c']));
    expect(simhash('a', { tokenizer: () => [['a', 3]] as Array<[string, number]> })).toBe(simhash([['a', 3]]));
  });

  it('Intl.Segmenter words for text without spaces', () => {
    const r = simhashDetailed('我们今天去公园散步。', { tokenizer: 'segmenter', locale: 'zh' });
    expect(r.featureCount).toBeGreaterThan(2);
    const words = [...new Intl.Segmenter('zh', { granularity: 'word' }).segment('我们今天去公园散步。')]
      .filter((s) => s.isWordLike)
      .map((s) => s.segment);
    expect(r.fingerprint).toBe(simhash(words));
  });

  it('normalize: NFKC makes compatibility forms equal', () => {
    expect(simhash('ﬁle Ｆｕｌｌ', { tokenizer: 'words', normalize: 'NFKC' })).toBe(
      simhash('file full', { tokenizer: 'words' }),
    );
    expect(simhash('ﬁle', { tokenizer: 'words' })).not.toBe(simhash('file', { tokenizer: 'words' }));
  });
});

describe('reducer overflow path', () => {
  it('draining the bit-sliced planes into integer counters mid-document gives the same fingerprints', () => {
    const kernels = wasm().kernels as unknown as { setDrainInterval(n: number): void };
    const next = rng(5);
    const docs = Array.from({ length: 30 }, () => randomDocument(next, 3000));
    for (const bits of WIDTHS) {
      for (const preset of ['default', 'java'] as const) {
        const h = createSimHasher({ bits, preset, tokenizer: 'whitespace' });
        const normal = h.hashMany(docs);
        kernels.setDrainInterval(1);
        try {
          expect(h.hashMany(docs)).toEqual(normal);
        } finally {
          kernels.setDrainInterval(0);
        }
      }
    }
    expect(simhash(docs[0]!, { tokenizer: 'whitespace' })).toBe(
      referenceSimhash(docs[0]!, 'whitespace', 0, 64).fingerprint,
    );
  });
});

describe('segmenter on long text', () => {
  it('segments in pieces (V8 is quadratic on long strings) with the same words as one piece', () => {
    const parts = [
      "Don't split 3.14 or e.g. words; ",
      '我们今天去公园散步。',
      'ภาษาไทยง่ายนิดเดียว ',
      '日本語の文章です、',
      '\n',
    ];
    let text = '';
    const next = rng(8);
    while (text.length < 6000) text += parts[Math.floor(next() * parts.length)]!;
    const whole = [...new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text)]
      .filter((s) => s.isWordLike)
      .map((s) => s.segment.toLowerCase());
    expect([...segmenterWords(text)]).toEqual(whole);
  });
});

describe('weighted reduction modes', () => {
  it('integer weights, fractional weights after integer ones, and integer sums past 2^31 all equal the reference', () => {
    const next = rng(21);
    for (const bits of [64, 128] as const) {
      for (const n of [1, 255, 256, 257, 700, 2000]) {
        const words = bits === 128 ? 2 : 1;
        const hashes = new BigUint64Array(n * words).map(() =>
          BigInt.asUintN(64, (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32))),
        );
        const asBig = Array.from({ length: n }, (_, i) =>
          words === 2 ? (hashes[2 * i + 1]! << 64n) | hashes[2 * i]! : hashes[i]!,
        );
        const cases: Float64Array[] = [
          new Float64Array(n).map(() => Math.floor(next() * 21) - 10),
          new Float64Array(n).map((_, i) => (i < n / 2 ? Math.floor(next() * 9) : next() * 5 - 2.5)),
          new Float64Array(n).map((_, i) => (i === n - 1 ? 0.5 : 3)),
          new Float64Array(n).map(() => Math.floor(next() * 2 ** 26) * (next() < 0.5 ? -1 : 1)),
          new Float64Array(n).map(() => 2 ** 40 + Math.floor(next() * 100)),
        ];
        for (const weights of cases) {
          expect(simhashOfHashes(hashes, { bits, weights })).toBe(referenceReduce(asBig, Array.from(weights), bits));
        }
      }
    }
  });

  it('ties: java preset feature lists with weights that cancel set the bit', () => {
    expect(
      simhash(
        [
          ['a', 2],
          ['a', -2],
        ],
        { preset: 'java' },
      ),
    ).toBe((1n << 64n) - 1n);
    expect(
      simhash(
        [
          ['a', 0.5],
          ['a', -0.5],
        ],
        { preset: 'java', bits: 32 },
      ),
    ).toBe(0xffffffffn);
  });
});
