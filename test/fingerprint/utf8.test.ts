// Bytes input with ill-formed UTF-8: the tokenizers treat each ill-formed sequence as a separator, exactly where a
// WHATWG decoder puts U+FFFD. The expected words come from a plain decoder written from the WHATWG algorithm
// (test/utf8.ts), which is itself checked against Node's TextDecoder (an independent WHATWG implementation).
import { beforeAll, describe, expect, it } from 'vitest';
import { createSimHasher, simhash } from '../../src/index.js';
import { loadReference, type Mode, referenceSimhash, rng } from '../reference.js';
import { decodeUtf8, decodeUtf8ToString } from '../utf8.js';

beforeAll(loadReference);

/** "61 c3 62" or with quoted ASCII: "'ab' c3 'cd'". */
function bytes(spec: string): Uint8Array {
  const out: number[] = [];
  for (const part of spec.match(/'[^']*'|\S+/g)!) {
    if (part.startsWith("'")) out.push(...new TextEncoder().encode(part.slice(1, -1)));
    else out.push(Number.parseInt(part, 16));
  }
  return Uint8Array.from(out);
}

// Letters on both sides, so a decoder that swallows a following character, or accepts an ill-formed sequence as a
// character, changes the words.
const INVALID: Array<[string, string]> = [
  ['lone continuation 80', "'ab' 80 'cd'"],
  ['lone continuation BF', "'ab' bf 'cd'"],
  ['run of continuation bytes', "'ab' 80 81 82 83 84 85 86 87 bf 'cd'"],
  ['overlong NUL C0 80', "'ab' c0 80 'cd'"],
  ['overlong slash C0 AF', "'ab' c0 af 'cd'"],
  ['overlong A: C1 81', "'ab' c1 81 'cd'"],
  ['C1 BF', "'ab' c1 bf 'cd'"],
  ['overlong 3-byte E0 80 80', "'ab' e0 80 80 'cd'"],
  ['overlong U+07FF E0 9F BF', "'ab' e0 9f bf 'cd'"],
  ['overlong 4-byte F0 80 80 80', "'ab' f0 80 80 80 'cd'"],
  ['overlong U+FFFF F0 8F BF BF', "'ab' f0 8f bf bf 'cd'"],
  ['surrogate U+D800 ED A0 80', "'ab' ed a0 80 'cd'"],
  ['surrogate U+DFFF ED BF BF', "'ab' ed bf bf 'cd'"],
  ['CESU-8 surrogate pair', "'ab' ed a0 bd ed b8 80 'cd'"],
  ['above U+10FFFF: F4 90 80 80', "'ab' f4 90 80 80 'cd'"],
  ['F5 lead', "'ab' f5 80 80 80 'cd'"],
  ['F7 BF BF BF', "'ab' f7 bf bf bf 'cd'"],
  ['5-byte form F8', "'ab' f8 88 80 80 80 'cd'"],
  ['6-byte form FC', "'ab' fc 84 80 80 80 80 'cd'"],
  ['FE', "'ab' fe 'cd'"],
  ['FF', "'ab' ff 'cd'"],
  ['2-byte lead at the end', "'ab' c3"],
  ['3-byte lead and one continuation at the end', "'ab' e2 82"],
  ['4-byte lead and two continuations at the end', "'ab' f0 9f 98"],
  ['2-byte lead then a letter', "'ab' c2 'cd'"],
  ['3-byte lead, continuation, then a letter', "'ab' e1 80 'cd'"],
  ['4-byte lead, two continuations, then a letter', "'ab' f1 80 80 'cd'"],
  ['truncated 2-byte then a complete é', "'ab' c3 c3 a9 'cd'"],
  ['truncated 3-byte then a complete 中', "'ab' e4 b8 e4 b8 ad 'cd'"],
  ['truncated 4-byte then a complete 😀', "'ab' f0 9f 98 f0 9f 98 80 'cd'"],
  ['E0 with a valid second byte, truncated', "'ab' e0 a0 'cd'"],
  ['F4 8F BF, truncated', "'ab' f4 8f bf 'cd'"],
  ['F0 with an invalid second byte', "'ab' f0 80 80 'cd'"],
  ['ED then a continuation allowed after E1', "'ab' ed a0 'cd'"],
  ['ill-formed bytes between letters of other scripts', "c3 a9 ff 'x' c3 bc 80 e4 b8 ad fe 'y'"],
  // The example of the Unicode Standard, chapter 3 ("U+FFFD Substitution of Maximal Subparts").
  ['Unicode Standard example', '61 f1 80 80 e1 80 c2 62 80 63 80 bf 64'],
];

const MODES: Array<[Mode, number]> = [
  ['words', 0],
  ['shingles', 2],
  ['ngrams', 2],
  ['ngrams', 5],
  ['whitespace', 0],
];

