// The set store: every document's shingle set kept from the hashing pass, in memory up to a budget and then in a
// temporary file, read back a window at a time. Sets read back must be the reference's sets, wherever they lay.
import fs from 'node:fs';
import os from 'node:os';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  SET_MEMORY_BYTES,
  type SpillFile,
  type SpillLayout,
  SetStore,
  setMemoryBytes,
  temporarySpill,
} from '../../src/dedup/set-store.js';
import { copiedSets } from '../../src/dedup/shingle-sets.js';
import { hashBatches } from '../../src/dedup/stream-hash.js';
import { wasm } from '../../src/runtime/wasm.js';
import { loadReference, randomDocument, rng } from '../reference.js';
import { refVerifierSet } from './jaccard-reference.js';

beforeAll(loadReference);

const sorted = (s: Set<number>) => [...s].sort((x, y) => x - y);

function leftovers(): string[] {
  return fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('simhash-wasm-sets-'));
}

describe('SetStore', () => {
  it('reads back the reference sets from memory and from the spill file, in any window', async () => {
    const next = rng(5);
    const texts = Array.from({ length: 300 }, (_, i) => (i % 37 === 0 ? '' : randomDocument(next, 30)));
    const before = leftovers();
    // The default layout, and one of 40-byte segments (sets across segments, and runs across slots) sorted in
    // pieces of 200 bytes.
    const layouts = [undefined, { bucketBits: 2, segmentBytes: 40, arrangeBytes: 200 }];
    for (const [memoryBytes, layout] of [
      [Infinity, undefined],
      [20_000, undefined],
      [0, undefined],
      [20_000, layouts[1]],
      [0, layouts[1]],
    ] as const) {
      const store = new SetStore(memoryBytes, await temporarySpill(), () => false, layout);
      // Appended in batches of documents out of order, as dedup() appends its distinct texts.
      const order = texts.map((_, i) => i).sort((x, y) => ((x * 7919) % 300) - ((y * 7919) % 300));
      for (let at = 0; at < order.length; at += 40) {
        const docs = order.slice(at, at + 40);
        store.append(
          docs,
          copiedSets(
            docs.map((d) => texts[d]!),
            3,
          ).sets,
          docs.map((d) => Math.imul(d, 2654435761) >>> 0),
        );
      }
      await store.arrange();
      if (memoryBytes === 0) {
        expect(store.spilledBytes).toBe(store.bytes);
        // The file's name was removed as soon as it was opened: a killed run leaves nothing behind.
        expect(leftovers()).toEqual(before);
      } else if (memoryBytes === 20_000) expect(store.spilledBytes).toBeGreaterThan(0);
      else expect(store.spilledBytes).toBe(0);
      for (const size of [1, 7, 300]) {
        const docs = texts.map((_, i) => i).filter((i) => (i * 31) % 300 < size * 1 || size === 300);
        const window = docs.slice().reverse();
        const built = store.load(wasm(), window);
        const { u32 } = wasm().heap;
        window.forEach((d, q) => {
          const s = u32[(built.starts >>> 2) + q]!;
          const e = u32[(built.starts >>> 2) + q + 1]!;
          expect([...u32.slice((built.sets >>> 2) + s, (built.sets >>> 2) + e)], `doc ${d}`).toEqual(
            sorted(refVerifierSet(texts[d]!, 3)),
          );
        });
        expect(built.count).toBe(window.length);
      }
      await store.close();
    }
    expect(leftovers()).toEqual(before);
  });

  it('a write that fails half-way fails drain with its error; the store still closes, and a new one works', async () => {
    const next = rng(9);
    const texts = Array.from({ length: 60 }, () => randomDocument(next, 30));
    let writes = 0;
    let closed = false;
    const failing = () => ({
      write: async () => {
        if (++writes === 2) throw new Error('disk full (test)');
      },
      read: () => {
        throw new Error('not read');
      },
      close: () => {
        closed = true;
      },
    });
    // Segments of 64 bytes: the appends write several, and the second fails.
    const store = new SetStore(0, failing, () => false, { bucketBits: 1, segmentBytes: 64, arrangeBytes: 1 << 20 });
    for (let at = 0; at < texts.length; at += 20) {
      const docs = Array.from({ length: 20 }, (_, q) => at + q);
      store.append(
        docs,
        copiedSets(
          docs.map((d) => texts[d]!),
          3,
        ).sets,
      );
    }
    await expect(store.drain()).rejects.toThrow('disk full (test)');
    await store.close();
    expect(closed).toBe(true);
    // The runtime is fine: a new store reads back the reference sets.
    const again = new SetStore(Infinity, null, () => false);
    again.append([0, 1], copiedSets(texts.slice(0, 2), 3).sets);
    const built = again.load(wasm(), [1, 0]);
    const { u32 } = wasm().heap;
    const s0 = u32[built.starts >>> 2]!;
    const e0 = u32[(built.starts >>> 2) + 1]!;
    expect([...u32.slice((built.sets >>> 2) + s0, (built.sets >>> 2) + e0)]).toEqual(
      sorted(refVerifierSet(texts[0]!, 3)),
    );
  });
});

