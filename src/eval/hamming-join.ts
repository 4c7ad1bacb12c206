// Every pair of fingerprints within Hamming distance maxK. The evaluation needs the distance of each reported pair
// (to sweep k). Small corpora and 32-bit fingerprints: all pairs compared here (O(n²) popcounts, the reference);
// larger corpora at 64/128 bits: the library's own join (findNearDuplicates in src/dedup/dedup.ts), which gives the
// same pairs (checked in test/eval/eval.test.ts) about ten times faster.
import { popcount32 } from '../fingerprint/bits.js';
import { findNearDuplicates } from '../join/find-near-duplicates.js';

export interface HammingPairs {
  a: Int32Array;
  b: Int32Array;
  distance: Uint8Array;
  count: number;
}

/** Pairs (a < b) of documents whose fingerprints differ in at most `maxK` bits; 128-bit: two u64 per document. */
export function pairsWithin(fingerprints: BigUint64Array, bits: 32 | 64 | 128, maxK: number): HammingPairs {
  const wordsPerDoc = bits === 128 ? 4 : 2; // u32 words
  const u32 = new Uint32Array(fingerprints.buffer, fingerprints.byteOffset, fingerprints.length * 2);
  const n = u32.length / wordsPerDoc;
  let a = new Int32Array(1024);
  let b = new Int32Array(1024);
  let distance = new Uint8Array(1024);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const p = i * wordsPerDoc;
    for (let j = i + 1; j < n; j++) {
      const q = j * wordsPerDoc;
      let d = popcount32(u32[p]! ^ u32[q]!) + popcount32(u32[p + 1]! ^ u32[q + 1]!);
      if (wordsPerDoc === 4 && d <= maxK)
        d += popcount32(u32[p + 2]! ^ u32[q + 2]!) + popcount32(u32[p + 3]! ^ u32[q + 3]!);
      if (d > maxK) continue;
      if (count === a.length) {
        const grow = (old: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
          const next = new Int32Array(old.length * 2);
          next.set(old);
          return next;
        };
        a = grow(a);
        b = grow(b);
        const nd = new Uint8Array(distance.length * 2);
        nd.set(distance);
        distance = nd;
      }
      a[count] = i;
      b[count] = j;
      distance[count] = d;
      count++;
    }
  }
  return { a, b, distance, count };
}

/** Below this many documents the O(n²) scan is fast enough and has no dependencies. */
export const JOIN_FROM = 2000;

/** pairsWithin, through the library's join when the corpus is large and the width is 64 or 128 bits. */
export function pairsWithinFast(fingerprints: BigUint64Array, bits: 32 | 64 | 128, maxK: number): HammingPairs {
  const n = bits === 128 ? fingerprints.length / 2 : fingerprints.length;
  if (bits === 32 || n < JOIN_FROM) return pairsWithin(fingerprints, bits, maxK);
  const found = findNearDuplicates(fingerprints, { k: maxK, bits });
  return {
    a: Int32Array.from(found.a),
    b: Int32Array.from(found.b),
    distance: found.distance,
    count: found.a.length,
  };
}