describe('ill-formed UTF-8 bytes', () => {
  it('the plain decoder replaces maximal subparts (the Unicode Standard example, by hand)', () => {
    // 61 | F1 80 80 | E1 80 | C2 | 62 | 80 | 63 | 80 | BF | 64
    expect(decodeUtf8(bytes('61 f1 80 80 e1 80 c2 62 80 63 80 bf 64'))).toEqual([
      0x61, 0xfffd, 0xfffd, 0xfffd, 0x62, 0xfffd, 0x63, 0xfffd, 0xfffd, 0x64,
    ]);
    expect(decodeUtf8(bytes('e0 80 80'))).toEqual([0xfffd, 0xfffd, 0xfffd]); // E0 needs A0..BF next
    expect(decodeUtf8(bytes('e2 82'))).toEqual([0xfffd]);
    expect(decodeUtf8(bytes('f0 9f 98 80 c3 a9'))).toEqual([0x1f600, 0xe9]);
  });

  it(`all ${INVALID.length} vectors are ill-formed, and the plain decoder agrees with Node's TextDecoder`, () => {
    expect(INVALID.length).toBe(36);
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const whatwg = new TextDecoder('utf-8');
    for (const [name, spec] of INVALID) {
      const b = bytes(spec);
      expect(() => fatal.decode(b), name).toThrow(TypeError);
      expect(decodeUtf8ToString(b), name).toBe(whatwg.decode(b));
    }
  });

  for (const [mode, width] of MODES) {
    it(`${mode}${width ? ` width ${width}` : ''}: every vector gives the reference's features (single calls and one batch)`, () => {
      const options = width ? { tokenizer: mode, width } : { tokenizer: mode };
      for (const bits of [64, 128] as const) {
        const hasher = createSimHasher({ ...options, bits });
        const docs = INVALID.map(([, spec]) => bytes(spec));
        const batch = hasher.hashManyDetailed(docs);
        INVALID.forEach(([name, spec], i) => {
          const expected = referenceSimhash(bytes(spec), mode, width, bits);
          const got = hasher.hashDetailed(bytes(spec));
          expect(got, name).toEqual(expected);
          const fromBatch =
            bits === 128
              ? (batch.fingerprints[2 * i + 1]! << 64n) | batch.fingerprints[2 * i]!
              : batch.fingerprints[i]!;
          expect([fromBatch, batch.featureCounts[i]], name).toEqual([expected.fingerprint, expected.featureCount]);
          // Beyond whitespace tokens (raw bytes), bytes and their WHATWG decoding are the same document.
          if (mode !== 'whitespace')
            expect(hasher.hash(decodeUtf8ToString(bytes(spec))), name).toBe(expected.fingerprint);
        });
      }
    });
  }

  it('the replaced sequences are separators: the words of a few vectors, by hand', () => {
    const words = (spec: string) => simhash(bytes(spec), { tokenizer: 'words' });
    expect(words("'ab' c1 81 'cd'")).toBe(simhash(['ab', 'cd'])); // not "abacd"
    expect(words("'ab' e2 82 'cd'")).toBe(simhash(['ab', 'cd']));
    expect(words("'ab' c3 c3 a9 'cd'")).toBe(simhash(['ab', 'écd']));
    expect(words("'ab' f0 9f 98 f0 9f 98 80 'cd'")).toBe(simhash(['ab', 'cd'])); // 😀 is a symbol: a separator
    expect(words('61 f1 80 80 e1 80 c2 62 80 63 80 bf 64')).toBe(simhash(['a', 'b', 'c', 'd']));
  });

  it('seeded random byte strings (mostly UTF-8-like) give the reference features in every mode', () => {
    const next = rng(0x75746638);
    const pieces = [0x61, 0x41, 0x20, 0x80, 0xbf, 0xc2, 0xc3, 0xa9, 0xe0, 0xa0, 0xe4, 0xb8, 0xad, 0xed, 0xf0, 0x9f];
    const more = [0x98, 0x80, 0xf4, 0x8f, 0x90, 0xc0, 0xc1, 0xf5, 0xff, 0x0a, 0xe1, 0xbc, 0xce, 0xa3, 0x0e, 0x81];
    const alphabet = [...pieces, ...more];
    const docs: Uint8Array[] = [];
    for (let i = 0; i < 400; i++) {
      const n = Math.floor(next() * (i < 350 ? 24 : 200));
      docs.push(Uint8Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]!));
    }
    const whatwg = new TextDecoder('utf-8');
    for (const d of docs) expect(decodeUtf8ToString(d)).toBe(whatwg.decode(d));
    for (const [mode, width] of MODES) {
      const hasher = createSimHasher(width ? { tokenizer: mode, width } : { tokenizer: mode });
      const batch = hasher.hashManyDetailed(docs);
      docs.forEach((d, i) => {
        const expected = referenceSimhash(d, mode, width, 64);
        expect([batch.fingerprints[i], batch.featureCounts[i]], `${mode} ${Array.from(d)}`).toEqual([
          expected.fingerprint,
          expected.featureCount,
        ]);
      });
    }
  });
});
