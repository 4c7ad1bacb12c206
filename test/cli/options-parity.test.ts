// One vocabulary: every fingerprint and dedup option of the command line gives what the library gives for the option
// of the same name and meaning. Table-driven: each row is a CLI argument list and the library options it stands for,
// run on one seeded corpus of near-duplicates (a template filled in many times, copies with a few words edited).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../src/fingerprint/bits.js';
import type { SimHashOptions } from '../../src/fingerprint/options.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { type DedupOptions, dedup } from '../../src/dedup/dedup.js';
import { rng } from '../reference.js';
import { runCli } from './run.js';

const WORDS = 'the of and to in is that for on with as was by at from this are be or an it not which we'.split(' ');

/** Templates filled in, then copies with 1-3 words replaced, and a few texts in other scripts. */
function corpus(): Array<{ id: string; text: string }> {
  const next = rng(4141);
  const pick = () => WORDS[Math.floor(next() * WORDS.length)]!;
  const docs: string[] = [];
  for (let t = 0; t < 6; t++) {
    const template = Array.from({ length: 40 }, pick);
    for (let c = 0; c < 5; c++) {
      const words = [...template];
      for (let e = 0; e < 1 + (c % 3); e++) words[Math.floor(next() * words.length)] = `edit${c}${e}`;
      docs.push(words.join(' '));
    }
  }
  docs.push(
    'Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ and full width text',
    'ﬁnance ﬁle',
    '我们今天去公园散步。我们今天去公园散步了。',
  );
  docs.push('', '   ');
  return docs.map((text, i) => ({ id: `d${i}`, text }));
}

const DOCS = corpus();
const TEXTS = DOCS.map((d) => d.text);
let dir: string;
let input: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-parity-'));
  input = path.join(dir, 'corpus.jsonl');
  fs.writeFileSync(input, DOCS.map((d) => JSON.stringify(d)).join('\n') + '\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Fingerprint options: `hash` against simhashMany. */
const HASH_ROWS: Array<[string[], SimHashOptions]> = [
  [[], {}],
  [['--bits', '32'], { bits: 32 }],
  [['--bits', '128'], { bits: 128 }],
  [['--tokenizer', 'whitespace'], { tokenizer: 'whitespace' }],
  [['--tokenizer', 'words'], { tokenizer: 'words' }],
  [['--tokenizer', 'shingles', '--width', '2'], { tokenizer: 'shingles', width: 2 }],
  [['--tokenizer', 'ngrams', '--width', '3'], { tokenizer: 'ngrams', width: 3 }],
  [['--tokenizer', 'segmenter', '--locale', 'zh'], { tokenizer: 'segmenter', locale: 'zh' }],
  [['--normalize', 'NFKC'], { normalize: 'NFKC' }],
  [['--normalize', 'NFD', '--tokenizer', 'words'], { normalize: 'NFD', tokenizer: 'words' }],
  [['--normalize', 'none'], { normalize: false }],
  [['--preset', 'simhash-wasm/1'], { preset: 'simhash-wasm/1' }],
  [['--preset', 'java'], { preset: 'java' }],
  [['--preset', 'java', '--bits', '128'], { preset: 'java', bits: 128 }],
  [['--preset', 'python-simhash'], { preset: 'python-simhash' }],
];

/** Dedup options: `dedup --all` clusters against dedup()'s clusterOf. */
const DEDUP_ROWS: Array<[string[], DedupOptions]> = [
  [[], {}],
  [['--k', '3'], { k: 3 }],
  [['--k', '20'], { k: 20 }],
  [['--threshold', '0.9'], { threshold: 0.9 }],
  [['--threshold', '0.3', '--k', '24'], { threshold: 0.3, k: 24 }],
  [['--no-verify'], { verify: false }],
  [['--no-verify', '--k', '10'], { verify: false, k: 10 }],
  [['--mode', 'centre'], { mode: 'centre' }],
  [['--mode', 'centre', '--no-verify', '--k', '12'], { mode: 'centre', verify: false, k: 12 }],
  [['--bits', '128'], { bits: 128 }],
  [['--bits', '128', '--k', '30'], { bits: 128, k: 30 }],
  [['--tokenizer', 'words'], { tokenizer: 'words' }],
  [['--tokenizer', 'ngrams', '--width', '5'], { tokenizer: 'ngrams', width: 5 }],
  [['--normalize', 'NFKC'], { normalize: 'NFKC' }],
  [['--preset', 'simhash-wasm/1'], { preset: 'simhash-wasm/1' }],
  [['--threads', '2'], {}],
];

/** Clusters as sorted lists of ids, from cluster representatives per document. */
function clustersOf(clusterOf: ArrayLike<number>): string[][] {
  const groups = new Map<number, string[]>();
  Array.from(clusterOf).forEach((c, i) => {
    const list = groups.get(c) ?? [];
    list.push(DOCS[i]!.id);
    groups.set(c, list);
  });
  return [...groups.values()].map((g) => g.sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

describe.skipIf(process.env.SIMHASH_BUILD === 'scalar')('the CLI and the library, option by option', () => {
  it.each(HASH_ROWS)('hash %j = simhashMany(texts, %j)', (args, options) => {
    const r = runCli(['hash', '--jsonl', '--format', 'jsonl', ...args, input]);
    expect(r.code, r.stderr).toBe(0);
    const bits = options.bits ?? 64;
    const fps = simhashMany(TEXTS, options);
    const want = TEXTS.map((_, i) => toHex(bits === 128 ? (fps[2 * i + 1]! << 64n) | fps[2 * i]! : fps[i]!, bits));
    const got = r.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { fingerprint: string }).fingerprint);
    expect(got).toEqual(want);
  });

  it.each(DEDUP_ROWS)('dedup %j = dedup(texts, %j)', (args, options) => {
    const r = runCli(['dedup', '--jsonl', '--all', ...args, input]);
    expect(r.code, r.stderr).toBe(0);
    const got = r.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { members: string[] }).members.sort())
      .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
    const want = clustersOf(dedup(TEXTS, options).clusterOf);
    expect(got).toEqual(want);
    // The table would prove little if every row gave the same answer: most rows must find some clusters.
    if (!args.includes('--k') || Number(args[args.indexOf('--k') + 1]) >= 10)
      expect(got.length).toBeLessThan(DOCS.length);
  });

  it('--pairs --all-pairs gives pairs: "all", with the same distances', () => {
    const r = runCli(['dedup', '--jsonl', '--pairs', '--all-pairs', input]);
    expect(r.code, r.stderr).toBe(0);
    const got = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { a: string; b: string; distance: number })
      .map((p) => [p.a, p.b, p.distance]);
    const { pairs } = dedup(TEXTS, { pairs: 'all' });
    const want = Array.from(pairs.a, (a, i) => [DOCS[a]!.id, DOCS[pairs.b[i]!]!.id, pairs.distance[i]]);
    expect(got.sort()).toEqual(want.sort());
    expect(want.length).toBeGreaterThan(10);
  });

  it.each(['first', 'longest', 'shortest'] as const)('--keep %s keeps what dedup(texts, { keep }) keeps', (keep) => {
    const out = path.join(dir, `kept-${keep}.jsonl`);
    const r = runCli(['dedup', '--jsonl', '--keep', keep, '--output', out, input]);
    expect(r.code, r.stderr).toBe(0);
    const kept = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    const { duplicateOf } = dedup(TEXTS, { keep });
    expect(kept).toEqual(DOCS.filter((_, i) => duplicateOf[i] === -1).map((d) => d.id));
  });
});
