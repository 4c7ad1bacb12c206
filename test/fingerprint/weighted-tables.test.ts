// The weighted reduction of resident hashes by per-byte tables (assembly/weighted-tables.ts) sums in another order
// than the reference; these tests check that its fingerprints still equal the plain in-order reference
// (test/reference.ts) bit for bit: on random weights of every kind, and on weights built so that the order of the
// additions decides a bit.
import { beforeAll, describe, expect, it } from 'vitest';
import { type Bits, simhashOfHashes } from '../../src/index.js';
import { loadReference, referenceReduce, rng } from '../reference.js';
import { withHeapLimit } from '../runtime/heap-limit.js';

beforeAll(loadReference);

/** The kernel's own threshold (WEIGHTED_TABLE_MIN): documents this long or longer take the tables. */
const TABLE_MIN = 512;
const WIDTHS: Bits[] = [32, 64, 128];
const ALL_ONES = (1n << 64n) - 1n;

function randomHashes(next: () => number, n: number, bits: Bits): { hashes: BigUint64Array; asBig: bigint[] } {
  const words = bits === 128 ? 2 : 1;
  const hashes = new BigUint64Array(n * words).map(
    () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32)),
  );
  const asBig = Array.from({ length: n }, (_, i) =>
    words === 2 ? (hashes[2 * i + 1]! << 64n) | hashes[2 * i]! : hashes[i]!,
  );
  return { hashes, asBig };
}

/** Hashes given as whole values (up to 128 bits), laid out as simhashOfHashes takes them. */
function layout(values: bigint[], bits: Bits): BigUint64Array {
  if (bits !== 128) return BigUint64Array.from(values, (v) => BigInt.asUintN(64, v));
  const out = new BigUint64Array(values.length * 2);
  values.forEach((v, i) => {
    out[2 * i] = BigInt.asUintN(64, v);
    out[2 * i + 1] = BigInt.asUintN(64, v >> 64n);
  });
  return out;
}

const expectReference = (values: bigint[], hashes: BigUint64Array, weights: number[], bits: Bits) =>
  expect(simhashOfHashes(hashes, { bits, weights: Float64Array.from(weights) })).toBe(
    referenceReduce(values, weights, bits),
  );

describe('weighted tables', () => {
  it('equal the in-order reference on random weights of every kind, at and around the threshold', () => {
    const next = rng(7301);
    const kinds: Array<[string, (i: number) => number]> = [
      ['floats of both signs', () => (next() - 0.5) * 100],
      [
        'magnitudes from 2^-60 to 2^60',
        () => (next() < 0.5 ? -1 : 1) * 2 ** Math.floor(next() * 121 - 60) * (1 + next()),
      ],
      ['small integers', () => Math.floor(next() * 21) - 10],
      ['integers whose |w| sum passes 2^52', () => (next() < 0.5 ? -1 : 1) * 2 ** 43 * (1 + Math.floor(next() * 1000))],
      ['weights near the f64 limit (overflow: the reference reducer)', () => (next() - 0.5) * 1e306],
      ['subnormals and zeros', (i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? -0 : 5e-324 * Math.floor(next() * 1000))],
      ['one weight per feature pattern', (i) => (i % 7) + 0.5],
    ];
    for (const bits of WIDTHS) {
      for (const n of [TABLE_MIN - 1, TABLE_MIN, TABLE_MIN + 1, 3000]) {
        const { hashes, asBig } = randomHashes(next, n, bits);
        for (const [kind, weight] of kinds) {
          const weights = Array.from({ length: n }, (_, i) => weight(i));
          expect(
            simhashOfHashes(hashes, { bits, weights: Float64Array.from(weights) }),
            `${kind}, ${bits} bits, n = ${n}`,
          ).toBe(referenceReduce(asBig, weights, bits));
        }
      }
    }
  });

  it('weights that cancel exactly leave counters at 0: ties clear the bit, as in the reference', () => {
    const next = rng(7302);
    for (const bits of WIDTHS) {
      const n = 2 * TABLE_MIN;
      const { asBig } = randomHashes(next, n / 2, bits);
      // Each feature twice, once with w and once with -w: every counter is exactly 0 in feature order.
      const values = asBig.flatMap((h) => [h, h]);
      const weights = asBig.flatMap(() => {
        const w = next() * 10 + 0.1;
        return [w, -w];
      });
      expectReference(values, layout(values, bits), weights, bits);
      expect(referenceReduce(values, weights, bits)).toBe(0n);
    }
  });

  // One feature sets the chosen bits with weight 1; then m features of weight 2^-54 clear them, each lost when
  // added to 1 in feature order (1 - 2^-54 rounds back to 1); the last subtracts 1 - 2^-53. In feature order the
  // chosen counters end at 2^-53 > 0, so their bits are set, while the exact sum, (2 - m) 2^-54, is below 0.
  function orderDecides(bitsSet: bigint, m: number): { values: bigint[]; weights: number[] } {
    const values = [bitsSet, ...new Array<bigint>(m).fill(0n), 0n];
    const weights = [1, ...new Array<number>(m).fill(2 ** -54), 1 - 2 ** -53];
    return { values, weights };
  }

  it('a few counters that only feature order decides are summed again in that order', () => {
    for (const bits of WIDTHS) {
      const chosen = bits === 128 ? [0, 31, 63, 64, 127] : bits === 64 ? [0, 31, 40, 63] : [0, 5, 31];
      const bitsSet = chosen.reduce((v, b) => v | (1n << BigInt(b)), 0n);
      const { values, weights } = orderDecides(bitsSet, 2 * TABLE_MIN);
      const expected = referenceReduce(values, weights, bits);
      expect(expected).toBe(bitsSet);
      expectReference(values, layout(values, bits), weights, bits);
    }
  });

  it('integer weights are exact in any order only while their |w| sum stays below 2^52', () => {
    // -2^54 first; then m weights of 1 that set the bits, each lost in feature order (-2^54 + 1 rounds back);
    // then 2^54 - 4 that sets them: in feature order the counters end at -4 (bits clear), the exact sum at m - 4.
    const m = 2 * TABLE_MIN;
    for (const bits of WIDTHS) {
      const bitsSet = bits === 128 ? (1n << 100n) | 6n : (1n << 31n) | 6n;
      const values = [0n, ...new Array<bigint>(m).fill(bitsSet), bitsSet];
      const weights = [2 ** 54, ...new Array<number>(m).fill(1), 2 ** 54 - 4];
      expect(referenceReduce(values, weights, bits)).toBe(0n);
      expectReference(values, layout(values, bits), weights, bits);
    }
  });

  it('with many such counters the whole document goes through the reference reducer', () => {
    for (const bits of WIDTHS) {
      const all = bits === 128 ? (ALL_ONES << 64n) | ALL_ONES : bits === 64 ? ALL_ONES : 0xffffffffn;
      const { values, weights } = orderDecides(all, 2 * TABLE_MIN);
      expect(referenceReduce(values, weights, bits)).toBe(all);
      expectReference(values, layout(values, bits), weights, bits);
    }
  });

  it('leaves nothing behind: the next document starts from empty tables', () => {
    const next = rng(7303);
    const { hashes, asBig } = randomHashes(next, 2000, 128);
    const weights = Float64Array.from({ length: 2000 }, () => next() * 3);
    const first = simhashOfHashes(hashes, { bits: 128, weights });
    for (let r = 0; r < 3; r++) expect(simhashOfHashes(hashes, { bits: 128, weights })).toBe(first);
    expect(first).toBe(referenceReduce(asBig, Array.from(weights), 128));
  });
});

