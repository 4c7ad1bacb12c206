// Batch Hamming search checked against plain TypeScript references (two 32-bit halves per word) on seeded random
// data with planted neighbours at distances 0..k+1, both widths, lengths around every unroll, group, tile,
// chunk and buffer boundary; plus argument validation and FingerprintSet memory reuse.
import { describe, expect, it } from 'vitest';
import {
  FingerprintSet,
  countWithinDistance,
  distanceHistogram,
  hammingDistance,
  hammingDistances,
  hammingDistancesInto,
  nearest,
  pairsWithinDistance,
  selfPairsWithinDistance,
  withinDistance,
  type HammingBits,
} from '../../src/index.js';
import { wasm } from '../../src/runtime/wasm.js';
import { selfPairsInBand, sortByA } from '../../src/hamming/hamming.js';
import { rng } from '../reference.js';

// ---------------------------------------------------------------------------------------------------------------
// Seeded data

/** 32-bit unsigned draws from the shared seeded PRNG (test/reference.ts): the same mulberry32 stream. */
function prng(seed: number): () => number {
  const next = rng(seed);
  return () => next() * 4294967296;
}

function randomBig(rand: () => number, bits: HammingBits): bigint {
  let x = 0n;
  for (let i = 0; i < bits / 32; i++) x = (x << 32n) | BigInt(rand());
  return x;
}

/** `fp` with exactly `d` distinct bits flipped. */
function flip(rand: () => number, fp: bigint, d: number, bits: HammingBits): bigint {
  const chosen = new Set<number>();
  while (chosen.size < d) chosen.add(rand() % bits);
  for (const bit of chosen) fp ^= 1n << BigInt(bit);
  return fp;
}

function store(values: readonly bigint[], bits: HammingBits): BigUint64Array {
  const words = bits / 64;
  const out = new BigUint64Array(values.length * words);
  values.forEach((v, i) => {
    out[i * words] = BigInt.asUintN(64, v);
    if (words === 2) out[i * words + 1] = v >> 64n;
  });
  return out;
}

/** Random fingerprints, about a third of them planted at distances 0..k+1 from `query`. */
function plantedArray(rand: () => number, count: number, bits: HammingBits, query: bigint, k: number): BigUint64Array {
  const values: bigint[] = [];
  for (let i = 0; i < count; i++) {
    values.push(rand() % 3 === 0 ? flip(rand, query, rand() % (k + 2), bits) : randomBig(rand, bits));
  }
  return store(values, bits);
}

/** Random fingerprints where many are near or equal to earlier ones (distances 0..k+1), for the joins. */
function clusteredArray(rand: () => number, count: number, bits: HammingBits, k: number): BigUint64Array {
  const values: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const near = i > 0 && rand() % 2 === 0;
    values.push(near ? flip(rand, values[rand() % i]!, rand() % (k + 2), bits) : randomBig(rand, bits));
  }
  return store(values, bits);
}

// ---------------------------------------------------------------------------------------------------------------
// Plain TypeScript references: two 32-bit halves per word through a Uint32Array view

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function halves(value: bigint, bits: HammingBits): Uint32Array {
  const out = new Uint32Array(bits / 32);
  for (let i = 0; i < out.length; i++) out[i] = Number((value >> BigInt(32 * i)) & 0xffffffffn);
  return out;
}

function view(fps: BigUint64Array): Uint32Array {
  return new Uint32Array(fps.buffer, fps.byteOffset, fps.length * 2);
}

function refDistance(u32: Uint32Array, i: number, q: Uint32Array): number {
  let d = 0;
  for (let w = 0; w < q.length; w++) d += popcount32(u32[i * q.length + w]! ^ q[w]!);
  return d;
}

function refDistances(query: bigint, fps: BigUint64Array, bits: HammingBits): number[] {
  const u32 = view(fps);
  const q = halves(query, bits);
  const n = fps.length / (bits / 64);
  return Array.from({ length: n }, (_, i) => refDistance(u32, i, q));
}