/** A spill file in memory: writes finish in a seeded random order; reads are counted. */
function memorySpill(seed: number, failAt = -1): { open: () => SpillFile; reads: () => number } {
  let bytes = new Uint8Array(0);
  let reads = 0;
  let writes = 0;
  let x = seed >>> 0 || 1;
  const open = (): SpillFile => ({
    write(data, position) {
      const copy = data.slice();
      const write = writes++;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const delay = (x >>> 0) % 3;
      return new Promise((resolve, reject) =>
        setTimeout(() => {
          if (write === failAt) return reject(new Error(`write ${write} failed (test)`));
          if (position + copy.length > bytes.length) {
            const grown = new Uint8Array(Math.max(position + copy.length, bytes.length * 2));
            grown.set(bytes);
            bytes = grown;
          }
          bytes.set(copy, position);
          resolve();
        }, delay),
      );
    },
    read(into, position) {
      reads++;
      if (position + into.length > bytes.length) throw new Error(`read past the end (${position + into.length})`);
      into.set(bytes.subarray(position, position + into.length));
    },
    close() {},
  });
  return { open, reads: () => reads };
}

interface Appended {
  /** Set of each document (by index), its key, and the order the documents were appended in. */
  sets: Map<number, number[]>;
  keys: Map<number, number>;
  order: number[];
}

/** Appends `count` documents (random sizes, some empty; random keys, some equal) in batches in a random order. */
function appendRandom(store: SetStore, next: () => number, count: number, withKeys: boolean): Appended {
  const docs = Array.from({ length: count }, (_, i) => i);
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  const sets = new Map<number, number[]>();
  const keys = new Map<number, number>();
  for (let at = 0; at < docs.length; ) {
    const batch = docs.slice(at, at + 1 + Math.floor(next() * 12));
    at += batch.length;
    const starts = new Uint32Array(batch.length + 1);
    const data: number[] = [];
    batch.forEach((d, q) => {
      const size = next() < 0.15 ? 0 : 1 + Math.floor(next() * (next() < 0.1 ? 40 : 8));
      const set = Array.from({ length: size }, (_, e) => d * 64 + e);
      sets.set(d, set);
      keys.set(d, withKeys ? (next() < 0.2 ? 0x12345678 : Math.floor(next() * 2 ** 32)) : 0);
      data.push(...set);
      starts[q + 1] = data.length;
    });
    store.append(
      batch,
      { starts, data: Uint32Array.from(data) },
      withKeys ? batch.map((d) => keys.get(d)!) : undefined,
    );
  }
  return { sets, keys, order: docs };
}

function loaded(store: SetStore, window: number[]): Map<number, number[]> {
  const built = store.load(wasm(), window);
  const { u32 } = wasm().heap;
  const out = new Map<number, number[]>();
  window.forEach((d, q) => {
    const s = u32[(built.starts >>> 2) + q]!;
    const e = u32[(built.starts >>> 2) + q + 1]!;
    out.set(d, [...u32.slice((built.sets >>> 2) + s, (built.sets >>> 2) + e)]);
  });
  return out;
}

