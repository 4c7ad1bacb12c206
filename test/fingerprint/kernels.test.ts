// The text kernel's internal boundaries, checked against the plain TypeScript reference (test/reference.ts, with
// hash-wasm's XXH3): tokens are queued and hashed in batches of 128, shingle hashes keep a window of 256 word
// hashes, and in spec 1 shingles of 3..8 words (17..64 bytes) take a straight-line XXH3 path while other widths
// take the general one. Documents here have token counts on both sides of every batch and window boundary.
import { beforeAll, describe, expect, it } from 'vitest';
import { createSimHasher, type Bits } from '../../src/index.js';
import {
  MODE_NGRAMS,
  MODE_SHINGLES,
  MODE_WHITESPACE,
  MODE_WORDS,
  SPEC_V1,
  SPEC_V2,
} from '../../src/fingerprint/modes.shared.js';
import { wasm } from '../../src/runtime/wasm.js';
import { loadReference, randomDocument, referenceSimhash, rng, type Mode } from '../reference.js';

beforeAll(loadReference);

/** Exactly `tokens` whitespace-separated ASCII words of 1..20 letters (words mode splits none of them further). */
function wordsDocument(next: () => number, tokens: number): string {
  const words: string[] = [];
  for (let i = 0; i < tokens; i++) {
    let w = '';
    const len = 1 + Math.floor(next() * 20);
    for (let j = 0; j < len; j++) w += String.fromCharCode((next() < 0.2 ? 65 : 97) + Math.floor(next() * 26));
    words.push(w);
  }
  return words.join(next() < 0.5 ? ' ' : '\n');
}

const COUNTS = [0, 1, 2, 7, 8, 9, 127, 128, 129, 255, 256, 257, 383, 384, 385, 1000];