function refNearest(distances: number[], n: number): { id: number[]; distance: number[] } {
  const order = distances
    .map((d, i) => [d, i] as const)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1])
    .slice(0, n);
  return { id: order.map((e) => e[1]), distance: order.map((e) => e[0]) };
}

function refPairs(
  a: BigUint64Array,
  b: BigUint64Array | null,
  k: number,
  bits: HammingBits,
): { a: number[]; b: number[]; distance: number[] } {
  const words = bits / 64;
  const na = a.length / words;
  const other = b ?? a;
  const nb = other.length / words;
  const ua = view(a);
  const ub = view(other);
  const out = { a: [] as number[], b: [] as number[], distance: [] as number[] };
  for (let i = 0; i < na; i++) {
    const q = ua.subarray(i * words * 2, (i + 1) * words * 2);
    for (let j = b === null ? i + 1 : 0; j < nb; j++) {
      const d = refDistance(ub, j, q);
      if (d <= k) {
        out.a.push(i);
        out.b.push(j);
        out.distance.push(d);
      }
    }
  }
  return out;
}

const plain = <T extends ArrayLike<number>>(x: T): number[] => Array.from(x);

/** Pairs in (a, b) order as plain arrays, by a plain sort. */
function sortPairsByAB(p: { a: Uint32Array; b: Uint32Array; distance: Uint8Array }) {
  const order = Array.from(p.a, (_, i) => i).sort((x, y) => p.a[x]! - p.a[y]! || p.b[x]! - p.b[y]!);
  return { a: order.map((i) => p.a[i]!), b: order.map((i) => p.b[i]!), distance: order.map((i) => p.distance[i]!) };
}

/** Index of the first difference (or the shorter length), -1 when equal: quicker than toEqual on big arrays. */
function firstDifference(got: ArrayLike<number>, want: ArrayLike<number>): number {
  for (let i = 0; i < Math.max(got.length, want.length); i++) if (got[i] !== want[i]) return i;
  return -1;
}

// ---------------------------------------------------------------------------------------------------------------

const WIDTHS: HammingBits[] = [64, 128];
// Around every unroll (4, 8), the 65536-entry collect buffer and the 32768-fingerprint streamed chunk.
const LENGTHS = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000,
];
const LONG_LENGTHS = [32767, 32768, 32769, 70001];

function checkOneQuery(
  fps: BigUint64Array,
  bits: HammingBits,
  query: bigint,
  k: number,
  on: BigUint64Array | FingerprintSet,
): void {
  const expected = refDistances(query, fps, bits);
  const options = on instanceof FingerprintSet ? undefined : { bits };
  const label = `bits ${bits}, length ${expected.length}, k ${k}`;
  expect(plain(hammingDistances(query, on, options)), label).toEqual(expected);
  const into = new Uint8Array(expected.length + 3).fill(0xee);
  expect(hammingDistancesInto(query, on, into, options)).toBe(into);
  expect(plain(into.subarray(0, expected.length)), label).toEqual(expected);
  expect(plain(into.subarray(expected.length)), 'bytes past the fingerprints stay untouched').toEqual([
    0xee, 0xee, 0xee,
  ]);
  const inK = expected.flatMap((d, i) => (d <= k ? [i] : []));
  expect(plain(withinDistance(query, on, k, options)), label).toEqual(inK);
  expect(countWithinDistance(query, on, k, options), label).toBe(inK.length);
  const hist = new Array<number>(bits + 1).fill(0);
  for (const d of expected) hist[d]!++;
  expect(plain(distanceHistogram(query, on, options)), label).toEqual(hist);
  for (const n of [0, 1, 3, 10, expected.length, expected.length + 5]) {
    const got = nearest(query, on, n, options);
    const want = refNearest(expected, n);
    expect({ id: plain(got.id), distance: plain(got.distance) }, `${label}, nearest ${n}`).toEqual(want);
  }
}

