// FingerprintIndex<Id>: its id type flows to every method and result without a cast (checked by tsc, which runs
// over the tests), and texts go in and are queried with the hashing options the index was built with — compared
// with add()/query() of simhash()/simhashMany() under the same options, the independent way to the same answer.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  FingerprintIndex,
  type FingerprintId,
  type Neighbors,
  type SimHashOptions,
  simhash,
  simhashMany,
} from '../../src/index.js';

const TEXTS = [
  'the quick brown fox jumps over the lazy dog',
  'the quick brown fox jumped over the lazy dog',
  'the quick brown fox jumps over the lazy cat',
  'a completely different sentence about rivers and hills',
  'Pack my box with five dozen liquor jugs',
  '',
  'the quick brown fox jumps over the lazy dog', // an exact copy of the first
];
const IDS = TEXTS.map((_, i) => `doc-${i}`);

describe('FingerprintIndex<Id> types', () => {
  it('gives string ids back as string[] for a FingerprintIndex<string>', () => {
    const index = new FingerprintIndex<string>();
    index.add('a', 1n);
    const hit = index.query(1n);
    expectTypeOf(hit).toEqualTypeOf<Neighbors<string[]>>();
    expectTypeOf(hit.id).toEqualTypeOf<string[]>();
    const first: string = hit.id[0]!; // no cast
    expect(first).toBe('a');
    expectTypeOf(index.queryMany).returns.toEqualTypeOf<Neighbors<string[]>[]>();
    expectTypeOf(index.queryManyAsync).returns.resolves.toEqualTypeOf<Neighbors<string[]>[]>();
    expectTypeOf(index.queryText).returns.toEqualTypeOf<Neighbors<string[]>>();
    expectTypeOf(index.add).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(index.addText).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(index.addMany).parameter(0).toEqualTypeOf<ArrayLike<string>>();
    expectTypeOf(index.addTexts).parameter(0).toEqualTypeOf<ArrayLike<string>>();
    expectTypeOf(index.remove).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(index.has).parameter(0).toEqualTypeOf<string>();
    const wrongKind = (): void => {
      // @ts-expect-error a FingerprintIndex<string> takes string ids only
      index.add(1, 2n);
    };
    expect(wrongKind).toThrow(TypeError); // and at run time, once it holds strings
    index.free();
  });

  it('numbers for FingerprintIndex<number>, either kind by default, and deserialize<Id> as asked', () => {
    const numbers = new FingerprintIndex<number>();
    expectTypeOf(numbers.query(1n).id).toEqualTypeOf<number[]>();
    expectTypeOf(numbers.addMany).parameter(0).toEqualTypeOf<ArrayLike<number>>();
    const either = new FingerprintIndex();
    expectTypeOf(either).toEqualTypeOf<FingerprintIndex<FingerprintId>>();
    expectTypeOf(either.query(1n).id).toEqualTypeOf<FingerprintId[]>();
    numbers.add(7, 3n);
    const back = FingerprintIndex.deserialize<number>(numbers.serialize(), { ids: 'number' });
    expectTypeOf(back).toEqualTypeOf<FingerprintIndex<number>>();
    expectTypeOf<ReturnType<typeof FingerprintIndex.deserialize>>().toEqualTypeOf<FingerprintIndex<FingerprintId>>();
    expect(back.query(3n).id).toEqual([7]);
    for (const index of [numbers, either, back]) index.free();
  });
});