describe('SetStore spill layout', () => {
  it('reads back every set, in store order: memory first, then the file by bucket and key (seeded runs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom(0, 1, 3),
        fc.constantFrom(8, 16, 40, 256),
        fc.constantFrom(8, 64, 1 << 20),
        fc.constantFrom(0, 200, 2000),
        // Spans: none (a read per run of adjacent sets), short gaps, and wide ones; spans down to one word.
        fc.constantFrom(0, 1, 5, 40),
        fc.constantFrom(1, 6, 30, 1 << 20),
        async (seed, count, bucketBits, segmentBytes, arrangeBytes, memoryBytes, gapWords, spanWords) => {
          const next = rng(seed);
          const layout: SpillLayout = { bucketBits, segmentBytes, arrangeBytes, gapWords, spanWords };
          const spill = memorySpill(seed);
          const store = new SetStore(memoryBytes, spill.open, () => false, layout);
          const appended = appendRandom(store, next, count, true);
          await store.arrange();
          // Any window, in any order: each document gets its own set.
          for (let w = 0; w < 4; w++) {
            const window = appended.order.filter(() => next() < 0.3);
            const got = loaded(store, window);
            for (const d of window) expect(got.get(d), `doc ${d}`).toEqual(appended.sets.get(d));
          }
          // Whole buckets sorted (arrangeBytes beyond any bucket): the store order is the memory's documents as
          // appended, then the file's by (bucket, key), ties in the order appended. The memory takes whole batches
          // while they fit, so it holds a prefix of the order appended. (Without a file, sets load by index.)
          if (arrangeBytes === 1 << 20 && store.spilledBytes > 0) {
            const window = appended.order.slice();
            store.load(wasm(), window);
            // Where the order appended ends (or a file's first set happens to be the next appended: the same).
            const memoryCount = window.findIndex((d, q) => d !== appended.order[q]);
            const head = memoryCount < 0 ? window.length : memoryCount;
            const rest = appended.order.slice(head);
            const rank = new Map(rest.map((d, q) => [d, q]));
            const bucket = (d: number) => Math.floor(appended.keys.get(d)! / 2 ** (32 - bucketBits));
            const expected = rest
              .slice()
              .sort(
                (x, y) =>
                  bucket(x) - bucket(y) || appended.keys.get(x)! - appended.keys.get(y)! || rank.get(x)! - rank.get(y)!,
              );
            expect(window.slice(head)).toEqual(expected);
          }
          await store.close();
        },
      ),
      { numRuns: 150, seed: 38 },
    );
  });

  it('reads a window of neighbouring keys in few runs, where the order written would take one read per set', async () => {
    const count = 2000;
    // Reads of adjacent sets only (gapWords 0), then with gaps of up to 2 KB between the sets of one read.
    const layouts: SpillLayout[] = [
      { bucketBits: 4, segmentBytes: 4096, arrangeBytes: 1 << 20, gapWords: 0 },
      { bucketBits: 4, segmentBytes: 4096, arrangeBytes: 1 << 20, gapWords: 256 },
    ];
    const reads: number[] = [];
    const appended = appendRandom(new SetStore(Infinity, null, () => false), rng(7), count, true);
    for (const [withKeys, layout] of [
      [true, layouts[0]!],
      [false, layouts[0]!],
      [false, layouts[1]!],
    ] as const) {
      // The same documents appended one by one, under their keys or without: the window is the 100 smallest keys.
      const spill = memorySpill(7);
      const again = new SetStore(0, spill.open, () => false, layout);
      for (const d of appended.order) {
        const set = appended.sets.get(d)!;
        again.append(
          [d],
          { starts: Uint32Array.of(0, set.length), data: Uint32Array.from(set) },
          withKeys ? [appended.keys.get(d)!] : undefined,
        );
      }
      await again.arrange();
      const window = appended.order
        .filter((d) => appended.sets.get(d)!.length > 0)
        .sort((x, y) => appended.keys.get(x)! - appended.keys.get(y)!)
        .slice(0, 100);
      const before = spill.reads();
      const got = loaded(again, window);
      reads.push(spill.reads() - before);
      for (const d of window) expect(got.get(d)).toEqual(appended.sets.get(d));
      await again.close();
    }
    // 100 sets of at most 8 × 40 bytes lie in at most a handful of segments of 4 KB, in one or two buckets.
    expect(reads[0]).toBeLessThanOrEqual(8);
    expect(reads[1]).toBeGreaterThan(50);
    // In the order written, the window's sets lie about 20 sets (≤ 20 × 40 × 8 bytes) apart: spans take them
    // a segment's worth at a time (a read stops at a segment's end, where the next slot is elsewhere).
    expect(reads[2]).toBeLessThan(reads[1]! / 2);
  });

  it('a write that fails while arranging fails arrange with its error, and the store still closes', async () => {
    for (const failAt of [0, 3, 9, 30]) {
      const spill = memorySpill(failAt, failAt);
      const store = new SetStore(0, spill.open, () => false, { bucketBits: 1, segmentBytes: 16, arrangeBytes: 64 });
      appendRandom(store, rng(failAt), 40, true);
      await expect(store.arrange()).rejects.toThrow(`write ${failAt} failed (test)`);
      await store.close();
      expect(() => store.load(wasm(), [0])).toThrow('internal');
    }
    // And a new store works.
    const spill = memorySpill(1);
    const store = new SetStore(0, spill.open, () => false, { bucketBits: 1, segmentBytes: 16, arrangeBytes: 64 });
    const appended = appendRandom(store, rng(1), 40, true);
    await store.arrange();
    const got = loaded(store, appended.order);
    for (const d of appended.order) expect(got.get(d)).toEqual(appended.sets.get(d));
  });
});

