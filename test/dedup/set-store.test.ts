// The set store: every document's shingle set kept from the hashing pass, in memory up to a budget and then in a
// temporary file, read back a window at a time. Sets read back must be the reference's sets, wherever they lay.
import fs from 'node:fs';
import os from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { SET_MEMORY_BYTES, SetStore, setMemoryBytes, temporarySpill } from '../../src/dedup/set-store.js';
import { copiedSets } from '../../src/dedup/shingle-sets.js';
import { wasm } from '../../src/runtime/wasm.js';
import { loadReference, randomDocument, rng } from '../reference.js';
import { refSet } from './jaccard-reference.js';

beforeAll(loadReference);

const sorted = (s: Set<bigint>) => [...s].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

function leftovers(): string[] {
  return fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('simhash-wasm-sets-'));
}

describe('SetStore', () => {
  it('reads back the reference sets from memory and from the spill file, in any window', async () => {
    const next = rng(5);
    const texts = Array.from({ length: 300 }, (_, i) => (i % 37 === 0 ? '' : randomDocument(next, 30)));
    const before = leftovers();
    for (const memoryBytes of [Infinity, 20_000, 0]) {
      const store = new SetStore(memoryBytes, await temporarySpill(), () => false);
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
        );
      }
      await store.drain();
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
        const { u32, u64 } = wasm().heap;
        window.forEach((d, q) => {
          const s = u32[(built.starts >>> 2) + q]!;
          const e = u32[(built.starts >>> 2) + q + 1]!;
          expect([...u64.slice((built.sets >>> 3) + s, (built.sets >>> 3) + e)], `doc ${d}`).toEqual(
            sorted(refSet(texts[d]!, 3)),
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
    const store = new SetStore(0, failing, () => false);
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
    const { u32, u64 } = wasm().heap;
    const s0 = u32[built.starts >>> 2]!;
    const e0 = u32[(built.starts >>> 2) + 1]!;
    expect([...u64.slice((built.sets >>> 3) + s0, (built.sets >>> 3) + e0)]).toEqual(sorted(refSet(texts[0]!, 3)));
  });
});

describe('setMemoryBytes', () => {
  it('gives each worker beyond the first 64 MiB of the sets kept in memory, down to a quarter', () => {
    expect(SET_MEMORY_BYTES).toBe(256 * 2 ** 20);
    expect([1, 2, 3, 4, 16].map((t) => setMemoryBytes(t) / 2 ** 20)).toEqual([256, 192, 128, 64, 64]);
  });
});