describe('texts into an index', () => {
  const cases: { name: string; options: SimHashOptions }[] = [
    { name: 'defaults', options: {} },
    { name: 'words tokenizer', options: { tokenizer: 'words' } },
    { name: '128-bit n-grams of 3', options: { bits: 128, tokenizer: 'ngrams', width: 3 } },
    { name: 'NFKC, whitespace tokenizer', options: { normalize: 'NFKC', tokenizer: 'whitespace' } },
    { name: 'a JavaScript tokenizer', options: { tokenizer: (t: string) => t.split(/\s+/).filter(Boolean) } },
    { name: 'the simhash-wasm/1 preset', options: { preset: 'simhash-wasm/1' } },
  ];
  for (const { name, options } of cases) {
    it(`addText, addTexts and queryText equal add, addMany and query of simhash (${name})`, () => {
      const bits = (options.bits ?? 64) as 64 | 128;
      const byText = new FingerprintIndex<string>({ maxDistance: 8, simhash: options });
      expect(byText.bits).toBe(bits);
      const batch = new FingerprintIndex<string>({ maxDistance: 8, simhash: options });
      const byHand = new FingerprintIndex<string>({ maxDistance: 8, bits });
      TEXTS.forEach((text, i) => {
        byText.addText(IDS[i]!, text);
        byHand.add(IDS[i]!, simhash(text, options));
      });
      batch.addTexts(IDS, TEXTS);
      const reference = new FingerprintIndex<string>({ maxDistance: 8, bits });
      reference.addMany(IDS, simhashMany(TEXTS, options));
      for (const text of [...TEXTS, 'the quick brown fox', 'rivers and hills']) {
        const fp = simhash(text, options);
        // Every indexed text finds itself at least: the comparisons below are of non-empty answers.
        if (TEXTS.includes(text)) expect(reference.query(fp, 0).id.length).toBeGreaterThan(0);
        for (const k of [undefined, 0, 3]) {
          const wantK = reference.query(fp, k);
          expect(byText.queryText(text, k), `${name}: ${text} k=${k}`).toEqual(wantK);
          expect(batch.queryText(text, k)).toEqual(wantK);
          expect(byHand.query(fp, k)).toEqual(wantK);
        }
      }
      for (const index of [byText, batch, byHand, reference]) index.free();
    });
  }

  it('a text is found under its id at distance 0, and the options decide the fingerprint', () => {
    const words = new FingerprintIndex<number>({ simhash: { tokenizer: 'words' } });
    words.addText(1, TEXTS[0]!);
    expect(words.queryText(TEXTS[0]!, 0)).toEqual({ id: [1], distance: new Uint8Array([0]) });
    // The same text hashed with other options is another fingerprint (here: shingles vs words).
    expect(simhash(TEXTS[0]!)).not.toBe(simhash(TEXTS[0]!, { tokenizer: 'words' }));
    expect(words.query(simhash(TEXTS[0]!, { tokenizer: 'words' }), 0).id).toEqual([1]);
    // The preset is recorded as the spec it names ('default' is SPEC_ID today), as serialize() records it.
    expect(words.simhashOptions).toEqual({ tokenizer: 'words', bits: 64, preset: 'simhash-wasm/2' });
    expect(Object.isFrozen(words.simhashOptions)).toBe(true);
    words.free();
  });

  it('bits and spec follow the simhash options, and a disagreement is a RangeError naming both', () => {
    const wide = new FingerprintIndex({ simhash: { bits: 128 } });
    expect(wide.bits).toBe(128);
    wide.free();
    expect(() => new FingerprintIndex({ bits: 64, simhash: { bits: 128 } })).toThrow(
      "simhash.bits (128) must equal the index's bits (64)",
    );
    expect(() => new FingerprintIndex({ bits: 128, simhash: { bits: 64 } })).toThrow(RangeError);
    expect(() => new FingerprintIndex({ simhash: { bits: 32 } })).toThrow(/simhash.bits must be 64 or 128, got 32/);
    expect(() => new FingerprintIndex({ bits: 64, simhash: { bits: '64' as never } })).toThrow(
      new TypeError('simhash.bits must be 64 or 128, got "64"'),
    );
    const old = new FingerprintIndex({ simhash: { preset: 'simhash-wasm/1' } });
    expect(old.spec).toBe('simhash-wasm/1');
    old.free();
    const bySpec = new FingerprintIndex<number>({ spec: 'simhash-wasm/1' });
    expect(bySpec.simhashOptions.preset).toBe('simhash-wasm/1');
    bySpec.addText(4, TEXTS[3]!);
    expect(bySpec.query(simhash(TEXTS[3]!, { preset: 'simhash-wasm/1' }), 0).id).toEqual([4]);
    bySpec.free();
    expect(() => new FingerprintIndex({ spec: 'simhash-wasm/1', simhash: { preset: 'default' } })).toThrow(
      `simhash.preset "default" makes "simhash-wasm/2" fingerprints, but spec is "simhash-wasm/1"`,
    );
    expect(() => new FingerprintIndex({ simhash: { preset: 'java' } })).toThrow(/spec presets.*got "java"/);
    expect(() => new FingerprintIndex({ simhash: { tokenizer: 'nope' as never } })).toThrow(/tokenizer .* got "nope"/);
    expect(() => new FingerprintIndex({ simhash: { colour: 1 } as never })).toThrow(/unknown option "colour"/);
    expect(() => new FingerprintIndex({ simhash: 5 as never })).toThrow(/simhash must be an object .* got 5/);
  });

  it('serialize/deserialize keeps the texts queryable; deserialize takes the hashing options and checks them', () => {
    const options: SimHashOptions = { tokenizer: 'words', bits: 128 };
    const index = new FingerprintIndex<string>({ maxDistance: 6, simhash: options });
    index.addTexts(IDS, TEXTS);
    const bytes = index.serialize();
    const back = FingerprintIndex.deserialize<string>(bytes, { simhash: options, ids: 'string' });
    expect(back.simhashOptions).toEqual(index.simhashOptions);
    for (const text of TEXTS) expect(back.queryText(text)).toEqual(index.queryText(text));
    back.addText('late', 'a late arrival of words');
    expect(back.query(simhash('a late arrival of words', options), 0).id).toEqual(['late']);
    // Without them, the loaded index hashes with the defaults of its spec at its bits.
    const plain = FingerprintIndex.deserialize(bytes);
    expect(plain.simhashOptions).toEqual({ bits: 128, preset: 'simhash-wasm/2' });
    expect(() => FingerprintIndex.deserialize(bytes, { simhash: { bits: 64 } })).toThrow(
      "simhash.bits (64) must equal the index's bits (128)",
    );
    expect(() => FingerprintIndex.deserialize(bytes, { simhash: { preset: 'simhash-wasm/1' } })).toThrow(
      /makes "simhash-wasm\/1" fingerprints, but spec is "simhash-wasm\/2"/,
    );
    expect(() => FingerprintIndex.deserialize(bytes, { ids: 'number' })).toThrow(
      'the index holds string ids, but number ones were expected',
    );
    expect(() => FingerprintIndex.deserialize(bytes, { ids: 'uuid' as never })).toThrow(RangeError);
    // An empty index holds either kind.
    const empty = new FingerprintIndex();
    expect(FingerprintIndex.deserialize(empty.serialize(), { ids: 'string' }).size).toBe(0);
    for (const x of [index, back, plain, empty]) x.free();
  });

  it('bad input throws the library error naming the value, changes nothing, and the index stays usable', () => {
    const index = new FingerprintIndex<number>();
    index.addText(1, TEXTS[0]!);
    const before = index.queryText(TEXTS[0]!);
    expect(() => index.addText(2, 5 as never)).toThrow('text must be a string or a Uint8Array, got 5');
    expect(() => index.addText('x' as never, 'text')).toThrow(/id is a string but this index holds number ids/);
    expect(() => index.addText(-1, 'text')).toThrow(RangeError);
    expect(() => index.addText(1, 'again')).toThrow('id 1 is already in the index');
    expect(() => index.addTexts([2, 3], ['one'])).toThrow(
      'ids and texts must have the same length, got 2 ids and 1 texts',
    );
    expect(() => index.addTexts([2, 3], ['one', null as never])).toThrow(
      'texts[1] must be a string or a Uint8Array, got null',
    );
    expect(() => index.addTexts([2, 1], ['one', 'two'])).toThrow('ids[1] 1 is already in the index');
    expect(() => index.addTexts([2, 2], ['one', 'two'])).toThrow(/twice/);
    expect(() => index.addTexts([2, 2.5], ['one', 'two'])).toThrow(/ids\[1\] must be a u32 integer/);
    expect(() => index.addTexts(null as never, [])).toThrow(TypeError);
    expect(() => index.addTexts([2], 'one' as never)).toThrow('texts must be an array, got "one"');
    expect(() => index.queryText(7 as never)).toThrow('text must be a string or a Uint8Array, got 7');
    expect(() => index.queryText('text', 9)).toThrow(
      /k must be an integer from 0 to the index's maxDistance \(3\), got 9/,
    );
    expect(index.size).toBe(1);
    expect(index.queryText(TEXTS[0]!)).toEqual(before);
    index.addTexts([2, 3], [TEXTS[1]!, new TextEncoder().encode(TEXTS[2]!)]);
    expect(index.size).toBe(3);
    expect(index.query(simhash(TEXTS[2]!), 0).id).toEqual([3]);
    index.addTexts([], []);
    expect(index.size).toBe(3);
    index.free();
    expect(() => index.addText(9, 'x')).toThrow(/used after free/);
    expect(() => index.queryText('x')).toThrow(/used after free/);
  });
});
