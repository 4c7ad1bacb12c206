// Batches of any total size: split into pieces of CHUNK_BYTES so that no encodeInto target reaches 2^31 bytes
// and WebAssembly memory stays bounded; results equal one-by-one hashing. Only a single document too large
// for WebAssembly memory fails, fast, with a RangeError naming the limit.
import { beforeAll, describe, expect, it } from 'vitest';
import { createSimHasher, simhash, simhashMany, simhashOfHashes, type SimHashInput } from '../../src/index.js';
import { CHUNK_BYTES, MAX_DOCUMENT_BYTES } from '../../src/fingerprint/fingerprint.js';
import { wasm } from '../../src/runtime/wasm.js';
import { loadReference, randomDocument, referenceReduce, referenceSimhash, rng } from '../reference.js';

beforeAll(loadReference);

const utf8 = new TextEncoder();

/** A document of about `bytes` UTF-8 bytes, mixed scripts, from a seeded generator. */
function bigDocument(bytes: number, seed: number): string {
  const random = rng(seed);
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const part = randomDocument(random, 200);
    parts.push(part);
    size += utf8.encode(part).length + 1;
  }
  return parts.join(' ');
}

describe('batches larger than one kernel call', () => {
  it('pieces at every kind of boundary equal one-by-one hashing, and small documents equal the reference', () => {
    // Documents of 0.3–9 MB (estimated at 3 bytes per unit), texts, bytes and feature lists interleaved, so the
    // batch crosses CHUNK_BYTES several times and positions of one kind are not consecutive.
    const random = rng(0x5eed);
    const base = bigDocument(6 << 20, 1);
    const inputs: SimHashInput[] = [];
    for (let i = 0; i < 40; i++) {
      const cut = Math.floor(random() * base.length);
      const text = base.slice(cut) + base.slice(0, cut);
      const kind = i % 4;
      if (kind === 0) inputs.push(text);
      else if (kind === 1) inputs.push(utf8.encode(text));
      else if (kind === 2) inputs.push(text.slice(0, 1000).split(' '));
      else inputs.push(randomDocument(random, 50));
    }
    const estimated = inputs.reduce<number>(
      (sum, d) => sum + (typeof d === 'string' ? 3 * d.length : d instanceof Uint8Array ? d.byteLength : 0),
      0,
    );
    expect(estimated).toBeGreaterThan(2 * CHUNK_BYTES);
    for (const bits of [64, 128] as const) {
      const batch = simhashMany(inputs, { bits, tokenizer: 'words' });
      const words = bits / 64;
      for (let i = 0; i < inputs.length; i++) {
        const one = simhash(inputs[i]!, { bits, tokenizer: 'words' });
        const got = words === 2 ? (batch[2 * i + 1]! << 64n) | batch[2 * i]! : batch[i]!;
        expect(got, `document ${i}, ${bits} bits`).toBe(one);
        if (i % 4 === 3) {
          expect(got, `document ${i} against the reference`).toBe(
            referenceSimhash(inputs[i] as string, 'words', 0, bits).fingerprint,
          );
        }
      }
    }
  });

  it('feature lists totalling more than one piece equal one-by-one hashing', () => {
    const random = rng(77);
    const docs: Array<Array<[string, number]>> = [];
    for (let d = 0; d < 8; d++) {
      const features: Array<[string, number]> = [];
      for (let f = 0; f < 150_000; f++) features.push([`feature-${Math.floor(random() * 1e6)}-${d}`, 1 + (f % 5)]);
      docs.push(features);
    }
    const hasher = createSimHasher();
    const batch = hasher.hashMany(docs);
    for (let d = 0; d < docs.length; d++) expect(batch[d], `document ${d}`).toBe(hasher.hash(docs[d]!));
  });

  // The case that used to hang: 2.2 GB of UTF-8 in one call (encodeInto wrote nothing into a view ≥ 2^31 bytes).
  it('a batch of more than 2 GiB of text completes, equal to one by one, in bounded WebAssembly memory', () => {
    const big = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((10 << 20) / 27)).slice(0, 10 << 20);
    const odd = bigDocument(1 << 20, 9);
    const copies = Math.ceil(2 ** 31 / big.length) + 4;
    const inputs: string[] = new Array<string>(copies).fill(big);
    inputs[7] = odd;
    inputs[copies - 1] = odd;
    expect(copies * big.length).toBeGreaterThan(2 ** 31);
    const options = { tokenizer: 'whitespace' } as const;
    const fps = simhashMany(inputs, options);
    const expectedBig = simhash(big, options);
    const expectedOdd = simhash(odd, options);
    for (let i = 0; i < copies; i++)
      expect(fps[i], `document ${i}`).toBe(i === 7 || i === copies - 1 ? expectedOdd : expectedBig);
    expect(wasm().heap.byteLength).toBeLessThan(1 << 30);
  });

  it('a batch of more than 2 GiB of bytes completes, equal to one by one', () => {
    const big = utf8.encode('pack my box with five dozen liquor jugs '.repeat(262_144)); // 10 MiB
    const copies = Math.ceil(2 ** 31 / big.byteLength) + 2;
    const fps = simhashMany(new Array<Uint8Array>(copies).fill(big), { tokenizer: 'whitespace' });
    const expected = simhash(big, { tokenizer: 'whitespace' });
    expect(fps.every((fp) => fp === expected)).toBe(true);
  });
});

