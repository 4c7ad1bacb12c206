// The streaming deduper against the in-memory pipeline: dedupStream must give dedup()'s fingerprints, pairs and
// clusters on the same texts, for one thread and for several, whatever the batch sizes; simhashStream must give
// simhashMany's fingerprints in order. Also its argument checks, the size cap, and what `reread` is asked for.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { type DedupStreamOptions, type Locators, type StreamDocument, dedupStream } from '../../src/dedup/stream.js';
import { MAX_DOCUMENT_BYTES, simhashStream, utf8Length } from '../../src/dedup/stream-hash.js';
import { simhashMany } from '../../src/fingerprint/fingerprint.js';
import { wasm } from '../../src/runtime/wasm.js';
import { sharedPool } from '../../src/runtime/pool.js';
import { rng } from '../reference.js';
import { refSet } from './jaccard-reference.js';

const root = path.resolve(import.meta.dirname, '../..');
const sample = fs
  .readFileSync(path.join(root, 'data/sample/licenses.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => (JSON.parse(line) as { text: string }).text);

/** Seeded corpus: random word documents, edited copies of earlier ones, exact copies, featureless texts. */
function corpus(seed: number, n: number): Array<string | Uint8Array> {
  const u = rng(seed);
  const int = (m: number) => Math.floor(u() * m);
  const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}${'xyz'[i % 3]}`);
  const out: Array<string | Uint8Array> = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < n; i++) {
    const r = u();
    let text: string;
    if (i > 0 && r < 0.3) {
      const prior = out[int(i)]!;
      const words = (typeof prior === 'string' ? prior : new TextDecoder().decode(prior)).split(' ');
      const edits = 1 + int(4);
      for (let e = 0; e < edits; e++) words[int(words.length)] = vocabulary[int(vocabulary.length)]!;
      text = words.join(' ');
    } else if (r < 0.35 && i > 0) {
      const prior = out[int(i)]!;
      text = typeof prior === 'string' ? prior : new TextDecoder().decode(prior);
    } else if (r < 0.4) {
      text = ['', '  ', '???', '%s', '© ©'][int(5)]!;
    } else {
      const length = 20 + int(80);
      text = Array.from({ length }, () => vocabulary[int(vocabulary.length)]!).join(' ');
    }
    // Every other document arrives as UTF-8 bytes.
    out.push(i % 2 === 0 ? text : encoder.encode(text));
  }
  return out;
}

async function* docsOf(texts: ReadonlyArray<string | Uint8Array>): AsyncGenerator<StreamDocument> {
  for (const text of texts) yield { text };
}

function rereadOf(texts: ReadonlyArray<string | Uint8Array>, asked?: number[][]): DedupStreamOptions['reread'] {
  return (loc: Locators) => {
    asked?.push(Array.from(loc.index));
    return Array.from(loc.index, (i) => texts[i]!);
  };
}

function sameResult(got: Awaited<ReturnType<typeof dedupStream>>, want: ReturnType<typeof dedup>, label: string): void {
  expect(Array.from(got.fingerprints), label).toEqual(Array.from(want.fingerprints));
  expect(Array.from(got.featureCounts), label).toEqual(Array.from(want.featureCounts));
  // Verified, both leave out of the join the pairs whose shingle-set sizes rule them out, dedup() by a band of its
  // self-join (size-band.ts) or in the walk, the stream in the walk: the candidates handed on differ, the pairs not.
  if (want.verify === false) expect(got.candidates, label).toBe(want.candidates);
  expect(Array.from(got.pairs.a), label).toEqual(Array.from(want.pairs.a));
  expect(Array.from(got.pairs.b), label).toEqual(Array.from(want.pairs.b));
  expect(Array.from(got.pairs.distance), label).toEqual(Array.from(want.pairs.distance));
  expect(Array.from(got.clusterOf), label).toEqual(Array.from(want.clusterOf));
  expect(got.clusterCount, label).toBe(want.clusterCount);
  expect(got.k, label).toBe(want.k);
}

describe('dedupStream', () => {
  it('equals dedup() on the bundled sample, with one thread and with two, in small batches', async () => {
    const want = dedup(sample);
    expect(want.pairs.a.length).toBeGreaterThan(1000); // the comparison covers many verified pairs
    for (const threads of [1, 2]) {
      const asked: number[][] = [];
      const got = await dedupStream(docsOf(sample), {
        threads,
        batchBytes: 64 << 10,
        verifyBatchBytes: 256 << 10,
        reread: rereadOf(sample, asked),
      });
      sameResult(got, want, `threads ${threads}`);
      expect(got.count).toBe(sample.length);
      // Two threads really ran in workers (one thread never starts one).
      expect(sharedPool().size).toBe(threads === 1 ? 0 : 2);
      expect(asked.length).toBeGreaterThan(1); // the exact copies were confirmed in several batches
    }
  });

  it('equals dedup() on generated corpora: 64 and 128 bits, verified or not, both cluster modes, 1 and 2 threads', async () => {
    for (const [seed, options] of [
      [1, {}],
      [2, { bits: 128 }],
      [3, { verify: false, k: 3 }],
      [4, { mode: 'centre', k: 8 }],
      [5, { verify: { threshold: 0.8 }, tokenizer: 'words' }],
    ] as const) {
      const texts = corpus(seed, 600);
      const want = dedup(texts, options);
      expect(want.pairs.a.length, `seed ${seed}`).toBeGreaterThan(50);
      for (const threads of [1, 2]) {
        const got = await dedupStream(docsOf(texts), {
          ...options,
          threads,
          batchBytes: 8 << 10,
          verifyBatchBytes: 16 << 10,
          reread: rereadOf(texts),
        });
        sameResult(got, want, `seed ${seed}, threads ${threads}`);
      }
    }
  });

  it('hands on no pair whose shingle-set sizes rule out the threshold, and every other pair within k', async () => {
    // Unrelated texts of 4 to 80 distinct words (no pair reaches the threshold, so no cluster forms and nothing is
    // skipped as connected), and k = 64: every pair is within k. The candidates must then be exactly the pairs
    // whose set sizes (reference shingles) allow Jaccard 0.6 (min ≥ 0.6·max), at the boundary included.
    const next = rng(64);
    let word = 0;
    const texts = Array.from({ length: 150 }, () =>
      Array.from({ length: 4 + Math.floor(next() * 77) }, () => `w${(word++).toString(36)}`).join(' '),
    );
    const sizes = texts.map((t) => refSet(t).size);
    let allowed = 0;
    let boundary = 0;
    for (let a = 0; a < texts.length; a++)
      for (let b = a + 1; b < texts.length; b++) {
        const [lo, hi] = [Math.min(sizes[a]!, sizes[b]!), Math.max(sizes[a]!, sizes[b]!)];
        // Exact integers: lo ≥ 0.6·hi is 5·lo ≥ 3·hi.
        if (5 * lo >= 3 * hi) allowed++;
        if (5 * lo === 3 * hi) boundary++;
      }
    expect(boundary).toBeGreaterThan(0);
    expect(allowed).toBeLessThan((texts.length * (texts.length - 1)) / 2);
    const options = { k: 64, threshold: 0.6 };
    for (const verifyMemoryBytes of [64 << 20, 1 << 10]) {
      const got = await dedupStream(docsOf(texts), { ...options, reread: () => [], verifyMemoryBytes });
      expect(got.candidates, `verifyMemoryBytes ${verifyMemoryBytes}`).toBe(allowed);
      expect(got.clusterCount).toBe(texts.length);
    }
  });

  it('confirms exact copies by their bytes: a text whose hash matched but whose bytes differ is not a copy', async () => {
    // The stream cannot be given two texts with one 128-bit hash, so `reread` plays the collision: documents 1
    // and 3 stream as copies of document 0 but read back as other texts, as two colliding texts would.
    const a = 'the quick brown fox jumps over the lazy dog again and again';
    const other = 'completely different words that share nothing with the first text at all';
    const streamed = [a, a, 'an unrelated third document here', a];
    const stored = [a, other, streamed[2]!, a];
    const got = await dedupStream(docsOf(streamed), { verifyBatchBytes: 64, reread: rereadOf(stored) });
    // Document 3 is a true copy of 0; document 1 is not a copy: its identical fingerprint made it a candidate, and
    // verification compared its shingle set (kept from the stream) with document 0's.
    expect(got.checks).toBe(1);
    expect(Array.from(got.pairs.a)).toEqual([0, 0]);
    expect(Array.from(got.pairs.b)).toEqual([1, 3]);
    // With the stored texts equal to the streamed ones, 1 and 3 are copies of 0, as in dedup(): nothing to check.
    const honest = await dedupStream(docsOf(streamed), { verifyBatchBytes: 64, reread: rereadOf(streamed) });
    expect(Array.from(honest.clusterOf)).toEqual(Array.from(dedup(streamed).clusterOf));
    expect(Array.from(honest.clusterOf)).toEqual([0, 0, 2, 0]);
    expect(honest.checks).toBe(0);
  });

  it('takes a plain iterable; reads again only exact copies, each with its first copy, with the locators given', async () => {
    const texts = corpus(7, 300);
    const want = dedup(texts);
    const docs = texts.map((text, i) => ({ text, source: i % 3, offset: 1000 + i, length: 10 }));
    const asked: Locators[] = [];
    const got = await dedupStream(docs, {
      verifyBatchBytes: 200,
      reread: (loc) => {
        asked.push(loc);
        return Array.from(loc.index, (i) => texts[i]!);
      },
    });
    sameResult(got, want, 'iterable');
    // Only documents whose text another document repeats (byte for byte) are read again: each later copy once,
    // with its first copy.
    const copies = new Set<number>();
    const seen = new Map<string, number>();
    let later = 0;
    texts.forEach((t, i) => {
      const key = typeof t === 'string' ? t : new TextDecoder().decode(t);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else {
        copies.add(first).add(i);
        later++;
      }
    });
    expect(later).toBeGreaterThan(10);
    const readTimes = new Map<number, number>();
    for (const loc of asked) {
      for (let j = 0; j < loc.index.length; j++) {
        const i = loc.index[j]!;
        expect(copies.has(i), `document ${i}`).toBe(true);
        readTimes.set(i, (readTimes.get(i) ?? 0) + 1);
        expect([loc.source[j], loc.offset[j], loc.length[j]]).toEqual([i % 3, 1000 + i, 10]);
        // Sorted by source, then offset, so files are read front to back.
        if (j > 0) {
          const prev = [loc.source[j - 1]!, loc.offset[j - 1]!];
          expect(prev[0]! < loc.source[j]! || (prev[0] === loc.source[j] && prev[1]! < loc.offset[j]!)).toBe(true);
        }
      }
    }
    let reads = 0;
    for (const [i, times] of readTimes) {
      reads += times;
      if (seen.get(typeof texts[i] === 'string' ? (texts[i] as string) : new TextDecoder().decode(texts[i])) !== i)
        expect(times, `copy ${i}`).toBe(1);
    }
    expect(reads).toBeLessThanOrEqual(2 * later);
    expect(Array.from(got.locators.source.subarray(0, 4))).toEqual([0, 1, 2, 0]);
  });

  it('an empty stream gives no documents; one document gives one cluster', async () => {
    const empty = await dedupStream([], { reread: () => [] });
    expect(empty.count).toBe(0);
    expect(empty.clusterCount).toBe(0);
    const one = await dedupStream([{ text: 'just one' }], { reread: () => [] });
    expect(Array.from(one.clusterOf)).toEqual([0]);
  });

  it('rejects bad arguments before reading, and stays usable after a failure', async () => {
    const texts = ['a b c d', 'a b c e'];
    const reread = rereadOf(texts);
    await expect(dedupStream(docsOf(texts), {} as DedupStreamOptions)).rejects.toThrow(
      new TypeError('options.reread must be a function, got undefined'),
    );
    await expect(dedupStream(42 as never, { reread })).rejects.toThrow(TypeError);
    await expect(dedupStream(docsOf(texts), { reread, threads: 0 })).rejects.toThrow(
      new RangeError('threads must be an integer from 1 to 256, got 0'),
    );
    await expect(dedupStream(docsOf(texts), { reread, k: 65 })).rejects.toThrow(RangeError);
    await expect(dedupStream(docsOf(texts), { reread, nope: 1 } as never)).rejects.toThrow(
      new TypeError('unknown option "nope"'),
    );
    await expect(dedupStream([{ text: 5 }] as never, { reread })).rejects.toThrow(
      new TypeError('document 0 must be a string or a Uint8Array, got 5'),
    );
    await expect(dedupStream([null] as never, { reread })).rejects.toThrow(TypeError);
    await expect(dedupStream([{ text: 'x', offset: -1 }], { reread })).rejects.toThrow(RangeError);
    // Two exact copies: both are read again to confirm them.
    await expect(dedupStream(docsOf(['a b c d', 'a b c d']), { reread: () => ['only one'] })).rejects.toThrow(
      /reread must return one text per document asked for \(2\)/,
    );
    const failing = async function* () {
      yield { text: 'first document' };
      throw new Error('source broke');
    };
    await expect(dedupStream(failing(), { reread })).rejects.toThrow('source broke');
    const ok = await dedupStream(docsOf(texts), { reread, k: 12 });
    expect(ok.count).toBe(2);
  });

  it('caps a document at maxDocumentBytes (default and most 1 GiB) with a RangeError naming it', async () => {
    expect(MAX_DOCUMENT_BYTES).toBe(2 ** 30);
    const reread = () => [];
    await expect(
      dedupStream([{ text: 'fine' }, { text: new Uint8Array(11) }], { reread, maxDocumentBytes: 10 }),
    ).rejects.toThrow(new RangeError('document 1 has 11 bytes, more than 10 (maxDocumentBytes)'));
    // 4 characters of 3 bytes: 12 bytes of UTF-8 in a string of length 4.
    await expect(dedupStream([{ text: '€€€€' }], { reread, maxDocumentBytes: 10 })).rejects.toThrow(
      /document 0 has more than 10 bytes of UTF-8/,
    );
    await expect(dedupStream([{ text: '€€€' }], { reread, maxDocumentBytes: 10 })).resolves.toMatchObject({
      count: 1,
    });
    await expect(dedupStream([], { reread, maxDocumentBytes: 2 ** 30 + 1 })).rejects.toThrow(RangeError);
  });
});

describe('dedupStream and WebAssembly memory', () => {
  it('a document that does not fit fails with a RangeError, and the library stays usable', async () => {
    const heap = wasm().heap;
    const before = heap.limit;
    heap.limit = heap.highWater + (1 << 20); // as test/runtime/heap-limit.ts, but across awaits
    try {
      const big = 'word '.repeat(2 << 20); // 10 MB
      await expect(
        dedupStream([{ text: 'small' }, { text: big }], { reread: () => [], batchBytes: 1 << 30 }),
      ).rejects.toThrow(/cannot allocate \d+ bytes/);
    } finally {
      heap.limit = before;
    }
    const texts = corpus(21, 100);
    sameResult(await dedupStream(docsOf(texts), { reread: rereadOf(texts) }), dedup(texts), 'after the failure');
  });
});

describe('simhashStream', () => {
  it("gives simhashMany's fingerprints in input order, in batches, with one thread or three", async () => {
    const texts = corpus(11, 500);
    for (const bits of [64, 128, 32] as const) {
      const want = simhashMany(texts, { bits });
      for (const threads of [1, 3]) {
        const words = bits === 128 ? 2 : 1;
        const got = new BigUint64Array(texts.length * words);
        let next = 0;
        for await (const batch of simhashStream(texts, { bits, threads, batchBytes: 2000 })) {
          expect(batch.first).toBe(next);
          got.set(batch.fingerprints, batch.first * words);
          next += batch.featureCounts.length;
        }
        expect(next).toBe(texts.length);
        expect(Array.from(got), `bits ${bits}, threads ${threads}`).toEqual(Array.from(want));
      }
    }
  });

  it('keeps a tokenizer function in this thread', async () => {
    const tokenizer = (text: string) => text.split('-');
    const texts = ['a-b-c', 'a-b-d', 'x-y'];
    const out: bigint[] = [];
    for await (const b of simhashStream(texts, { tokenizer, threads: 2 })) out.push(...b.fingerprints);
    expect(out).toEqual(Array.from(simhashMany(texts, { tokenizer })));
  });
});

describe('utf8Length', () => {
  it('equals TextEncoder on random strings, lone surrogates included (seeded)', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => utf8Length(s) === encoder.encode(s).length),
      { seed: 1212, numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }),
        (s) => utf8Length(s) === encoder.encode(s).length,
      ),
      { seed: 1213, numRuns: 2000 },
    );
  });
});
