// Writes test/vectors/golden.jsonl: fingerprints of the default spec (SPEC_ID) for fixed inputs, which
// test/fingerprint/golden.test.ts checks forever after. Run it ONLY when the spec changes on purpose (and bump SPEC_ID,
// after renaming the old file to golden-v<N>.jsonl, whose preset must keep giving it):
//
//   npm run build:wasm && npx tsx scripts/make-golden.mjs
//
// Never run by the tests. The 'segmenter' tokenizer is left out: its words come from the runtime's ICU data,
// which is not part of the spec. Presets that reproduce other implementations have their own vectors.
// Every value is also computed by the plain reference (test/reference.ts); the file is written only if all agree
// (test/fingerprint/golden.test.ts checks that again on every run).
import fs from 'node:fs';
import { init, simhash, featureHash, toHex, SPEC_ID } from '../src/index.ts';
import { loadReference, referenceFeatureHash, referenceFingerprint } from '../test/reference.ts';

await init({ build: 'scalar' });
await loadReference();
const disagreements = [];

/** A deterministic long text in several scripts (a linear congruential generator, no Math.random). */
function longText() {
  const words = [
    'near',
    'duplicate',
    'detection',
    'simhash',
    'the',
    'of',
    'Ελληνικά',
    'Русский',
    'текст',
    '中文',
    '文本',
    '日本語',
    'العربية',
    'हिन्दी',
    'café',
    'naïve',
    '😀',
    '👍🏽',
    '𠀀',
    '2024',
    'x_y',
  ];
  const seps = [' ', ' ', ' ', '  ', '\t', '\n', ', ', '. ', '\r\n'];
  let s = 20240601;
  const next = (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
  let out = '';
  while (out.length < 9000) out += words[next(words.length)] + seps[next(seps.length)];
  return out;
}

const TEXTS = [
  ['empty', ''],
  ['whitespace only', ' \t\n\r\u000b\f\u00a0\u2028\u3000  '],
  ['one letter', 'a'],
  ['ascii sentence', 'The quick brown fox jumps over the lazy dog.'],
  ['ascii punctuation and digits', 'Hello, World! 3.14159 -- e=mc^2; (a+b)*c = 42?'],
  ['case', 'SimHash SIMHASH simhash sImHaSh'],
  ['latin nfc', 'Crème brûlée, café, naïve, Ångström, Øresund'],
  ['latin nfd', 'Cre\u0300me bru\u0302le\u0301e, cafe\u0301, nai\u0308ve'],
  ['german sharp s', 'Straße STRASSE straße ẞ'],
  ['turkish dotted i', 'İstanbul ISTANBUL ıi İi'],
  ['greek final sigma', 'ΟΔΟΣ ΣΟΦΟΣ σοφός Σ'],
  ['cyrillic', 'Съешь же ещё этих мягких французских булок, да выпей чаю'],
  ['arabic', 'اللغة العربية جميلة جدا ١٢٣'],
  ['hebrew', 'שלום עולם, זה טקסט בעברית'],
  ['devanagari', 'हिन्दी भाषा में लिखा गया पाठ'],
  ['thai', 'ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ'],
  ['chinese', '相似文本检测使用局部敏感哈希，海明距离在三以内。'],
  ['japanese', '日本語のテキストとカタカナ、ひらがなと漢字が混ざっています'],
  ['korean', '한국어 텍스트 유사도 검사'],
  ['emoji', 'I 😀 love 🍕 and 🎉 emoji 😀😀'],
  ['emoji sequences', '👨‍👩‍👧‍👦 👍🏽 🇫🇷🇩🇪 ❤️ 🏳️‍🌈'],
  ['astral letters', '𠀀𠀁𪚥 𝔸𝔹ℂ 𝟘𝟙𝟚 𐐀𐐨'],
  ['lone high surrogate', 'abc \ud800 def'],
  ['lone low surrogate', 'abc \udc00 def'],
  ['reversed surrogates', 'x\udc00\ud800y z'],
  ['surrogate at end', 'word\ud83d'],
  ['control characters', 'a\u0000b\u0001c\u007f d\u0085e'],
  ['zero width', 'zero\u200bwidth\u200djoin\ufeffer \u2060'],
  ['bidi marks', '\u202eabc\u202c \u200fdef\u200e'],
  ['mixed scripts', 'Hello мир 世界 مرحبا שלום नमस्ते 😀 café'],
  ['numbers', '3.14 1,000,000 ٣٤٥ ²³ ½ Ⅻ ①'],
  ['url and email', 'https://example.com/a/b?c=d&e=f#g mail@example.org'],
  ['code', 'function f(x) { return x * 2; } // comment\nconst y = f(21);'],
  ['repeated word', 'the '.repeat(40)],
  ['one long token', 'a'.repeat(300)],
  ['long text', longText()],
];

const BYTES = [
  ['utf-8 bytes', [0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f, 0x20, 0x77, 0x6f, 0x72, 0x6c, 0x64]],
  ['invalid utf-8', [0xff, 0xfe, 0x41, 0x20, 0x42, 0x80, 0x43]],
  ['overlong and truncated', [0xc0, 0xaf, 0x20, 0x61, 0x62, 0x20, 0xe4, 0xb8]],
  ['encoded surrogate', [0x61, 0xed, 0xa0, 0x80, 0x62, 0x20, 0x63]],
];

const FEATURES = [
  ['empty list', []],
  ['strings', ['alpha', 'beta', 'gamma', 'delta']],
  ['duplicates', ['x', 'x', 'x', 'y', 'z', 'z']],
  ['unicode features', ['中文', 'Ελλην', '😀', '', 'e\u0301', 'lone\ud800']],
  ['weighted pairs', [['foo', 3], ['bar', 1], ['baz', 7], 'qux']],
  [
    'fractional and negative weights',
    [
      ['a', 0.5],
      ['b', -2],
      ['c', 0],
      ['d', 1e-9],
      ['e', 123456.75],
    ],
  ],
  ['many features', Array.from({ length: 300 }, (_, i) => `feature-${i}`)],
];

const MAPS = [
  ['empty map', []],
  [
    'weighted map',
    [
      ['foo', 3],
      ['bar', 1],
      ['baz', 7],
    ],
  ],
  [
    'fractional map',
    [
      ['ανά', 0.25],
      ['ひと', 2.5],
      ['😀', -1],
      ['x', 10],
    ],
  ],
];

const BITS = [32, 64, 128];
const TEXT_OPTIONS = [
  { tokenizer: 'whitespace' },
  { tokenizer: 'words' },
  ...[1, 2, 3, 5].map((width) => ({ tokenizer: 'shingles', width })),
  ...[1, 3, 4, 8].map((width) => ({ tokenizer: 'ngrams', width })),
];
const NORMALIZED = ['latin nfd', 'latin nfc', 'numbers', 'astral letters'];

function results(input, optionsList) {
  const out = [];
  for (const options of optionsList) {
    for (const bits of BITS) {
      const o = { ...options, bits };
      const fingerprint = toHex(simhash(input, o), bits);
      const reference = toHex(referenceFingerprint(input, o), bits);
      if (fingerprint !== reference) disagreements.push(`${JSON.stringify(o)}: ${fingerprint}, reference ${reference}`);
      out.push({ options: o, fingerprint });
    }
  }
  return out;
}

const lines = [{ kind: 'header', spec: SPEC_ID, generator: 'scripts/make-golden.mjs' }];
for (const [name, text] of TEXTS) {
  const options = [{}, ...TEXT_OPTIONS];
  if (NORMALIZED.includes(name)) options.push({ normalize: 'NFC' }, { normalize: 'NFKC', tokenizer: 'words' });
  lines.push({ kind: 'text', name, text, results: results(text, options) });
}
for (const [name, bytes] of BYTES) {
  lines.push({
    kind: 'bytes',
    name,
    bytes,
    results: results(Uint8Array.from(bytes), [{}, { tokenizer: 'words' }, { tokenizer: 'ngrams', width: 2 }]),
  });
}
for (const [name, features] of FEATURES)
  lines.push({ kind: 'features', name, features, results: results(features, [{}]) });
for (const [name, entries] of MAPS)
  lines.push({ kind: 'map', name, entries, results: results(new Map(entries), [{}]) });
for (const feature of ['', 'a', 'simhash', '中文', '😀', 'x'.repeat(100)]) {
  const hashes = BITS.map((bits) => {
    const hash = toHex(featureHash(feature, bits), bits);
    const ref = referenceFeatureHash(new TextEncoder().encode(feature), bits === 128 ? 128 : 64);
    const reference = toHex(bits === 32 ? ref & 0xffffffffn : ref, bits);
    if (hash !== reference)
      disagreements.push(`featureHash ${JSON.stringify(feature)} ${bits}: ${hash}, reference ${reference}`);
    return { bits, hash };
  });
  lines.push({ kind: 'featureHash', feature, hashes });
}

if (disagreements.length > 0) {
  console.error(`not written: ${disagreements.length} values differ from test/reference.ts, e.g.`);
  for (const d of disagreements.slice(0, 20)) console.error(`  ${d}`);
  process.exit(1);
}
const file = new URL('../test/vectors/golden.jsonl', import.meta.url);
fs.mkdirSync(new URL('.', file), { recursive: true });
fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
const count = lines.reduce((n, l) => n + (l.results?.length ?? l.hashes?.length ?? 0), 0);
console.error(
  `wrote ${lines.length - 1} inputs, ${count} fingerprints and hashes for ${SPEC_ID} to test/vectors/golden.jsonl`,
);
