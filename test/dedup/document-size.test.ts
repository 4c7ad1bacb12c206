// dedup, Deduplicator and dedupStream refuse a document larger than they can verify before hashing anything, naming
// it, its size and the limit (a 200 MiB document failed after the hashing with "cannot allocate 3355443232 bytes",
// naming none), and take it with verify: false. The documents here are 64 MiB + 1 byte of zeros (no words): light to
// hash, but as large as verification refuses.
import { describe, expect, it } from 'vitest';
import { Deduplicator, MAX_VERIFIED_DOCUMENT_BYTES, dedup, dedupStream } from '../../src/index.js';
import { checkDocumentSize } from '../../src/dedup/document-size.js';
import { wasm } from '../../src/runtime/wasm.js';

const LIMIT = 64 * 1024 * 1024;
const over = new Uint8Array(LIMIT + 1);
const message = (name: string) =>
  new RegExp(`^${name} has ${LIMIT + 1} bytes of UTF-8, more than the ${LIMIT} .*verify: false.* 1073741824`);

describe('the largest document that dedup verifies', () => {
  // First in the file: a fresh WebAssembly heap, which no earlier call has grown.
  it('costs about 11 bytes of WebAssembly memory per byte, not more when two large documents share a window', () => {
    // The set builder needs an 8-byte word per byte of a document free before it starts it, beside its UTF-8 and
    // the tokenizer's scratch of twice that: 11 bytes per byte (assembly/verify-pairs.ts). The room grew by doubling,
    // the old block alive while the sets moved: two documents took 52 bytes per byte of one; with two 8-byte words
    // per byte, 22.6; now 13.6.
    const L = 8 << 20;
    const words = new TextEncoder().encode('a b c d e f g h i j k l m n o p q r s t u v w x y z ');
    const docs = [0, 1].map((i) => {
      const d = new Uint8Array(L);
      for (let j = 0; j < L; j += words.length) d.set(words.subarray(0, Math.min(words.length, L - j)), j);
      d[7] = 0x61 + i; // two texts, near-duplicates
      return d;
    });
    const heap = wasm().heap;
    const before = heap.highWater;
    expect(dedup(['a b c', ...docs]).duplicateOf).toEqual(Int32Array.of(-1, -1, 1));
    expect((heap.highWater - before) / L).toBeLessThan(15);
  });

  it('dedup and Deduplicator.add refuse a larger one at once, naming texts[i], and then work; verify: false takes it', () => {
    const texts = ['a b c', over];
    const start = performance.now();
    expect(() => dedup(texts)).toThrow(RangeError);
    expect(() => dedup(texts, { threshold: 0.5 })).toThrow(message('texts\\[1\\]'));
    const d = new Deduplicator();
    expect(() => d.add(texts)).toThrow(message('texts\\[1\\]'));
    expect(performance.now() - start).toBeLessThan(2000); // before any hashing of 64 MiB
    expect(d.count).toBe(0);
    expect(d.add(['a b c', 'a b c']).duplicateOf).toEqual(Int32Array.of(-1, 0));
    expect(dedup(['x y z', 'x y z']).clusterCount).toBe(1);
    // With verify: false the limit is MAX_DOCUMENT_BYTES (1 GiB).
    const copies = ['a b c', over, over.slice()];
    expect(dedup(copies, { verify: false }).duplicateOf).toEqual(Int32Array.of(-1, -1, 1));
    expect(new Deduplicator({ verify: false }).add(copies).duplicateOf).toEqual(Int32Array.of(-1, -1, 1));
  });

  it('dedupStream and Deduplicator.addStream refuse it when they reach it, naming document i; verify: false takes it', async () => {
    const docs = [{ text: 'a b c' }, { text: over }];
    let reread = 0;
    await expect(
      dedupStream(docs, {
        reread: () => {
          reread++;
          return [];
        },
      }),
    ).rejects.toThrow(message('document 1'));
    expect(reread).toBe(0);
    const d = new Deduplicator();
    await expect(d.addStream(['a b c', over])).rejects.toThrow(message('document 1'));
    expect(d.count).toBe(0);
    const copies = ['a b c', over, over.slice()];
    const streamed = await dedupStream(
      copies.map((text) => ({ text })),
      { verify: false, reread: (l) => Array.from(l.offset, (i) => copies[i]!) },
    );
    expect(streamed.duplicateOf).toEqual(Int32Array.of(-1, -1, 1));
  });

  it('counts a string by its UTF-8: 3 bytes per unit of U+4E00', () => {
    expect(MAX_VERIFIED_DOCUMENT_BYTES).toBe(LIMIT);
    const units = Math.floor(LIMIT / 3) + 1; // 3 · units > LIMIT
    expect(() => dedup(['一'.repeat(units)])).toThrow(new RegExp(`^texts\\[0\\] has ${3 * units} bytes of UTF-8`));
    expect(() => checkDocumentSize('一'.repeat(units), 'texts[0]', true)).toThrow(
      new RegExp(`^texts\\[0\\] has ${3 * units} bytes of UTF-8, more than the ${LIMIT}`),
    );
    expect(() => checkDocumentSize('一'.repeat(units - 1), 'texts[0]', true)).not.toThrow();
    expect(() => checkDocumentSize('a'.repeat(LIMIT), 'texts[0]', true)).not.toThrow();
    expect(() => checkDocumentSize('a'.repeat(LIMIT + 1), 'texts[0]', true)).toThrow(/at least 67108865 bytes/);
  });
});
