// The compiled tokenizer's character classes and case folding, code point by code point, against the Unicode
// Character Database (Debian's unicode-data 15.0 files in test/vectors/ucd/, parsed by test/ucd.ts). Each code point is its
// own document, so one wrong code point is one reported failure, never a changed fingerprint over everything.
import { beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { createSimHasher } from '../../src/index.js';
import { loadReference, referenceFeatureHash, referenceReduce, wordList } from '../reference.js';
import {
  CODE_POINTS,
  type CharClass,
  loadUcd,
  SEPARATOR,
  STANDALONE,
  specClass,
  specFold,
  type Ucd,
  WORD,
} from '../ucd.js';
import { NEWER_THAN_UCD, type NewerRange } from './unicode-newer.js';

const TABLES_VERSION = /UNICODE_VERSION = '([\d.]+)'/.exec(
  fs.readFileSync(new URL('../../assembly/unicode-data.ts', import.meta.url), 'utf8'),
)![1]!;
const CLASS_NAMES = ['separator', 'word', 'standalone'];
const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;
const utf8 = new TextEncoder();

let ucd: Ucd;
/** Code points the UCD used is too old to judge, with the class the tables must give them. */
let newer: Map<number, CharClass>;
let newerRanges: readonly NewerRange[];

beforeAll(async () => {
  await loadReference();
  ucd = loadUcd();
  const sameVersion = ucd.version === TABLES_VERSION || ucd.version.startsWith(`${TABLES_VERSION}.`);
  const key = `${ucd.version} -> ${TABLES_VERSION}`;
  if (!sameVersion && !NEWER_THAN_UCD[key]) {
    throw new Error(
      `the tables are Unicode ${TABLES_VERSION} but the UCD used is ${ucd.version}, and ` +
        `test/fingerprint/unicode-newer.ts has no list for "${key}": point SIMHASH_UCD at the UCD of the tables' version or add the list`,
    );
  }
  newerRanges = sameVersion ? [] : NEWER_THAN_UCD[key]!;
  newer = new Map();
  for (const [first, last, cls] of newerRanges) for (let cp = first; cp <= last; cp++) newer.set(cp, cls);
});

/** Fails listing the first 20 mismatches (and how many there are) when there are any. */
function expectNone(mismatches: string[], what: string): void {
  expect(mismatches.slice(0, 20), `${mismatches.length} ${what}; the first ${Math.min(20, mismatches.length)}`).toEqual(
    [],
  );
}

/** Runs `docOf(cp)` for every code point but the surrogates, a plane at a time, through one tokenizer. */
function eachPlane(
  options: Parameters<typeof createSimHasher>[0],
  docOf: (c: string) => string,
  check: (cp: number, fingerprint: bigint, featureCount: number) => void,
): number {
  const hasher = createSimHasher(options);
  let checked = 0;
  for (let plane = 0; plane < CODE_POINTS; plane += 0x10000) {
    const cps: number[] = [];
    for (let cp = plane; cp < plane + 0x10000; cp++) if (!isSurrogate(cp)) cps.push(cp);
    const { fingerprints, featureCounts } = hasher.hashManyDetailed(cps.map((cp) => docOf(String.fromCodePoint(cp))));
    cps.forEach((cp, i) => check(cp, fingerprints[i]!, featureCounts[i]!));
    checked += cps.length;
  }
  return checked;
}

const hashOf = (text: string) => referenceFeatureHash(utf8.encode(text), 64);

describe(`Unicode tables (Unicode ${TABLES_VERSION}) against the Unicode Character Database`, () => {
  it('the UCD is parsed consistently: categories agree with Alphabetic, folds with Changes_When_Casemapped', () => {
    // Alphabetic = L + Nl + Other_Alphabetic; the only Other_Alphabetic characters outside L, N and M are the
    // circled and squared Latin letters (So).
    const alphabeticSymbols: string[] = [];
    for (const cp of ucd.derived('Alphabetic')) {
      if (specClass(ucd, cp) === SEPARATOR) alphabeticSymbols.push(`${hex(cp)} ${ucd.category(cp)}`);
      if (ucd.category(cp).startsWith('L') && specClass(ucd, cp) === SEPARATOR) throw new Error(hex(cp));
    }
    const circled = (cp: number) =>
      (cp >= 0x24b6 && cp <= 0x24e9) ||
      (cp >= 0x1f130 && cp <= 0x1f149) ||
      (cp >= 0x1f150 && cp <= 0x1f169) ||
      (cp >= 0x1f170 && cp <= 0x1f189);
    expect(alphabeticSymbols.filter((s) => !circled(Number.parseInt(s.slice(2), 16)))).toEqual([]);
    expect(alphabeticSymbols.length).toBe(52 + 26 * 3);
    const casemapped = ucd.derived('Changes_When_Casemapped');
    const unexplained: string[] = [];
    for (let cp = 0; cp < CODE_POINTS; cp++) {
      if (specFold(ucd, cp) !== cp && !casemapped.has(cp)) unexplained.push(hex(cp));
    }
    expect(unexplained).toEqual([]);
    // Spot checks that a wrong column or a missed "<..., First>" range would break.
    expect([ucd.category(0x41), ucd.category(0x4e00), ucd.category(0x9fa5), ucd.category(0xac01)]).toEqual([
      'Lu',
      'Lo',
      'Lo',
      'Lo',
    ]);
    expect([ucd.script(0x0e01), ucd.script(0x0e81), ucd.script(0x1780), ucd.script(0x1000)]).toEqual([
      'Thai',
      'Lao',
      'Khmer',
      'Myanmar',
    ]);
    expect([specFold(ucd, 0x41), specFold(ucd, 0x130), specFold(ucd, 0x3a3), specFold(ucd, 0x212a)]).toEqual([
      0x61, 0x69, 0x3c3, 0x6b,
    ]);
  });

  it("the spec's folding equals CaseFolding.txt's simple folding except dotted/dotless i and Cherokee", () => {
    // lowercase(uppercase(c)) differs from Unicode case folding in exactly two places: U+0130/U+0131 (which
    // CaseFolding.txt leaves to its Turkic 'T' entries) and Cherokee, which CaseFolding folds to upper case for
    // stability while lowercase(uppercase(c)) gives lower case.
    const differ: number[] = [];
    for (let cp = 0; cp < CODE_POINTS; cp++) {
      if (specClass(ucd, cp) !== SEPARATOR && specFold(ucd, cp) !== ucd.simpleCaseFold(cp)) differ.push(cp);
    }
    const cherokee = (cp: number) => (cp >= 0x13a0 && cp <= 0x13fd) || (cp >= 0xab70 && cp <= 0xabbf);
    expect(differ.filter((cp) => !cherokee(cp)).map(hex)).toEqual(['U+0130', 'U+0131']);
    expect(differ.filter(cherokee).length).toBe(86 + 6 + 80);
  });

  it('every code point is classified and folded as the spec says (one document per code point, words)', () => {
    // The document is the character twice: a word character gives one word (its folding twice), a character of a
    // script without spaces two equal words (so the fingerprint is its folding's hash), a separator nothing.
    const mismatches: string[] = [];
    const checked = eachPlane(
      { tokenizer: 'words' },
      (c) => c + c,
      (cp, fingerprint, featureCount) => {
        const gotClass = featureCount;
        if (newer.has(cp)) {
          if (gotClass !== newer.get(cp)) mismatches.push(`${hex(cp)} (newer than the UCD): ${featureCount} words`);
          return;
        }
        const cls = specClass(ucd, cp);
        const folded = String.fromCodePoint(specFold(ucd, cp));
        const expected =
          cls === SEPARATOR
            ? { featureCount: 0, fingerprint: 0n }
            : cls === WORD
              ? { featureCount: 1, fingerprint: hashOf(folded + folded) }
              : { featureCount: 2, fingerprint: hashOf(folded) };
        if (gotClass !== expected.featureCount) {
          mismatches.push(
            `${hex(cp)} ${ucd.category(cp)} ${ucd.script(cp)}: expected ${CLASS_NAMES[cls]}, got ${CLASS_NAMES[gotClass] ?? `${gotClass} words`}`,
          );
        } else if (fingerprint !== expected.fingerprint) {
          mismatches.push(`${hex(cp)} ${ucd.category(cp)}: folds to something other than ${hex(specFold(ucd, cp))}`);
        }
      },
    );
    expect(checked).toBe(CODE_POINTS - 2048);
    expectNone(mismatches, 'code points differ from the UCD');
  });

  it('every code point in n-grams: word characters (of any script) kept and folded, separators dropped', () => {
    // N-grams do not split scripts without spaces: the doubled character is one 2-gram of its folding.
    const mismatches: string[] = [];
    eachPlane(
      { tokenizer: 'ngrams', width: 2 },
      (c) => c + c,
      (cp, fingerprint, featureCount) => {
        if (newer.has(cp)) {
          if (featureCount !== 1) mismatches.push(`${hex(cp)} (newer than the UCD): ${featureCount} features`);
          return;
        }
        const cls = specClass(ucd, cp);
        const folded = String.fromCodePoint(specFold(ucd, cp));
        if (cls === SEPARATOR) {
          if (featureCount !== 0) mismatches.push(`${hex(cp)} ${ucd.category(cp)}: expected a separator`);
        } else if (featureCount !== 1 || fingerprint !== hashOf(folded + folded)) {
          mismatches.push(`${hex(cp)} ${ucd.category(cp)}: expected the 2-gram ${hex(specFold(ucd, cp))} twice`);
        }
      },
    );
    expectNone(mismatches, 'code points differ from the UCD in n-grams');
  });

  it('ASCII in 64-byte blocks (the SIMD/SWAR fast path) folds and splits like the UCD says', () => {
    const hasher = createSimHasher({ tokenizer: 'words' });
    const mismatches: string[] = [];
    for (let cp = 0; cp < 0x80; cp++) {
      const c = String.fromCodePoint(cp);
      const got = hasher.hashDetailed(c.repeat(64));
      const folded = String.fromCodePoint(specFold(ucd, cp)).repeat(64);
      const expected =
        specClass(ucd, cp) === SEPARATOR
          ? { fingerprint: 0n, featureCount: 0 }
          : { fingerprint: hashOf(folded), featureCount: 1 };
      if (got.fingerprint !== expected.fingerprint || got.featureCount !== expected.featureCount)
        mismatches.push(hex(cp));
    }
    expectNone(mismatches, 'ASCII characters differ');
  });

  it(`the plain reference (test/reference.ts: V8's Unicode ${process.versions.unicode}) agrees with the UCD on every code point the UCD assigns`, () => {
    // The reference's classes come from V8's regular expressions, like the generator's: checked here against the
    // UCD so that the property tests comparing the kernels with it rest on an independent source too.
    const mismatches: string[] = [];
    for (let cp = 0; cp < CODE_POINTS; cp++) {
      if (isSurrogate(cp) || ucd.category(cp) === 'Cn') continue;
      const c = String.fromCodePoint(cp);
      const folded = String.fromCodePoint(specFold(ucd, cp));
      const cls = specClass(ucd, cp);
      const expected = cls === SEPARATOR ? [] : cls === WORD ? [[folded, folded]] : [[folded], [folded]];
      const got = wordList(c + c, true);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        mismatches.push(
          `${hex(cp)} ${ucd.category(cp)} ${ucd.script(cp)}: ${JSON.stringify(got)}, UCD ${JSON.stringify(expected)}`,
        );
      }
    }
    expectNone(mismatches, `code points differ between V8 (Unicode ${process.versions.unicode}) and the UCD`);
  });

  it('the code points newer than the UCD used are unassigned there, and listed exactly', () => {
    // The exclusion list may only hold code points the UCD used does not assign: anything it does assign is
    // compared above.
    const assigned = [...newer.keys()].filter((cp) => ucd.category(cp) !== 'Cn').map(hex);
    expect(assigned).toEqual([]);
    for (const [first, last] of newerRanges) expect(first <= last, hex(first)).toBe(true);
    if (newerRanges.length > 0) {
      expect(TABLES_VERSION).not.toBe(ucd.version.split('.').slice(0, 2).join('.'));
      expect(newer.size).toBe(newerRanges.reduce((n, [first, last]) => n + last - first + 1, 0));
    }
  });
});