describe('text kernel batches and shingle paths', () => {
  for (const bits of [64, 128] as Bits[]) {
    it(`shingles of every width class around batch and window boundaries at ${bits} bits, both specs`, () => {
      const next = rng(1500 + bits);
      for (const width of [1, 2, 3, 4, 5, 8, 9, 64]) {
        for (const [preset, ref] of [
          ['default', 2],
          ['simhash-wasm/1', 1],
        ] as const) {
          const hasher = createSimHasher({ tokenizer: 'shingles', width, bits, preset });
          for (const tokens of COUNTS) {
            const doc = wordsDocument(next, tokens);
            const expected = referenceSimhash(doc, 'shingles', width, bits, ref);
            const got = hasher.hashDetailed(doc);
            expect(got.fingerprint, `${preset}, width ${width}, ${tokens} words`).toBe(expected.fingerprint);
            expect(got.featureCount).toBe(expected.featureCount);
          }
        }
      }
    });

    it(`whitespace and words around batch boundaries, and a batch of such documents, at ${bits} bits`, () => {
      const next = rng(1600 + bits);
      for (const mode of ['whitespace', 'words'] as Mode[]) {
        const hasher = createSimHasher({ tokenizer: mode, bits });
        const docs = COUNTS.map((n) => wordsDocument(next, n));
        const batch = hasher.hashManyDetailed(docs);
        docs.forEach((doc, i) => {
          const expected = referenceSimhash(doc, mode, 0, bits);
          const fp =
            bits === 128
              ? (batch.fingerprints[2 * i + 1]! << 64n) | batch.fingerprints[2 * i]!
              : batch.fingerprints[i]!;
          expect(fp, `${mode}, ${COUNTS[i]} words`).toBe(expected.fingerprint);
          expect(batch.featureCounts[i]).toBe(expected.featureCount);
        });
      }
    });
  }

  it('tokens that span whole 64-byte blocks, end on a block edge or fill the tail, at every alignment', () => {
    // The tokenizers read 64-byte blocks as bit masks: a token may open in one block, run through the next ones
    // and close anywhere. Pure ASCII documents keep every block on the fast path; one non-ASCII piece per
    // document puts the code-point path next to it.
    const next = rng(1800);
    const hashers = (['whitespace', 'words', 'shingles'] as Mode[]).map(
      (mode) => [mode, createSimHasher({ tokenizer: mode })] as const,
    );
    for (let d = 0; d < 400; d++) {
      const pieces: string[] = [' '.repeat(d % 67)];
      const count = 1 + Math.floor(next() * 8);
      for (let i = 0; i < count; i++) {
        const len = [1, 63, 64, 65, 127, 128, 129, 200][Math.floor(next() * 8)]! + Math.floor(next() * 3) - 1;
        let w = '';
        for (let j = 0; j < len; j++) w += String.fromCharCode((next() < 0.3 ? 65 : 97) + Math.floor(next() * 26));
        pieces.push(w, next() < 0.1 ? ' é ' : ' '.repeat(1 + Math.floor(next() * 70)));
      }
      if (next() < 0.5) pieces.pop(); // end inside a token
      const doc = pieces.join('');
      for (const [mode, hasher] of hashers) {
        expect(hasher.hash(doc), `${mode}, doc ${d}: ${JSON.stringify(doc.slice(0, 80))}`).toBe(
          referenceSimhash(doc, mode, mode === 'shingles' ? 3 : 0, 64).fingerprint,
        );
      }
    }
  });

  it('the last, partial block at every length, ASCII or not, with scratch of exactly 2 × longest + 64 bytes', () => {
    // A document's last 1..63 bytes are copied into a block padded with spaces when they are ASCII (the block
    // path), and take the code-point path otherwise. The documents lie back to back, so a tail that read past its
    // end would read the next document; the tail's folded block is written whole, so scratch is given exactly its
    // documented size with a canary after it.
    const next = rng(1900);
    const letters = (n: number) => {
      let w = '';
      for (let j = 0; j < n; j++) w += String.fromCharCode((next() < 0.3 ? 65 : 97) + Math.floor(next() * 26));
      return w;
    };
    const docs: string[] = [];
    for (const blocks of [0, 1, 2]) {
      for (let tail = 0; tail < 64; tail++) {
        // Words up to the tail, then one that opens before it (when there is a block before) and ends inside it.
        let doc = '';
        while (doc.length < 64 * blocks - 8) doc += `${letters(1 + Math.floor(next() * 12))} `;
        doc = doc.slice(0, Math.max(0, 64 * blocks - 5));
        doc += letters(64 * blocks + tail - doc.length);
        if (tail >= 4 && next() < 0.5) {
          const at = 64 * blocks + Math.floor(next() * (tail - 2));
          doc = `${doc.slice(0, at)}é${doc.slice(at + 2)}`; // two UTF-8 bytes for two ASCII ones: same length
        }
        if (tail >= 3 && next() < 0.5) doc = `${doc.slice(0, -2)} ${doc.slice(-1)}`; // a one-letter last word
        docs.push(doc);
      }
    }
    const rt = wasm();
    const k = rt.kernels as unknown as {
      fingerprintTexts(...args: number[]): void;
    };
    const bytes = docs.map((d) => new TextEncoder().encode(d));
    expect(bytes.map((b) => b.length % 64)).toContain(63);
    const total = bytes.reduce((a, b) => a + b.length, 0);
    const longest = Math.max(...bytes.map((b) => b.length));
    const scratchBytes = 2 * longest + 64;
    const base = rt.heap.alloc(
      total + 16 + 4 * (docs.length + 1) + scratchBytes + 64 + 16 * docs.length + 8 * docs.length + 64,
    );
    try {
      const text = base + 16;
      const offsets = (text + total + 3) & ~3;
      const scratch = offsets + 4 * (docs.length + 1);
      const canary = scratch + scratchBytes;
      const out = (canary + 64 + 15) & ~15;
      const counts = out + 16 * docs.length;
      let at = 0;
      const u32 = new Uint32Array(rt.heap.u8.buffer, offsets, docs.length + 1);
      bytes.forEach((b, i) => {
        rt.heap.u8.set(b, text + at);
        at += b.length;
        u32[i + 1] = at;
      });
      for (const [mode, name, width] of [
        [MODE_WHITESPACE, 'whitespace', 0],
        [MODE_WORDS, 'words', 0],
        [MODE_SHINGLES, 'shingles', 3],
        [MODE_NGRAMS, 'ngrams', 4],
      ] as const) {
        for (const bits of [32, 64, 128] as Bits[]) {
          for (const spec of [SPEC_V1, SPEC_V2] as const) {
            rt.heap.u8.fill(0xa5, canary, canary + 64);
            k.fingerprintTexts(text, offsets, docs.length, mode, width, bits, scratch, out, counts, spec);
            expect(
              rt.heap.u8.subarray(canary, canary + 64).every((b) => b === 0xa5),
              'canary after scratch',
            ).toBe(true);
            const u64 = rt.heap.u64;
            docs.forEach((doc, i) => {
              const fp =
                bits === 128
                  ? (u64[(out >>> 3) + 2 * i + 1]! << 64n) | u64[(out >>> 3) + 2 * i]!
                  : u64[(out >>> 3) + i]!;
              expect(
                fp,
                `${name}, ${bits} bits, spec ${spec}, ${bytes[i]!.length} bytes: ${JSON.stringify(doc.slice(-70))}`,
              ).toBe(referenceSimhash(doc, name, width, bits, spec).fingerprint);
            });
          }
        }
      }
    } finally {
      rt.heap.release(base);
    }
  });

  it('long multilingual documents: queued word tokens survive the code-point path and scratch reuse', () => {
    const next = rng(1700);
    for (const [mode, width] of [
      ['words', 0],
      ['shingles', 3],
      ['shingles', 6],
    ] as Array<[Mode, number]>) {
      const hasher = createSimHasher(mode === 'words' ? { tokenizer: mode } : { tokenizer: mode, width });
      for (let d = 0; d < 12; d++) {
        const doc = randomDocument(next, 3000);
        expect(hasher.hash(doc), `${mode} ${width} doc ${d}`).toBe(referenceSimhash(doc, mode, width, 64).fingerprint);
      }
    }
  });
});

