// The one-query scan kernels of assembly/hamming.ts called directly (64-bit; the long tests at both widths),
// with the raw pointers and small output capacities the public API never uses, against a plain popcount reference on seeded data: eight-per-step
// loops with every tail length, unaligned arrays, and a collect buffer that fills at every position (the caller
// resumes after the last index written, as src/hamming/hamming.ts does). At 64 bits lengths of a block and more
// take the four-stream path: checked on seeded random cases (fast-check) around block and stream boundaries,
// and the one-stream 128-bit kernels on the same lengths; those block tests run again in the one-stream layout
// (hammingSetBlocked(0)), where the same lengths take the eight-per-step loops from start to end.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HammingKernels } from '../../src/hamming/hamming.js';
import { wasm } from '../../src/runtime/wasm.js';
import { rng } from '../reference.js';

interface ScanKernels extends HammingKernels {
  /** Fingerprints per block of the 64-bit scans. */
  hammingScanBlock(): number;
  /** Fingerprints per call from which the count (and the 128-bit collect) walk eight streams. */
  hammingEightStreamsMin(bits: number): number;
}

/**
 * Runs a describe block's kernels in one memory layout (blocked: the multi-stream blocks; otherwise one stream
 * over the whole array) and puts the previous one back afterwards, so src/hamming/scan-layout.ts still knows it.
 */
function inLayout(blocked: boolean): void {
  let previous = 1;
  beforeAll(() => {
    previous = (wasm().kernels as unknown as ScanKernels).hammingSetBlocked(blocked ? 1 : 0);
  });
  afterAll(() => {
    (wasm().kernels as unknown as ScanKernels).hammingSetBlocked(previous);
  });
}

/** Runs `f` with three fresh blocks of WebAssembly memory (fingerprints, output indices, output distances). */
function withBuffers(
  rt: ReturnType<typeof wasm>,
  bytes: [number, number, number],
  f: (ptr: number, outIndex: number, outDistance: number) => void,
): void {
  const [ptr, outIndex, outDistance] = bytes.map((n) => rt.heap.alloc(n)) as [number, number, number];
  try {
    f(ptr, outIndex, outDistance);
  } finally {
    rt.heap.release(outDistance);
    rt.heap.release(outIndex);
    rt.heap.release(ptr);
  }
}

function popcount64(x: bigint): number {
  let d = 0;
  for (; x; x &= x - 1n) d++;
  return d;
}

