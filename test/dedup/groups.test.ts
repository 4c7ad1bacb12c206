// Near-duplicate groups: dedup() and dedupStream against a plain reference that checks every pair (reference
// fingerprints within k, reference shingle Jaccard ≥ threshold), on seeded corpora of the shapes real ones have:
// groups of 1 to 500 edited copies spread over the corpus, templates filled in many times (groups that split at the
// threshold), chains (A~B~C with A≁C), exact copies inside groups, wordless texts. Verification may skip pairs
// that cannot change the clusters; the clusters must stay those of checking every pair, and a group of m
// near-duplicates must cost about m checks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { type StreamDocument, dedupStream } from '../../src/dedup/stream.js';
import { walkBesideFrom, walksBeside } from '../../src/dedup/join-beside.js';
import { walkChunk } from '../../src/dedup/verify-candidates.js';
import { loadReference, referenceFingerprint, rng } from '../reference.js';
import { bruteForce, unionFind } from '../join/join-reference.js';
import { refKeep } from './jaccard-reference.js';
import { runCli } from '../cli/run.js';

beforeAll(loadReference);

const THRESHOLD = 0.6;

/** A seeded corpus of near-duplicate groups, shuffled so that the copies of one document lie far apart. */
function groupCorpus(seed: number, groupSizes: readonly number[]): string[] {
  const next = rng(seed);
  const int = (m: number) => Math.floor(next() * m);
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `${'bcdfghklmnprstvz'[i % 16]}${i.toString(36)}o`);
  const word = () => vocabulary[int(vocabulary.length)]!;
  const base = () => Array.from({ length: 25 + int(50) }, word);
  /** A copy with `edits` words replaced, each by a word of the vocabulary. */
  const edited = (words: readonly string[], edits: number) => {
    const out = words.slice();
    for (let e = 0; e < edits; e++) out[int(out.length)] = word();
    return out;
  };
  const docs: string[] = [];
  // Groups of edited copies, each copy with a word or two changed; an exact copy now and then.
  for (const size of groupSizes) {
    const words = base();
    for (let c = 0; c < size; c++) {
      if (c > 0 && next() < 0.05) docs.push(docs[docs.length - 1]!);
      else docs.push(edited(words, 1 + int(2)).join(' '));
    }
  }
  // Templates filled in many times: a fixed text with slots; fills that change many slots fall below the threshold.
  for (let t = 0; t < 4; t++) {
    const template = base();
    const slots = Array.from({ length: 8 + int(8) }, () => int(template.length));
    for (let f = 0; f < 30; f++) {
      const filled = template.slice();
      for (const s of slots) if (next() < 0.6) filled[s] = word();
      docs.push(filled.join(' '));
    }
  }
  // Chains: each document an edit of the one before, so neighbours are similar and the ends are not.
  for (let c = 0; c < 4; c++) {
    let words = base();
    for (let step = 0; step < 12; step++) {
      words = edited(words, Math.ceil(words.length * 0.05));
      docs.push(words.join(' '));
    }
  }
  // Unrelated documents and wordless texts.
  for (let i = 0; i < 60; i++) docs.push(base().join(' '));
  docs.push('', '  ', '???', '???', ' ??? ', '©', '%s');
  for (let i = docs.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

/** m copies of one 80-word text, each with one or two words changed, none an exact copy of another. */
function pureGroup(seed: number, m: number): string[] {
  const next = rng(seed);
  const words = Array.from({ length: 80 }, (_, i) => `w${Math.floor(next() * 1e6).toString(36)}${i}`);
  const out = new Set<string>();
  while (out.size < m) {
    const copy = words.slice();
    const edits = 1 + Math.floor(next() * 2);
    for (let e = 0; e < edits; e++)
      copy[Math.floor(next() * copy.length)] = `e${Math.floor(next() * 1e9).toString(36)}`;
    out.add(copy.join(' '));
  }
  return [...out];
}

interface Reference {
  /** Pairs that pass: within k by the reference fingerprints, and kept by the reference verification. */
  kept: string[];
  /** Candidate pairs (within k) that verification rejects. */
  rejected: number;
}

function reference(texts: readonly string[], k: number, bits: 64 | 128): Reference {
  const words = bits / 64;
  const fps = new BigUint64Array(texts.length * words);
  texts.forEach((t, i) => {
    const fp = referenceFingerprint(t, { bits });
    fps[i * words] = fp & 0xffffffffffffffffn;
    if (words === 2) fps[i * 2 + 1] = fp >> 64n;
  });
  const kept: string[] = [];
  let rejected = 0;
  for (const pair of bruteForce(fps, k, bits)) {
    const [a, b] = pair.split(',').map(Number) as [number, number];
    if (refKeep(texts[a]!, texts[b]!, 3, THRESHOLD)) kept.push(pair);
    else rejected++;
  }
  return { kept, rejected };
}

/** clusters('centre') by its definition: in index order, a document not yet taken is a centre and takes its pairs. */
function centred(n: number, pairs: readonly string[]): number[] {
  const above: number[][] = Array.from({ length: n }, () => []);
  for (const p of pairs) {
    const [a, b] = p.split(',').map(Number) as [number, number];
    above[a]!.push(b);
  }
  const clusterOf = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (clusterOf[i] !== -1) continue;
    clusterOf[i] = i;
    for (const j of above[i]!) if (clusterOf[j] === -1) clusterOf[j] = i;
  }
  return clusterOf;
}