describe('one query against many, vs the TypeScript reference', () => {
  for (const bits of WIDTHS) {
    it(`${bits}-bit, lengths 0..17 and around 32, 64, 128, as arrays and as resident sets`, () => {
      const rand = prng(bits * 7919 + 1);
      for (const length of LENGTHS) {
        for (const k of [0, 3, 7]) {
          const query = randomBig(rand, bits);
          const fps = plantedArray(rand, length, bits, query, k);
          checkOneQuery(fps, bits, query, k, fps);
          const set = FingerprintSet.from(fps, { bits });
          try {
            checkOneQuery(fps, bits, query, k, set);
          } finally {
            set.free();
          }
        }
      }
    });

    it(`${bits}-bit, lengths around the streamed chunk and the collect buffer`, () => {
      const rand = prng(bits * 104729 + 5);
      for (const length of LONG_LENGTHS) {
        const query = randomBig(rand, bits);
        const fps = plantedArray(rand, length, bits, query, 4);
        checkOneQuery(fps, bits, query, 4, fps);
        // Every fingerprint within k: the collect buffer fills and resumes several times.
        const all = withinDistance(query, fps, bits, { bits });
        expect(all.length).toBe(length);
        expect(all.every((v, i) => v === i)).toBe(true);
      }
    });
  }

  it('matches exactly at k and not at k + 1, for every k at both widths', () => {
    const rand = prng(42);
    for (const bits of WIDTHS) {
      for (let k = 0; k < bits; k++) {
        const query = randomBig(rand, bits);
        const fps = store(
          [flip(rand, query, k + 1, bits), flip(rand, query, k, bits), flip(rand, query, k + 1, bits)],
          bits,
        );
        expect(plain(withinDistance(query, fps, k, { bits })), `bits ${bits}, k ${k}`).toEqual([1]);
        expect(countWithinDistance(query, fps, k, { bits })).toBe(1);
        expect(countWithinDistance(query, fps, k + 1, { bits })).toBe(3);
      }
      const query = randomBig(rand, bits);
      const far = store([query ^ ((1n << BigInt(bits)) - 1n)], bits);
      expect(plain(hammingDistances(query, far, { bits }))).toEqual([bits]);
      expect(plain(withinDistance(query, far, bits, { bits }))).toEqual([0]);
      expect(plain(withinDistance(query, far, bits - 1, { bits }))).toEqual([]);
    }
  });

  it('agrees with hammingDistance on bigints', () => {
    const rand = prng(7);
    for (const bits of WIDTHS) {
      const values = Array.from({ length: 50 }, () => randomBig(rand, bits));
      const query = randomBig(rand, bits);
      expect(plain(hammingDistances(query, store(values, bits), { bits }))).toEqual(
        values.map((v) => hammingDistance(v, query)),
      );
    }
  });

  it('nearest breaks ties by index, also when many tie at the cut-off', () => {
    const rand = prng(99);
    for (const bits of WIDTHS) {
      const query = randomBig(rand, bits);
      // 10000 fingerprints at only three distances: the running cut-off and the final one both fall in ties.
      const values = Array.from({ length: 10000 }, () => flip(rand, query, [2, 5, 9][rand() % 3]!, bits));
      const fps = store(values, bits);
      const expected = refDistances(query, fps, bits);
      for (const n of [1, 100, 3000, 5000, 9999]) {
        const got = nearest(query, fps, n, { bits });
        expect({ id: plain(got.id), distance: plain(got.distance) }, `bits ${bits}, n ${n}`).toEqual(
          refNearest(expected, n),
        );
      }
      // n exact duplicates of the query at the end: all are found although earlier entries fill the buffer first.
      const dup = store([...values, query, query, query], bits);
      expect(plain(nearest(query, dup, 3, { bits }).id)).toEqual([10000, 10001, 10002]);
    }
  });

  it('handles 10^7 fingerprints (80 MB) as an array and as a resident set', () => {
    const count = 10_000_000;
    const fps = new BigUint64Array(count);
    const u32 = view(fps);
    const rand = prng(2024);
    for (let i = 0; i < u32.length; i++) u32[i] = rand();
    const query = 0x0123456789abcdefn;
    const planted = [0, 12345, 5_000_000, count - 1];
    planted.forEach((at, j) => (fps[at] = j === 0 ? query : flip(rand, query, j, 64)));
    // Random 64-bit words are within 3 of the query with probability ~2^-50: only the planted ones match.
    expect(plain(withinDistance(query, fps, 3))).toEqual(planted);
    expect(countWithinDistance(query, fps, 3)).toBe(4);
    const set = FingerprintSet.from(fps);
    try {
      expect(set.size).toBe(count);
      expect(plain(set.withinDistance(query, 3))).toEqual(planted);
      expect(plain(set.nearest(query, 2).id)).toEqual([0, 12345]);
      const hist = set.distanceHistogram(query);
      expect(hist.reduce((s, v) => s + v, 0)).toBe(count);
      const distances = set.hammingDistances(query);
      expect(distances[count - 1]).toBe(3);
      expect(distances[5_000_000]).toBe(2);
    } finally {
      set.free();
    }
  });
});