describe('whitespace separators, byte by byte', () => {
  // The separator mask is built 8 bytes at a time (SWAR, scalar build) or 16 (SIMD) over 64-byte blocks, with a
  // byte loop for the tail: every byte value at offsets that cover each lane of a word, each word of a block, a
  // block's edges and the tail, against the reference's plain set of five separators.
  const OFFSETS = [0, 1, 7, 8, 9, 15, 16, 23, 31, 32, 39, 47, 55, 62, 63, 64, 65, 71, 100, 127, 128, 150, 163];
  for (const bits of [64, 128] as Bits[]) {
    it(`every byte value 0x00-0xFF at every lane and block position splits (or not) as the spec says, ${bits} bits`, () => {
      const hasher = createSimHasher({ tokenizer: 'whitespace', bits });
      for (let b = 0; b < 256; b++) {
        const doc = new Uint8Array(164);
        for (let i = 0; i < doc.length; i++) doc[i] = 97 + (i % 26);
        // Lone values and pairs: a byte between letters, and two in a row (an empty token between them).
        for (const [n, at] of OFFSETS.entries()) {
          doc[at] = b;
          if (n % 3 === 0 && at + 1 < doc.length) doc[at + 1] = b;
        }
        const expected = referenceSimhash(doc, 'whitespace', 0, bits);
        const got = hasher.hashDetailed(doc);
        expect(got.featureCount, `byte 0x${b.toString(16)}`).toBe(expected.featureCount);
        expect(got.fingerprint, `byte 0x${b.toString(16)}`).toBe(expected.fingerprint);
      }
    });
  }
});