async function* streamed(texts: readonly string[]): AsyncGenerator<StreamDocument> {
  for (const text of texts) yield { text };
}

describe('near-duplicate groups', () => {
  it('clusters equal checking every pair: groups of 1 to 500 copies, templates, chains, both modes and widths', async () => {
    const texts = groupCorpus(38, [1, 2, 3, 5, 8, 20, 60, 500]);
    for (const bits of [64, 128] as const) {
      const k = bits === 64 ? 12 : 21;
      const ref = reference(texts, k, bits);
      const connected = unionFind(texts.length, ref.kept);
      // The corpus has the shapes it claims: a chain (a cluster holding a pair that fails verification while
      // within k) and candidate pairs that verification rejects (groups split at the threshold).
      const chained = ref.kept.length > 0 && ref.rejected > 0;
      expect(chained, `${bits} bits`).toBe(true);
      const keptSet = new Set(ref.kept.map((p) => p.split(',').slice(0, 2).join(',')));
      let chain = false;
      for (let a = 0; a < texts.length && !chain; a++)
        for (let b = a + 1; b < texts.length && !chain; b++)
          chain =
            connected[a] === connected[b] && !keptSet.has(`${a},${b}`) && !refKeep(texts[a]!, texts[b]!, 3, THRESHOLD);
      expect(chain, `${bits} bits: a chain`).toBe(true);
      for (const mode of ['connected', 'centre'] as const) {
        const want = mode === 'connected' ? connected : centred(texts.length, ref.kept);
        const label = `${bits} bits, ${mode}`;
        const got = dedup(texts, { bits, mode });
        expect(Array.from(got.clusterOf), label).toEqual(want);
        // Every pair the result explains is a verified pair of the reference, or an exact copy.
        for (let p = 0; p < got.pairs.a.length; p++) {
          const [a, b] = [got.pairs.a[p]!, got.pairs.b[p]!];
          expect(keptSet.has(`${a},${b}`) || texts[a] === texts[b], `${label}: pair ${a},${b}`).toBe(true);
        }
        // Skipping pairs that change nothing: far fewer checks than candidates.
        expect(got.checks, label).toBeLessThan(got.candidates / 4);
        const stream = await dedupStream(streamed(texts), {
          bits,
          mode,
          reread: (loc) => Array.from(loc.index, (i) => texts[i]!),
          batchBytes: 16 << 10,
          // Every set but the first batches' goes to the temporary file.
          verifyMemoryBytes: 32 << 10,
        });
        expect(Array.from(stream.clusterOf), `${label}, stream`).toEqual(want);
        expect(Array.from(stream.pairs.a), `${label}, stream`).toEqual(Array.from(got.pairs.a));
        expect(Array.from(stream.pairs.b), `${label}, stream`).toEqual(Array.from(got.pairs.b));
        expect(stream.checks, `${label}, stream`).toBe(got.checks);
      }
      // Every pair asked for: every candidate is checked, and the pairs are the reference's.
      const all = dedup(texts, { bits, pairs: 'all' });
      expect(all.checks).toBeGreaterThan(0);
      const expanded = new Set<string>();
      for (let p = 0; p < all.pairs.a.length; p++) expanded.add(`${all.pairs.a[p]},${all.pairs.b[p]}`);
      for (const p of keptSet) expect(expanded.has(p), `${bits} bits, all: ${p}`).toBe(true);
    }
  });

  it('the walk on a worker beside the verifier gives the one-thread walk and dedup(): candidates, checks, pairs', async () => {
    const texts = groupCorpus(39, [1, 3, 8, 40, 200, 400]);
    // Chunks of 31 pairs: the walk hands over dozens of chunks, and goes on while earlier ones are verified.
    const chunk = walkChunk.pairs;
    const besideFrom = walkBesideFrom.cost;
    walkChunk.pairs = 31;
    walkBesideFrom.cost = 0; // a corpus this small is walked here otherwise
    const before = walksBeside.count;
    let want: ReturnType<typeof dedup>;
    let got: Awaited<ReturnType<typeof dedupStream>>[];
    try {
      want = dedup(texts);
      got = [];
      for (const threads of [1, 2])
        got.push(
          await dedupStream(streamed(texts), {
            threads,
            reread: (loc) => Array.from(loc.index, (i) => texts[i]!),
            batchBytes: 16 << 10,
            verifyMemoryBytes: 32 << 10,
          }),
        );
    } finally {
      walkChunk.pairs = chunk;
      walkBesideFrom.cost = besideFrom;
    }
    expect(got[0]!.candidates).toBeGreaterThan(20 * 31);
    // The two-thread run walked beside its verifier; the walk is told the clusters one chunk late on either path.
    expect(walksBeside.count - before).toBe(1);
    for (const [threads, r] of got.map((r, i) => [i + 1, r] as const)) {
      const label = `threads ${threads}`;
      expect(Array.from(r.clusterOf), label).toEqual(Array.from(want.clusterOf));
      expect(Array.from(r.pairs.a), label).toEqual(Array.from(want.pairs.a));
      expect(Array.from(r.pairs.b), label).toEqual(Array.from(want.pairs.b));
      expect(r.checks, label).toBe(want.checks);
    }
    expect(got[1]!.candidates).toBe(got[0]!.candidates);
    expect(got[0]!.checks).toBeLessThan(got[0]!.candidates);
  });

  it('an exact copy leaves the join its rule on set sizes: dedup() gives the candidates and checks it gives without it', () => {
    // Pairs whose fingerprints are near but whose sets are not: a text, and the text ten times over plus as many
    // other words (the repeats weigh its shingles tenfold in the fingerprint; its set is twice the size, J <= 0.5).
    const next = rng(43);
    const word = () => `w${Math.floor(next() * 1e9).toString(36)}`;
    const texts: string[] = [];
    for (let g = 0; g < 20; g++) {
      const a = Array.from({ length: 40 }, word).join(' ');
      texts.push(a, [...Array<string>(10).fill(a), Array.from({ length: 40 }, word).join(' ')].join(' '));
    }
    const distance = (x: string, y: string) =>
      [...(referenceFingerprint(x, { bits: 64 }) ^ referenceFingerprint(y, { bits: 64 })).toString(2)].filter(
        (c) => c === '1',
      ).length;
    const near = texts.filter((_, i) => i % 2 === 0 && distance(texts[i]!, texts[i + 1]!) <= 12);
    expect(near.length).toBeGreaterThan(15);
    const alone = dedup(texts);
    expect(alone.candidates).toBe(0); // every near pair ruled out by its sizes, before verification
    // The one pass builds sets for distinct texts only: a copy has its first copy's, so every size is known.
    const withCopies = dedup([...texts, texts[0]!, texts[0]!, texts[3]!]);
    expect(withCopies.candidates).toBe(alone.candidates);
    expect(withCopies.checks).toBe(alone.checks);
    expect(withCopies.clusterCount).toBe(alone.clusterCount);
    expect(withCopies.clusterOf[40]).toBe(withCopies.clusterOf[0]);
    expect(withCopies.clusterOf[42]).toBe(withCopies.clusterOf[3]);
    // The verdicts are those of verifying every near pair: the reference rejects each one, so every text is alone.
    for (let i = 0; i < texts.length; i += 2) expect(refKeep(texts[i]!, texts[i + 1]!, 3, THRESHOLD)).toBe(false);
    expect(alone.clusterCount).toBe(texts.length);
    expect(dedup(texts, { pairs: 'all' }).clusterCount).toBe(alone.clusterCount);
  });

  it('a group of m edited copies costs at most 2m checks, in one cluster, in memory and streamed', async () => {
    for (const m of [500, 3000]) {
      const texts = pureGroup(m, m);
      const got = dedup(texts);
      expect(got.clusterCount, `m = ${m}`).toBe(1);
      // A dense group: most of its m²/2 pairs are within k (the plain all-pairs join says so).
      const within = bruteForce(got.fingerprints, got.k, 64).length;
      expect(within, `m = ${m}`).toBeGreaterThan((m * (m - 1)) / 4);
      expect(got.checks, `m = ${m}`).toBeLessThanOrEqual(2 * m);
      // The join hands over pairs a chunk at a time and skips those inside a cluster already formed.
      expect(got.candidates, `m = ${m}`).toBeLessThanOrEqual(within);
      const stream = await dedupStream(streamed(texts), { reread: () => [], verifyMemoryBytes: 0 });
      expect(stream.clusterCount, `m = ${m}, stream`).toBe(1);
      expect(stream.checks, `m = ${m}, stream`).toBeLessThanOrEqual(2 * m);
    }
  });

  it('a group of 10^5 near-duplicates is one cluster, in the library, streamed and in the CLI, at most 2 checks each', async () => {
    const m = 100_000;
    const texts = pureGroup(5, m);
    const got = dedup(texts);
    expect(got.clusterCount).toBe(1);
    expect(got.checks).toBeLessThanOrEqual(2 * m);
    // Far fewer candidate pairs handed to verification than the group's m²/2 (5·10^9): the join skips a run once
    // it is one cluster.
    expect(got.candidates).toBeLessThan(50 * m);
    const stream = await dedupStream(streamed(texts), { reread: () => [], verifyMemoryBytes: 16 << 20 });
    expect(stream.clusterCount).toBe(1);
    expect(stream.checks).toBeLessThanOrEqual(2 * m);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simhash-group-'));
    try {
      const file = path.join(dir, 'group.jsonl');
      fs.writeFileSync(file, texts.map((text, id) => JSON.stringify({ id, text })).join('\n'));
      const cli = runCli(['dedup', '--jsonl', file, '--summary', '--threads', '1'], { timeout: 300_000 });
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(new RegExp(`^${m} documents`, 'm'));
      expect(cli.stdout).toMatch(/; 1 clusters of 2 or more hold 100000 documents; 1 clusters in all/);
      const checked = Number(/\((\d+) checked\)/.exec(cli.stdout)?.[1]);
      expect(checked).toBeLessThanOrEqual(2 * m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