/** n fingerprints, a share `near` of them within 0..k+1 bits of q, from a seeded stream. */
function planted(next: () => number, n: number, q: bigint, k: number, near: number): BigUint64Array {
  const out = new BigUint64Array(n);
  const word = () => (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
  for (let i = 0; i < n; i++) {
    if (next() >= near) {
      out[i] = word();
      continue;
    }
    let x = q;
    const flips = near === 1 ? Math.floor(next() * (k + 1)) : Math.floor(next() * (k + 2));
    for (let f = 0; f < flips; f++) x ^= 1n << BigInt(Math.floor(next() * 64));
    out[i] = x;
  }
  return out;
}

describe('64-bit scan kernels, raw', () => {
  it('distances, count and collect (every capacity 1..20) match the reference at every tail and alignment', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as ScanKernels;
    const next = rng(1515);
    withBuffers(rt, [8 * 400 + 64, 4 * 400, 400 + 16], (ptr, outIndex, outDistance) => {
      for (let trial = 0; trial < 120; trial++) {
        const n = trial < 40 ? trial : Math.floor(next() * 390);
        const shift = 8 * Math.floor(next() * 8); // 0..56: groups of eight start anywhere in a cache line
        const maxDistance = Math.floor(next() * 9);
        const q = (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
        // Every third trial all within k: groups of eight full of hits meet every capacity.
        const fps = planted(next, n, q, maxDistance, trial % 3 === 0 ? 1 : 0.5);
        const at = ptr + shift;
        rt.heap.u64.set(fps, at >>> 3);
        const expected = Array.from(fps, (x) => popcount64(x ^ q));
        const label = `n ${n}, k ${maxDistance}, shift ${shift}`;

        rt.heap.u8.fill(0xee, outDistance, outDistance + n + 16);
        k.hammingDistances64(at, n, q, outDistance);
        expect(Array.from(rt.heap.u8.subarray(outDistance, outDistance + n)), label).toEqual(expected);
        expect(rt.heap.u8[outDistance + n], `${label}: nothing written past n`).toBe(0xee);

        const hits = expected.flatMap((d, i) => (d <= maxDistance ? [i] : []));
        expect(k.hammingCount64(at, n, q, maxDistance), label).toBe(hits.length);

        for (const cap of [1, 2, 3, 7, 8, 9, 15, 16, 17, 20]) {
          const got: number[] = [];
          const gotDistance: number[] = [];
          let start = 0;
          for (let calls = 0; start < n; calls++) {
            expect(calls, `${label}, cap ${cap}: progress`).toBeLessThan(n + 2);
            const c = k.hammingCollect64(at + 8 * start, n - start, q, maxDistance, start, outIndex, outDistance, cap);
            expect(c).toBeLessThanOrEqual(cap);
            const idx = Array.from(rt.heap.u32.subarray(outIndex >>> 2, (outIndex >>> 2) + c));
            got.push(...idx);
            gotDistance.push(...rt.heap.u8.subarray(outDistance, outDistance + c));
            if (c < cap) break;
            start = idx[c - 1]! + 1;
          }
          expect(got, `${label}, cap ${cap}`).toEqual(hits);
          expect(gotDistance, `${label}, cap ${cap}`).toEqual(hits.map((i) => expected[i]!));
        }
      }
    });
  });
});

/** Plain popcount of a 32-bit word, the reference for the long scans (bigint popcounts are too slow there). */
function popcount32(x: number): number {
  let d = 0;
  for (; x !== 0; x &= x - 1) d++;
  return d;
}

/** The kernels of one width over (lo, hi) queries: hi is ignored at 64 bits. */
function scans(k: ScanKernels, bits: 64 | 128) {
  return bits === 64
    ? {
        distances: (at: number, n: number, lo: bigint, _hi: bigint, out: number) =>
          k.hammingDistances64(at, n, lo, out),
        count: (at: number, n: number, lo: bigint, _hi: bigint, d: number) => k.hammingCount64(at, n, lo, d),
        collect: (
          at: number,
          n: number,
          lo: bigint,
          _hi: bigint,
          d: number,
          ...rest: [number, number, number, number]
        ) => k.hammingCollect64(at, n, lo, d, ...rest),
      }
    : {
        distances: (at: number, n: number, lo: bigint, hi: bigint, out: number) =>
          k.hammingDistances128(at, n, lo, hi, out),
        count: (at: number, n: number, lo: bigint, hi: bigint, d: number) => k.hammingCount128(at, n, lo, hi, d),
        collect: (
          at: number,
          n: number,
          lo: bigint,
          hi: bigint,
          d: number,
          ...rest: [number, number, number, number]
        ) => k.hammingCollect128(at, n, lo, hi, d, ...rest),
      };
}

/** Collects everything within k through the kernel with buffers of `cap`, resuming as the API does. */
function collectAll(
  kernel: ReturnType<typeof scans>,
  heap: ReturnType<typeof wasm>['heap'],
  stride: number,
  at: number,
  n: number,
  lo: bigint,
  hi: bigint,
  maxDistance: number,
  cap: number,
  outIndex: number,
  outDistance: number,
): { index: number[]; distance: number[] } {
  const index: number[] = [];
  const distance: number[] = [];
  let start = 0;
  for (let calls = 0; start < n; calls++) {
    if (calls > n + 1) throw new Error(`no progress at ${start}`);
    const c = kernel.collect(at + stride * start, n - start, lo, hi, maxDistance, start, outIndex, outDistance, cap);
    if (c > cap) throw new Error(`wrote ${c} entries into a buffer of ${cap}`);
    const got = heap.u32.subarray(outIndex >>> 2, (outIndex >>> 2) + c);
    for (let i = 0; i < c; i++) index.push(got[i]!);
    for (let i = 0; i < c; i++) distance.push(heap.u8[outDistance + i]!);
    if (c < cap) break;
    start = got[c - 1]! + 1;
  }
  return { index, distance };
}

/**
 * n random fingerprints of `bits` and a random query, from the seeded stream `next`: `plant(i, d)` moves fingerprint
 * i to exactly d bits from the query (d distinct bits chosen uniformly), `distance(i)` is its distance by popcount.
 */
function scanInput(bits: 64 | 128, n: number, next: () => number) {
  const words = bits / 32;
  const word = () => Math.floor(next() * 2 ** 32);
  const fps = new Uint32Array(words * n);
  for (let i = 0; i < fps.length; i++) fps[i] = word();
  const q = Uint32Array.from({ length: words }, word);
  const qWord = (w: number) => (BigInt(q[2 * w + 1] ?? 0) << 32n) | BigInt(q[2 * w] ?? 0);
  const order = Array.from({ length: bits }, (_, b) => b);
  const plant = (i: number, d: number) => {
    fps.set(q, words * i);
    for (let f = 0; f < d; f++) {
      const r = f + Math.floor(next() * (bits - f));
      const b = order[r]!;
      order[r] = order[f]!;
      order[f] = b;
      fps[words * i + (b >>> 5)]! ^= 1 << (b & 31);
    }
  };
  const distance = (i: number) => {
    let d = 0;
    for (let w = 0; w < words; w++) d += popcount32(fps[words * i + w]! ^ q[w]!);
    return d;
  };
  return { fps, lo: qWord(0), hi: bits === 128 ? qWord(1) : 0n, plant, distance };
}

describe.each([
  { layout: 'the blocked layout (four- and eight-stream blocks)', blocked: true },
  { layout: 'the one-stream layout', blocked: false },
])('scan kernels in $layout', ({ blocked }) => {
  inLayout(blocked);
  it('match the reference across block and stream boundaries, at every k and width, with buffers filling anywhere', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as ScanKernels;
    const block = k.hammingScanBlock();
    // A 64-bit block is walked as four streams or eight, a 128-bit one (half as many fingerprints) as eight:
    // plant at the boundaries of all.
    const stream = block / 16;
    const maxN = 2 * block + 40;
    const around = (x: number) => fc.integer({ min: x - 9, max: x + 9 });
    const sizes = (block: number) =>
      fc.oneof(around(block), around(2 * block), fc.integer({ min: 0, max: 2 * block + 40 }));
    withBuffers(rt, [16 * maxN + 128, 4 * maxN, maxN + 16], (ptr, outIndex, outDistance) => {
      fc.assert(
        fc.property(
          fc.constantFrom(64 as const, 128 as const).chain((bits) =>
            fc.record({
              bits: fc.constant(bits),
              n: sizes(block),
              shift: fc.integer({ min: 0, max: 7 }),
              maxDistance: fc.oneof(fc.constantFrom(0, 1, 3, bits - 1, bits), fc.integer({ min: 0, max: bits })),
              // Share of fingerprints planted at k or k + 1 from the query: none, rare, dense, all.
              near: fc.constantFrom(0, 0.0005, 0.05, 0.5, 1),
              // A few runs of 1..6 consecutive hits: a block with one or two groups that fill a small buffer.
              runs: fc.array(fc.record({ at: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }), { maxLength: 3 }),
              cap: fc.constantFrom(1, 3, 16, 17, 63, 1000, 65536),
              seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
            }),
          ),
          ({ bits, n, shift, maxDistance, near, runs, cap, seed }) => {
            const kernel = scans(k, bits);
            const next = rng(seed);
            const { fps, lo, hi, plant, distance } = scanInput(bits, n, next);
            const atOrPast = () => Math.min(bits, maxDistance + (next() < 0.5 ? 0 : 1));
            for (let i = 0; i < n; i++) if (next() < near) plant(i, atOrPast());
            for (const run of runs) {
              for (let i = run.at % Math.max(1, n), end = i + run.length; i < Math.min(end, n); i++)
                plant(i, maxDistance);
            }
            // The first and last of every stream and block, and the first of the one-stream rest.
            for (let s = 0; s <= 32; s++) {
              for (const i of [s * stream - 1, s * stream]) if (i >= 0 && i < n && next() < 0.7) plant(i, atOrPast());
            }
            const at = ptr + 8 * shift;
            rt.heap.u32.set(fps, at >>> 2);
            const expected = Array.from({ length: n }, (_, i) => distance(i));
            const label = `${bits}-bit, n ${n}, k ${maxDistance}, cap ${cap}, seed ${seed}`;

            rt.heap.u8.fill(0xee, outDistance, outDistance + n + 16);
            kernel.distances(at, n, lo, hi, outDistance);
            const distances = rt.heap.u8.subarray(outDistance, outDistance + n);
            let wrong = expected.findIndex((d, i) => distances[i] !== d);
            expect(wrong, `${label}: first wrong distance`).toBe(-1);
            expect(rt.heap.u8[outDistance + n], `${label}: nothing written past n`).toBe(0xee);

            const hits = expected.flatMap((d, i) => (d <= maxDistance ? [i] : []));
            expect(kernel.count(at, n, lo, hi, maxDistance), label).toBe(hits.length);

            const got = collectAll(kernel, rt.heap, bits / 8, at, n, lo, hi, maxDistance, cap, outIndex, outDistance);
            wrong = hits.findIndex((h, i) => got.index[i] !== h);
            expect(wrong, `${label}: first wrong index`).toBe(-1);
            expect(got.index.length, label).toBe(hits.length);
            expect(got.distance, label).toEqual(hits.map((i) => expected[i]!));
          },
        ),
        { seed: 0x15a, numRuns: 100 },
      );
    });
  });
  it('count and collect the same in their eight-stream loops (from hammingEightStreamsMin per call on) as the reference', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as ScanKernels;
    const block = k.hammingScanBlock();
    const maxN = k.hammingEightStreamsMin(64) + 2 * block + 40;
    withBuffers(rt, [16 * maxN + 64, 4 * 65536, 65536 + 16], (ptr, outIndex, outDistance) => {
      fc.assert(
        fc.property(
          fc.constantFrom(64 as const, 128 as const).chain((bits) => {
            const wide = k.hammingEightStreamsMin(bits);
            return fc.record({
              bits: fc.constant(bits),
              n: fc.oneof(
                fc.integer({ min: wide - 9, max: wide + 9 }),
                fc.integer({ min: wide + block - 9, max: wide + block + 9 }),
                fc.integer({ min: wide, max: wide + 2 * block + 40 }),
              ),
              maxDistance: fc.oneof(fc.constantFrom(0, 3, 31, bits), fc.integer({ min: 0, max: bits })),
              cap: fc.constantFrom(1, 7, 64, 1000, 65536),
              near: fc.constantFrom(0.001, 0.05, 0.5),
              seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
            });
          }),
          ({ bits, n, maxDistance, cap, near, seed }) => {
            const kernel = scans(k, bits);
            const next = rng(seed);
            const { fps, lo, hi, plant, distance } = scanInput(bits, n, next);
            // At k or k + 1 from the query: the first and last of every stream, and a share `near` of the rest.
            const atOrPast = () => Math.min(bits, maxDistance + (next() < 0.5 ? 0 : 1));
            const stream = block / 16;
            for (let s = 0; s * stream <= n; s++)
              for (const i of [s * stream - 1, s * stream]) if (i >= 0 && i < n) plant(i, atOrPast());
            for (let i = 0; i < n; i++) if (next() < near) plant(i, atOrPast());
            const hits: number[] = [];
            const distances: number[] = [];
            for (let i = 0; i < n; i++) {
              const d = distance(i);
              if (d <= maxDistance) {
                hits.push(i);
                distances.push(d);
              }
            }
            rt.heap.u32.set(fps, ptr >>> 2);
            const label = `${bits}-bit, n ${n}, k ${maxDistance}, cap ${cap}, seed ${seed}`;
            const got = collectAll(kernel, rt.heap, bits / 8, ptr, n, lo, hi, maxDistance, cap, outIndex, outDistance);
            expect(got.index, label).toEqual(hits);
            expect(got.distance, label).toEqual(distances);
            expect(kernel.count(ptr, n, lo, hi, maxDistance), label).toBe(hits.length);
          },
        ),
        { seed: 0x15b, numRuns: 16 },
      );
    });
  });
  it('stop exactly at a full buffer when one step of a block holds more hits than the room left', () => {
    const rt = wasm();
    const k = rt.kernels as unknown as ScanKernels;
    const block = k.hammingScanBlock();
    for (const bits of [64, 128] as const) {
      const kernel = scans(k, bits);
      const words = bits / 32;
      // 64-bit blocks: four streams of block / 4; 128-bit: eight of block / 16, from hammingEightStreamsMin on.
      const streams = bits === 64 ? 4 : 8;
      const stream = bits === 64 ? block / 4 : block / 16;
      const n = k.hammingEightStreamsMin(bits) + 5;
      withBuffers(rt, [4 * words * n + 64, 4 * 64, 64 + 16], (ptr, outIndex, outDistance) => {
        // Every fingerprint far from the query (all bits flipped), but the first step of each stream of the first
        // block: those are the query itself.
        const fps = new Uint32Array(words * n).fill(0xffffffff);
        const hits: number[] = [];
        for (let s = 0; s < streams; s++)
          for (let j = 0; j < 4; j++) {
            const i = s * stream + j;
            fps.fill(0, words * i, words * (i + 1));
            hits.push(i);
          }
        rt.heap.u32.set(fps, ptr >>> 2);
        for (const cap of [1, 4, 5, 7, 8, 15, 16, 17, 31]) {
          rt.heap.u8.fill(0xee, outDistance, outDistance + 64 + 16);
          const c = kernel.collect(ptr, n, 0n, 0n, 3, 0, outIndex, outDistance, cap);
          expect(c, `${bits}-bit, cap ${cap}`).toBe(Math.min(cap, hits.length));
          expect(rt.heap.u8[outDistance + cap], `${bits}-bit, cap ${cap}: nothing written past cap`).toBe(0xee);
          expect([...rt.heap.u32.subarray(outIndex >>> 2, (outIndex >>> 2) + c)]).toEqual(
            hits.slice(0, c).sort((a, b) => a - b),
          );
        }
        const all = collectAll(kernel, rt.heap, bits / 8, ptr, n, 0n, 0n, 3, 3, outIndex, outDistance);
        expect(all.index).toEqual([...hits].sort((a, b) => a - b));
      });
    }
  });
});
