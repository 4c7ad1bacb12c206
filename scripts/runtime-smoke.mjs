// A smoke suite of the built package (dist/index.mjs) that runs unchanged under Node, Bun and Deno and prints one
// JSON document of its results on stdout; scripts/runtime-smoke.sh runs it on each runtime and diffs the outputs
// against Node's. Nothing in the output depends on the runtime or on timing: bigints are written as decimal
// strings, typed arrays as arrays, Maps as arrays of entries, and `timings` fields are left out, so the results
// may change shape (columns or rows) without this file changing. The runtime's name goes to stderr.
// Run: node scripts/runtime-smoke.mjs [auto|scalar|simd], or bun ..., or deno run --allow-read ... (Deno's pool
// workers import dist/index.mjs, which needs read access; nothing else is asked for).
import {
  dedup,
  FingerprintIndex,
  findNearDuplicates,
  hammingDistance,
  init,
  loadedBuild,
  simhash,
  simhashMany,
  simhashManyAsync,
} from '../dist/index.mjs';

const runtime =
  typeof globalThis.Deno === 'object'
    ? `deno ${globalThis.Deno.version.deno}`
    : typeof globalThis.Bun === 'object'
      ? `bun ${globalThis.Bun.version}`
      : `node ${process.versions.node}`;

/** JSON of anything the library returns: bigint → string, typed arrays → arrays, Maps → entries, no timings. */
function plain(value) {
  return JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (key === 'timings') return undefined;
      if (typeof v === 'bigint') return v.toString();
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v, (x) => plain(x));
      if (v instanceof Map) return [...v.entries()];
      if (v instanceof Set) return [...v];
      return v;
    }),
  );
}

/** A fixed pseudo-random generator (mulberry32), so every runtime builds the same corpus. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the quick brown fox jumps over lazy dog while seven wizards quietly hex a jolly bank clerk near old river ' +
  'bridge under grey autumn sky and every small bird sings its morning song to sleepy town of green hills'
).split(' ');

function sentence(next, words) {
  return Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

const TEXTS = [
  'The quick brown fox jumps over the lazy dog.',
  'The quick brown fox jumped over the lazy dog!',
  'Pack my box with five dozen liquor jugs.',
  'Ünïcödé: café naïve résumé — Straße ÉCOLE ﬁne ＦＵＬＬＷＩＤＴＨ',
  '日本語のテキストと中文文本，还有한국어 텍스트。',
  '',
  '   ',
];

const args = typeof globalThis.Deno === 'object' ? globalThis.Deno.args : process.argv.slice(2);
await init({ build: args[0] ?? 'auto' });
const out = { build: loadedBuild() };

// Fingerprints: 64 and 128 bits, a few presets and tokenizers.
const SETTINGS = [
  {},
  { bits: 128 },
  { bits: 32 },
  { preset: 'simhash-wasm/1' },
  { preset: 'java' },
  { preset: 'python-simhash' },
  { tokenizer: 'words', normalize: 'NFKC' },
  { tokenizer: 'ngrams', width: 3, bits: 128 },
  { tokenizer: 'segmenter', locale: 'en' },
];
out.fingerprints = SETTINGS.map((options) => ({
  options,
  each: TEXTS.slice(0, 4).map((t) => simhash(t, options)),
  many: simhashMany(TEXTS, options),
}));

// Distances between the first texts' fingerprints, at 64 and 128 bits.
out.distances = [64, 128].map((bits) => {
  const fps = TEXTS.slice(0, 4).map((t) => simhash(t, { bits }));
  return fps.map((a) => fps.map((b) => hammingDistance(a, b)));
});

// A corpus of near-duplicates: base documents, each with a few copies with one or two words changed.
const next = random(40);
const corpus = [];
for (let d = 0; d < 30; d++) {
  const base = sentence(next, 40 + Math.floor(next() * 40)).split(' ');
  corpus.push(base.join(' '));
  const copies = Math.floor(next() * 3);
  for (let c = 0; c < copies; c++) {
    const copy = base.slice();
    copy[Math.floor(next() * copy.length)] = WORDS[Math.floor(next() * WORDS.length)];
    if (next() < 0.5) copy.splice(Math.floor(next() * copy.length), 1);
    corpus.push(copy.join(' '));
  }
}
corpus.push(corpus[3], corpus[3].toUpperCase(), '');
const corpusFps = simhashMany(corpus);

// The index: add every fingerprint, query a few.
const index = new FingerprintIndex({ maxDistance: 6 });
for (let i = 0; i < corpus.length; i++) index.add(i, corpusFps[i]);
out.index = {
  size: index.size,
  queries: [0, 3, 5, 16, 19, corpus.length - 1].map((i) => index.query(corpusFps[i], 6)),
};
const index128 = new FingerprintIndex({ bits: 128, maxDistance: 8 });
const fps128 = simhashMany(corpus, { bits: 128 });
for (let i = 0; i < corpus.length; i++) index128.add(`doc-${i}`, (fps128[2 * i + 1] << 64n) | fps128[2 * i]);
out.index128 = [0, 5].map((i) => index128.query((fps128[2 * i + 1] << 64n) | fps128[2 * i], 8));

// dedup: the default (verified pairs) and plain SimHash at 128 bits.
out.dedup = dedup(corpus);
out.dedup128 = dedup(corpus, { bits: 128, verify: false, k: 10, pairs: 'all' });

// The worker pool (Node worker_threads; Bun and Deno provide them too): a batch large enough for more than one
// chunk (256 KiB each) on 2 workers, the join, and batched queries on copies of the index (a SharedArrayBuffer).
const big = [];
const nextBig = random(4);
for (let i = 0; i < 400; i++) big.push(sentence(nextBig, 250 + Math.floor(nextBig() * 100)));
const pooled = await simhashManyAsync(big, { threads: 2 });
const single = simhashMany(big);
let xor = 0n;
for (const fp of pooled) xor ^= fp;
out.pool = {
  equalsSimhashMany: pooled.length === single.length && pooled.every((fp, i) => fp === single[i]),
  count: pooled.length,
  xor,
  first: pooled.slice(0, 4),
  join: await findNearDuplicates(corpusFps, { k: 6, threads: 2 }),
  queries: await index.queryManyAsync(corpusFps.slice(0, 20), 6, { threads: 2 }),
};

console.error(`runtime-smoke: ${runtime}, ${out.build} build`);
console.log(JSON.stringify(plain(out), null, 1));