/** Words of a text as the spec says, from the UCD: the reference for the script tests below. */
function ucdWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  for (const c of text.toWellFormed()) {
    const cp = c.codePointAt(0)!;
    const cls = newer.get(cp) ?? specClass(ucd, cp);
    const folded = String.fromCodePoint(specFold(ucd, cp));
    if (cls !== WORD && current) {
      words.push(current);
      current = '';
    }
    if (cls === STANDALONE) words.push(folded);
    else if (cls === WORD) current += folded;
  }
  if (current) words.push(current);
  return words;
}

describe('scripts written without spaces', () => {
  // Running text with no spaces, so a character of these scripts must end the word before it and stand alone.
  const TEXTS: Array<[string, string, string[] | null]> = [
    ['Thai (with combining vowel and tone marks)', 'ภาษาไทยง่ายนิดเดียว', null],
    ['Lao', 'ພາສາລາວງ່າຍ', null],
    ['Khmer (with a coeng subscript)', 'ភាសាខ្មែរ', null],
    ['Myanmar (with medials and a virama)', 'မြန်မာစာ', null],
    ['Chinese between Latin words', 'SimHash算法abc中文Def', ['simhash', '算', '法', 'abc', '中', '文', 'def']],
    ['Japanese kana and kanji', '日本語のテキスト', ['日', '本', '語', 'の', 'テ', 'キ', 'ス', 'ト']],
    ['Hangul (spaced script: syllables stay one word)', '한국어텍스트', ['한국어텍스트']],
    ['Latin combining marks stay in the word', 'Cafe\u0301Ω\u0308x', ['cafe\u0301ω\u0308x']],
    ['Devanagari marks stay in the word', 'हिन्दीपाठ', ['हिन्दीपाठ']],
    ['Lao digits and Khmer digits are words by themselves', '໑໒១២', ['໑', '໒', '១', '២']],
    ['mixed, no spaces', 'aກbកcမd日e', ['a', 'ກ', 'b', 'ក', 'c', 'မ', 'd', '日', 'e']],
  ];
  for (const [name, text, handWritten] of TEXTS) {
    it(name, () => {
      const expected = ucdWords(text);
      if (handWritten) expect(expected).toEqual(handWritten);
      // Every code point of a standalone script is its own word, so those texts have one word per code point.
      if (handWritten === null) expect(expected.length).toBe([...text].length);
      for (const bits of [64, 128] as const) {
        const hasher = createSimHasher({ tokenizer: 'words', bits });
        const got = hasher.hashDetailed(text);
        const hashes = expected.map((w) => referenceFeatureHash(utf8.encode(w), bits));
        expect(got.featureCount).toBe(expected.length);
        expect(got.fingerprint).toBe(referenceReduce(hashes, null, bits));
      }
    });
  }
});