describe('hashes in chunks', () => {
  it('any number of hashes fits a small region: 32 MB of them under a 4 MiB memory cap, unit and weighted', () => {
    const next = rng(7304);
    for (const bits of WIDTHS) {
      const block = 1000;
      const repeats = 4096;
      const { hashes: one, asBig } = randomHashes(next, block, bits);
      const counts = Array.from({ length: block }, () => 1 + Math.floor(next() * 5));
      const hashes = new BigUint64Array(one.length * repeats);
      const weights = new Float64Array(block * repeats);
      for (let r = 0; r < repeats; r++) {
        hashes.set(one, r * one.length);
        weights.set(counts, r * block);
      }
      // Integer weights sum exactly, so each counter is `repeats` times the block's: the same signs and ties.
      withHeapLimit(4 << 20, () => {
        expect(simhashOfHashes(hashes, { bits })).toBe(referenceReduce(asBig, null, bits));
        expect(simhashOfHashes(hashes, { bits, weights })).toBe(referenceReduce(asBig, counts, bits));
      });
    }
  });

  it('a second pass over the chunks: counters that only feature order decides, across chunk boundaries', () => {
    // As orderDecides above, stretched over three chunks of 64 Ki features.
    const m = 3 * 65536;
    for (const bits of WIDTHS) {
      const bitsSet = bits === 128 ? (1n << 127n) | 1n : bits === 64 ? (1n << 63n) | 1n : (1n << 31n) | 1n;
      const values = [bitsSet, ...new Array<bigint>(m).fill(0n), 0n];
      const weights = [1, ...new Array<number>(m).fill(2 ** -54), 1 - 2 ** -53];
      // The reference's loop without BigInt shifts per feature: every later hash is 0, so it subtracts from every
      // counter; the chosen bits' counters start at 1 and end at 2^-53 (set), the others start at -1 (clear).
      let inOrder = 1;
      for (const w of weights.slice(1)) inOrder -= w;
      expect(inOrder).toBe(2 ** -53);
      expect(simhashOfHashes(layout(values, bits), { bits, weights: Float64Array.from(weights) })).toBe(bitsSet);
    }
  });
});

describe('weights that are not finite', () => {
  it('are a RangeError naming the first one, wherever it is, and the library keeps working', () => {
    const next = rng(7306);
    const { hashes, asBig } = randomHashes(next, 1001, 64);
    for (const [at, bad] of [
      [0, Number.NaN],
      [500, Number.POSITIVE_INFINITY],
      [998, Number.NEGATIVE_INFINITY],
      [1000, Number.NaN],
    ] as const) {
      const weights = new Float64Array(1001).fill(0.5);
      weights[at] = bad;
      if (at < 1000) weights[1000] = Number.NaN; // a later one is not the one named
      expect(() => simhashOfHashes(hashes, { weights })).toThrow(
        new RangeError(`weights[${at}] must be finite, got ${bad}`),
      );
    }
    const weights = Array.from({ length: 1001 }, () => next() - 0.5);
    expect(simhashOfHashes(hashes, { weights: Float64Array.from(weights) })).toBe(referenceReduce(asBig, weights, 64));
  });
});