describe('precomputed hashes of any number', () => {
  it('more than 2 GiB of hashes in one BigUint64Array: the block it repeats gives the same fingerprint', () => {
    // Unit weights: each counter is `repeats` times the block's, so the same sign (and ties stay ties).
    const next = rng(0x2a2a);
    const block = new BigUint64Array(4096).map(
      () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32)),
    );
    const repeats = 2 ** 31 / block.byteLength + 1;
    const hashes = new BigUint64Array(block.length * repeats);
    for (let r = 0; r < repeats; r++) hashes.set(block, r * block.length);
    expect(hashes.byteLength).toBeGreaterThan(2 ** 31);
    expect(simhashOfHashes(hashes)).toBe(referenceReduce([...block], null, 64));
    expect(wasm().heap.byteLength).toBeLessThan(1 << 30);
  });
});

describe('one document too large for WebAssembly memory', () => {
  it('bytes over the limit fail fast with a RangeError naming it, before WebAssembly memory grows', () => {
    const before = wasm().heap.byteLength;
    const huge = new Uint8Array(MAX_DOCUMENT_BYTES + 1); // zero pages: not touched
    const started = performance.now();
    expect(() => simhashMany(['ok', huge])).toThrow(
      new RangeError(
        `document 1 has ${MAX_DOCUMENT_BYTES + 1} bytes; one document may have at most ${MAX_DOCUMENT_BYTES} (1 GiB), so that it and its tokenizer scratch fit in WebAssembly memory (4 GiB)`,
      ),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(wasm().heap.byteLength).toBe(before);
    expect(simhash('still usable here')).toBe(referenceSimhash('still usable here', 'shingles', 3, 64).fingerprint);
  });

  it('a string whose UTF-8 is over the limit fails with its exact byte count', () => {
    const units = Math.floor(MAX_DOCUMENT_BYTES / 3) + 1; // 3 bytes each in UTF-8
    const huge = '\u4e00'.repeat(units);
    expect(() => simhash(huge)).toThrow(
      new RangeError(
        `input has ${3 * units} bytes of UTF-8; one document may have at most ${MAX_DOCUMENT_BYTES} (1 GiB), so that it and its tokenizer scratch fit in WebAssembly memory (4 GiB)`,
      ),
    );
    // The same number of units in ASCII is 1/3 of the bytes and goes through.
    expect(typeof simhash('a'.repeat(units), { tokenizer: 'whitespace' })).toBe('bigint');
  });
});

describe('detached buffers', () => {
  it('a detached Uint8Array is a TypeError naming the document, not an empty document', () => {
    const bytes = utf8.encode('some words here');
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    expect(() => simhashMany(['a', bytes])).toThrow(
      new TypeError('document 1 is a view of a detached ArrayBuffer (transferred or resized away)'),
    );
  });
});
