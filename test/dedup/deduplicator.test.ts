// Incremental dedup: of each batch, a Deduplicator keeps exactly the documents that one dedup() over everything up
// to the end of that batch keeps (keep 'first'; a later document can connect an earlier one to a still earlier
// cluster, and what a batch kept stays kept), on seeded corpora of the shapes real ones have (edited copies spread over the
// corpus, exact copies, chains, texts without words, copies far apart across batches), for every split, both
// widths, with and without verification; and so does one that is saved and loaded between batches. A state made
// with other options, damaged or truncated is refused with a clear error, and the Deduplicator stays usable.
import { describe, expect, it } from 'vitest';
import { dedup } from '../../src/dedup/dedup.js';
import { Deduplicator } from '../../src/dedup/deduplicator.js';
import { rng } from '../reference.js';

function corpus(seed: number, groups: number): string[] {
  const next = rng(seed);
  const vocabulary = Array.from({ length: 3000 }, (_, i) => `t${i.toString(36)}a`);
  const word = () => vocabulary[Math.floor(next() * vocabulary.length)]!;
  const docs: string[] = [];
  for (let g = 0; g < groups; g++) {
    const base = Array.from({ length: 20 + Math.floor(next() * 40) }, word);
    let previous = base;
    for (let c = 0, m = 1 + Math.floor(next() * 6); c < m; c++) {
      // Chains: each copy edits the one before it.
      const copy = previous.slice();
      for (let e = Math.floor(next() * 3); e > 0; e--) copy[Math.floor(next() * copy.length)] = word();
      docs.push(copy.join(' '));
      if (next() < 0.1) docs.push(copy.join(' ')); // an exact copy
      previous = copy;
    }
    if (next() < 0.05) docs.push(next() < 0.5 ? '  ' : '!!! ???'); // texts without words
  }
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

/** What dedup() keeps of docs[from..to) when it runs over docs[0..to). */
function keptByDedup(docs: string[], from: number, to: number, options: object): number[] {
  const r = dedup(docs.slice(0, to), options);
  const out: number[] = [];
  for (let i = from; i < to; i++) if (r.duplicateOf[i] === -1) out.push(i);
  return out;
}

/**
 * Feeds the corpus in batches cut at `cuts` (saving and loading between them with `reload`), checking each batch's
 * kept documents against dedup() over the prefix; returns how many documents were kept in all.
 */
function checkBatches(docs: string[], cuts: number[], options: object, reload: boolean): number {
  let d = new Deduplicator(options);
  const bounds = [0, ...cuts, docs.length];
  let total = 0;
  for (let b = 0; b + 1 < bounds.length; b++) {
    const r = d.add(docs.slice(bounds[b], bounds[b + 1]));
    expect(r.first).toBe(bounds[b]);
    const kept: number[] = [];
    r.duplicateOf.forEach((dup, q) => {
      if (dup === -1) kept.push(r.first + q);
      else expect(dup).toBeLessThan(r.first + q); // the document kept in its place comes first
    });
    expect(kept, `batch ${b}: ${bounds[b]}..${bounds[b + 1]}`).toEqual(
      keptByDedup(docs, bounds[b]!, bounds[b + 1]!, options),
    );
    total += kept.length;
    if (reload) d = Deduplicator.load(d.save(), options);
  }
  return total;
}

describe('Deduplicator', () => {
  const configs: Array<[string, object]> = [
    ['64 bits, verified', {}],
    ['128 bits, verified', { bits: 128 }],
    ['64 bits, unverified', { verify: false }],
  ];
  for (const [name, options] of configs) {
    it(`batches keep what one dedup() keeps (${name}; splits seeded, some saved and loaded)`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const docs = corpus(seed, 40 + seed * 20);
        const next = rng(seed * 7);
        const cuts = Array.from({ length: 1 + Math.floor(next() * 4) }, () => Math.floor(next() * docs.length)).sort(
          (x, y) => x - y,
        );
        const kept = checkBatches(docs, cuts, options, seed % 2 === 0);
        expect(kept).toBeLessThan(docs.length * 0.8); // the corpus has duplicates to find
        expect(kept).toBeGreaterThan(0);
      }
    });
  }

  it('a batch of one document at a time, and empty batches', () => {
    const docs = corpus(11, 30);
    const d = new Deduplicator();
    expect(d.add([]).duplicateOf).toHaveLength(0);
    docs.forEach((doc, i) => {
      const kept = d.add([doc]).duplicateOf[0] === -1;
      expect(kept, `document ${i}`).toBe(keptByDedup(docs, i, i + 1, {}).length === 1);
    });
    expect(d.count).toBe(docs.length);
  });

  it('A then B keeps of B what one run over A + B keeps, and the whole corpus in one batch is dedup()', () => {
    const docs = corpus(13, 150);
    const d = new Deduplicator();
    const all = d.add(docs);
    expect(Array.from(all.duplicateOf).map((x) => x === -1)).toEqual(
      Array.from(dedup(docs).duplicateOf).map((x) => x === -1),
    );
    for (const cut of [1, 50, docs.length >> 1, docs.length - 1]) checkBatches(docs, [cut], {}, true);
  });

  it('refuses a state made with other options, naming the difference; refuses damaged and truncated states', () => {
    const d = new Deduplicator();
    d.add(corpus(12, 10));
    const bytes = d.save();
    expect(() => Deduplicator.load(bytes, { k: 5 })).toThrow(/made with k = 12, not 5/);
    expect(() => Deduplicator.load(bytes, { verify: { threshold: 0.8 } })).toThrow(/threshold = 0.6, not 0.8/);
    expect(() => Deduplicator.load(bytes, { tokenizer: 'words' })).toThrow(/tokenizer = "shingles", not "words"/);
    const damaged = bytes.slice();
    damaged[damaged.length - 20]! ^= 1;
    expect(() => Deduplicator.load(damaged)).toThrow(/checksum does not match/);
    expect(() => Deduplicator.load(bytes.subarray(0, bytes.length - 9))).toThrow(/truncated or damaged/);
    expect(() => Deduplicator.load(new Uint8Array(3))).toThrow(RangeError);
    // The state itself still loads and goes on.
    const again = Deduplicator.load(bytes);
    expect(again.count).toBe(d.count);
    expect(again.add(['something entirely new and different from all of it']).duplicateOf[0]).toBe(-1);
  });

  it('addStream on two worker threads decides as add(); a stream that fails half-way changes nothing', async () => {
    const docs = corpus(14, 120);
    const half = docs.length >> 1;
    const a = new Deduplicator();
    a.add(docs.slice(0, half));
    const want = a.add(docs.slice(half));
    const b = new Deduplicator();
    await b.addStream(docs.slice(0, half), { threads: 2, batchBytes: 2000, label: (i) => `doc ${i}` });
    async function* failing(): AsyncGenerator<string> {
      yield docs[half]!;
      throw new Error('the source broke');
    }
    await expect(b.addStream(failing(), { batchBytes: 1 })).rejects.toThrow('the source broke');
    expect(b.count).toBe(half);
    const got = await b.addStream(docs.slice(half), { threads: 2, batchBytes: 2000 });
    expect(Array.from(got.duplicateOf)).toEqual(Array.from(want.duplicateOf));
    expect(b.labelOf(3)).toBe('doc 3');
    expect(Deduplicator.load(b.save()).labelOf(half)).toBe('');
  });

  it('refuses options it cannot honour, and bad batches, before changing anything', () => {
    expect(() => new Deduplicator({ keep: 'longest' })).toThrow(/keeps the first document/);
    expect(() => new Deduplicator({ mode: 'centre' })).toThrow(/connected clusters/);
    const d = new Deduplicator();
    d.add(['one two three four five']);
    expect(() => d.add([42 as unknown as string])).toThrow(/texts\[0\] must be a string or a Uint8Array, got 42/);
    expect(d.count).toBe(1);
    expect(d.add(['one two three four five']).duplicateOf[0]).toBe(0);
  });
});