describe('the pair sort of the joins (sortByA)', () => {
  it('orders by a, keeping b and the distance with their a in input order, in one pass and by 16-bit digits', () => {
    const rand = prng(31);
    for (const [n, maxA] of [
      [0, 1],
      [1, 1],
      [500, 3],
      [5000, 70_000],
      [5000, 2 ** 32 - 1],
    ] as const) {
      const a = Uint32Array.from({ length: n }, () => rand() % maxA);
      const b = Uint32Array.from({ length: n }, (_, i) => i);
      const d = Uint8Array.from({ length: n }, () => rand() % 65);
      // The reference: a stable sort of the indices by a (Array.prototype.sort is stable).
      const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => a[x]! - a[y]!);
      for (const onePassBelow of [2 ** 24, 1, 2 ** 32]) {
        if (onePassBelow === 2 ** 32 && maxA > 2 ** 24) continue; // one count per value: only for small a
        const got = sortByA(a.slice(), b.slice(), d.slice(), onePassBelow);
        expect(Array.from(got.a), `${n} ${maxA} ${onePassBelow}`).toEqual(order.map((i) => a[i]!));
        expect(Array.from(got.b)).toEqual(order.map((i) => b[i]!));
        expect(Array.from(got.distance)).toEqual(order.map((i) => d[i]!));
      }
    }
  });
});