describe('sets copied into spare buffers', () => {
  it('copiedSets fills a spare that is large enough, and gives the same sets in a new buffer otherwise', () => {
    const next = rng(21);
    const texts = Array.from({ length: 50 }, (_, i) => (i % 9 === 0 ? '' : randomDocument(next, 40)));
    const plain = copiedSets(texts, 3);
    const words = plain.sets.starts[texts.length]!;
    expect(words).toBeGreaterThan(100);
    texts.forEach((t, d) => {
      const { starts, data } = plain.sets;
      expect([...data.subarray(starts[d]!, starts[d + 1]!)]).toEqual(sorted(refVerifierSet(t, 3)));
    });
    for (const spareWords of [words, words + 7, words - 1]) {
      const spare = new ArrayBuffer(spareWords * 4);
      new Uint8Array(spare).fill(0xa5); // what an earlier batch left there
      const got = copiedSets(texts, 3, null, { spare });
      expect(got.sets.data.buffer === spare, `spare of ${spareWords} words`).toBe(spareWords >= words);
      expect(got.sets.data.length).toBe(words);
      expect([...got.sets.data]).toEqual([...plain.sets.data]);
      expect([...got.sets.starts]).toEqual([...plain.sets.starts]);
    }
    // Without a caller that hands buffers back, the sets take only their own bytes; with one but no spare yet, a new
    // buffer with room for a later, larger batch.
    expect(plain.sets.data.buffer.byteLength).toBe(words * 4);
    expect(copiedSets(texts, 3, null, { spare: null }).sets.data.buffer.byteLength).toBeGreaterThanOrEqual(words * 5);
  });

  it('hashBatches takes spares for its batches, on one thread and on two, with the same sets', async () => {
    const next = rng(22);
    const texts = Array.from({ length: 120 }, () => randomDocument(next, 30));
    const batchesOf = async (threads: number, spares: ArrayBuffer[]) => {
      const out: number[][] = [];
      for await (const batch of hashBatches(texts, { threads, batchBytes: 2000 }, true, 3, spares)) {
        const { starts, data } = batch.sets!;
        for (let q = 0; q + 1 < starts.length; q++) out.push([...data.subarray(starts[q]!, starts[q + 1]!)]);
        // Handed back, as dedupStream does with the batches whose sets went to the file.
        spares.push(data.buffer as ArrayBuffer);
      }
      return out;
    };
    const expected = texts.map((t) => sorted(refVerifierSet(t, 3)));
    for (const threads of [1, 2]) {
      const spares = [new ArrayBuffer(1 << 20)];
      const first = spares[0]!;
      expect(await batchesOf(threads, spares)).toEqual(expected);
      // The first batch took the spare (on two threads it went to a worker and came back with the sets).
      expect(first.byteLength === 0 || spares.some((b) => b === first)).toBe(true);
      expect(spares.length).toBeGreaterThan(1);
    }
  });
});

describe('setMemoryBytes', () => {
  it('gives each worker beyond the first 64 MiB of the sets kept in memory, down to a quarter', () => {
    expect(SET_MEMORY_BYTES).toBe(256 * 2 ** 20);
    expect([1, 2, 3, 4, 16].map((t) => setMemoryBytes(t) / 2 ** 20)).toEqual([256, 192, 128, 64, 64]);
  });
});