describe('many against many, vs the TypeScript reference', () => {
  // Around the register groups (8 queries for 64-bit, 4 for 128-bit) and the 1024-candidate tile.
  const JOIN_LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025, 2100];

  for (const bits of WIDTHS) {
    it(`${bits}-bit self-join: each pair once, a < b, duplicates included`, () => {
      const rand = prng(bits + 3);
      for (const length of JOIN_LENGTHS) {
        const k = length > 1000 ? 3 : rand() % 6;
        const fps = clusteredArray(rand, length, bits, k);
        const want = refPairs(fps, null, k, bits);
        const got = selfPairsWithinDistance(fps, k, { bits });
        expect({ a: plain(got.a), b: plain(got.b), distance: plain(got.distance) }, `length ${length}, k ${k}`).toEqual(
          want,
        );
        const set = FingerprintSet.from(fps, { bits });
        try {
          const fromSet = set.selfPairsWithinDistance(k);
          expect(plain(fromSet.b), `set, length ${length}`).toEqual(want.b);
          expect(plain(fromSet.a)).toEqual(want.a);
        } finally {
          set.free();
        }
      }
    });

    it(`${bits}-bit queries against candidates`, () => {
      const rand = prng(bits + 11);
      for (const [na, nb] of [
        [0, 5],
        [5, 0],
        [1, 1],
        [7, 9],
        [9, 1025],
        [17, 2100],
        [33, 3000],
      ] as const) {
        const k = rand() % 6;
        const candidates = clusteredArray(rand, nb, bits, k);
        // Queries: half of them near a candidate, half random.
        const words = bits / 64;
        const values: bigint[] = [];
        for (let i = 0; i < na; i++) {
          if (nb > 0 && i % 2 === 0) {
            const j = rand() % nb;
            const c = words === 1 ? candidates[j]! : candidates[2 * j]! | (candidates[2 * j + 1]! << 64n);
            values.push(flip(rand, c, rand() % (k + 2), bits));
          } else values.push(randomBig(rand, bits));
        }
        const queries = store(values, bits);
        const want = refPairs(queries, candidates, k, bits);
        const got = pairsWithinDistance(queries, candidates, k, { bits });
        expect({ a: plain(got.a), b: plain(got.b), distance: plain(got.distance) }, `${na} x ${nb}, k ${k}`).toEqual(
          want,
        );
        const set = FingerprintSet.from(candidates, { bits });
        try {
          const fromSet = set.pairsWithinDistance(queries, k);
          expect(plain(fromSet.a)).toEqual(want.a);
          expect(plain(fromSet.b)).toEqual(want.b);
        } finally {
          set.free();
        }
      }
    });

    it(`${bits}-bit self-join in a band (dedup's size band): the reference's pairs with j < ends[i]`, () => {
      const rand = prng(bits + 29);
      // Lengths around the 1024-candidate tile, bands from one neighbour to everything; at k = bits, 600
      // fingerprints give more pairs than one output buffer holds.
      for (const [length, widths] of [
        [0, [1]],
        [1, [1]],
        [9, [1, 7]],
        [600, [600]],
        [1023, [1, 300]],
        [1025, [7, 1025]],
        [2100, [1, 300, 1500]],
        [3100, [7, 1500, 3100]],
      ] as const) {
        for (const width of widths) {
          const near = 3 + (rand() % 4);
          const k = length === 600 ? bits : near;
          const fps = clusteredArray(rand, length, bits, near);
          // Non-decreasing ends, each row reaching about `width` ahead, jittered (at most length).
          const ends = new Uint32Array(length);
          let reach = 0;
          for (let i = 0; i < length; i++) {
            reach = Math.min(length, Math.max(reach, i + 1 + (rand() % (2 * width + 1))));
            ends[i] = reach;
          }
          const all = refPairs(fps, null, k, bits);
          const want = { a: [] as number[], b: [] as number[], distance: [] as number[] };
          all.a.forEach((i, p) => {
            if (all.b[p]! >= ends[i]!) return;
            want.a.push(i);
            want.b.push(all.b[p]!);
            want.distance.push(all.distance[p]!);
          });
          const got = sortPairsByAB(selfPairsInBand(fps, k, bits, ends));
          const label = `length ${length}, width ${width}, k ${k}: ${want.a.length} pairs`;
          expect(got.a.length, label).toBe(want.a.length);
          expect(firstDifference(got.a, want.a), label).toBe(-1);
          expect(firstDifference(got.b, want.b), label).toBe(-1);
          expect(firstDifference(got.distance, want.distance), label).toBe(-1);
        }
      }
      expect(() => selfPairsInBand(new BigUint64Array(4), 3, 64, new Uint32Array(3))).toThrow(/ends has 3 entries/);
    });

    it(`${bits}-bit joins with more pairs than one output buffer (k = bits)`, () => {
      const rand = prng(bits + 17);
      const fps = clusteredArray(rand, 600, bits, 2);
      const got = selfPairsWithinDistance(fps, bits, { bits });
      expect(got.a.length).toBe((600 * 599) / 2);
      const want = refPairs(fps, null, bits, bits);
      expect(firstDifference(got.a, want.a)).toBe(-1);
      expect(firstDifference(got.b, want.b)).toBe(-1);
      expect(firstDifference(got.distance, want.distance)).toBe(-1);
      const queries = fps.subarray(0, 300 * (bits / 64));
      const cross = pairsWithinDistance(queries, fps, bits, { bits });
      const crossWant = refPairs(queries, fps, bits, bits);
      expect(cross.a.length).toBe(300 * 600);
      expect(firstDifference(cross.a, crossWant.a)).toBe(-1);
      expect(firstDifference(cross.b, crossWant.b)).toBe(-1);
      expect(firstDifference(cross.distance, crossWant.distance)).toBe(-1);
    });
  }
});

describe('argument validation', () => {
  const fps = new BigUint64Array([1n, 2n, 3n, 4n]);

  it('rejects wrong array types and odd 128-bit lengths', () => {
    expect(() => hammingDistances(0n, [1n, 2n] as unknown as BigUint64Array)).toThrow(TypeError);
    expect(() => hammingDistances(0n, new BigInt64Array(2) as unknown as BigUint64Array)).toThrow(
      /BigUint64Array.*BigInt64Array/,
    );
    expect(() => withinDistance(0n, new Uint32Array(4) as unknown as BigUint64Array, 1)).toThrow(TypeError);
    expect(() => hammingDistances(0n, new BigUint64Array(3), { bits: 128 })).toThrow(RangeError);
    expect(() => hammingDistances(0n, new BigUint64Array(3), { bits: 128 })).toThrow(/odd length, 3/);
    expect(() => FingerprintSet.from(new BigUint64Array(5), { bits: 128 })).toThrow(/odd length, 5/);
    expect(() => FingerprintSet.from([1n] as unknown as BigUint64Array)).toThrow(
      /needs a BigUint64Array, got an array of length 1/,
    );
    expect(() => selfPairsWithinDistance(new BigUint64Array(1), 1, { bits: 128 })).toThrow(RangeError);
    expect(() => pairsWithinDistance(fps, null as unknown as BigUint64Array, 1)).toThrow(/candidates must be.*null/);
  });

  it('rejects bad k', () => {
    expect(() => withinDistance(0n, fps, -1)).toThrow(RangeError);
    expect(() => withinDistance(0n, fps, -1)).toThrow(/got -1/);
    expect(() => withinDistance(0n, fps, 1.5)).toThrow(/got 1\.5/);
    expect(() => countWithinDistance(0n, fps, 65)).toThrow(/from 0 to 64, got 65/);
    expect(() => countWithinDistance(0n, new BigUint64Array(2), 129, { bits: 128 })).toThrow(/from 0 to 128, got 129/);
    expect(() => countWithinDistance(0n, fps, NaN)).toThrow(RangeError);
    expect(() => withinDistance(0n, fps, '2' as unknown as number)).toThrow(TypeError);
    expect(() => withinDistance(0n, fps, '2' as unknown as number)).toThrow(/"2"/);
    expect(() => selfPairsWithinDistance(fps, 70)).toThrow(/got 70/);
    expect(() => pairsWithinDistance(fps, fps, -2)).toThrow(/got -2/);
  });

  it('rejects bad queries', () => {
    expect(() => hammingDistances(1 as unknown as bigint, fps)).toThrow(TypeError);
    expect(() => hammingDistances(1 as unknown as bigint, fps)).toThrow(/bigint, got 1/);
    expect(() => hammingDistances(-1n, fps)).toThrow(/got -1n/);
    expect(() => hammingDistances(1n << 64n, fps)).toThrow(RangeError);
    expect(() => hammingDistances(1n << 64n, fps)).toThrow(/18446744073709551616n/);
    expect(() => hammingDistances(1n << 128n, new BigUint64Array(2), { bits: 128 })).toThrow(RangeError);
    expect(hammingDistances(1n << 64n, new BigUint64Array(2), { bits: 128 })[0]).toBe(1);
  });

  it('rejects bad n, out, options and widths', () => {
    expect(() => nearest(0n, fps, -1)).toThrow(/got -1/);
    expect(() => nearest(0n, fps, 2.5)).toThrow(RangeError);
    expect(() => nearest(0n, fps, '3' as unknown as number)).toThrow(TypeError);
    expect(() => hammingDistancesInto(0n, fps, new Uint8Array(3))).toThrow(/length 3 but there are 4/);
    expect(() => hammingDistancesInto(0n, fps, new Uint16Array(4) as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => hammingDistances(0n, fps, { bits: 32 as HammingBits })).toThrow(RangeError);
    expect(() => hammingDistances(0n, fps, { bits: '64' as unknown as HammingBits })).toThrow(TypeError);
    expect(() => hammingDistances(0n, fps, { bit: 64 } as unknown as { bits: HammingBits })).toThrow(
      /unknown option "bit"/,
    );
    expect(() => hammingDistances(0n, fps, 64 as unknown as { bits: HammingBits })).toThrow(TypeError);
    const set = FingerprintSet.from(fps);
    try {
      expect(() => withinDistance(0n, set, 1, { bits: 128 })).toThrow(/does not match/);
      expect(plain(withinDistance(1n, set, 0, { bits: 64 }))).toEqual([0]);
    } finally {
      set.free();
    }
  });

  it('leaves the library usable after a failed call', () => {
    expect(() => withinDistance(0n, fps, 99)).toThrow(RangeError);
    expect(plain(withinDistance(0n, fps, 1))).toEqual([0, 1, 3]);
  });
});

describe('FingerprintSet', () => {
  it('copies once: later changes to the source array do not affect it', () => {
    const fps = new BigUint64Array([5n, 6n]);
    const set = FingerprintSet.from(fps);
    fps[0] = 0n;
    expect(Array.from(set.toArray())).toEqual([5n, 6n]);
    expect(set.size).toBe(2);
    expect(set.bits).toBe(64);
    set.free();
  });

  it('throws a TypeError on every use after free(); free() twice is harmless', () => {
    const set = FingerprintSet.from(new BigUint64Array([1n, 2n, 3n, 4n]), { bits: 128 });
    expect(set.size).toBe(2);
    set.free();
    set.free();
    expect(set.freed).toBe(true);
    const uses: Array<() => unknown> = [
      () => set.size,
      () => set.hammingDistances(0n),
      () => set.hammingDistancesInto(0n, new Uint8Array(2)),
      () => set.withinDistance(0n, 1),
      () => set.countWithinDistance(0n, 1),
      () => set.nearest(0n, 1),
      () => set.distanceHistogram(0n),
      () => set.selfPairsWithinDistance(1),
      () => set.pairsWithinDistance(new BigUint64Array(2), 1),
      () => set.toArray(),
      () => withinDistance(0n, set, 1),
      () => pairsWithinDistance(set, new BigUint64Array(2), 1, { bits: 128 }),
    ];
    for (const use of uses)
      expect(use).toThrow(
        new TypeError('this FingerprintSet (128-bit, 2 fingerprints) was used after free(); create a new one'),
      );
    for (const use of uses) expect(use).toThrow(TypeError);
  });

  it('reuses freed memory: repeated create/free cycles do not grow the heap', () => {
    const heap = wasm().heap;
    const rand = prng(5);
    const fps = plantedArray(rand, 200_000, 64, 0n, 3);
    // Warm up the per-call regions once, then measure.
    FingerprintSet.from(fps).free();
    withinDistance(0n, fps, 3);
    selfPairsWithinDistance(fps.subarray(0, 3000), 2);
    const live = heap.liveBytes;
    const bytes = heap.byteLength;
    for (let cycle = 0; cycle < 50; cycle++) {
      const set = FingerprintSet.from(fps);
      expect(heap.liveBytes).toBeGreaterThanOrEqual(live + fps.byteLength);
      expect(set.countWithinDistance(0n, 3)).toBe(countWithinDistance(0n, fps, 3));
      set.free();
      expect(heap.liveBytes).toBe(live);
    }
    expect(heap.byteLength).toBe(bytes);
    // One-shot calls and joins do not keep memory either.
    for (let cycle = 0; cycle < 5; cycle++) {
      selfPairsWithinDistance(fps.subarray(0, 3000), 2);
      pairsWithinDistance(fps.subarray(0, 100), fps.subarray(0, 3000), 2);
      nearest(0n, fps, 10);
    }
    expect(heap.liveBytes).toBe(live);
  });
});
